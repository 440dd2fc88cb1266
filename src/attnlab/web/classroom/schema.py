"""The class API's request bodies (strict: unknown fields are refused at their name)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictBool, StrictInt

from attnlab.lab.classroom.names import MAX_NICKNAME
from attnlab.lab.classroom.places import MAX_LINK, MAX_PACE
from attnlab.lab.classroom.snapshot import MAX_PICKED
from attnlab.web.schema import Strict


class JoinIn(Strict):
    nickname: Annotated[str, Field(max_length=MAX_NICKNAME * 8)]  # the lab counts what is left after trimming


class PauseIn(Strict):
    paused: StrictBool


class AnonymiseIn(Strict):
    anonymised: StrictBool


class PaceIn(Strict):
    places: Annotated[list[Annotated[str, Field(max_length=64)]], Field(max_length=MAX_PACE)]


class PushIn(Strict):
    """A link, a practice challenge, or neither (stop pushing)."""

    link: Annotated[str, Field(max_length=MAX_LINK)] | None = None
    challenge: Annotated[str, Field(max_length=64)] | None = None


class SnapshotIn(Strict):
    events: Annotated[list[Annotated[StrictInt, Field(ge=0, le=2**63 - 1)]], Field(max_length=MAX_PICKED)]


class DeleteIn(Strict):
    confirm: Annotated[str, Field(max_length=64)]
