"""The words for a refused weight file (lab/realmodel/weightfiles.py): one line, its own facts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from attnlab.lab.realmodel import weightfiles as w

# a path or a tensor name on one line (no control characters or line separators)
paths = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=60)
names = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=40)
sizes = st.integers(0, 1 << 50)


def one_line(text: str) -> None:
    assert text and len(text.splitlines()) == 1


@given(paths, sizes, sizes, st.one_of(st.none(), names))
def test_a_file_cut_short_says_where_it_runs_to_and_how_long_it_is(path, needed, size, tensor):
    text = w.truncated(path, needed, size, tensor)
    one_line(text)
    assert text.startswith(f"{path} is cut short: ")
    assert f"runs to byte {needed:,}," in text and f"the file has {size:,} byte" in text
    assert ("its header" in text) == (tensor is None)
    if tensor is not None:
        assert f"tensor {tensor!r}" in text


shapes = st.lists(st.integers(1, 1 << 20), min_size=1, max_size=4)


@given(paths, names, st.sampled_from(["F32", "Q4_K", "Q6_K"]), shapes, sizes, sizes)
def test_a_misfit_tensor_names_its_type_shape_and_byte_counts(path, tensor, kind, shape, needed, stored):
    text = w.tensor_bytes(path, tensor, kind, shape, needed, stored, 256)
    one_line(text)
    shown = "(" + ", ".join(f"{n:,}" for n in shape) + ")"
    assert text.startswith(f"{path}: tensor {tensor!r} is {kind} of shape {shown}")
    assert f"takes {needed:,} byte" in text and f"holds {stored:,} byte" in text


def test_rows_that_are_not_whole_blocks_say_the_block_and_the_row():
    text = w.tensor_bytes("m.gguf", "w", "Q4_K", (3, 40), None, 0, 256)
    assert text == ("m.gguf: tensor 'w' is Q4_K of shape (3, 40), but Q4_K stores rows in whole blocks of "
                    "256 weights and its rows have 40")


def test_counts_agree_with_their_nouns():
    assert w.truncated("f", 24, 1).endswith("but the file has 1 byte; download it again")
    text = w.tensor_bytes("f", "t", "F32", (1,), 1, 2, 1)
    assert "which takes 1 byte, but the file holds 2 bytes for it" in text


@given(paths, names, st.integers(0, 2**32 - 1))
def test_an_unknown_type_is_named_by_its_number(path, tensor, number):
    text = w.unknown_tensor_type(path, tensor, number)
    one_line(text)
    assert text == f"{path}: tensor {tensor!r} has tensor type number {number}, which is not a GGUF type"


def test_an_unreadable_type_names_itself_and_what_is_read():
    text = w.unreadable_tensor_type("m.gguf", "blk.0.ffn_down.weight", "IQ2_XS", ("F32", "Q4_K"))
    assert text == ("m.gguf: tensor 'blk.0.ffn_down.weight' is stored as IQ2_XS, which attnlab cannot read "
                    "exactly; it reads F32, Q4_K")


def test_the_header_problems():
    magic = b"PK\x03\x04"
    assert w.not_gguf("a.bin", magic) == f"a.bin is not a GGUF file: it starts with {magic!r}, not b'GGUF'"
    assert w.gguf_version("a.gguf", 4, (2, 3)) == "a.gguf is GGUF version 4; attnlab reads versions 2, 3"
    assert w.unknown_value_type("a.gguf", "k", 13) == (
        "a.gguf: metadata key 'k' has value type number 13, which GGUF does not define")
    assert w.bad_alignment("a.gguf", 48) == "a.gguf: its general.alignment is 48, not a power of two"
    for problem in w.HEADER_PROBLEMS:
        text = w.bad_safetensors_header("m.safetensors", problem, "w")
        one_line(text)
        assert text.startswith("m.safetensors is not a safetensors file: its header ")
    assert "tensor 'w'" in w.bad_safetensors_header("m.safetensors", "bad_entry", "w")
    assert w.tensor_outside("m.safetensors", "w", 10, 20, 15) == (
        "m.safetensors: tensor 'w' claims bytes 10 to 20 of the data, which holds 15 bytes")
