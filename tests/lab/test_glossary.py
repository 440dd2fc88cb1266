"""The one glossary: the jargon the pages use, each term with its forms and a short, plain definition,
served to every page in its words block."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attnlab.lab import glossary
from attnlab.lab.circuits.page import circuits_page
from attnlab.lab.connections.page import connections_page
from attnlab.lab.notebook.page import index_page
from attnlab.lab.page import shared_words
from attnlab.lab.realmodel.page import real_model_page

LAB = Path(glossary.__file__).parent
# the terms the issue found undefined on /real-model and /circuits, with a form each is written in there
REQUIRED = {
    "nats": "nats", "W_O": "W_O", "RMSNorm": "RMSNorm", "γ": "γ", "unembedding": "unembedding",
    "KV head": "KV head", "GQA": "GQA", "K-composition": "K-composition", "logit": "logits",
}  # fmt: skip


def test_the_terms_the_pages_left_undefined_are_defined():
    for term, form in REQUIRED.items():
        t = next(t for t in glossary.TERMS if t.term == term)
        assert form in t.forms and glossary.definition(form) == t.definition


def test_each_term_once_each_form_once_each_definition_a_plain_sentence():
    names = [t.term for t in glossary.TERMS]
    forms = [f for t in glossary.TERMS for f in t.forms]
    assert len(set(names)) == len(names) and len(set(forms)) == len(forms)
    for t in glossary.TERMS:
        assert t.forms[0] in (t.term, t.term + "s") or t.term in t.forms, t
        d = t.definition
        assert d == d.strip() and "  " not in d and d[0].isupper() and d.endswith("."), d
        assert len(d) <= 220, (t.term, len(d))  # short: a tooltip, not an article
        assert not re.search(r"\battnlab\.\w|\b\w+_\w+_\w+|\w\(\)", d), d  # no code identifiers


def test_the_pages_get_it_longest_form_first_with_ids_fit_for_an_element():
    served = glossary.page_glossary()
    longest = [max(len(f) for f in t["forms"]) for t in served["terms"]]
    assert longest == sorted(longest, reverse=True)
    ids = [t["id"] for t in served["terms"]]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids)
    by_term = {t["term"]: t["id"] for t in served["terms"]}
    assert (by_term["W_O"], by_term["γ"], by_term["KV head"]) == ("w-o", "gamma", "kv-head")
    order = list(by_term)
    assert order.index("logit lens") < order.index("logit")  # "logit lens" is found before "logit"


@pytest.mark.parametrize(
    "served",
    [index_page, real_model_page, circuits_page, lambda: connections_page("kv")],
    ids=["main", "real-model", "circuits", "a lab"],
)
def test_every_page_gets_the_glossary_in_its_words(served):
    assert served()["words"]["glossary"] == glossary.page_glossary() == shared_words()["glossary"]


def test_every_term_is_one_the_lab_writes_somewhere():
    """No definition waits for a word no page shows: each term has a form in the lab's words (its
    modules' sentences or its data files), outside the glossary itself."""
    sources = [p.read_text(encoding="utf-8") for p in [*LAB.rglob("*.py"), *LAB.rglob("*.json")]
               if p.name != "glossary.py"]  # fmt: skip
    text = "\n".join(sources)
    for t in glossary.TERMS:
        used = (re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text, re.IGNORECASE) for f in t.forms)
        assert any(used), t.term
