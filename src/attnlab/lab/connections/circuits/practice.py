"""The circuits lab's practice: goals checked on SmolLM2's recorded run for the learner's probe.

Words: ``lab/data/connections/circuits.json``.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.circuits import words
from attnlab.lab.connections.circuits.answer import recorded
from attnlab.lab.connections.circuits.copying import Copying
from attnlab.lab.heads import head_name

CHALLENGES = ChallengeSet("connections/circuits.json")
WAIT = "Wait for SmolLM2's run on the probe, then check."


def _feeder(c: Copying, response) -> dict:
    layer, head = response
    claims = {"response": [layer, head], "tested": [list(h) for h in c.tested]}
    if not (float(layer).is_integer() and float(head).is_integer()):
        return feedback(False, "A layer and a head are whole numbers, such as 16 and 0.", **claims)
    h = (int(layer), int(head))
    i = c.feeder
    if h not in c.tested:
        return feedback(False, f"{head_name(*h)} is not one of the heads tested: read the bars' labels.",
                        **claims)  # fmt: skip
    j = c.tested.index(h)
    drop = c.drops[j]
    shown = words.drop_points(c.clean, c.keys[j])  # the difference of the table's two shown percentages
    claims |= {"drop": drop, "largest": c.drops[i], "drop_shown": shown}
    took = f"Switching {head_name(*h)} off takes {fmt.plural(shown, 'point')} through the keys"
    if c.tested.index(h) == i:
        return feedback(True, f"{took}, the most of the heads tested.", **claims)
    return feedback(False, f"{took}; another tested head takes more.", **claims)


def _path(c: Copying, response) -> dict:
    i = c.feeder
    keys_drop, all_drop = c.clean - c.keys[i], c.clean - c.every[i]
    right = "keys" if keys_drop >= all_drop / 2 else "queries"
    claims = {"head": list(c.tested[i]), "keys_drop": keys_drop, "all_drop": all_drop, "right": right,
              "choice": response}  # fmt: skip
    name = head_name(*c.tested[i])
    if response == right:
        keys_shown, all_shown = words.drop_points(c.clean, c.keys[i]), words.drop_points(c.clean, c.every[i])
        text = f"Without {name}, the keys alone take {fmt.plural(keys_shown, 'point')}, and everything "
        claims |= {"keys_shown": keys_shown, "all_shown": all_shown}
        return feedback(True, text + f"{all_shown}.", **claims)
    return feedback(False, f"Compare {name}'s two bars: keys only, then all.", **claims)


def check(challenge_id: object, values: dict, response: object = None, measured: dict | None = None) -> dict:
    ch = CHALLENGES.find(challenge_id)
    response = validate_response(ch, response)
    c, _ = recorded(values, measured or {})
    if c is None or not c.tested:
        return feedback(False, WAIT if c is None else "No head is tested on this probe.", choice=response)
    return {"feeder": _feeder, "path": _path}[ch["id"]](c, response)
