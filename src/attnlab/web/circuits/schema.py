"""The JSON shapes of the Circuits page's requests (``routes.py``), as pydantic models.

What the model's shape or the text's tokens decide (a layer past the last, a position past
the text, two prompts of different lengths) is checked by ``lab/circuits/requests.py``,
in the lab's words; these bound the rest.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool

from attnlab.models.registry import DEFAULT_MAX_CHARS
from attnlab.web.realmodel.schema import ModelName
from attnlab.web.schema import Strict

Text = Annotated[str, Field(max_length=DEFAULT_MAX_CHARS * 4)]
Answer = Annotated[str, Field(max_length=100)]
Layer = Annotated[int, Field(ge=0, le=10_000)]
Position = Annotated[int, Field(ge=-10_000, le=10_000)]  # negative: from the end (-1 = the last token)
Score = Literal["induction", "previous", "first", "duplicate", "breadth"]


class TextIn(Strict):
    text: Text


class AblationIn(Strict):
    """Heads to switch off, as the page's field reads them: ``"L18 H6, L17 H4"``."""

    model: ModelName
    text: Text
    heads: Annotated[str, Field(max_length=1000)]
    how: Literal["zero", "mean"] = "zero"
    layer: Layer | None = None  # the encoder's layer whose output is shown (default: the last)


class PositionIn(Strict):
    """A text and one position (the logit attribution and the lens: a decoder's)."""

    model: ModelName
    text: Text
    position: Position = -1


class HeadIn(Strict):
    model: ModelName
    text: Text
    layer: Layer
    head: Layer
    position: Position = -1


class PatchingIn(Strict):
    """Two prompts of one token length, two answer tokens (a decoder's) and the sweep to run."""

    model: ModelName
    clean: Text
    corrupt: Text
    right: Answer | None = None
    other: Answer | None = None
    position: Position = -1
    sweep: Literal["residual", "heads", "mlp", "pattern", "keys", "values"] = "residual"
    site: Literal["pre", "mid", "post"] = "pre"
    first_layer: Layer | None = None
    last_layer: Layer | None = None
    per_position: StrictBool = False
