"""The dilution lab's sentences, each built beside its numbers with the claims it makes."""

from __future__ import annotations

import math

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.dilution.walk import SWEEP, DilutionWalk
from attnlab.lab.said import said

MOST = 0.5  # "one key still takes more than half of the weight"


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
    """How the largest share moves from the sweep's fewest keys to its most, worded by what it does.

    Claims: ``first`` and ``last`` (the largest share at 2 and at 4,096 keys), ``falls`` (last <
    first), ``most`` (one key still holds more than half of the weight at the end: last > 1/2) and
    ``dilutes`` (the sentence explains dilution: it falls and no key keeps most of the weight).
    Without the scaling (d_k > 1) it also claims ``times`` = √d_k, by which every score is larger.
    """
    first, last = w.largest(SWEEP[0]), w.largest(SWEEP[-1])
    falls, most = last < first, last > MOST
    dilutes = falls and not most
    claims = {"first": first, "last": last, "falls": falls, "most": most, "dilutes": dilutes,
              "scaling": w.scaling}  # fmt: skip
    moved = f"From {SWEEP[0]} to {SWEEP[-1]:,} keys (scaling {w.scaling}), the largest share "
    if last == first:
        moved += f"stays at {fmt.percent(first)}"
    else:
        moved += f"{'falls' if falls else 'rises'} from {fmt.percent(first)} to {fmt.percent(last)}"
    if dilutes:
        return said(
            f"{moved}: the more keys share the weight, the less of it one key keeps. Attention dilutes.",
            **claims,
        )
    why = ""
    if not w.scaled and w.d_k > 1:
        times = math.sqrt(w.d_k)
        claims["times"] = times
        why = (
            f" Without the scaling every score is √{w.d_k} = {fmt.rounded(times)} times larger, and "
            "larger score differences give the top key more of the weight."
        )
    if falls:
        return said(
            f"{moved}, yet one key still takes more than half of the weight: this row does not dilute "
            f"to an even spread.{why}",
            **claims,
        )
    return said(
        f"{moved}: more keys did not dilute this row; one key takes more of the weight at "
        f"{SWEEP[-1]:,} keys than at {SWEEP[0]}.{why}",
        **claims,
    )


def sentences(w: DilutionWalk) -> list[dict]:
    return [row(w), scaling(w), trend(w)]
