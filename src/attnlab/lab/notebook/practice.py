"""Practice challenges: goals checked by the engine, feedback that teaches, tiered hints.

The challenges' words (title, prompt, response form, hints) are data in
``lab/data/practice.json``; each goal is checked here, on the held example the
learner has built, with :func:`attnlab.engine.trace_query`. "Row 0" means row
0's unmasked projection (the explorer's default view); "row r's output" means
the masked row.

A response is ``None`` (the goal is the state itself), a choice id, or a list
of numbers (a predicted vector, or predicted shares in percent).

``check`` returns ``{"met": bool, "verdict": said, "words": said, "load": bool}``
(``lab.challenge_set.feedback``): the words' claims are the facts they assert
(the shares they name, the direction of each error). Feedback on a
wrong answer says the *direction* of the error ("your share for A is too
high") and never the right numbers: those come only from :func:`answer`
(the page's "Show answer", which the study history records as help). Words
on the learner's own state (their q, their shares) are not the answer and may
name numbers. ``load`` is true when the challenge cannot be tried on the held
example at all (it is written for the worked A/B/C example and the learner's
sources are called X, Y, Z): the words then offer to load the worked example.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.explorer import challenge as live
from attnlab.lab.explorer.display import share_percents
from attnlab.lab.explorer.examples import WORKED_SEQUENCE
from attnlab.lab.explorer.sequence import STARTING, Held
from attnlab.lab.explorer.texts import worked_fit
from attnlab.lab.notebook import answers
from attnlab.lab.notebook.practice_trace import REFERENCE_Q, largest, row0, shares
from attnlab.lab.said import said

SHARE_TOLERANCE = 0.005  # half a percentage point
NEAR_VB = 0.1
PREDICTION_TOLERANCE = 0.01  # "to two decimals"
PERCENT_TOLERANCE = 1.0  # percentage points
SAME = 1e-9  # outputs this close count as equal
FAR_OFF = 0.5  # a predicted coordinate this far off is "much" too high or low
FAR_OFF_PERCENT = 10.0  # a predicted share this many points off is "much" too high or low
MIN_STEP = 0.5  # "same-shares": how far q must move from the reference
MOVED = 1e-12  # "value-moves": an output coordinate that changes by more than this has moved


def worked_fills() -> tuple[tuple[str, str], ...]:
    """The worked example's vectors as the challenges' words quote them (``{k_A}`` is ``[−1, 2]``).

    ``{q}`` is row 0's query, ``{q_B}`` and ``{q_C}`` rows 1 and 2's, ``{k_X}`` and ``{v_X}``
    source X's key and value, ``{q_step}`` row 0's query plus the step [1, 1]; ``{goal}`` is the
    explorer's live goal, in its one wording (``lab.explorer.challenge.GOAL``).
    """
    ex = WORKED_SEQUENCE

    def shown(v) -> str:
        return fmt.vector(v).replace("-", fmt.MINUS)

    fills = {"q": shown(ex.queries[0]), "q_step": shown([x + 1.0 for x in ex.queries[0]]), "goal": live.GOAL}
    for r, label in enumerate(ex.example.labels):
        fills[f"k_{label}"] = shown(ex.example.keys[r])
        fills[f"v_{label}"] = shown(ex.example.values[r])
        if r:
            fills[f"q_{label}"] = shown(ex.queries[r])
    return tuple(fills.items())


CHALLENGES = ChallengeSet("practice.json", fills=worked_fills())
challenges = CHALLENGES.listed  # every challenge as data (id, title, prompt, response form, hints)
challenge = CHALLENGES.find


def needs(c: dict) -> list[str]:
    """What of the worked example challenge ``c`` needs, in the order :func:`misfit` checks it:
    keys of ``lab.explorer.texts.worked_fit`` (none for a challenge that names its source by role)."""
    if c.get("by_role"):
        return []
    return ["sequence", "labels", "keys"] if c.get("needs_keys") else ["sequence", "labels"]


def page_data() -> dict:
    """The practice section's data; each challenge's ``needs`` names the held view's
    ``worked_fit`` sentences that say why it cannot be tried on the held example."""
    data = CHALLENGES.data()
    return {
        "title": data["title"],
        "note": data["note"],
        "challenges": [{**c, "needs": needs(c)} for c in challenges()],
    }


# --- does the held example fit the challenge? ------------------------------------


def misfit(c: dict, held: Held) -> str | None:
    """Why challenge ``c`` cannot be tried on ``held``, or ``None`` when it can.

    Every challenge names the worked example's sources A, B and C (its hints
    quote their keys), so it needs three sources with those labels; a challenge
    with ``needs_keys`` also needs the worked keys, without which it may have no
    solution. A challenge ``by_role`` (the explorer's live one) names its source
    by position and fits any example with enough sources.
    """
    if c.get("by_role"):
        n = len(held.labels)
        if n <= live.TARGET_INDEX:
            return f"This example has {n} source; add another to try this challenge."
        return None
    fit = worked_fit(held)  # the page shows the same sentences by the challenge
    why = next((fit[need] for need in needs(c) if fit[need] is not None), None)
    return None if why is None else f"{why['text']} Load the A/B/C example to try it."


# --- words that point without telling ----------------------------------------------


def _directions(names: Sequence[str], predicted: Sequence[float], actual: Sequence[float],
                tol: float, far: float) -> dict[str, str]:
    """Each entry's direction: ``right``, ``too high`` or ``too low``, ``much`` in front when far off."""
    out = {}
    for name, p, a in zip(names, predicted, actual):
        if abs(p - a) <= tol:
            out[name] = "right"
        else:
            out[name] = ("much " if abs(p - a) > far else "") + ("too high" if p > a else "too low")
    return out


def _direction(phrases: Sequence[str], directions: dict[str, str]) -> str:
    """Say which entries are too high or too low (and whether by a lot), never by how much."""
    parts = [f"your {ph} is {d}" for ph, d in zip(phrases, directions.values()) if d != "right"]
    right = [ph for ph, d in zip(phrases, directions.values()) if d == "right"]
    words = "; ".join(parts)
    words = words[0].upper() + words[1:] if words else ""
    if right:
        lead = "; your" if words else "Your"
        words += f"{lead} {' and '.join(right)} {'is' if len(right) == 1 else 'are'} right"
    return words + "."


def _distance(d: float) -> str:
    """A distance as the words give it: rounded, or "under 0.0005" when that rounds a non-zero one to 0."""
    shown = fmt.rounded(d)
    return "under 0.0005" if shown == "0" and d > 0.0 else shown


def _listing(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _fb(met: bool, words: str, *, load: bool = False, **claims) -> dict:
    return feedback(met, words, **claims) | {"load": load}


def _shares(t: QueryTrace) -> dict[str, float | None]:
    """The trace's shares by label, as its words list them (None: blocked)."""
    return {label: w if ok else None for label, w, ok in zip(t.labels, t.weights, t.allowed)}


# --- the goals ------------------------------------------------------------------


def _second_over_90(held: Held, response) -> dict:
    """The explorer's live challenge, checked on what the explorer shows."""
    state = live.check(held.explorer_trace())
    label, threshold = state.target, fmt.percent(live.THRESHOLD)
    if not state.available:
        return _fb(False, state.status, **{k: v for k, v in state.claims.items() if k != "met"})
    shown = share_percents(held.explorer_trace())[live.TARGET_INDEX]  # as the explorer shows it
    claims = {"target": label, "share": state.share, "shown": shown, "goal": live.THRESHOLD}
    if state.met:
        return _fb(True, f"{label} takes {shown} of the attention, more than {threshold}.", **claims)
    return _fb(
        False,
        f"{label} takes {shown}; it needs more than {threshold}. Point q further along "
        f"{label}'s key, away from the other keys.",
        **claims,
    )


def _equal_ac(held: Held, response) -> dict:
    t = row0(held)
    a, c = t.weights[0], t.weights[2]
    gap = abs(a - c)
    la, lc = t.labels[0], t.labels[2]
    # to hundredths of a point, so the gap said is the difference of the two shares shown
    shown_a, shown_c = fmt.percent(a, 2), fmt.percent(c, 2)
    try:
        points = fmt.difference(shown_a, shown_c).removeprefix("-")
    except ValueError:  # one of them is a bound (">99.9999%"): no single difference to state
        points = None
    claims = {"shares": {la: a, lc: c}, "shown": {la: shown_a, lc: shown_c}, "gap": gap, "points": points,
              "tolerance": SHARE_TOLERANCE}  # fmt: skip
    if gap <= SHARE_TOLERANCE:
        return _fb(
            True,
            f"{la} takes {shown_a} and {lc} {shown_c} (a gap of {fmt.plural(points, 'point')}"
            f"): their scores are {fmt.rounded(t.scores[0])} and {fmt.rounded(t.scores[2])}. "
            "Equal scores give equal shares.",
            scores={la: t.scores[0], lc: t.scores[2]},
            **claims,
        )
    more, less = (la, lc) if a > c else (lc, la)
    return _fb(
        False,
        f"{la} takes {shown_a} and {lc} {shown_c}: {more} is ahead"
        + (f" by {fmt.plural(points, 'point')}" if points else "")
        + f". Move q so that q meets {less}'s key as much as {more}'s.",
        ahead=more,
        **claims,
    )


def _near_vb(held: Held, response) -> dict:
    t = row0(held)
    vb = t.values[1]
    dist = math.dist(t.output, vb)
    claims = {"distance": dist, "near": NEAR_VB}
    if dist > NEAR_VB:
        return _fb(
            False,
            f"The output {fmt.vector(t.output)} is {fmt.rounded(dist)} from v_B = "
            f"{fmt.vector(vb)}; B takes {share_percents(t)[1]}. Give B a larger share.",
            output=list(t.output), v_b=list(vb), share_b=t.weights[1], **claims,
        )
    if response != "positive":
        return _fb(
            False,
            f"The output is {_distance(dist)} from v_B, close enough; but reconsider why it "
            "cannot reach v_B: what share does softmax give A and C?",
            reason_right=False, **claims,
        )
    if dist == 0.0:
        return _fb(
            True,
            "The output equals v_B here only because A's and C's tiny shares underflowed to "
            "exactly 0 in floating point; in exact arithmetic softmax keeps every share positive.",
            underflow=True, reason_right=True, **claims,
        )
    return _fb(
        True,
        f"The output is {_distance(dist)} from v_B with B at {share_percents(t)[1]}. "
        "Softmax keeps every allowed share positive, so A and C always pull a little.",
        share_b=t.weights[1], reason_right=True, **claims,
    )


def _zero_q(held: Held, response) -> dict:
    t = row0(held, q=[0.0] * len(held.queries[0]))
    actual = [w * 100 for w in t.weights]
    if max(abs(p - a) for p, a in zip(response, actual)) <= PERCENT_TOLERANCE:
        texts = fmt.percents(t.weights, 1)
        shares = ", ".join(f"{label} {text}" for label, text in zip(t.labels, texts))
        rounding = " (rounded to add up to 100)" if len(set(texts)) > 1 else ""
        return _fb(
            True, f"At q = [0, 0] every score is 0, so the shares are {shares}{rounding}.",
            shares=_shares(t), scores=list(t.scores),
        )
    directions = _directions(t.labels, response, actual, PERCENT_TOLERANCE, FAR_OFF_PERCENT)
    words = _direction([f"share for {label}" for label in t.labels], directions)
    total = sum(response)
    claims = {"directions": directions}
    if abs(total - 100) > PERCENT_TOLERANCE:
        words += f" Your shares add up to {fmt.rounded(total, 1)}%; shares always add up to 100%."
        claims["your_total"] = total
    return _fb(False, f"{words} What is every score q·k when q is the zero vector?", **claims)


def _double_q(held: Held, response) -> dict:
    t1 = row0(held)
    t2 = row0(held, q=[2.0 * x for x in held.queries[0]])
    if max(t1.scores) == min(t1.scores):
        return _fb(
            False,
            f"Every score is equal at q = {fmt.vector(t1.q)}, so doubling changes nothing; pick "
            "a q whose scores differ.",
            q=list(t1.q), scores_equal=True,
        )
    sizes = {"largest": max(t1.weights), "largest_doubled": max(t2.weights),
             "shown": [largest(t1), largest(t2)]}  # fmt: skip
    if not max(t2.weights) > max(t1.weights):  # the largest share is 1 in floating point already
        return _fb(
            False,
            f"At q = {fmt.vector(t1.q)} the largest share is {largest(t1)} and at 2q "
            f"it is {largest(t2)}: in floating point it cannot grow any further. "
            "Pick a q whose largest share is well below 100%.",
            q=list(t1.q), scores_equal=False, grows=False, **sizes,
        )
    if response != "grows":
        return _fb(
            False,
            f"Not that one. Try it: note the largest share at q = {fmt.vector(t1.q)}, type "
            f"2q = {fmt.vector(t2.q)} into the query fields, and compare.",
            q=list(t1.q), doubled=list(t2.q), choice_right=False,
        )
    return _fb(
        True,
        f"At q = {fmt.vector(t1.q)} the largest share is {largest(t1)}; at 2q "
        f"it is {largest(t2)}. Doubling q doubles the score differences, so "
        "softmax sharpens.",
        q=list(t1.q), grows=True, choice_right=True, **sizes,
    )


def _block_a_row2(held: Held, response) -> dict:
    want = (False, True, True)
    if held.mask[2] != want:
        return _fb(
            False,
            f"Row 2's mask allows {_allowed(held, 2)}; block {held.labels[0]} and keep "
            f"{held.labels[1]} and {held.labels[2]} allowed.",
            row=2, allowed=_allowed_labels(held, 2), mask_right=False,
        )
    return _prediction(held.row_trace(2), response, "Row 2", row=2, mask_right=True)


def _row0_masked(held: Held, response) -> dict:
    return _prediction(held.row_trace(0), response, "Row 0", row=0)


def _prediction(t: QueryTrace, response, name: str, **more) -> dict:
    err = max(abs(p - o) for p, o in zip(response, t.output))
    if err <= PREDICTION_TOLERANCE:
        return _fb(
            True, f"{name}'s masked output is {fmt.vector(t.output)} (shares {shares(t)}).",
            output=list(t.output), shares=_shares(t), **more,
        )
    directions = _directions(["x", "y"], response, t.output, PREDICTION_TOLERANCE, FAR_OFF)
    words = _direction(["x", "y"], directions)
    return _fb(
        False,
        f"{words} The output is the shares' blend of the allowed values: which sources does "
        f"{name.lower()} allow, and what share does each take?",
        directions=directions, **more,
    )


def _same_shares(held: Held, response) -> dict:
    t = row0(held)
    ref = row0(held, q=REFERENCE_Q)
    start = fmt.vector(REFERENCE_Q)
    step = math.dist(t.q, REFERENCE_Q)
    claims = {"q": list(t.q), "reference": list(REFERENCE_Q), "step": step, "min_step": MIN_STEP}
    if step < MIN_STEP:
        return _fb(
            False,
            f"Your q {fmt.vector(t.q)} is within {MIN_STEP} of {start}; move it further away "
            "and keep the shares.",
            **claims,
        )
    gaps = [w - r for w, r in zip(t.weights, ref.weights)]
    if max(abs(g) for g in gaps) > SHARE_TOLERANCE:
        moved = {
            label: "higher" if g > 0 else "lower"
            for label, g in zip(t.labels, gaps)
            if abs(g) > SHARE_TOLERANCE
        }
        said_moved = [f"{label}'s share is {d}" for label, d in moved.items()]
        return _fb(
            False,
            f"At q = {fmt.vector(t.q)}, {_listing(said_moved)} than at {start}. Look for a step "
            "that changes every score by the same amount.",
            moved=moved, tolerance=SHARE_TOLERANCE, **claims,
        )
    if response != "shift":
        return _fb(
            False,
            f"Your q {fmt.vector(t.q)} keeps the shares ({shares(t)}). But reconsider why: "
            "compare the scores at your q with those at q = [2, 1].",
            shares=_shares(t), moved={}, tolerance=SHARE_TOLERANCE, choice_right=False, **claims,
        )
    rises = {label: s - r for label, s, r in zip(t.labels, t.scores, ref.scores)}
    shown = {fmt.rounded(x) for x in rises.values()}
    if len(shown) == 1:
        rose = f"every score rose by {shown.pop()}"
    else:  # the shares agree within the tolerance, the scores' rises a little less
        rose = "the scores rose by " + _listing([f"{fmt.rounded(x)} ({k})" for k, x in rises.items()])
    return _fb(
        True,
        f"At q = {fmt.vector(t.q)} the shares are {shares(t)}, as at {start}: {rose}, and softmax "
        "only sees the differences.",
        shares=_shares(t), moved={}, tolerance=SHARE_TOLERANCE, rises=rises, choice_right=True, **claims,
    )


def _value_moves(held: Held, response) -> dict:
    now = row0(held)
    before = row0(held, values=STARTING.values)
    if held.values == STARTING.values:
        return _fb(
            False, "The values are still the starting ones; edit a coordinate of a value.",
            values_edited=False,
        )
    moved = any(abs(a - b) > MOVED for a, b in zip(now.output, before.output))
    same = now.weights == before.weights  # the values take no part in the shares
    changed = [label for label, v, v0 in zip(now.labels, held.values, STARTING.values) if v != v0]
    claims = {"values_edited": True, "changed": changed, "shares": _shares(now), "shares_same": same}
    if moved and same:
        return _fb(
            True,
            f"The output moved from {fmt.vector(before.output)} to {fmt.vector(now.output)} "
            f"while the shares stayed {shares(now)}: shares come from q and the keys only.",
            output_before=list(before.output), output=list(now.output), output_moved=True, **claims,
        )
    silent = [label for label in changed if now.weights[now.labels.index(label)] == 0.0]
    why = (
        f"the changed value{'s belong' if len(changed) > 1 else ' belongs'} to "
        f"{'sources' if len(changed) > 1 else 'a source'} with no share"
        if silent == changed
        else f"the change is too small to move it by more than {MOVED:g}"
    )
    return _fb(
        False,
        f"The shares stayed {shares(now)}, but the output did not move: {why}.",
        output_moved=False, no_share=silent == changed, **claims,
    )


def _row2_eq_row1(held: Held, response) -> dict:
    o1, o2 = held.row_trace(1).output, held.row_trace(2).output
    gap = max(abs(a - b) for a, b in zip(o1, o2))
    words = f"Row 1 outputs {fmt.vector(o1)} and row 2 outputs {fmt.vector(o2)}"
    claims = {"outputs": {"1": list(o1), "2": list(o2)}, "gap": gap, "same": SAME}
    if gap <= SAME:
        return _fb(
            True, f"{words}: equal. Same allowed values and same shares give the same mix.", **claims
        )
    return _fb(
        False,
        f"{words}. Row 1 allows {_allowed(held, 1)}; row 2 allows {_allowed(held, 2)}.",
        allowed={"1": _allowed_labels(held, 1), "2": _allowed_labels(held, 2)},
        **claims,
    )


def _allowed_labels(held: Held, r: int) -> list[str]:
    return [label for label, ok in zip(held.labels, held.mask[r]) if ok]


def _allowed(held: Held, r: int) -> str:
    return ", ".join(_allowed_labels(held, r))


# Each challenge's check (held, response -> feedback) and its answer (held, challenge -> said words).
GOALS: dict[str, tuple[Callable[[Held, object], dict], Callable[[Held, dict], dict]]] = {
    live.CHALLENGE_ID: (_second_over_90, answers.second_over_90),
    "equal-ac": (_equal_ac, answers.equal_ac),
    "near-vb": (_near_vb, answers.near_vb),
    "zero-q": (_zero_q, answers.zero_q),
    "double-q": (_double_q, answers.double_q),
    "block-a-row2": (_block_a_row2, answers.block_a_row2),
    "same-shares": (_same_shares, answers.same_shares),
    "value-moves": (_value_moves, answers.value_moves),
    "row2-eq-row1": (_row2_eq_row1, answers.row2_eq_row1),
    "row0-masked": (_row0_masked, answers.row0_masked),
}


def check(challenge_id: object, held: Held, response: object = None) -> dict:
    """Check challenge ``challenge_id`` on ``held`` with the learner's ``response``."""
    c = challenge(challenge_id)
    response = validate_response(c, response)
    why = misfit(c, held)
    if why is not None:
        return _fb(False, why, load=True, fits=False)
    return GOALS[c["id"]][0](held, response)


def answer(challenge_id: object, held: Held) -> dict:
    """The challenge's answer for ``held`` with the engine's numbers (the page's "Show answer"),
    as ``{"text", "claims"}``; when ``held`` does not fit the challenge, why (``fits`` false)."""
    c = challenge(challenge_id)
    why = misfit(c, held)
    if why is not None:
        return said(why, fits=False)
    return GOALS[c["id"]][1](held, c)
