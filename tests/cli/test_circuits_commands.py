"""`attnlab ablate`, `patch` and `lens` through the real entry point: the page's views, as text and JSON."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab.lab.circuits import requests, terminal
from attnlab.lab.realmodel.program.answer import program_answer
from attnlab.models.circuits.texts import tokenize

ATTNLAB = shutil.which("attnlab", path=str(Path(sys.executable).parent))
CLEAN = "The Eiffel Tower is in the city of"
CORRUPT = "The Colosseum is in the city of"


def run(*args: str) -> subprocess.CompletedProcess:
    assert ATTNLAB, "the attnlab console script is not installed in this environment"
    return subprocess.run([ATTNLAB, *args], capture_output=True, text=True, timeout=300)


def refused(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2 and done.stdout == "", done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    return lines[0].removeprefix("attnlab: error: ")


def source(model, ids, corrupt=None):
    """The program's source for a text of ``model`` (as the command builds it)."""
    from attnlab.lab.realmodel.program.number import Source
    from attnlab.models import registry

    c = registry.counter(model.name)
    spec = registry.spec(model.name)
    return Source(model=spec.name, title=spec.title, ids=tuple(ids), tokens=tuple(c.text(i) for i in ids),
                  path=model.path, n_layer=spec.n_layer, n_head=spec.n_head, d_head=spec.d_head,
                  vocab=model.arch.d_vocab, corrupt_ids=None if corrupt is None else tuple(corrupt),
                  corrupt_tokens=None if corrupt is None else tuple(c.text(i) for i in corrupt))  # fmt: skip


def printed(lines: list) -> list[str]:
    """What the command prints for ``terminal``'s lines: sentences as they are, tables lined up."""
    from attnlab.cli.circuits import grid

    return "\n".join(x if isinstance(x, str) else grid(x) for x in lines).splitlines()


@pytest.mark.parametrize(
    "args,error",
    [
        (("ablate", "Hi", "--heads", "L18X6"),
         "--heads has 'L18X6', which is not a head: write each as L<layer> H<head>, such as L18 H6"),
        (("ablate", "Hi", "--heads", "L1H1", "--model", "nope"),
         "--model 'nope' is unknown; use one of minilm, smollm2"),
        (("patch", CLEAN, CORRUPT, "--answers", " Paris"),
         "--answers ' Paris' is not two answers; write them as \" Paris\",\" Rome\""),
        (("patch", CLEAN, CORRUPT),
         "--answers is needed: SmolLM2-135M-Instruct is a decoder; give two answers as \" Paris\",\" Rome\""),
        (("patch", CLEAN, CORRUPT, "--model", "minilm", "--answers", "a,b"),
         "--answers is not for all-MiniLM-L6-v2: an encoder's patching reads the cosine with the clean "
         "embedding"),
    ],
)  # fmt: skip
def test_refusals_before_any_model_loads(args, error):
    assert refused(run(*args)) == error


@pytest.mark.models
def test_ablate_prints_the_pages_view_and_its_json(smollm2):
    text = "The Eiffel Tower is in the city of Paris"
    ids, _ = tokenize(smollm2, text)
    view, _ = requests.here("ablation", model="smollm2", text=text, heads="L18H6,L17H4", how="mean")
    done = run("ablate", text, "--heads", "L18H6,L17H4", "--mean")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == printed(terminal.ablation_lines(view))
    assert done.stdout.startswith("Mean ablation of L18 H6, L17 H4: each head's output before W_O")
    out = json.loads(run("ablate", text, "--heads", "L18H6,L17H4", "--mean", "--json").stdout)
    assert out == json.loads(json.dumps(view))
    number = terminal.ablation_number(view, [(18, 6), (17, 4)], "mean", len(ids))
    assert number == {"kind": "ablation", "heads": "18.6,17.4", "how": "mean", "quantity": "p_next_after",
                      "position": view["biggest"][0]["claims"]["position"],
                      "value": view["positions"][number["position"]]["p_after"]}  # fmt: skip
    python = run("ablate", text, "--heads", "L18H6,L17H4", "--mean", "--python").stdout
    assert python == program_answer(source(smollm2, ids), number)["program"]
    assert refused(run("ablate", text, "--heads", "L30H0")) == (
        "--heads has L30 H0, which smollm2 does not have: its layers are 0..29 and its heads 0..8"
    )


@pytest.mark.models
def test_patch_sweeps_the_mlps_with_a_progress_bar(smollm2):
    (clean, _), (corrupt, _) = tokenize(smollm2, CLEAN), tokenize(smollm2, CORRUPT)
    paris, rome = smollm2.encode(" Paris")[0], smollm2.encode(" Rome")[0]
    view, _ = requests.here("patching", model="smollm2", clean=CLEAN, corrupt=CORRUPT, right=" Paris",
                            other=" Rome", sweep="mlp")  # fmt: skip
    position = view["pair"]["values"]["claims"]["position"]  # the pair's: the last token's logits
    assert position == len(clean) - 1 == 8
    done = run("patch", CLEAN, CORRUPT, "--answers", " Paris, Rome", "--sweep", "mlp")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == printed(terminal.patching_lines(view))
    assert done.stderr.splitlines() == [terminal.progress_line(i, 30) for i in range(1, 31)]
    out = json.loads(run("patch", CLEAN, CORRUPT, "--answers", " Paris, Rome", "--sweep", "mlp", "--json")
                     .stdout)
    assert out == json.loads(json.dumps(view)) and out["sweep"]["done"] == 30
    number = terminal.patch_number(view, (paris, rome), position)
    assert (number["target"], number["layer"], number["quantity"]) == ("mlp", 0, "recovered")
    python = run("patch", CLEAN, CORRUPT, "--answers", " Paris, Rome", "--sweep", "mlp", "--python").stdout
    assert python == program_answer(source(smollm2, clean, corrupt), number)["program"]
    shorter = refused(run("patch", CLEAN, "The Colosseum is in the city", "--answers", " Paris, Rome"))
    assert shorter == (
        "CORRUPT is 8 tokens long and the clean prompt 9; patching needs two prompts of the same token length"
    )
    assert refused(run("patch", CLEAN, CORRUPT, "--answers", " Parisian, Rome")).startswith(
        "--answers is 2 tokens for SmolLM2-135M-Instruct"
    )


@pytest.mark.models
def test_lens_names_the_block_where_the_answer_comes_first(smollm2):
    ids, _ = tokenize(smollm2, CLEAN)
    view, _ = requests.here("lens", model="smollm2", text=CLEAN, position=-1)
    done = run("lens", CLEAN, "--position", "-1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == printed(terminal.lens_lines(view))
    assert lines[-1] == view["named"]["text"]
    assert lines[-1].startswith("After 8 ␣of, the model's answer is ␣Paris.")
    assert json.loads(run("lens", CLEAN, "--json").stdout) == json.loads(json.dumps(view))
    number = terminal.lens_number(view)
    first = view["named"]["claims"]["first_top1"]
    assert number == {"kind": "lens", "position": 8, "layer": first, "quantity": "token_p",
                      "value": view["layers"][first]["token_p"]}  # fmt: skip
    python = run("lens", CLEAN, "--python").stdout
    assert python == program_answer(source(smollm2, ids), number)["program"]
    ran = subprocess.run([sys.executable, "-c", python], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    # the q4_1 path sums its products in another order than the program's float32 ones
    assert abs(float(ran.stdout.splitlines()[-1]) - number["value"]) < 1e-5
    said = "--position 9 does not exist; the text has tokens 0..8"
    assert refused(run("lens", CLEAN, "--position", "9")) == said
    assert refused(run("lens", CLEAN, "--model", "minilm")) == (
        "--model cannot show a logit lens: all-MiniLM-L6-v2 is an encoder, with no next token and no "
        "unembedding"
    )


@pytest.mark.models
def test_on_float32_weights_the_program_prints_exactly_the_number_the_command_printed(smollm2):
    """``--weights float32``: the command's lens number and its program's print are the same float."""
    view = json.loads(run("lens", CLEAN, "--weights", "float32", "--json").stdout)
    number = terminal.lens_number(view)
    python = run("lens", CLEAN, "--weights", "float32", "--python").stdout
    assert '"path": "float32"' in python or "float32" in python
    ran = subprocess.run([sys.executable, "-c", python], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert float(ran.stdout.splitlines()[-1]) == number["value"]
    # and on the file's blocks the command says so, and its number differs only by the sums' order
    blocks = terminal.lens_number(json.loads(run("lens", CLEAN, "--weights", "q4_1", "--json").stdout))
    assert abs(blocks["value"] - number["value"]) < 1e-5
    said = refused(run("lens", CLEAN, "--weights", "float16"))
    assert said.startswith("argument --weights: invalid choice")
    said = refused(run("heads", "Hi", "--model", "minilm", "--weights", "q4_1"))
    assert said.startswith("--weights") or "q4_1" in said


@pytest.mark.models
def test_the_readme_s_ablation_program_prints_the_command_s_number_on_float32_weights(tmp_path):
    """The README's line: ``attnlab ablate … --weights float32 --python > ablate.py``, then
    ``python ablate.py`` prints the number ``--json`` gives (the next token's probability after the
    biggest change, with the head off), the same float."""
    text = "The Eiffel Tower is in the city of Paris"
    args = ("ablate", text, "--heads", "L18 H6", "--weights", "float32")
    view = json.loads(run(*args, "--json").stdout)
    program = tmp_path / "ablate.py"
    program.write_text(run(*args, "--python").stdout, encoding="utf-8")
    ran = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    printed = float(ran.stdout.splitlines()[-1])
    shown = [p["p_after"] for p in view["positions"] if "p_after" in p]
    assert printed in shown  # exactly one of the view's numbers, at full precision
    n_ids = len(view["program_source"]["ids"])
    assert printed == terminal.ablation_number(view, [(18, 6)], "zero", n_ids)["value"]


@pytest.mark.models
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_patch_stopped_by_a_signal_prints_its_partial_sweep(stop):
    # A sweep of 270 patches, stopped once its first patch is done: what it did is printed, not lost.
    command = [ATTNLAB, "patch", CLEAN, CORRUPT, "--answers", " Paris, Rome", "--sweep", "heads"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()  # the progress bar (stderr is not a terminal: a line per patch)
        assert first.endswith(" 1 of 270 patches\n"), first
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 128 + stop, err
    last = [first.rstrip("\n"), *err.splitlines()][-1]  # the bar's last line: the patches done
    done = int(last.split("] ")[1].split(" of ")[0])
    assert 1 <= done < 270
    status = f"Cancelled after {done} of 270 patches: the {270 - done} not computed are blank."
    assert status in out.splitlines()
    assert "Traceback" not in err


@pytest.mark.models
def test_patch_sweeps_each_kv_heads_values(smollm2):
    done = run("patch", CLEAN, CORRUPT, "--answers", " Paris, Rome", "--sweep", "values", "--json")
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert view["sweep"]["kind"] == "values" and view["sweep"]["total"] == 30 * 3
    assert view["sweep"]["map"]["columns"] == ["KV0", "KV1", "KV2"]
    assert view["meaning"]["claims"]["kind"] == "values"
    assert "every query head of the group" in view["meaning"]["text"]
