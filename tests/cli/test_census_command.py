"""`attnlab census` through the real entry point: the lab's lines and numbers, the progress bar, refusals."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab.lab.realmodel import census as words

ATTNLAB = shutil.which("attnlab", path=str(Path(sys.executable).parent))
TEXTS = ("red green blue red green blue", "The cat sat. The cat sat.")


def run(*args: str) -> subprocess.CompletedProcess:
    assert ATTNLAB, "the attnlab console script is not installed in this environment"
    return subprocess.run([ATTNLAB, "census", *args], capture_output=True, text=True, timeout=300)


def jsonl(tmp_path: Path, *lines: str | bytes) -> str:
    path = tmp_path / "texts.jsonl"
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return str(path)


@pytest.mark.parametrize(
    "lines,error",
    [
        (['{"text": "a" '], "--texts line 1: is not JSON (Expecting ',' delimiter)"),
        (["", '["a"]'], '--texts line 2: is a JSON array; each line must be an object with a "text" field'),
        (['{"words": "a"}'], '--texts line 1: has no "text" field'),
        (['{"text": 3}'], '--texts line 1: has a "text" that is a JSON number, not a string'),
        (['{"text": "  "}'], '--texts line 1: has an empty "text"'),
        ([b'{"text": "\xff"}'], "--texts line 1 of {path} is not UTF-8 text"),
        (["", "   "], "--texts {path} has no texts: give one JSON object a line"),
        # before: a TypeError traceback (the tokenizer refused half a character)
        (['{"text": "a\\ud800b"}'],
         "--texts line 1: text holds half of a character (a lone surrogate): paste the text again"),
        # before: a RecursionError traceback
        (["[" * 5_000], "--texts line 1: nests too deeply to read (arrays or objects inside each other "
                        "thousands of levels deep)"),
        (["[" * 100_000], "--texts line 1: is longer than 20,000 characters, the most a line may have"),
        # before: Python's own message, without the line's number
        pytest.param(['{"text": "a"}', '{"text": "a", "n": ' + "9" * 5_000 + "}"],
                     "--texts line 2: has a number of more than 4,300 digits, the most a number may have",
                     marks=pytest.mark.models),  # line 1 is a text: its scoring (the model) has begun
        (['{"text": "' + "a" * 20_000 + '"}'],
         "--texts line 1: is longer than 20,000 characters, the most a line may have"),
        # a UTF-8 byte order mark is read as none (before: "is not JSON (Unexpected UTF-8 BOM ...)")
        ([b'\xef\xbb\xbf{"words": "a"}'], '--texts line 1: has no "text" field'),
    ],
)  # fmt: skip
def test_a_bad_line_is_one_line_with_its_number_and_status_2(tmp_path, lines, error):
    path = jsonl(tmp_path, *lines)
    done = run("--texts", path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == ["attnlab: error: " + error.format(path=path)]


@pytest.mark.parametrize(
    "args,error",
    [
        (("--model", "nope"), "--model 'nope' is unknown; use one of minilm, smollm2"),
        (("--workers", "0"), "--workers must be from 1 to 64, not 0"),
        (("--top", "271"), "--top must be from 1 to 270, not 271"),
    ],
)
def test_bad_options_are_one_line(tmp_path, args, error):
    done = run("--texts", jsonl(tmp_path, '{"text": "a"}'), *args)
    assert done.returncode == 2 and done.stderr.splitlines() == ["attnlab: error: " + error]


def test_a_missing_file(tmp_path):
    path = str(tmp_path / "none.jsonl")
    done = run("--texts", path)
    assert done.returncode == 2
    said = f"attnlab: error: --texts {path} cannot be read: No such file or directory"
    assert done.stderr.splitlines() == [said]


@pytest.mark.models
def test_a_text_over_the_token_cap_is_refused_at_its_line(tmp_path):
    path = jsonl(tmp_path, json.dumps({"text": TEXTS[0]}), json.dumps({"text": " ".join(["word"] * 300)}))
    done = run("--model", "smollm2", "--texts", path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "attnlab: error: --texts line 2: text is 300 tokens long for SmolLM2-135M-Instruct; the Real model "
        "view takes at most 256 tokens. Shorten it by 44."
    ]


@pytest.mark.models
def test_the_census_prints_the_labs_lines_and_json_every_heads_numbers(tmp_path, smollm2):
    from attnlab.models.census import score_text

    path = jsonl(tmp_path, *(json.dumps({"text": t}) for t in TEXTS))
    c = words.summary([score_text(smollm2, "smollm2", t) for t in TEXTS], model="smollm2",
                      title="SmolLM2-135M-Instruct")  # fmt: skip
    done = run("--model", "smollm2", "--texts", path, "--workers", "1", "--top", "3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == [words.heading(c)["text"], words.method()["text"]]
    at = lines.index(words.score_sentence(c, "induction")["text"])
    assert lines[at + 1] == words.table_title("induction")
    assert [row.split()[0] for row in lines[at + 3 : at + 6]] == ["1", "2", "3"]
    assert lines[at + 3].split() == " ".join(words.top_rows(c, "induction", 3)[1]).split()
    assert done.stderr.splitlines() == [words.progress_line(1, 2), words.progress_line(2, 2)]
    out = json.loads(run("--model", "smollm2", "--texts", path, "--json").stdout)
    assert out == json.loads(json.dumps(words.data(c)))
    cell = out["scores"]["induction"]["heads"][18 * 9 + 6]
    assert (cell["layer"], cell["head"]) == (18, 6) and cell["low"] <= cell["mean"] <= cell["high"]


@pytest.mark.models
def test_python_prints_the_program_of_the_top_heads_score_on_the_first_text_which_prints_it(tmp_path):
    from attnlab.models.census import score_text
    from attnlab.models.registry import get_model

    path = jsonl(tmp_path, *(json.dumps({"text": t}) for t in TEXTS))
    census = json.loads(run("--model", "minilm", "--texts", path, "--json").stdout)
    heads = census["scores"]["previous"]["heads"]
    top = min(heads, key=lambda h: (-h["mean"], h["layer"], h["head"]))  # the highest mean; ties: the first
    layer, head = top["layer"], top["head"]
    done = run("--model", "minilm", "--texts", path, "--python")
    assert done.returncode == 0, done.stderr
    first, program = done.stdout.split("\n", 1)
    assert first == words.program_comment("previous", layer, head, 2)
    assert first == (
        f"# attnlab census --python: this program prints the previous-token score of L{layer} H{head} on the "
        f"first text of the file, as the census computes it (L{layer} H{head} has the highest mean "
        "previous-token score over its 2 texts)."
    )
    assert program.startswith('"""How is this computed? The previous-token score of layer')
    # the census's own number for the first text, printed bit for bit (MiniLM: float32 weights)
    shown = float(score_text(get_model("minilm"), "minilm", TEXTS[0])["scores"]["previous"][layer, head])
    assert f"# The page shows {shown!r} (float32 path)." in program
    ran = subprocess.run([sys.executable, "-I", "-c", done.stdout], capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert float(ran.stdout.splitlines()[-1]) == shown


def test_json_and_python_are_one_or_the_other(tmp_path):
    done = run("--texts", jsonl(tmp_path, '{"text": "a"}'), "--json", "--python")
    assert done.returncode == 2 and "not allowed with argument" in done.stderr



@pytest.mark.models
def test_more_texts_than_a_census_reads_is_one_line(tmp_path):
    path = jsonl(tmp_path, *(['{"text": "a b"}'] * (words.MAX_TEXTS + 1)))
    done = run("--model", "minilm", "--texts", path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"attnlab: error: --texts {path} has more than 10,000 texts: a census reads at most 10,000; split it"
    ]


@pytest.mark.models
def test_ray_failing_to_start_is_one_line_with_what_to_try(tmp_path, capsys, monkeypatch):
    # Before: a 25-line traceback (Ray failed to start under load in 2 of 3 runs).
    import ray

    from attnlab.cli import main

    def init(**options):
        raise TimeoutError("Timed out while waiting for the GCS to start.\nMore lines Ray prints...")

    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    code = main(["census", "--model", "minilm", "--texts", jsonl(tmp_path, '{"text": "a b"}'), "--ray"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "attnlab: error: --ray: Ray did not start (TimeoutError: Timed out while waiting for the GCS to "
        "start.). Try again, set RAY_ADDRESS to a running Ray cluster, or leave out --ray to use this "
        "machine's processes"
    ]
