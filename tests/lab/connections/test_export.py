"""A lab exported: the JSON keeps every number and the study, the Markdown reads as the page does."""

from __future__ import annotations

import json

from attnlab.lab.connections.export import FORMAT, to_json, to_markdown
from attnlab.lab.connections.page import lab_page
from attnlab.lab.connections.study import apply


def studied() -> dict:
    return apply("moe", {"k": 3}, {"version": 1}, {"kind": "submit", "challenge": "keep-90"})["study"]


def test_json_keeps_the_input_every_number_and_the_study():
    doc = json.loads(to_json("moe", {"k": 3}, studied()))
    page = lab_page("moe", {"k": 3}, "inputs")
    assert doc["format"] == FORMAT and doc["version"] == 1 and doc["lab"] == "moe"
    assert doc["inputs"] == page["inputs"] and doc["data"] == page["data"] and doc["words"] == page["words"]
    assert doc["link"] == page["link"] and doc["study"] == studied()
    assert doc["history"][0]["heading"] == "Keep 90% with the fewest experts · attempt 1"


def test_markdown_lists_the_input_words_tables_history_and_program():
    text = to_markdown("moe", {"k": 3}, studied())
    page = lab_page("moe", {"k": 3}, "inputs")
    assert text.startswith(f"# {page['lab']['title']}\n")
    assert "- Top k: 3" in text
    for sentence in page["words"]:
        assert f"- {sentence['text']}" in text
    assert "| token | logits | probabilities | top k | kept | gates |" in text
    assert "### Keep 90% with the fewest experts · attempt 1" in text
    assert text.rstrip().endswith("```") and page["python"].splitlines()[0] in text
    assert "No help used and no attempts yet." in to_markdown("moe", {}, {"version": 1})


def test_markdown_keeps_every_check_of_an_attempt():
    study = {"version": 1}
    for k in (1, 3):
        study = apply("moe", {"k": k}, study, {"kind": "submit", "challenge": "keep-90"})["study"]
    text = to_markdown("moe", {"k": 3}, study)
    attempt = text[text.index("### Keep 90% with the fewest experts · attempt 1") :]
    checks = [line for line in attempt.splitlines() if line.startswith("- Check ")]
    assert len(checks) == 2 and checks[0].startswith("- Check 1 · the example as it was · ")
