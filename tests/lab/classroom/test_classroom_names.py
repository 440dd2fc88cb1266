"""Nicknames, class names and aliases."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.lab.classroom import names


@pytest.mark.parametrize("typed, shown", [
    ("Ada", "Ada"), ("  Ada   Lovelace ", "Ada Lovelace"), ("Zoë", "Zoë"), ("Zoe\u0308", "Zoë"),
    ("O'Neil-2", "O'Neil-2"), ("tab\tbed", "tab bed"), ("李雷", "李雷"), ("x" * 24, "x" * 24),
])
def test_a_nickname_is_kept_as_typed_once_tidied(typed, shown):
    assert names.nickname(typed)[0] == shown


@pytest.mark.parametrize("typed", [
    "", "   ", "x" * 25, "<b>", "a&b", "Ada\u200b", "😀", "\u0301a", "Learner 7", "learner7", "semi;colon",
])
def test_a_nickname_outside_the_rules_is_refused_at_its_field(typed):
    with pytest.raises(FieldError) as refused:
        names.nickname(typed)
    assert refused.value.loc == ("nickname",)
    assert typed.strip() not in refused.value.problem or not typed.strip()  # the input is never echoed


def test_nicknames_that_fold_alike_are_one():
    assert names.nickname("ADA")[1] == names.nickname("ada")[1] == names.nickname("Ａｄａ")[1]
    assert names.nickname("Zoë")[1] == names.nickname("ZOE\u0308")[1]


@given(st.text(max_size=40))
def test_any_accepted_nickname_is_short_and_holds_no_markup(text):
    try:
        shown, folded = names.nickname(text)
    except FieldError:
        return
    assert 1 <= len(shown) <= names.MAX_NICKNAME
    assert not set(shown) & set("<>&\"/\\`=;:\n\t")
    assert shown == shown.strip() and "  " not in shown and folded == names.folded(shown)


def test_class_names_name_files_safely():
    assert names.class_name("physics-7b") == "physics-7b"
    for bad in ("", "Physics", "../x", "a" * 41, "-x", "a b", ".hidden"):
        with pytest.raises(FieldError):
            names.class_name(bad)


def test_aliases_are_stable_and_never_a_nickname():
    assert [names.alias(n) for n in (1, 2, 12)] == ["Learner 1", "Learner 2", "Learner 12"]
    with pytest.raises(FieldError):
        names.nickname(names.alias(3))
