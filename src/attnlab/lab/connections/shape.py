"""The one shape every connection lab has: what its folder's ``LAB`` provides.

A lab is a folder ``lab/connections/<name>/`` whose ``__init__.py`` sets
``LAB = folder_lab(__name__, controls=..., lede=..., ask=...)``: what is the lab's own,
and its modules, found by their names:

- ``controls``: its inputs (:mod:`attnlab.lab.connections.controls`);
- ``answer.answer(values)``: ``{"pictures", "words", "numbers", "data"}`` for those
  values: the pictures' data (:mod:`attnlab.lab.connections.pictures`), the
  sentences with their claims (``lab.said``), the tables "Show every number"
  lists (display strings from ``lab.numbers``) and every number at full
  precision (plain JSON: what the export and the tests read);
- ``program.to_python(values)``: a runnable Python program that prints ``data``'s numbers
  as ``name = value`` lines;
- ``practice.CHALLENGES`` (a ``ChallengeSet`` of ``lab/data/connections/<name>.json``) and
  ``practice.check(challenge_id, values, response)``: a check's feedback
  (``lab.challenge_set.feedback``), computed on the learner's values;
- ``lede``: the paragraph under the lab's title;
- ``ask`` (a lab with a model part only): ``ask(values)``, the model numbers those
  values call for (``live.Ask`` objects). Its ``answer``,
  ``program`` and ``check`` then take one more argument, ``measured``: what came
  back, by run name (:mod:`attnlab.lab.connections.live`; empty where nobody
  passed the numbers in, as when a lab function is called on its own).

The shared modules do the rest the same way for every lab: the page's answer
(``page.py``), practice and its study history (``study.py``), export
(``export.py``), the routes and the page.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from attnlab.lab.challenge_set import ChallengeSet
from attnlab.lab.connections.controls import Control


@dataclass(frozen=True)
class ConnectionLab:
    controls: tuple[Control, ...]
    answer: Callable[[dict], dict]
    program: Callable[[dict], str]
    challenges: ChallengeSet
    check: Callable[[str, dict, object], dict]
    lede: str
    ask: Callable[[dict], tuple] | None = None

    def answer_for(self, values: dict, measured: dict | None = None) -> dict:
        return self.answer(values) if self.ask is None else self.answer(values, measured or {})

    def program_for(self, values: dict, measured: dict | None = None) -> str:
        return self.program(values) if self.ask is None else self.program(values, measured or {})

    def check_for(
        self, challenge_id: str, values: dict, response: object, measured: dict | None = None
    ) -> dict:
        if self.ask is None:
            return self.check(challenge_id, values, response)
        return self.check(challenge_id, values, response, measured or {})


def folder_lab(package: str, *, controls: tuple[Control, ...], lede: str, ask=None) -> ConnectionLab:
    """The lab of the folder ``package`` (its ``__name__``): its own controls, lede and ``ask``, and
    its modules' ``answer.answer``, ``program.to_python`` and ``practice``'s challenges and check."""

    def module(name: str):
        return importlib.import_module(f"{package}.{name}")

    practice = module("practice")
    return ConnectionLab(
        controls=controls,
        answer=module("answer").answer,
        program=module("program").to_python,
        challenges=practice.CHALLENGES,
        check=practice.check,
        lede=lede,
        ask=ask,
    )
