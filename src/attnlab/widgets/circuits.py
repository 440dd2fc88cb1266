"""The Circuits page's views as notebook widgets: ``CensusView``, ``PatchView`` and ``LensView``.

The kernel computes with the functions the page's server and model worker call, with no web
server: the census of a text's trace (``models.jobs.kinds.trace_text``, then
``lab.realmodel.modelview.model_view``'s scores through ``lab.circuits.census.census_view``, and a
head's ``evidence``), the logit lens and a patching sweep (``lab.circuits.requests.here``: the
same checks, numbers and words as the page's jobs), each on the runs kept for its text
(``models.jobs.kept``: a kernel's views of one text share one run). The widget draws
with the page's own modules (``js/circuits``: ``drawCensus``, ``drawEvidence``, ``drawLens``,
``drawPatching``) and places the lab's words: the page's headings and labels
(``lab.circuits.page.FILLS``) and a sweep's status line (``lab.circuits.status``).

A sweep runs in a thread of the kernel, so the kernel stays free to take the widget's messages:
``done``, ``total`` and ``progress`` (0..1) follow it patch by patch, and the widget's Cancel
button (or :meth:`PatchView.cancel`) sets the event the sweep reads between patches; the
partial sweep is then drawn, its cells not done blank. :meth:`PatchView.wait` blocks until the
sweep has ended. Inputs are checked before anything runs: a bad one raises the page's
``FieldError`` (a ``ValueError``) naming the field (``text``, ``clean``, ``right``, ``position``…).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import traitlets

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits import requests
from attnlab.lab.circuits.census import SCORES, census_view, evidence
from attnlab.lab.circuits.page import FILLS, text_positions
from attnlab.lab.circuits.problems import unknown_choice
from attnlab.lab.circuits.status import circuit_status
from attnlab.lab.fields import job_message
from attnlab.lab.realmodel.modelview import model_view
from attnlab.lab.realmodel.probe import new_seed, repeated_run
from attnlab.models import registry
from attnlab.models.circuits import checks
from attnlab.models.jobs.kinds import patches, trace_text
from attnlab.models.jobs.texts import check_model, check_text, check_tokens
from attnlab.widgets.base import LabWidget


def _words(*keys: str) -> dict[str, str]:
    """The page's own words for a view (``lab.circuits.page.FILLS``), by key."""
    return {key: FILLS[key] for key in keys}


class CircuitsWidget(LabWidget):
    """A view of the Circuits page, drawn by ``widgets/circuits.js`` (which one: ``_kind``)."""

    VIEW = "widgets/circuits.js"
    CSS_FILES = ("lab.css", "realmodel.css", "circuits.css")

    _kind = traitlets.Unicode().tag(sync=True)
    _words = traitlets.Dict().tag(sync=True)


class CensusView(CircuitsWidget):
    """``CensusView(model, text=None, *, seed=None, score="induction")``: every head's score on a text.

    Without ``text``, the page's probe: a random run of words written three times, from
    ``seed`` (a new one when None; the note shown names it). ``score`` colours the map and
    ranks the heads (``"induction"``, ``"previous"``, ``"first"``, ``"duplicate"``,
    ``"breadth"``); ``picked = [layer, head]`` opens that head's evidence (a click in the map
    or the ranked list sets it). ``census`` and ``evidence`` are the answers drawn.
    """

    TITLE = FILLS["census_title"]

    score = traitlets.Unicode("induction").tag(sync=True)
    picked = traitlets.List().tag(sync=True)  # [layer, head] whose evidence is open; [] for none
    _probe = traitlets.Dict().tag(sync=True)  # the probe's note ({text, claims}); {} for a text
    _census = traitlets.Dict().tag(sync=True)
    _evidence = traitlets.Dict().tag(sync=True)

    def __init__(self, model: str, text: str | None = None, *, seed: int | None = None,
                 score: str = "induction") -> None:  # fmt: skip
        name = check_model(model)
        self.probe = None
        if text is None:
            self.probe = repeated_run(new_seed() if seed is None else seed)
            text = self.probe["text"]
        elif seed is not None:
            raise ValueError("give a text or a seed, not both: the seed makes the probe's text")
        check_text(text)  # the one text check every surface makes
        check_tokens(name, text)  # the tokenizer alone: a long text is refused before any weights load
        self.text = text
        self.trace = trace_text(name, text, registry.get_model(name),
                                lambda *_: None)  # fmt: skip
        self._heads = model_view(self.trace)["heads"]  # every head's scores, once per trace
        words = _words("census_title", "census_hint", "score_label", "evidence_hint")
        probe = self.probe["note"] if self.probe else {}
        census = self._census_of(score)
        super().__init__(_kind="census", _words=words, _probe=probe, score=score, _census=census)

    @property
    def census(self) -> dict:
        """The census drawn: the map, the ranked heads and their words (``census_view``)."""
        return self._census

    @property
    def evidence(self) -> dict | None:
        """The picked head's evidence (``lab.circuits.census.evidence``), or None."""
        return self._evidence or None

    def _census_of(self, score: str) -> dict:
        t = self.trace
        return census_view(self._heads, score=score, n_layer=t.n_layer, n_head=t.n_head,
                           n_tokens=len(t.tokens), model=t.model)  # fmt: skip

    @traitlets.validate("score")
    def _known_score(self, proposal):
        if proposal["value"] not in SCORES:
            raise FieldError(("score",), unknown_choice(proposal["value"], SCORES))
        return proposal["value"]

    @traitlets.validate("picked")
    def _a_head(self, proposal):
        value = list(proposal["value"])
        if value:
            if len(value) != 2:
                raise ValueError(f"picked must be [layer, head] or []; got {value!r}")
            self.trace.check(layer=value[0], head=value[1])
        return value

    @traitlets.observe("score", "picked")
    def _redraw(self, _change) -> None:
        with self.hold_sync():
            if self._census.get("score") != self.score:
                self._census = self._census_of(self.score)
            if not self.picked:
                self._evidence = {}
            elif [self._evidence.get(k) for k in ("layer", "head", "score")] != [*self.picked, self.score]:
                layer, head = self.picked
                t = self.trace
                self._evidence = evidence(
                    t.head_weights(layer, head), t.allowed, t.ids, t.tokens, layer=layer, head=head,
                    kv_head=t.kv_head(head), score=self.score, model=t.model,
                )  # fmt: skip


class LensView(CircuitsWidget):
    """``LensView(model, text, position=-1)``: the logit lens of a decoder at one token of ``text``.

    Each block's output read through the final norm and the unembedding: its top 5 tokens,
    the answer's probability and rank, and the block where the answer first leads, named.
    ``position`` counts from the end when negative (-1: the last token) and is kept from the
    start (the widget's picker sets it); ``lens`` is the answer drawn.
    """

    TITLE = FILLS["lens_title"]

    position = traitlets.Int(0).tag(sync=True)
    _positions = traitlets.List().tag(sync=True)  # the picker's options: {value, label, exact}
    _lens = traitlets.Dict().tag(sync=True)

    def __init__(self, model: str, text: str, position: int = -1) -> None:
        spec = registry.spec(check_model(model))
        self._model, self.text = spec.name, text
        first = requests.here("lens", model=spec.name, text=text, position=position)[0]  # the checks, once
        self.tokens = first["program_source"]["tokens"]
        at = first["position"]
        positions = text_positions(model=spec.name, tokens=self.tokens, cap=spec.max_tokens, title=spec.title)
        words = _words("lens_title", "lens_hint", "position_label")
        super().__init__(_kind="lens", _words=words, _positions=positions["positions"], position=at,
                         _lens=first)  # fmt: skip

    @property
    def lens(self) -> dict:
        """The lens drawn (the page's: ``lab.circuits.requests``)."""
        return self._lens

    def _lens_at(self, position: int) -> dict:
        return requests.here("lens", model=self._model, text=self.text, position=position)[0]

    @traitlets.validate("position")
    def _a_token(self, proposal):
        return checks.position(proposal["value"], len(self.tokens), loc=("position",))

    @traitlets.observe("position")
    def _moved(self, _change) -> None:
        if self._lens.get("position") != self.position:
            self._lens = self._lens_at(self.position)


class PatchView(CircuitsWidget):
    """``PatchView(model, clean, corrupt, *, answers=None, sweep="residual", site="pre", first_layer=None,
    last_layer=None)``: a patching sweep of two prompts of one token length, run in the kernel.

    ``answers``: the decoder's two answer tokens (right, other), such as ``(" Paris", " Rome")``;
    the encoder takes none (its metric is the pooled embedding's cosine). ``sweep``:
    ``"residual"`` (each layer × token, at ``site`` "pre", "mid" or "post"), ``"heads"`` (each
    query head's output) or ``"mlp"`` (each layer's MLP output), over layers ``first_layer`` to
    ``last_layer`` (default every layer). The sweep starts at once in a thread; ``status`` is
    ``"running"``, then ``"done"``, ``"cancelled"`` or ``"error"``; ``view`` is the answer drawn.
    """

    TITLE = FILLS["patching_title"]

    status = traitlets.Unicode("running").tag(sync=True)
    done = traitlets.Int(0).tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    progress = traitlets.Float(0.0).tag(sync=True)  # 0..1, as the page's progress bar
    cancel_asked = traitlets.Bool(False).tag(sync=True)
    _status = traitlets.Dict().tag(sync=True)  # the status line's words (lab.circuits.status)
    _view = traitlets.Dict().tag(sync=True)

    def __init__(self, model: str, clean: str, corrupt: str, *, answers: Sequence[str] | None = None,
                 sweep: str = "residual", site: str = "pre", first_layer: int | None = None,
                 last_layer: int | None = None) -> None:  # fmt: skip
        self._cancel = threading.Event()  # first: close() (from __del__ too) sets it
        self._lock = threading.RLock()  # an observer of done may call cancel()
        self._error: BaseException | None = None
        spec = registry.spec(check_model(model))
        texts = (None, None)
        if spec.generates:
            if isinstance(answers, str) or answers is None or len(answers) != 2:
                raise ValueError(f"answers must be two answer tokens for {spec.title}, such as "
                                 "(' Paris', ' Rome')")  # fmt: skip
            texts = (answers[0], answers[1])
        elif answers is not None:
            raise ValueError(f"answers is only for a decoder: {spec.title}'s patching reads the cosine with "
                             "the clean embedding")  # fmt: skip
        fields = {
            "model": spec.name, "clean": clean, "corrupt": corrupt, "right": texts[0], "other": texts[1],
            "sweep": sweep, "site": site, "first_layer": first_layer, "last_layer": last_layer,
        }  # fmt: skip
        _, checked = requests.arguments("patching", **fields)  # every check before anything runs
        self._title = spec.title
        total = patches(spec.name, checked)
        words = _words("patching_title", "patching_hint", "patch_cancel")
        super().__init__(_kind="patch", _words=words, total=total,
                         _status=self._line("running", 0, total))  # fmt: skip
        self.on_msg(self._message)
        self._thread = threading.Thread(target=self._sweep, args=(fields,), name="attnlab-sweep", daemon=True)
        self._thread.start()

    @property
    def view(self) -> dict | None:
        """The sweep's answer (``patching_view``; partial when cancelled), or None while it runs."""
        return self._view or None

    def cancel(self) -> None:
        """Stop the sweep after the patch under way; its partial answer is then drawn."""
        if self.status != "running" or self._cancel.is_set():
            return
        self._cancel.set()  # outside the lock, which the sweep's thread may hold
        with self._lock:
            if self.status == "running":
                self._show("running", self.done)

    def wait(self, timeout: float | None = None) -> dict | None:
        """Block until the sweep has ended (or ``timeout`` seconds); return :attr:`view`.

        Re-raises the error a sweep ended with.
        """
        self._thread.join(timeout)
        if self._error is not None:
            raise self._error
        return self.view

    def close(self) -> None:
        self._cancel.set()  # a closed view's sweep stops after its patch under way
        super().close()

    def _message(self, _widget, content, _buffers) -> None:
        if isinstance(content, dict) and content.get("event") == "cancel":
            self.cancel()

    def _line(self, status: str, done: int, total: int, message: str = "") -> dict:
        return circuit_status(kind="patching", status=status, title=self._title, place=None, done=done,
                              total=total, has_result=status in ("done", "cancelled"), message=message,
                              cancel_asked=self._cancel.is_set())  # fmt: skip

    def _show(self, status: str, done: int, message: str = "") -> None:
        """Set the status traits (under ``_lock``): one message to the view; observers run once all are."""
        line = self._line(status, done, self.total, message)
        with self.hold_sync(), self.hold_trait_notifications():
            self.done = done
            self.status = status
            self.cancel_asked = self._cancel.is_set()
            self.progress = line["progress"]
            self._status = line

    def _progressed(self, done: int, total: int) -> None:
        with self._lock:
            self.total = total
            self._show("running", done)

    def _sweep(self, fields: dict) -> None:
        try:
            view, _ = requests.here("patching", progress=self._progressed, cancel=self._cancel, **fields)
        except Exception as error:  # shown in the view, and raised again by wait()
            self._error = error
            with self._lock:
                self._show("error", self.done, job_message(getattr(error, "loc", None), str(error)))
            return
        with self._lock, self.hold_sync():
            self._view = view
            self._show("cancelled" if view["sweep"]["cancelled"] else "done", view["sweep"]["done"])
