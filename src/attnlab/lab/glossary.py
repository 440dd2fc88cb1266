"""The one glossary: every term of jargon the pages use, with the short definition a learner gets on
hover and on keyboard focus where the term first appears.

Each :class:`Term` has the ``forms`` the pages write it in (``"logit"``, ``"logits"``), matched as whole
words, a capital first letter allowed (a sentence may start with it); a longer form wins over a
shorter one it holds ("logit lens" over "logit"). The pages place the definitions (``js/shared/
glossary.js``, from :func:`page_glossary` in every page's words block): the first occurrence of a
term on the page becomes a focusable ``<dfn>`` described by its definition, shown as a tooltip. The
definitions are fixed words with no numbers of the page in them, so they claim nothing a test must
recompute; ``tests/lab/test_glossary.py`` holds each one to the page's words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    term: str  # its name, as the glossary lists it
    forms: tuple[str, ...]  # how the pages write it (the first is the name)
    definition: str


TERMS = (
    Term("softmax", ("softmax",), "Turns a list of scores into shares that are all positive and add up to "
         "1: each score's exponential, divided by the sum of all of them."),
    Term("logit", ("logits", "logit"), "A score before the softmax. The softmax of a model's logits gives "
         "the probability of each next token; a larger logit, a likelier token."),
    Term("nats", ("nats", "nat"), "The unit of a quantity measured with the natural logarithm, such as a "
         "loss (−ln p) or an entropy: ln 2 ≈ 0.693 nats make one bit."),
    Term("entropy", ("entropy",), "How spread a set of shares is: −Σ p ln p, 0 when one item takes "
         "everything and ln n when n items share equally (in nats)."),
    Term("cross-entropy", ("cross-entropy",), "A loss: −ln of the probability given to the right answer, 0 "
         "when the model is sure and right, large when it gave the answer little probability."),
    Term("d_k", ("d_k",), "The number of coordinates of each query and key; the scores are divided by √d_k "
         "so that their spread does not grow with it."),
    Term("causal mask", ("causal mask",), "A mask that lets each token attend to itself and the tokens "
         "before it only, as when text is written one token at a time."),
    Term("W_O", ("W_O",), "The output matrix of an attention layer: it takes the heads' outputs, side by "
         "side, and maps them back to the size of the residual stream, where they are added."),
    Term("residual stream", ("residual stream",), "The vector each token carries through the model: every "
         "attention layer and MLP adds its output to it, and the last one is read out as logits."),
    Term("MLP", ("MLP", "MLPs"), "The feed-forward part of a block: two linear layers with a nonlinearity "
         "between them, applied to each token on its own."),
    Term("LayerNorm", ("LayerNorm",), "Normalises a vector: subtracts its mean, divides by its standard "
         "deviation, then multiplies each coordinate by a learned weight γ and adds a learned bias."),
    Term("RMSNorm", ("RMSNorm",), "Normalises a vector by dividing it by its root mean square (rms), then "
         "multiplies each coordinate by a learned weight γ. Unlike LayerNorm it subtracts no mean."),
    Term("γ", ("γ",), "Gamma: the learned weight, one per coordinate, that a norm (RMSNorm or LayerNorm) "
         "multiplies by after normalising."),
    Term("pre-norm", ("pre-norm",), "A block that normalises its input before attention and before the "
         "MLP, and adds their outputs to the unnormalised residual stream."),
    Term("post-norm", ("post-norm",), "A block that adds attention's output (and the MLP's) to its input "
         "first and normalises the sum, as the original Transformer did."),
    Term("unembedding", ("unembedding",), "The matrix that turns the model's last residual vector into one "
         "logit per token of the vocabulary."),
    Term("KV head", ("KV heads", "KV head"), "A key and value head. With grouped-query attention several "
         "query heads share one, reading the same keys and values."),
    Term("GQA", ("GQA",), "Grouped-query attention: the query heads come in groups and each group shares "
         "one key and value head, which makes the KV cache smaller."),
    Term("KV cache", ("KV cache",), "The keys and values of the tokens already read, kept so that each new "
         "token computes only its own instead of every earlier token's again."),
    Term("RoPE", ("RoPE",), "Rotary position embedding: each query and key is rotated by an angle that "
         "grows with its position, so their dot product depends on how far apart they are."),
    Term("K-composition", ("K-composition",), "One head's keys reading what an earlier head wrote: an "
         "induction head's keys read the previous-token head's output, which says what came before."),
    Term("induction head", ("induction heads", "induction head"), "A head that, at a token seen before, "
         "attends to the token that came right after it earlier, so the model can copy what came next."),
    Term("previous-token head", ("previous-token heads", "previous-token head"), "A head that puts its "
         "attention on the token just before each token."),
    Term("attention sink", ("attention sink",), "A token, usually the first, that a head rests its "
         "attention on when nothing else matches."),
    Term("ablation", ("ablation", "ablating"), "Switching part of a model off (here a head's output, set to "
         "zero or to its mean) and measuring what changes."),
    Term("patching", ("patching",), "Running one prompt with one activation replaced by its value from "
         "another prompt's run, to see how much of the difference that activation carries."),
    Term("logit lens", ("logit lens",), "Reading the residual stream after a layer through the model's own "
         "final norm and unembedding, as if no layer came after it."),
    Term("direct logit attribution", ("direct logit attribution",), "Splitting a token's logit into the "
         "share each part added (the embedding, each head, each MLP) through the final norm, held fixed."),
    Term("temperature", ("temperature",), "Divides the logits before the softmax: below 1 it sharpens the "
         "probabilities, above 1 it flattens them."),
    Term("top-k", ("top-k",), "Sampling from the k most likely tokens only, their probabilities "
         "renormalised to add up to 1."),
    Term("top-p", ("top-p",), "Sampling from the fewest most likely tokens whose probabilities add up to at "
         "least p, renormalised."),
    Term("float64", ("float64",), "A number stored in 64 bits: about 16 significant digits. The lab's "
         "reference computes in it."),
    Term("float32", ("float32",), "A number stored in 32 bits: about 7 significant digits, the precision "
         "the models' own computation uses."),
    Term("Q4_1", ("Q4_1",), "A way of storing weights in 4 bits: blocks of 32 numbers, each block with its "
         "own scale and minimum, as SmolLM2's GGUF file keeps them."),
    Term("GGUF", ("GGUF",), "The file format the SmolLM2 model ships in: its weights, as stored, with its "
         "tokenizer and settings."),
)

def _slug(term: str) -> str:
    """An id-safe name for a term's definition element: ``W_O`` -> ``w-o``, ``γ`` -> ``gamma``."""
    named = {"γ": "gamma"}
    return named.get(term) or re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


def page_glossary() -> dict:
    """The glossary as every page gets it in its words block: ``{"terms": [{"term", "id", "forms",
    "definition"}]}``, the terms in the order the page should try their forms (longest form first,
    so a longer term wins over a shorter one it holds)."""
    terms = [{"term": t.term, "id": _slug(t.term), "forms": list(t.forms), "definition": t.definition}
             for t in TERMS]  # fmt: skip
    terms.sort(key=lambda t: -max(len(f) for f in t["forms"]))
    return {"terms": terms}


def definition(term: str) -> str:
    """The definition of ``term`` (its name or any of its forms)."""
    for t in TERMS:
        if term == t.term or term in t.forms:
            return t.definition
    raise KeyError(term)
