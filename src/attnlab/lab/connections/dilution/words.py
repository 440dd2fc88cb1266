"""The dilution lab's sentences, each built beside its numbers with the claims it makes."""

from __future__ import annotations

import math

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.dilution.walk import SWEEP, DilutionWalk
from attnlab.lab.said import said


def row(w: DilutionWalk) -> dict:
    n = w.keys
    largest, h = w.largest(n), w.spread(n)
    return said(
        f"With {n:,} random keys of d_k = {w.d_k} and the √d_k scaling {w.scaling}, the largest share is "
        f"{fmt.percent(largest)} and the weights' entropy is {fmt.rounded(h)} nats, of at most ln {n:,} = "
        f"{fmt.rounded(math.log(n))} (every key alike).",
        keys=n,
        scaling=w.scaling,
        largest=largest,
        entropy=h,
        most=math.log(n),
    )


def scaling(w: DilutionWalk) -> dict:
    on, off = w.largest(w.keys, True), w.largest(w.keys, False)
    if w.d_k == 1:
        return said(
            "With d_k = 1, √d_k is 1: the scaling changes nothing.",
            d_k=1,
            largest_on=on,
            largest_off=off,
        )
    compare = "sharper" if off > on else ("flatter" if off < on else "as sharp")
    return said(
        f"Without the scaling every score is √{w.d_k} = {fmt.rounded(math.sqrt(w.d_k))} times larger, so the "
        f"softmax is {compare}: the largest share is {fmt.percent(off)} without it and {fmt.percent(on)} "
        "with it.",
        d_k=w.d_k,
        largest_on=on,
        largest_off=off,
        compare=compare,
    )


def trend(w: DilutionWalk) -> dict:
    first, last = w.largest(SWEEP[0]), w.largest(SWEEP[-1])
    verb = "falls" if last < first else "rises"
    return said(
        f"From {SWEEP[0]} to {SWEEP[-1]:,} keys (scaling {w.scaling}), the largest share {verb} from "
        f"{fmt.percent(first)} to {fmt.percent(last)}: softmax has to pick one key out of more and more.",
        first=first,
        last=last,
        falls=last < first,
    )


def sentences(w: DilutionWalk) -> list[dict]:
    return [row(w), scaling(w), trend(w)]
