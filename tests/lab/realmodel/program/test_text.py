"""A program's text: its token ids survive any token's characters, and it ends by printing the number."""

from __future__ import annotations

import ast

import pytest

from attnlab.lab.realmodel.program.answer import program_answer
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import ids_lines

AWKWARD = ("\n", "'\"", "\\", "\u2028", "# not code", "⏎ ␣")


def test_the_ids_read_back_whatever_the_tokens_hold():
    text = ids_lines("IDS", [7, 8, 9, 10, 11, 12], AWKWARD)
    names: dict = {}
    exec(compile(text, "ids", "exec"), names)  # noqa: S102 - our own generated text
    assert names["IDS"] == [7, 8, 9, 10, 11, 12]
    assert text.count("\n") == 7  # one line an id: no token broke its line


@pytest.mark.models  # a program's description is the one attnlab reads from the model's files
def test_a_program_is_valid_python_that_prints_its_number_last():
    src = Source(model="minilm", title="all-MiniLM-L6-v2", ids=(101, 7, 8, 9, 10, 11, 12, 102),
                 tokens=("[CLS]", *AWKWARD, "[SEP]"), path="float32", n_layer=6, n_head=12,
                 d_head=32)  # fmt: skip
    answer = program_answer(
        src, {"kind": "weight", "layer": 1, "head": 2, "query": 3, "key": 4, "value": 0.5}
    )
    tree = ast.parse(answer["program"])
    last = tree.body[-1]
    assert ast.unparse(last) == "print(repr(float(value)))"
    assert ast.get_docstring(tree).startswith(
        "How is this computed? The share token 3 gives token 4 in layer 1"
    )
    assert "# The page shows 0.5 (float32 path)." in answer["program"]
    assert 'os.environ["OPENBLAS_NUM_THREADS"] = "1"' in answer["program"].split("import numpy")[0]
