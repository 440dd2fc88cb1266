"""all-MiniLM-L6-v2 on attnlab's engine against sentence-transformers."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.lab.realmodel.query import query_row

pytestmark = pytest.mark.models

LONG = " ".join(f"word{i} and, then; more: text." for i in range(60))  # ~400 word pieces

SENTENCES = [
    "The cat sat on the mat.",
    "A man is playing a guitar.",
    "Café, naïve, résumé, façade: accents everywhere!",
    "Élodie mange une crème brûlée à Besançon.",
    "Straße, Übermaß und Größe.",
    "東京は日本の首都です。",
    "我喜欢学习注意力机制。",
    "한국어 문장도 있습니다.",
    "Emoji time 🙂🚀🔥 with text.",
    "👍",
    "What?! No... really; (yes) [maybe] {never} -- ok.",
    "e-mail: someone@example.com, URL https://example.org/a?b=c#d",
    "Numbers 3.14159, 2,718 and 1e-9 are fine.",
    "   leading and trailing spaces   ",
    "UPPER CASE AND lower case",
    "Tabs\tand\nnewlines\nin text",
    "Attention is all you need.",
    "The quick brown fox jumps over the lazy dog near the riverbank at dawn.",
    "Ünïcödé ñ ç ø å ß",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "a",
    LONG,
]


def test_sentences_are_varied_enough():
    assert len(SENTENCES) >= 20


@pytest.mark.oracle
def test_token_ids_equal_sentence_transformers(minilm, st_oracle):
    ours = minilm.tokenize(SENTENCES)
    theirs = st_oracle.preprocess(SENTENCES)
    assert ours.ids.shape == tuple(theirs["input_ids"].shape)
    np.testing.assert_array_equal(ours.ids, theirs["input_ids"].numpy())
    np.testing.assert_array_equal(ours.mask, theirs["attention_mask"].numpy())
    assert ours.mask[SENTENCES.index(LONG)].sum() == 256  # cut at sentence-transformers' max


@pytest.mark.oracle
def test_embeddings_equal_sentence_transformers(minilm, st_oracle):
    # small batches: the 256-token text would pad a batch of 32 to 256 tokens on both sides
    ours = minilm.encode(SENTENCES, batch_size=4)
    theirs = st_oracle.encode(SENTENCES, batch_size=4, convert_to_numpy=True)
    assert ours.shape == (len(SENTENCES), 384)
    assert np.abs(ours - theirs).max() <= 1e-6


@pytest.mark.oracle
def test_truncation_at_128_tokens_equals_sentence_transformers(minilm, st_oracle):
    texts = [LONG, "Short one."]
    before = st_oracle.max_seq_length
    st_oracle.max_seq_length = 128
    try:
        theirs = st_oracle.encode(texts, convert_to_numpy=True)
        ids = st_oracle.preprocess(texts)["input_ids"].numpy()
    finally:
        st_oracle.max_seq_length = before
    batch = minilm.tokenize(texts, max_length=128)
    assert batch.ids.shape == (2, 128)
    np.testing.assert_array_equal(batch.ids, ids)
    ours = minilm.encode(texts, max_length=128)
    assert np.abs(ours - theirs).max() <= 1e-6


def test_embeddings_are_unit_length_and_batch_independent(minilm):
    texts = ["The cat sat on the mat.", "A much longer sentence that needs a lot of padding."]
    together = minilm.encode(texts)
    apart = np.vstack([minilm.encode([t]) for t in texts])
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-6)
    # padding is masked out of attention and pooling, so neighbours do not matter
    assert np.abs(together - apart).max() <= 1e-6


def test_similar_sentences_are_closer_than_unrelated_ones(minilm):
    a, b, c = minilm.encode(
        ["A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell."]
    )
    assert a @ b > 0.6 > a @ c


def test_trace_has_every_layer_and_head(minilm):
    trace = minilm.trace("The cat sat on the mat.")
    assert trace.tokens == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]
    assert trace.weights.shape == (6, 12, 9, 9)
    assert trace.weights.dtype == np.float32  # the shipped weights' precision
    np.testing.assert_allclose(trace.weights.sum(-1), 1.0, atol=1e-6)
    assert trace.q is None and trace.scores is None


@pytest.mark.oracle
def test_trace_weights_equal_transformers_attentions(minilm, st_oracle):
    import torch

    text = "Attention weights of a real encoder, café 🙂."
    trace = minilm.trace(text, details=True)
    bert = st_oracle[0].auto_model
    features = st_oracle.preprocess([text])
    before = bert.config._attn_implementation
    bert.set_attn_implementation("eager")  # only the eager path returns attention weights
    try:
        with torch.no_grad():
            out = bert(
                input_ids=features["input_ids"],
                attention_mask=features["attention_mask"],
                output_attentions=True,
            )
    finally:
        bert.set_attn_implementation(before)
    theirs = np.stack([a[0].numpy() for a in out.attentions])  # (layers, heads, T, T)
    weights = trace.all_weights()  # recomputed from the kept q, k, v
    assert weights.shape == theirs.shape
    assert np.abs(weights - theirs).max() <= 1e-5
    # scores are the scaled dot products whose softmax gives the weights
    s = np.stack([trace.layer_scores(layer) for layer in range(trace.n_layer)])
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(e / e.sum(-1, keepdims=True), weights, atol=1e-6)


def test_empty_and_non_text_input_is_refused(minilm):
    with pytest.raises(ValueError, match="texts"):
        minilm.encode([])
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        minilm.encode(["fine", 3])
    with pytest.raises(ValueError, match="text"):
        minilm.trace("")


def test_a_query_row_in_the_explorers_terms_equals_the_heads_weights(minilm):
    trace = minilm.trace("The cat sat on the mat.", details=True)
    row = query_row(trace, 2, 5, 3)  # layer 2, head 5, the query of "sat"
    assert row.labels[3] == "3 sat"
    assert np.abs(np.array(row.weights) - trace.head_weights(2, 5)[3]).max() <= 1e-6
    assert row.scale == pytest.approx(1 / np.sqrt(32))
    with pytest.raises(ValueError, match="layer 6 does not exist"):
        query_row(trace, 6, 0, 0)
