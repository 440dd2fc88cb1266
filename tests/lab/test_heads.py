"""A head's one name: written ``L18 H6``, spoken ``Layer 18, head 6``, read back by the heads field."""

from hypothesis import given
from hypothesis import strategies as st

from attnlab.lab.circuits.ablation import parse_heads
from attnlab.lab.heads import FORMAT, head_name, head_spoken, heads_named

HEAD = st.tuples(st.integers(0, 99), st.integers(0, 99))


def test_the_written_and_the_spoken_name():
    assert head_name(18, 6) == "L18 H6"
    assert head_spoken(18, 6) == "Layer 18, head 6"
    assert heads_named([(18, 6), (17, 4)]) == "L18 H6, L17 H4"
    assert FORMAT == "L<layer> H<head>"


@given(st.lists(HEAD, min_size=1, max_size=8, unique=True))
def test_the_heads_field_reads_back_every_name_the_lab_writes(heads):
    assert parse_heads(heads_named(heads)) == heads
    assert parse_heads(", ".join(head_name(*h).replace(" ", "") for h in heads)) == heads  # L18H6 too
