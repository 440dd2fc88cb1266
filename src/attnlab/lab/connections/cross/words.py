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


def word_map(w: CrossWalk) -> dict:
    cells = [x for row in w.word_map() for x in row]
    most = max(range(len(cells)), key=lambda p: cells[p])
    name = w.words[w.word]
    return said(
        f"The map of “{name}”: each patch's share for it. It is largest, {fmt.percent(cells[most])}, at "
        "patch "
        f"({most // w.grid}, {most % w.grid}), which shows {shows(w, most)}; its smallest is "
        f"{fmt.percent(min(cells))}.",
        word=name,
        largest=cells[most],
        at=[most // w.grid, most % w.grid],
        smallest=min(cells),
    )


def shared(w: CrossWalk) -> dict:
    text = w.shared_text_share()
    return said(
        f"Shared attention puts the {w.patches} patches and the {len(w.words)} words in one sequence with "
        "ordinary "
        f"self-attention: patch ({w.row}, {w.col}) then gives {fmt.percent(text)} of its attention to the "
        "words "
        f"and {fmt.percent(1 - text)} to the patches. Under cross-attention all of it goes to the words.",
        text_share=text,
        image_share=1 - text,
    )


def sentences(w: CrossWalk) -> list[dict]:
    return [patch(w), *explorer(w), word_map(w), shared(w)]
