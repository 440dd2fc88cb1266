"""The teacher's view of a class, from its records: who is where, per-challenge counts, predictions.

Inputs are the plain records the web layer reads from the class store:

- ``cls``: ``{"name", "state": {"paused", "pace", "anonymised", ...}, "ended": bool}``;
- ``learners``: ``[{"id", "number", "nickname", "online", "place", "seen_at", "joined_at"}]``;
- ``events``: ``[{"seq", "learner_id", "at", "kind", "part", "challenge", "data"}]``, oldest first.

A learner is *connected* when their page said so and was heard from within
``STALE_MS`` (its heartbeat comes every 15 s): a page on a machine that went away
stops counting within a minute even if its socket never closed. A learner has
*attempted* a challenge once they checked it, and *solved* it once a check met the
goal; *hints* and *answers* count the learners who opened a hint, or showed the
answer, at least once. A prediction's distribution is of each learner's *first*
check of that challenge: their guess before any feedback.

Anonymised, every name is the learner's alias ("Learner 3"), in every string of
the view: the nickname never reaches the teacher's page. Sentences carry their
claims (``lab.said``); sort keys are data beside each row's strings, so the page
sorts without reading its own text.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from functools import cache

from attnlab.lab import numbers as fmt
from attnlab.lab.classroom import names, places
from attnlab.lab.said import said

STALE_MS = 45_000
LEARNER_COLUMNS = {
    "name": "Learner",
    "online": "Connected",
    "where": "Where",
    "checks": "Checks",
    "solved": "Solved",
    "hints": "Hints",
    "answers": "Answers shown",
    "last": "Last check",
}
CHALLENGE_COLUMNS = {
    "title": "Challenge",
    "place": "Part",
    "attempted": "Attempted",
    "solved": "Solved",
    "hints": "Used a hint",
    "answers": "Showed the answer",
}
YES_NO = {True: "yes", False: "no"}
NOWHERE = "—"


@cache
def challenge(part: str, challenge_id: str) -> dict | None:
    """Challenge ``challenge_id`` of ``part`` (with its response form), or None when it is not one."""
    from attnlab.engine.errors import FieldError

    try:
        if part == "notebook":
            from attnlab.lab.notebook import practice

            return practice.challenge(challenge_id)
        if part == "block":
            from attnlab.lab.block import practice as block_practice

            return block_practice.CHALLENGES.find(challenge_id)
        if part.startswith("connections/"):
            from attnlab.lab.connections import registry

            return registry.lab(part.removeprefix("connections/")).challenges.find(challenge_id)
    except (FieldError, ImportError, AttributeError, ValueError):
        return None
    return None


@cache
def notebook_challenges() -> tuple[dict, ...]:
    from attnlab.lab.notebook import practice

    return tuple(practice.challenges())


def clock(ms: int) -> str:
    """A moment as the teacher's clock shows it: ``14:02:33`` (this computer's time zone)."""
    return time.strftime("%H:%M:%S", time.localtime(ms / 1000))


def display_name(learner: dict, anonymised: bool) -> str:
    return names.alias(learner["number"]) if anonymised else learner["nickname"]


def connected(learner: dict, now: int) -> bool:
    seen = learner.get("seen_at")
    return bool(learner.get("online")) and seen is not None and now - seen <= STALE_MS


def where_name(learner: dict) -> str:
    found = places.place_of(learner.get("place"))
    return found["name"] if found else NOWHERE


def response_text(c: dict | None, data: dict) -> str:
    """A check's answer as the view writes it: “grows”, [10, 80, 10] %, [0.5, 1], or q = [2, 1]."""
    response = data.get("response")
    form = c.get("response") if c else None
    if response is None:
        q = data.get("q")
        return f"q = {fmt.vector(q)}" if q else NOWHERE
    if form and form.get("type") == "choice":
        text = next((o["text"] for o in form["options"] if o["id"] == response), str(response))
        return f"“{text}”"
    if isinstance(response, list):
        return fmt.vector(response) + (" %" if form and form.get("type") == "shares" else "")
    return str(response)


def _key(e: dict) -> tuple[str, str]:
    return e["part"] or "", e["challenge"] or ""


def teacher_view(cls: dict, learners: list[dict], events: list[dict], *, now: int) -> dict:
    """Everything the teacher's page draws, as strings, flags and sort keys (see the module)."""
    state = cls.get("state", {})
    anonymised = bool(state.get("anonymised"))
    by_learner: dict[int, list[dict]] = defaultdict(list)
    for e in events:
        if e["learner_id"] is not None and e["kind"] in ("check", "hint", "answer"):
            by_learner[e["learner_id"]].append(e)
    rows = [_learner_row(x, by_learner.get(x["id"], []), anonymised, now) for x in learners]
    joined, online = len(learners), sum(r["online"] for r in rows)
    return {
        "through": events[-1]["seq"] if events else 0,
        "name": cls["name"],
        "summary": said(
            f"{fmt.plural(joined, 'learner')} joined · {online:,} connected", joined=joined, connected=online
        ),
        "status": status_words(cls),
        "state": {
            "paused": bool(state.get("paused")), "ended": bool(cls.get("ended")), "anonymised": anonymised,
            "pace": list(state.get("pace") or []),
        },
        "pace": pace_words(state.get("pace")),
        "pushed": pushed_words(state.get("push")),
        "snapshot": state.get("snapshot"),
        "learners": {"columns": columns(LEARNER_COLUMNS), "rows": rows},
        "challenges": {"columns": columns(CHALLENGE_COLUMNS), "rows": challenge_rows(events, joined)},
        "predictions": predictions(events),
    }


def columns(headings: dict[str, str]) -> list[dict]:
    """A table's columns: key, heading and the sort button's name for a screen reader."""
    return [{"key": k, "label": v, "sort": f"Sort by {v.lower()}"} for k, v in headings.items()]


def status_words(cls: dict) -> dict:
    state = cls.get("state", {})
    if cls.get("ended"):
        return said("Ended: the class records nothing more. Its results are kept.", status="ended")
    if state.get("paused"):
        return said("Paused: every learner's page is read-only until you resume.", status="paused")
    return said("Running: learners' checks and hints arrive here as they happen.", status="running")


def pace_words(pace: list[str] | None) -> dict:
    if not pace:
        return said("Not paced: learners may go anywhere in the lab.", pace=[])
    shown = [places.place(p)["name"] for p in pace if places.place(p)]
    return said(f"Kept to: {'; '.join(shown)}.", pace=list(pace))


def pushed_words(push: dict | None) -> dict | None:
    if not push:
        return None
    what = push.get("title") or push["href"]
    return said(f"Pushed to every screen: {what}", href=push["href"])


def _learner_row(learner: dict, events: list[dict], anonymised: bool, now: int) -> dict:
    checks = [e for e in events if e["kind"] == "check"]
    solved = {_key(e) for e in checks if e["data"].get("met")}
    hints = sum(e["kind"] == "hint" for e in events)
    answers = sum(e["kind"] == "answer" for e in events)
    online = connected(learner, now)
    last = checks[-1]["at"] if checks else None
    name = display_name(learner, anonymised)
    where = where_name(learner) if online else NOWHERE
    return {
        "id": learner["id"],
        "online": online,
        "open": f"Open {name}'s record",
        "cells": {
            "name": name, "online": YES_NO[online], "where": where, "checks": f"{len(checks):,}",
            "solved": f"{len(solved):,}", "hints": f"{hints:,}", "answers": f"{answers:,}",
            "last": clock(last) if last is not None else NOWHERE,
        },
        "sort": {
            "name": names.folded(name) if not anonymised else learner["number"], "online": int(online),
            "where": where, "checks": len(checks), "solved": len(solved), "hints": hints, "answers": answers,
            "last": last or 0,
        },
    }


def challenge_rows(events: list[dict], joined: int) -> list[dict]:
    """A row per challenge: every practice challenge of the main page, then any other one checked."""
    keys: dict[tuple[str, str], None] = {("notebook", c["id"]): None for c in notebook_challenges()}
    tally: dict[tuple[str, str], dict[str, set]] = defaultdict(lambda: defaultdict(set))
    column = {"hint": "hints", "answer": "answers"}
    for e in events:
        kind, who = e["kind"], e["learner_id"]
        if who is None or kind not in ("check", "hint", "answer"):
            continue
        t = tally[(e["part"] or "", e["challenge"] or "")]
        if kind == "check":
            t["attempted"].add(who)
            if e["data"].get("met"):
                t["solved"].add(who)
        else:
            t[column[kind]].add(who)
    for key in tally:
        if challenge(*key):
            keys.setdefault(key, None)
    rows = []
    for part, cid in keys:
        c = challenge(part, cid)
        t = tally[(part, cid)]
        counts = {k: len(t[k]) for k in ("attempted", "solved", "hints", "answers")}
        where = places.place(places.part_place(part))
        rows.append({
            "key": f"{part}:{cid}",
            "part": part,
            "challenge": cid,
            "counts": counts,
            "cells": {
                "title": c["title"], "place": where["name"] if where else part,
                **{k: f"{v:,}" for k, v in counts.items()},
            },
            "words": said(
                f"{c['title']}: {counts['solved']:,} of {fmt.plural(joined, 'learner')} solved it, "
                f"{counts['attempted']:,} tried it.",
                solved=counts["solved"], attempted=counts["attempted"], joined=joined,
            ),
            "sort": {"title": c["title"], "place": where["name"] if where else part, **counts},
        })
    return rows


def _first_checks(events: list[dict]) -> dict[tuple[str, str], list[object]]:
    """Each challenge's first check response per learner (their guess before any feedback)."""
    seen: set[tuple[int, str, str]] = set()
    out: dict[tuple[str, str], list[object]] = defaultdict(list)
    for e in events:
        if e["kind"] != "check" or e["learner_id"] is None:
            continue
        mark = (e["learner_id"], *_key(e))
        if mark in seen:
            continue
        seen.add(mark)
        out[_key(e)].append(e["data"].get("response"))
    return out


def predictions(events: list[dict]) -> list[dict]:
    """For each challenge that asks for an answer: the distribution of the learners' first answers.

    A choice: how many picked each option. Numbers: for each of the form's fields (B %, say), a
    histogram of the guesses: percent in bins of 10 points (0–10 … 90–100; a guess outside 0–100
    counts in the nearest end bin), other numbers in bins of a round width (0.1, 0.25, 0.5, 1, 2, 5…)
    that covers the guesses in at most 10 bins.
    """
    out = []
    for (part, cid), responses in _first_checks(events).items():
        c = challenge(part, cid)
        form = c.get("response") if c else None
        responses = [r for r in responses if r is not None]
        if not form or not responses:
            continue
        n = len(responses)
        if form["type"] == "choice":
            bars = [_bar(o["text"], sum(r == o["id"] for r in responses), n) for o in form["options"]]
            groups = [{"label": form["label"], "bars": bars}]
        else:
            groups = []
            for j, field in enumerate(form.get("names", [])):
                values = [float(r[j]) for r in responses if isinstance(r, list) and len(r) > j]
                groups.append({"label": field, "bars": _histogram(values, percent=form["type"] == "shares")})
        out.append({
            "key": f"{part}:{cid}",
            "title": c["title"],
            "words": said(
                f"{c['title']}: the first answer of {fmt.plural(n, 'learner')}, before any feedback.",
                learners=n,
            ),
            "groups": groups,
        })
    return out


def _bar(label: str, count: int, total: int) -> dict:
    fraction = count / total if total else 0.0
    return {"label": label, "count": count, "fraction": fraction, "text": f"{count:,}"}


def _width(span: float) -> float:
    for w in (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0):
        if span / w <= 10:
            return w
    return 10 ** math.ceil(math.log10(span / 10))


def _histogram(values: list[float], *, percent: bool) -> list[dict]:
    if not values:
        return []
    if percent:
        edges = [float(x) for x in range(0, 101, 10)]
        counts = [0] * 10
        for v in values:
            counts[min(9, max(0, int(v // 10)))] += 1
        labels = [f"{int(a)}–{int(b)} %" for a, b in zip(edges, edges[1:])]
    else:
        lo, hi = min(values), max(values)
        w = _width(max(hi - lo, 1e-9))
        start = math.floor(lo / w) * w
        k = max(1, math.floor((hi - start) / w) + 1)
        counts = [0] * k
        for v in values:
            counts[min(k - 1, int((v - start) // w))] += 1
        labels = [f"{fmt.rounded(start + i * w)} to {fmt.rounded(start + (i + 1) * w)}" for i in range(k)]
    return [_bar(label, c, len(values)) for label, c in zip(labels, counts)]


def learner_detail(learner: dict, events: list[dict], *, anonymised: bool) -> dict:
    """One learner's record, as the row that opens it lists it: each check, hint and answer shown."""
    lines = []
    for e in events:
        if e["kind"] not in ("check", "hint", "answer"):
            continue
        c = challenge(*_key(e))
        title = c["title"] if c else e["challenge"] or NOWHERE
        if e["kind"] == "check":
            verdict = "goal met" if e["data"].get("met") else "not yet"
            what = f"Check · {title} · {response_text(c, e['data'])} · {verdict}"
        elif e["kind"] == "hint":
            what = f"Hint {e['data'].get('detail')} · {title}"
        else:
            what = f"Showed the answer · {title}"
        pick = f"Pick for the snapshot: {what}" if e["kind"] == "check" else None
        lines.append({"seq": e["seq"], "at": clock(e["at"]), "text": what, "pick": pick})
    name = display_name(learner, anonymised)
    return {
        "id": learner["id"],
        "name": name,
        "words": said(f"{name}: {fmt.plural(len(lines), 'recorded step')}.", steps=len(lines)),
        "lines": lines,
    }
