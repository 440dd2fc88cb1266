"""The cross-attention lab's sentences, each built beside its numbers with the claims it makes.

The chosen patch's Match, Share and Mix are the explorer's own sentences
(``lab.explorer.words.explain``) on that patch's trace: the same calculation,
its queries from the image, its keys and values from the text.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.cross.walk import CONTENT, CrossWalk
from attnlab.lab.explorer.words import explain
from attnlab.lab.said import said


def shows(w: CrossWalk, p: int) -> str:
    kinds = [c for c, f in zip(CONTENT, w.features[p]) if f > 0]
    return kinds[0] if kinds else "nothing in particular"


def patch(w: CrossWalk) -> dict:
    t = w.traces[w.patch]
    return said(
        f"Patch ({w.row}, {w.col}) shows {shows(w, w.patch)}: its query q = {fmt.vector(t.q)} comes from "
        "the image; "
        f"the keys and values come from the {len(w.words)} words of the text.",
        patch=[w.row, w.col],
        shows=shows(w, w.patch),
        q=list(t.q),
        words=list(w.words),
    )


def explorer(w: CrossWalk) -> list[dict]:
    words = explain(w.traces[w.patch])
    return [said(getattr(words, part), **words.claims[part]) for part in ("match", "share", "mix")]


def patch_shares(w: CrossWalk, p: int) -> list[str]:
    """Patch ``p``'s shares over the words as every view shows them: one set, adding up to 100."""
    return fmt.percents(w.traces[p].weights)


def map_texts(w: CrossWalk) -> list[list[str]]:
    """The map's cells: each patch's share for the chosen word, as that patch's own shares show it."""
    return [[patch_shares(w, r * w.grid + c)[w.word] for c in range(w.grid)] for r in range(w.grid)]


def shared_split(w: CrossWalk) -> tuple[str, str]:
    """Under shared attention, what the chosen patch gives the words and the patches: two texts that
    add up to 100 (the patch's whole row rounded as one set)."""
    row = w.shared.weights[w.patch].tolist()
    words, patches = range(w.patches, len(row)), range(w.patches)
    return fmt.percent_together(row, words), fmt.percent_together(row, patches)


def word_map(w: CrossWalk) -> dict:
    cells = [x for row in w.word_map() for x in row]
    texts = [x for row in map_texts(w) for x in row]
    most = max(range(len(cells)), key=lambda p: cells[p])
    least = min(range(len(cells)), key=lambda p: cells[p])
    name = w.words[w.word]
    return said(
        f"The map of “{name}”: each patch's share for it. It is largest, {texts[most]}, at "
        "patch "
        f"({most // w.grid}, {most % w.grid}), which shows {shows(w, most)}; its smallest is "
        f"{texts[least]}.",
        word=name,
        largest=cells[most],
        at=[most // w.grid, most % w.grid],
        smallest=min(cells),
    )


def shared(w: CrossWalk) -> dict:
    text = w.shared_text_share()
    to_words, to_patches = shared_split(w)
    return said(
        f"Shared attention puts the {w.patches} patches and the {len(w.words)} words in one sequence with "
        "ordinary "
        f"self-attention: patch ({w.row}, {w.col}) then gives {to_words} of its attention to the "
        "words "
        f"and {to_patches} to the patches. Under cross-attention all of it goes to the words.",
        text_share=text,
        image_share=1 - text,
    )


def sentences(w: CrossWalk) -> list[dict]:
    return [patch(w), *explorer(w), word_map(w), shared(w)]
