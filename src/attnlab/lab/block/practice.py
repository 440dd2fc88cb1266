"""The block's practice challenges, checked on the learner's block state.

Words (title, prompt, response form, tiered hints, the answer) are data in
``lab/data/block_practice.json``; each goal is checked here from the walk's
numbers (``lab.block.walk``). A check returns ``{"met", "verdict", "words"}``
(``lab.challenge_set.feedback``), the words with the facts they assert as
claims: the words give the engine's numbers and the *direction* of an error, never
the answer; the answer is only given by an explicit "show the answer", which
the study records as help (``lab.block.history``).

``state`` is ``walk``'s keyword arguments: ``x``, ``weights``, ``norm``,
``positions``, ``heads_on`` (None for the given example's).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from attnlab.engine.errors import FieldError
from attnlab.lab import numbers as fmt
from attnlab.lab.block import compare as block_compare
from attnlab.lab.block.data import LABELS, MAX_MAGNITUDE
from attnlab.lab.block.walk import Walk, check_x, walk
from attnlab.lab.block.words import head_kind
from attnlab.lab.challenge_set import PANEL_BUTTONS, ChallengeSet, feedback, validate_response
from attnlab.lab.realmodel import kinds

PREDICTION_TOLERANCE = 0.01  # "to two decimals"
SILENT = 1e-12  # a removal that changes no output number by more than this changes nothing
GROWS = 3.0  # "grows several times larger": the output's size (root of its sum of squares) more than triples
RESIDUAL_SHARE = 0.1


CHALLENGES = ChallengeSet("block_practice.json")
challenges = CHALLENGES.listed  # every challenge as the page shows it (the answers left out)
challenge = CHALLENGES.find


def answer(challenge_id: object) -> str:
    """Return the answer's words (shown only on request, and recorded as help)."""
    return challenge(challenge_id)["answer"]


# The practice panel's fixed words: its buttons (with their screen-reader names) and notes.
CONTROLS = {
    "no_response": "No typed answer: the goal is checked on the block as you have set it above.",
    **PANEL_BUTTONS,
    "reveal": "Show the answer",
    "answer": "Answer (recorded as help):",
    "no_help": "No help used yet in the block section.",
    "history_heading": "From one head to a transformer block",
}


def page_data() -> dict:
    """The practice as the page shows it: title, note, the challenges (no answers) and the panel's words."""
    data = CHALLENGES.data()
    return {"title": data["title"], "note": data["note"], "challenges": challenges(), "words": dict(CONTROLS)}


# --- the goals ----------------------------------------------------------------------


def _fb(met: bool, words: str, **claims) -> dict:
    return feedback(met, words, **claims)


def _head2_previous(w: Walk, response) -> dict:
    """Met when head 2 is a previous-token head by the real models' definition (``lab.realmodel.kinds``)."""
    weights = w.head_rows(1, "weights")
    b, c = weights[1], weights[2]
    named = head_kind(weights)
    previous = named["scores"]["previous"]
    at = kinds.THRESHOLDS["previous-token"]
    pb, pc = fmt.percents(b), fmt.percents(c)  # each row as the page shows it, adding up to 100
    detail = f"In head 2, B gives A {pb[0]} and B {pb[1]}; C gives B {pc[1]} (A {pc[0]}, C {pc[2]})."
    claims = {
        "head": 2,
        "weights": {"B": {"A": b[0], "B": b[1]}, "C": {"A": c[0], "B": c[1], "C": c[2]}},
        "kind": named["kind"],
        "previous": previous,
        "threshold": at,
    }
    share = f"on average {fmt.percent(previous)} of B's and C's attention goes to the token just before"
    if named["kind"] == "previous-token":
        return _fb(True, f"{detail} Head 2 is now a previous-token head: {share}.", **claims)
    return _fb(
        False,
        f"Head 2 is {kinds.kind_phrase(named['kind'])}: {share}, and a previous-token head needs "
        f"{fmt.percent(at)} or more. {detail} Change head 2's queries or keys, not its values.",
        **claims,
    )


def _silent_head(w: Walk, response) -> dict:
    h = int(response[-1]) - 1
    name = f"Head {h + 1}"
    if not w.heads_on[h]:
        return _fb(
            False, f"{name} is switched off already; switch both heads on and change the weights.",
            head=h + 1, on=False,
        )
    change = block_compare.ablation(w)[h]["max_change"]
    claims = {"head": h + 1, "on": True, "max_change": change, "silent": SILENT}
    if change <= SILENT:
        return _fb(
            True,
            f"Switching {name} off changes no output number (largest change {fmt.precise(change)}).",
            **claims,
        )
    return _fb(
        False,
        f"Switching {name} off still changes the output by up to {_amount(change)}. Whatever {name} "
        "computes still reaches the output; find where its numbers enter the rest of the block.",
        **claims,
    )


def _amount(x: float) -> str:
    """A change as the words give it: rounded, or at full precision when rounding would say 0."""
    shown = fmt.rounded(x)
    return fmt.precise(x) if shown == "0" and x != 0.0 else shown


def _ln_stats(w: Walk, response) -> dict:
    row = w.tensors["norm_1.output"][0]
    mean = sum(row) / len(row)
    var = sum((v - mean) ** 2 for v in row) / len(row)
    directions = {}
    for name, guess, actual in (("mean", response[0], mean), ("variance", response[1], var)):
        if abs(guess - actual) > PREDICTION_TOLERANCE:
            directions[name] = "too high" if guess > actual else "too low"
        else:
            directions[name] = "right"
    problems = [f"your {name} is {d}" for name, d in directions.items() if d != "right"]
    if not problems:
        return _fb(
            True,
            f"LN₁'s output for A is {fmt.vector(row)}, mean {fmt.rounded(mean)} and variance "
            f"{fmt.rounded(var, 5)}.",
            row=list(row), mean=mean, variance=var, directions=directions,
        )
    words = " and ".join(problems)
    return _fb(
        False,
        f"{words[0].upper()}{words[1:]}. Think about what each step of LayerNorm leaves.",
        directions={name: d for name, d in directions.items() if d != "right"},  # what the words say
    )


def _size(m: list[list[float]]) -> float:
    return math.sqrt(sum(v * v for row in m for v in row))


def _scale_x10(w: Walk, response) -> dict:
    try:
        big = check_x([[10.0 * v for v in row] for row in w.x])
    except FieldError:
        raise FieldError(
            ("block", "x"), f"is too large to scale by 10: keep every |x| <= {MAX_MAGNITUDE / 10:g}"
        ) from None
    grows = {}
    for norm in ("pre", "post"):
        small = walk(w.x, w.weights, norm=norm, positions=w.positions, heads_on=w.heads_on).output
        large = walk(big, w.weights, norm=norm, positions=w.positions, heads_on=w.heads_on).output
        grows[norm] = _size(large) > GROWS * _size(small)
    right = {(True, True): "both", (True, False): "pre", (False, True): "post", (False, False): "neither"}[
        (grows["pre"], grows["post"])
    ]
    if response == right:
        return _fb(
            True,
            "A pre-norm block carries the residual 10X straight to its output; a post-norm "
            "block ends on a LayerNorm, which undoes the size of its input."
            if right == "pre"
            else f"With these weights {_GROWN[right]}",
            grows=grows, times=GROWS, choice=response,
        )
    return _fb(
        False,
        "Follow the residual stream to the output in each placement: "
        "what is the last step of each block?",
        choice=response,
    )


_GROWN = {
    "pre": "only the pre-norm block's output grows several times larger.",
    "post": "only the post-norm block's output grows several times larger.",
    "both": "both blocks' outputs grow several times larger.",
    "neither": "neither block's output grows several times larger.",
}


def _residual_dominates(w: Walk, response) -> dict:
    ratios = []
    for h_row, a_row in zip(w.tensors["h"], w.tensors["attn"]):
        h_len = math.sqrt(sum(v * v for v in h_row))
        a_len = math.sqrt(sum(v * v for v in a_row))
        if h_len == 0.0:
            ratios.append(0.0 if a_len == 0.0 else math.inf)
        else:
            ratios.append(a_len / h_len)
    worst = max(range(len(ratios)), key=lambda i: ratios[i])
    finite = math.isfinite(ratios[worst])
    shown = f"{fmt.rounded(ratios[worst])} of H's length" if finite else "a vector to a row of H of length 0"
    claims = {"token": LABELS[worst], "ratio": ratios[worst] if finite else None, "limit": RESIDUAL_SHARE}
    if ratios[worst] < RESIDUAL_SHARE:
        return _fb(
            True,
            f"Attention adds at most {shown} (token {LABELS[worst]}); H' is almost H.",
            **claims,
        )
    return _fb(
        False,
        f"At token {LABELS[worst]} attention adds {shown}; it must be under "
        f"{fmt.rounded(RESIDUAL_SHARE)} for every token. Make the attention rows shorter or H's rows longer.",
        **claims,
    )


CHECKS: dict[str, Callable[[Walk, object], dict]] = {
    "head2-previous": _head2_previous,
    "silent-head": _silent_head,
    "ln-stats": _ln_stats,
    "scale-x10": _scale_x10,
    "residual-dominates": _residual_dominates,
}


def check(challenge_id: object, state: dict, response: object = None) -> dict:
    """Check challenge ``challenge_id`` on the block ``state`` with the learner's ``response``.

    Bad block fields raise ``FieldError`` located under ``block``.
    """
    c = challenge(challenge_id)
    response = validate_response(c, response)
    try:
        w = walk(**state)
    except FieldError as err:
        raise err.within("block") from None
    return CHECKS[c["id"]](w, response)
