"""The Real model view's fixed words and a trace's names (lab/realmodel/page.py)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.page import SLOTS, page_words, trace_names

SLOT = re.compile(r"\{(\w+)\}")


def test_every_template_names_only_its_slots_and_no_other_brace():
    words = page_words()
    for name, text in words.items():
        slots = SLOT.findall(text)
        assert set(slots) == set(SLOTS.get(name, ())), name
        assert "{" not in SLOT.sub("", text) and "}" not in SLOT.sub("", text), name


def test_the_retry_line_fills_in_as_the_page_said_it():
    retry = page_words()["retry"]
    assert retry.format(message="Too many jobs.", seconds=3) == "Too many jobs. Trying again in 3 s…"


def test_the_over_limit_line_says_the_count_the_limit_and_the_cap():
    line = page_words()["over_chars"].format(chars=401, max_chars=400, cap=64)
    assert line == "401 characters: over the 400-character limit; the cap is 64 tokens"


def test_minilm_names_have_no_kv_heads():
    names = trace_names(n_layer=2, kv_groups=[[0], [1], [2]], scale=0.125)
    assert names["layer_names"] == ["layer 0", "layer 1"]
    assert names["head_names"] == names["head_options"] == ["head 0", "head 1", "head 2"]
    assert names["row_title"] == "Query {query} · layer {layer}, head {head}"
    assert names["scale_display"] == "0.125"


def test_smollm2_names_say_the_kv_head_each_head_reads():
    names = trace_names(n_layer=1, kv_groups=[[0, 1, 2], [3, 4, 5], [6, 7, 8]], scale=0.125)
    assert names["head_options"][4] == "head 4 (KV head 1)"
    assert names["head_names"][4] == "head 4"
    first = names["kv_group_names"][0]
    assert first["label"] == "KV head 0"
    assert first["title"] == {
        "text": "KV head 0: query heads 0, 1, 2 share its keys and values",
        "claims": {"kv_head": 0, "heads": [0, 1, 2]},
    }
    title = names["row_title"].format(query="4 ␣the", layer=0, head=4, kv_head=1)
    assert title == "Query 4 ␣the · layer 0, head 4 (reads KV head 1)"


@st.composite
def groupings(draw):
    n_kv = draw(st.integers(1, 6))
    size = draw(st.integers(1, 4))
    heads = draw(st.permutations(range(n_kv * size)))
    return [sorted(heads[g * size:(g + 1) * size]) for g in range(n_kv)]


@settings(deadline=None, max_examples=60)
@given(groups=groupings(), n_layer=st.integers(1, 40), scale=st.floats(1e-3, 10))
def test_the_names_claims_are_the_kv_groups(groups, n_layer, scale):
    names = trace_names(n_layer=n_layer, kv_groups=groups, scale=scale)
    shared = any(len(g) > 1 for g in groups)
    assert len(names["layer_names"]) == n_layer
    assert names["scale_display"] == fmt.rounded(scale)
    for g, (members, said) in enumerate(zip(groups, names["kv_group_names"])):
        assert said["title"]["claims"] == {"kv_head": g, "heads": members}
        listed = said["title"]["text"].split("query heads ")[1].split(" share")[0]
        assert [int(x) for x in listed.split(", ")] == members
        for m in members:  # each head's option names the KV head whose group holds it, only when shared
            assert names["head_options"][m] == (f"head {m} (KV head {g})" if shared else f"head {m}")
    assert ("{kv_head}" in names["row_title"]) == shared
