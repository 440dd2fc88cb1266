"""The Real model view's fixed words and a trace's names (lab/realmodel/page.py)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import attnlab.web
from attnlab.lab import numbers as fmt
from attnlab.lab.page import fill_texts, shared_fills, shared_words
from attnlab.lab.realmodel import probe
from attnlab.lab.realmodel.page import SLOTS, ZOOMS, page_text, page_words, real_model_page, trace_names
from attnlab.models import sampling
from attnlab.models.jobs.kinds import STEP_TOP
from attnlab.models.traces import thumbnails

PAGE = (Path(attnlab.web.__file__).parent / "static" / "real-model.html").read_text(encoding="utf-8")
TEXT = page_text()

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


def test_every_marker_of_the_page_has_its_words_and_every_word_a_marker():
    served = real_model_page()
    assert served["words"] == shared_words()
    assert set(re.findall(r"<!-- fill:([a-z0-9_]+) -->", PAGE)) == set(served["fills"])
    assert served["fills"] == {**shared_fills(), **fill_texts(TEXT)}
    assert served["fills"]["lines_caption"] == page_words()["lines_caption"]
    assert served["fills"]["bridge_note"] == page_words()["bridge_none"]


def test_each_zoom_option_says_the_px_per_cell_its_value_sets():
    for px in ZOOMS:
        assert TEXT[f"zoom_{px}"] == {"text": f"{px} px per cell", "claims": {"px": px}}
        assert f'<option value="{px}"><!-- fill:zoom_{px} --></option>' in PAGE


def test_the_generation_words_name_no_model_the_chosen_one_writes():
    # the model that writes is the chosen one where it is a decoder: GET /api/models/about names it
    # (its writer_note; tests/web/realmodel/test_found.py), so the panel's fixed words name none
    assert TEXT["gen_title"] == "Let the model continue the text"
    assert "SmolLM2" not in TEXT["gen_hint"] and TEXT["gen_hint"].endswith("through its blocks.")
    assert TEXT["gen_steps_hint"]["claims"]["top"] == STEP_TOP == 5


def test_the_probe_note_says_the_run_is_written_several_times():
    repeats = TEXT["probe_note"]["claims"]["repeats"]
    run = probe.repeated_run(7)
    assert repeats == run["repeats"] == probe.REPEATS >= 2
    assert run["text"] == " ".join(run["run"] * repeats)


def test_top_k_zero_is_off_and_a_binned_cell_is_its_blocks_largest_share():
    assert TEXT["top_k_label"]["claims"] == {"off": 0}
    logits = np.array([3.0, 1.0, -2.0, 0.5])
    cut = sampling.cut(logits, sampling.Sampling(temperature=1.0, top_k=0))
    assert cut.after_top_k.all() and (cut.p > 0).all()
    assert (cut.p == sampling.cut(logits, sampling.Sampling(temperature=1.0)).p).all()
    assert TEXT["model_view_hint"]["claims"] == {"binned": "max"}
    rng = np.random.default_rng(3)
    w = rng.random((7, 7))
    allowed = np.tril(np.ones((7, 7), dtype=bool))
    cells = thumbnails(w, allowed, 3)
    assert cells[2, 0] == np.where(allowed, w, -np.inf)[4:7, 0:2].max()
