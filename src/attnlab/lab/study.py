"""One visit's study record, for any set of practice challenges: validation, actions, history.

The browser holds the study (it lives for one visit: reloading clears it) and
sends it with each action; :meth:`StudyRules.apply` applies the action and
returns the new study, so the rules live in one tested place. A study is
plain data::

    {"version": 1,
     "active": {"challenge": id, "attempt": n} or None,
     "before": [help, ...],              # help used before any attempt
     "challenges": {id: {"current": n, "attempts": [
         {"response": ..., "feedback": {"met": bool, "verdict": said, "words": said, ...} or None,
          "help": [help, ...],
          # with checks=True (the notebook) also:
          "checks": [{"response": ..., "met": bool}, ...], "answer": str or None}]}}}

with ``help = {"kind": ..., "detail": int or None}`` (a detail only for
``hint`` and ``stepper``) and ``said = {"text", "claims"}`` (``lab.said``). A
study exported before feedback carried claims has ``"words": str``; it is read
as that text with no claims. Rules, the same for every part of the lab:

- each attempt keeps its own response, feedback and help (and checks);
- clearing a response clears its feedback and keeps its help and checks;
- a hint, and the answer ("Show answer"), are recorded on their challenge's
  current attempt;
- any other help is a *study detour* and counts as consultation for the
  attempt you leave: the active attempt, or ``before`` when none is active;
- the same help is recorded once per attempt.

What differs between the notebook's practice (``lab.notebook.history``) and the
block's (``lab.block.history``) is data: a :class:`StudyRules` each. Errors
are ``FieldError``s located in the request the page sends: ``("study",
"before", 0, "kind")``, ``("action", "response", 2)``; messages start with
that field.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass

from attnlab.engine.errors import FieldError, Loc
from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, panel, validate_response, verdict
from attnlab.lab.said import said

ACTIONS = ("open", "submit", "clear", "retry", "goto", "help")
DETAILED = ("hint", "stepper")  # the help kinds that say which one: hint n, step n
MAX_ATTEMPTS = 50
MAX_HELP = 200
MAX_CHECKS = 100
MAX_WORDS = 2000


def new_study() -> dict:
    return {"version": 1, "active": None, "before": [], "challenges": {}}


def check_label(c: dict, n: int, record: dict) -> str:
    """E.g. ``Check 1 · [10, 10, 80] · not yet`` or ``Check 2 · “grows” · right``."""
    response = record["response"]
    form = c["response"]
    if response is None:
        said = "the example as it was"
    elif form["type"] == "choice":
        said = f"“{response}”"
    else:
        said = fmt.vector(response) + (" %" if form["type"] == "shares" else "")
    return f"Check {n} · {said} · {'right' if record['met'] else 'not yet'}"


def _whole(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True)
class StudyRules:
    """One part's study: its challenges, its help kinds and what its attempts keep.

    ``help_kinds`` maps each kind to its history label (``{detail}`` and, for a
    hint, ``{total}`` filled in); ``max_detail`` bounds a detail (a stepper's
    steps). ``checks`` (the notebook) makes attempts keep every Check made, the
    shown answer's words, and feedback's ``load`` flag (the challenge cannot be
    tried on this example: no check); without it (the block) an attempt keeps
    its response, feedback and help only. ``last_check`` (the connection labs: they
    keep every check too) also gives each attempt's history group its last
    check as one line (``checked``), beside the list. A check's errors located under
    ``state_field`` are the state's (``block.x``), not the action's.
    """

    challenges: ChallengeSet
    help_kinds: dict[str, str]
    max_detail: int
    checks: bool = False
    state_field: str | None = None
    last_check: bool = False

    # --- validation -----------------------------------------------------------------

    def help_record(self, x: object, loc: Loc, kind_field: str = "kind") -> dict:
        """Validate one help record ``{"kind", "detail"}`` at ``loc`` (an action names its kind ``help``)."""
        if not isinstance(x, dict) or x.get("kind") not in self.help_kinds:
            raise FieldError(
                (*loc, kind_field), f"must be one of {', '.join(self.help_kinds)}"
            )
        detail = x.get("detail")
        if detail is not None and not _whole(detail):
            raise FieldError((*loc, "detail"), "must be a whole number or null")
        if detail is not None and not 1 <= detail <= self.max_detail:
            raise FieldError(
                (*loc, "detail"), f"is {detail}; it must be 1 to {self.max_detail}"
            )
        if x["kind"] in DETAILED and detail is None:
            raise FieldError((*loc, "detail"), f"is needed for {x['kind']}")
        return {"kind": x["kind"], "detail": detail if x["kind"] in DETAILED else None}

    def _helps(self, xs: object, loc: Loc) -> list[dict]:
        if not isinstance(xs, list) or len(xs) > MAX_HELP:
            raise FieldError(loc, f"must be a list of at most {MAX_HELP} help records")
        return [self.help_record(h, (*loc, i)) for i, h in enumerate(xs)]

    def _checks(self, c: dict, xs: object, loc: Loc) -> list[dict]:
        """Validate an attempt's checks: each ``{"response": ..., "met": bool}``."""
        if not isinstance(xs, list) or len(xs) > MAX_CHECKS:
            raise FieldError(loc, f"must be a list of at most {MAX_CHECKS} checks")
        out = []
        for i, x in enumerate(xs):
            at = (*loc, i)
            if not isinstance(x, dict) or not isinstance(x.get("met"), bool):
                raise FieldError((*at, "met"), "must be true or false")
            response = x.get("response")
            if response is not None or c["response"] is not None:
                response = _response(c, response, at)
            out.append({"response": response, "met": x["met"]})
        return out

    def _feedback(self, feedback: object, at: Loc) -> dict | None:
        """Validate an attempt's feedback: a check's (``words`` a shown sentence with its claims)
        or an older study's (``words`` plain text, kept with no claims); the verdict is remade."""
        if feedback is None:
            return None
        flags = ("load",) if self.checks else ()
        if not (
            isinstance(feedback, dict)
            and isinstance(feedback.get("met"), bool)
            and all(isinstance(feedback.get(f, False), bool) for f in flags)
        ):
            raise FieldError((*at, "feedback"), "is malformed")
        words = _sentence(feedback.get("words"), (*at, "feedback", "words"))
        flagged = {f: feedback[f] for f in flags if f in feedback}  # the notebook's; a lab's has none
        return {"met": feedback["met"], "verdict": verdict(feedback["met"]), "words": words} | flagged

    def _attempt_from(self, c: dict, a: object, at: Loc) -> dict:
        if not isinstance(a, dict):
            raise FieldError(at, "must be an object")
        response = a.get("response")
        clean = {
            "response": None if response is None else _response(c, response, at),
            "feedback": self._feedback(a.get("feedback"), at),
            "help": self._helps(a.get("help", []), (*at, "help")),
        }
        if self.checks:
            answer = a.get("answer")
            if answer is not None and not (isinstance(answer, str) and len(answer) <= MAX_WORDS):
                raise FieldError(
                    (*at, "answer"), f"must be text of at most {MAX_WORDS} characters"
                )
            clean["checks"] = self._checks(c, a.get("checks", []), (*at, "checks"))
            clean["answer"] = answer
        return clean

    def from_dict(self, data: object) -> dict:
        """Validate a study sent back by the browser; raise ``FieldError`` located at the field."""
        if not isinstance(data, dict) or data.get("version") != 1:
            raise FieldError("study", "must be an object with version 1")
        study = new_study()
        study["before"] = self._helps(data.get("before", []), ("study", "before"))
        chs = data.get("challenges", {})
        if not isinstance(chs, dict):
            raise FieldError(("study", "challenges"), "must be an object")
        for cid, entry in chs.items():
            loc = ("study", "challenges", str(cid))
            try:
                c = self.challenges.find(cid)
            except FieldError as err:
                raise FieldError(loc, err.problem, **err.refs) from None
            attempts = entry.get("attempts") if isinstance(entry, dict) else None
            if not isinstance(attempts, list) or not 1 <= len(attempts) <= MAX_ATTEMPTS:
                raise FieldError(
                    (*loc, "attempts"), f"must be a list of 1 to {MAX_ATTEMPTS} attempts"
                )
            current = entry.get("current")
            if not _whole(current):
                raise FieldError((*loc, "current"), "must be a whole number")
            if not 0 <= current < len(attempts):
                raise FieldError(
                    (*loc, "current"), f"is {current}; there are {len(attempts)} attempts"
                )
            clean = [self._attempt_from(c, a, (*loc, "attempts", n)) for n, a in enumerate(attempts)]
            study["challenges"][cid] = {"current": current, "attempts": clean}
        active = data.get("active")
        if active is not None:
            if not isinstance(active, dict) or active.get("challenge") not in study["challenges"]:
                raise FieldError(("study", "active"), "names no challenge with attempts")
            n = active.get("attempt")
            if not _whole(n) or not 0 <= n < len(study["challenges"][active["challenge"]]["attempts"]):
                raise FieldError(
                    ("study", "active", "attempt"), "is not an attempt of that challenge"
                )
            study["active"] = {"challenge": active["challenge"], "attempt": n}
        return study

    # --- actions --------------------------------------------------------------------

    def _challenge(self, cid: object) -> dict:
        """The action's challenge, or a ``FieldError`` at ``("action", "challenge")``."""
        try:
            return self.challenges.find(cid)
        except FieldError as err:
            raise err.within("action") from None

    def _new_attempt(self) -> dict:
        more = {"checks": [], "answer": None} if self.checks else {}
        return {"response": None, "feedback": None, "help": []} | more

    def _activate(self, study: dict, cid: str) -> dict:
        """Make ``cid``'s current attempt (its first, new, if it has none) the active one; return it."""
        entry = study["challenges"].setdefault(cid, {"current": 0, "attempts": [self._new_attempt()]})
        study["active"] = {"challenge": cid, "attempt": entry["current"]}
        return entry["attempts"][entry["current"]]

    def apply(
        self,
        study: dict,
        action: object,
        check: Callable[[str, object], dict],
        answer: Callable[[str], str],
    ) -> tuple[dict, str | None]:
        """Return ``(new study, the answer's words or None)`` with ``action`` applied.

        Actions: ``open`` (challenge), ``submit`` (challenge, response), ``clear``
        (challenge), ``retry`` (challenge), ``goto`` (challenge, attempt: 0-based),
        ``help`` (help: one of ``help_kinds``, detail; a hint and the answer name
        their challenge). ``check(id, response)`` gives a submit's feedback on the
        learner's state; ``answer(id)`` the words "Show answer" reveals.
        """
        study = copy.deepcopy(study)
        if not isinstance(action, dict):
            raise FieldError("action", "must be an object")
        kind = action.get("kind")
        if kind not in ACTIONS:
            raise FieldError(("action", "kind"), f"must be one of {', '.join(ACTIONS)}")
        if kind == "help":
            return self._help(study, action, answer)
        cid = self._challenge(action.get("challenge"))["id"]
        self._activate(study, cid)
        entry = study["challenges"][cid]
        if kind == "retry":
            if len(entry["attempts"]) >= MAX_ATTEMPTS:
                raise FieldError("action", f"would make more than {MAX_ATTEMPTS} attempts at one challenge")
            entry["attempts"].append(self._new_attempt())
            entry["current"] = len(entry["attempts"]) - 1
        elif kind == "goto":
            n = action.get("attempt")
            if not _whole(n) or not 0 <= n < len(entry["attempts"]):
                raise FieldError(
                    ("action", "attempt"),
                    f"must be 0 to {len(entry['attempts']) - 1} for challenge {cid}",
                )
            entry["current"] = n
        attempt = self._activate(study, cid)
        if kind == "submit":
            self._submit(attempt, cid, action.get("response"), check)
        elif kind == "clear":
            attempt["response"] = None
            attempt["feedback"] = None
        return study, None

    def _submit(self, attempt: dict, cid: str, response: object, check: Callable) -> None:
        try:
            feedback = check(cid, response)
        except FieldError as err:  # the response's error, e.g. action.response[2]; or the state's
            if self.state_field is not None and err.loc[:1] == (self.state_field,):
                raise
            raise err.within("action") from None
        if self.checks and len(attempt["checks"]) >= MAX_CHECKS:
            raise FieldError("action", f"would make more than {MAX_CHECKS} checks in one attempt")
        attempt["response"] = response
        attempt["feedback"] = feedback
        if self.checks and not feedback.get("load", False):  # a challenge the example cannot try: no check
            attempt["checks"].append({"response": response, "met": feedback["met"]})

    def _help(self, study: dict, action: dict, answer: Callable[[str], str]) -> tuple[dict, str | None]:
        help_ = {"kind": action.get("help"), "detail": action.get("detail")}
        record = self.help_record(help_, ("action",), kind_field="help")
        if record["kind"] not in ("hint", "answer"):  # a detour: counts for the attempt you leave
            a = study["active"]
            if a is None:
                _record(study["before"], record)
            else:
                _record(study["challenges"][a["challenge"]]["attempts"][a["attempt"]]["help"], record)
            return study, None
        c = self._challenge(action.get("challenge"))
        if record["kind"] == "hint" and record["detail"] > len(c["hints"]):
            raise FieldError(
                ("action", "detail"),
                f"is past the last hint: challenge {c['id']} has {len(c['hints'])} hints",
            )
        attempt = self._activate(study, c["id"])
        _record(attempt["help"], record)
        if record["kind"] != "answer":
            return study, None
        words = answer(c["id"])
        if self.checks:
            attempt["answer"] = words
        return study, words

    # --- the history as the page lists it ------------------------------------------

    def help_label(self, record: dict, challenge_id: str | None = None) -> str:
        total = len(self.challenges.find(challenge_id)["hints"]) if record["kind"] == "hint" else 0
        return self.help_kinds[record["kind"]].format(detail=record["detail"], total=total)

    def history(self, study: dict) -> list[dict]:
        """Return the help (and checks) used, grouped: before any attempt, then per challenge and attempt.

        Each group is ``{"heading", "challenge", "attempt" (1-based or None), "help":
        [labels]}``, with ``"checks": [{"label", "met"}]`` when attempts keep checks (every
        Check, right or not yet, in order), and ``"checked"``: the attempt's last check
        (``said``, or None before any check) when they keep none or ``last_check`` is set;
        an attempt's group also carries ``"panel"``, the words of its challenge's panel on
        that attempt (``lab.challenge_set.panel``). Attempts without help say so.
        Challenges follow the page's order.
        """
        groups = []
        if study["before"]:
            helps = [self.help_label(h) for h in study["before"]]
            groups.append(self._group("Before any attempt", None, None, [], helps))
        for c in self.challenges.listed():
            entry = study["challenges"].get(c["id"])
            attempts = entry["attempts"] if entry else []
            for n, a in enumerate(attempts, start=1):
                checks = [
                    {"label": check_label(c, i, x), "met": x["met"]}
                    for i, x in enumerate(a.get("checks", []), start=1)
                ]
                helps = [self.help_label(h, c["id"]) for h in a["help"]] or ["No help used"]
                group = self._group(f"{c['title']} · attempt {n}", c["id"], n, checks, helps, a["feedback"])
                shown = max((h["detail"] for h in a["help"] if h["kind"] == "hint"), default=0)
                group["panel"] = panel(c, n, len(attempts), shown)
                groups.append(group)
        return groups

    def _group(
        self, heading: str, cid: str | None, n: int | None, checks: list, helps: list, feedback=None
    ) -> dict:
        group = {"heading": heading, "challenge": cid, "attempt": n}
        if self.checks:
            group["checks"] = checks
        if (not self.checks or self.last_check) and n is not None:
            group["checked"] = None if feedback is None else checked(feedback["met"])
        return group | {"help": helps}


CHECKED = {True: "✓ Checked: goal met", False: "Checked: not yet"}


def checked(met: bool) -> dict:
    """The history's line for an attempt's last check (the block's attempts keep no list of checks)."""
    return said(CHECKED[met], met=met)


def _response(c: dict, response: object, at: Loc) -> object:
    try:
        return validate_response(c, response)
    except FieldError as err:
        raise err.within(*at) from None


def _sentence(words: object, at: Loc) -> dict:
    """A feedback's words: ``{"text", "claims"}``, or an older study's text (given no claims)."""
    if isinstance(words, str):
        words = {"text": words, "claims": {}}
    ok = (
        isinstance(words, dict)
        and set(words) == {"text", "claims"}
        and isinstance(words["text"], str)
        and len(words["text"]) <= MAX_WORDS
        and isinstance(words["claims"], dict)
        and _claims_size(words["claims"]) <= MAX_WORDS
    )
    if not ok:
        raise FieldError(at, f"must be text of at most {MAX_WORDS} characters, with its claims")
    return {"text": words["text"], "claims": copy.deepcopy(words["claims"])}


def _claims_size(x: object, depth: int = 0) -> int:
    """How big a claims record is (characters of its keys and scalars), or more than MAX_WORDS
    when it is too deep or holds something that is not JSON."""
    if depth > 4:
        return MAX_WORDS + 1
    if isinstance(x, dict):
        if not all(isinstance(k, str) for k in x):
            return MAX_WORDS + 1
        return sum(len(k) + _claims_size(v, depth + 1) for k, v in x.items())
    if isinstance(x, list):
        return sum(1 + _claims_size(v, depth + 1) for v in x)
    if x is None or isinstance(x, bool):
        return 4
    if isinstance(x, (int, float)):
        return 8 if math.isfinite(x) else MAX_WORDS + 1
    if isinstance(x, str):
        return len(x)
    return MAX_WORDS + 1


def _record(helps: list[dict], record: dict) -> None:
    if record not in helps:
        if len(helps) >= MAX_HELP:
            raise FieldError("action", f"cannot be recorded: the help record is full ({MAX_HELP} entries)")
        helps.append(record)
