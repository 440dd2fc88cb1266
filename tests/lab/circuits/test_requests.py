"""A circuits request, once for every surface: checked before anything is queued or run, answered as a
job, and worded from the worker's numbers (the views' numbers are the numerics', as shown)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits import requests
from attnlab.models.circuits.ablation import ablate, layer_change, next_token_change
from attnlab.models.circuits.attribution import logit_attribution
from attnlab.models.circuits.heads import head_reads, head_writes
from attnlab.models.circuits.lens import logit_lens
from attnlab.models.circuits.patching import pair, residual_sweep
from attnlab.models.circuits.runs import run
from attnlab.models.jobs import circuits as work
from attnlab.models.jobs.line import Jobs

pytestmark = pytest.mark.models  # the tokenizers count the texts; the views run the models

EIFFEL = "The Eiffel Tower is in the city of"
CAT, DOG = "The cat sat on the mat.", "The dog sat on the rug."


@pytest.fixture(scope="module")
def eiffel(smollm2):
    """SmolLM2's run of the Eiffel prompt (the numerics the views are compared with)."""
    return run(smollm2, smollm2.encode(EIFFEL))


def encoded(minilm, text: str) -> list[int]:
    return minilm.tokenize([text]).ids[0].tolist()


# -- the checks and the job, before the model ----------------------------------------------------


class Idle:
    """A model the job line never reaches while the test looks (its loader waits)."""

    def __init__(self) -> None:
        self.gate = threading.Event()

    def __call__(self, name):
        self.gate.wait(60)
        raise RuntimeError("not loaded in this test")


@pytest.fixture
def jobs():
    idle = Idle()
    line = Jobs(loader=idle, process=False)
    yield line
    idle.gate.set()
    line.shutdown()


def test_positions_are_counted_from_the_start_so_one_request_is_one_job(jobs):
    last = requests.start(jobs, "lens", model="smollm2", text="The cat sat.", position=-1)
    assert dict(last.arguments) == {"text": "The cat sat.", "position": 3, "token": None}
    assert last.function == work.FUNCTIONS["lens"]
    assert requests.start(jobs, "lens", model="smollm2", text="The cat sat.", position=3) is last
    answer = requests.answer(jobs, last)
    assert (answer["kind"], answer["result"]) == ("lens", None)
    loading = "Loading SmolLM2-135M-Instruct (once per server)…"
    assert answer["stage_display"] in ("Waiting: at the model now", loading)


@pytest.mark.parametrize(
    ("kind", "fields", "loc", "problem"),
    [
        ("lens", {"model": "minilm", "text": "a", "position": -1}, ("model",),
         "cannot show a logit lens: all-MiniLM-L6-v2 is an encoder, with no next token and no unembedding"),
        ("attribution", {"model": "smollm2", "text": "The cat sat.", "position": 4}, ("position",),
         "4 does not exist; the text has tokens 0..3"),
        ("head", {"model": "smollm2", "text": "The cat.", "layer": 30, "head": 0, "position": 0}, ("layer",),
         "30 does not exist; smollm2 has layers 0..29"),
        ("head", {"model": "minilm", "text": "The cat.", "layer": 1, "head": 12, "position": 0}, ("head",),
         "12 does not exist; minilm has heads 0..11"),
        ("ablation", {"model": "smollm2", "text": " ", "heads": "L1H1", "how": "zero"}, ("text",),
         "is empty: type a sentence to look at"),
        ("ablation", {"model": "minilm", "text": "x", "heads": "L6H0", "how": "zero"}, ("heads",),
         "has L6 H0, which minilm does not have: its layers are 0..5 and its heads 0..11"),
        ("patching", {"model": "smollm2", "clean": "The Eiffel Tower is in the city of", "corrupt": "Rome is",
                      "right": " Paris", "other": " Rome", "sweep": "residual", "site": "pre"}, ("corrupt",),
         "is 2 tokens long and the clean prompt 9; patching needs two prompts of the same token length"),
        ("patching", {"model": "smollm2", "clean": "a b", "corrupt": "a c", "right": " Paris",
                      "other": " Paris", "sweep": "residual", "site": "pre"}, ("other",),
         "is the same token as the right answer (␣Paris); give a different one"),
        ("patching", {"model": "smollm2", "clean": "a b", "corrupt": "a c", "right": "", "other": " Rome",
                      "sweep": "residual", "site": "pre"}, ("right",),
         "is empty: give one token of SmolLM2-135M-Instruct, such as ' Paris'"),
        ("patching", {"model": "smollm2", "clean": "a b", "corrupt": "a c", "right": " Parisian",
                      "other": " Rome", "sweep": "residual", "site": "pre"}, ("right",),
         "is 2 tokens for SmolLM2-135M-Instruct (␣Paris + ian); give one token, such as ' Paris'"),
        ("patching", {"model": "minilm", "clean": "a b", "corrupt": "a c", "sweep": "heads",
                      "site": "pre", "first_layer": 4, "last_layer": 2}, ("last_layer",),
         "is 2, below the first layer 4; give a last layer of 4 or more"),
        ("patching", {"model": "minilm", "clean": "a b", "corrupt": "a c", "sweep": "tokens"}, ("sweep",),
         "'tokens' is unknown; use one of residual, heads, mlp, pattern, keys, values"),
        ("census", {"model": "minilm", "text": "a"}, ("kind",),
         "'census' is unknown; use one of ablation, attribution, lens, head, patching"),
    ],
)  # fmt: skip
def test_a_request_the_model_cannot_answer_is_refused_at_its_field_before_it_is_queued(
    jobs, kind, fields, loc, problem
):
    with pytest.raises(FieldError) as caught:
        requests.start(jobs, kind, **fields)
    assert (caught.value.loc, caught.value.problem) == (loc, problem)
    assert jobs.computations == 0


def test_the_arguments_are_the_worker_functions_own():
    name, args = requests.arguments("ablation", model="minilm", text="x", heads="L3H1, L0H2", how="mean")
    assert name == "minilm" and args == {"text": "x", "heads": ((3, 1), (0, 2)), "how": "mean", "layer": None}
    name, args = requests.arguments("patching", model="minilm", clean="a b", corrupt="a c", sweep="values",
                                    first_layer=2)  # fmt: skip
    assert args == {"clean": "a b", "corrupt": "a c", "right": None, "other": None, "position": -1,
                    "sweep": "values", "site": "pre", "first_layer": 2, "last_layer": None,
                    "per_position": False}  # fmt: skip


# -- the words, from the numbers ------------------------------------------------------------------


def test_the_ablation_shows_the_numerics_probabilities_and_loss(smollm2, eiffel):
    heads = [(18, 6), (17, 4)]
    v, cancelled = requests.here("ablation", model="smollm2", text=EIFFEL, heads=heads, how="mean")
    change = next_token_change(ablate(smollm2, eiffel, [(18, 6), (17, 4)], how="mean"))
    rows = v["positions"][:-1]
    assert cancelled is False
    assert [p["p_before"] for p in rows] == change["p_next_before"].tolist()
    assert [p["p_after"] for p in rows] == change["p_next_after"].tolist()
    assert [p["loss_after"] for p in rows] == change["loss_after"].tolist()
    assert v["mean_loss"]["claims"]["after"] == float(np.mean(change["loss_after"]))
    assert [t["id"] for t in v["positions"][-1]["top_after"]] == change["top_ids_after"][-1].tolist()
    ids = [int(i) for i in eiffel.ids]
    assert v["program_source"] == {"model": "smollm2", "ids": ids, "tokens": smollm2.token_labels(ids),
                                   "path": "q4_1"}  # fmt: skip
    with pytest.raises(FieldError) as caught:
        requests.here("ablation", model="smollm2", text=EIFFEL, heads=[(30, 0)])
    assert caught.value.loc == ("heads",)


def test_the_encoders_ablation_shows_how_the_last_layer_moved(minilm):
    ids = encoded(minilm, CAT)
    v, _ = requests.here("ablation", model="minilm", text=CAT, heads="L3H1", how="zero")
    expected = layer_change(ablate(minilm, run(minilm, ids), [(3, 1)]), 5)
    assert v["layer"] == 5 and [p["change"] for p in v["positions"]] == expected["change"].tolist()
    assert v["pooled"]["claims"]["cosine"] == expected["pooled_cosine"]


def test_the_attribution_adds_up_and_says_so(smollm2, eiffel):
    v, _ = requests.here("attribution", model="smollm2", text=EIFFEL)
    a = logit_attribution(smollm2, eiffel)
    claims = v["exact"]["claims"]
    assert (claims["total"], claims["logit"], claims["bound"]) == (a.total, a.logit, a.bound)
    assert claims["within"] is True and claims["count"] == 1 + 30 * 10
    assert v["token"]["label"] == "␣Paris" and v["label"] == "8 ␣of"
    assert v["map"]["values"][18][6] == a.heads[18, 6] and v["map"]["values"][29][9] == a.mlps[29]


def test_the_lens_names_the_block_the_numerics_found(smollm2, eiffel):
    v, _ = requests.here("lens", model="smollm2", text=EIFFEL)
    lens = logit_lens(smollm2, eiffel)
    named = {"answer": "␣Paris", "first_top1": lens.first_top1, "settled": lens.settled}
    assert v["named"]["claims"] == named
    assert [row["token_rank"] for row in v["layers"]] == lens.token_rank.tolist()
    assert v["layers"][-1]["is_top"] and v["followed"] is None


def test_the_heads_reads_and_writes_are_the_numerics(smollm2, eiffel, minilm):
    v, _ = requests.here("head", model="smollm2", text=EIFFEL, layer=18, head=6, position=-1)
    reads, writes = head_reads(smollm2, eiffel, 18, 6), head_writes(smollm2, eiffel, 18, 6, 8)
    assert [k["before"] for k in v["keys"]] == reads.dots_before[8].tolist()
    assert [k["after"] for k in v["keys"]] == reads.dots_after[8].tolist()
    assert v["group"] == [6, 7, 8] and v["group_words"]["claims"] == {"kv_head": 2, "group": [6, 7, 8]}
    assert [s["index"] for s in v["writes"]["sources"]] == writes.sources.tolist()
    assert [t["id"] for t in v["writes"]["written"]] == writes.written_ids.tolist()
    encoder, _ = requests.here("head", model="minilm", text="The cat sat.", layer=1, head=3, position=2)
    assert encoder["writes"] is None and encoder["rope_words"]["claims"]["rope"] is False


def test_the_patching_view_is_the_sweep_and_a_cancel_keeps_its_partial_cells(minilm):
    p = pair(minilm, encoded(minilm, CAT), encoded(minilm, DOG))
    seen = []
    fields = {"model": "minilm", "clean": CAT, "corrupt": DOG, "sweep": "residual", "first_layer": 4}
    v, cancelled = requests.here("patching", progress=lambda d, t: seen.append((d, t)), **fields)
    s = residual_sweep(minilm, p, layers=[4, 5])
    assert cancelled is False
    assert v["sweep"]["recovered_values"] == s.recovered.tolist()
    assert seen == [(d, 18) for d in range(1, 19)] and v["sweep"]["total"] == 18
    assert v["pair"]["values"]["claims"] == {"clean": p.clean_value, "corrupt": p.corrupt_value}
    stops = iter([False, False, False, True])
    partial, cancelled = requests.here("patching", cancel=lambda: next(stops), **fields)
    assert cancelled is True
    assert partial["sweep"]["cancelled"] is True and partial["sweep"]["done"] == 3
    assert partial["sweep"]["recovered_values"][0][:3] == s.recovered[0, :3].tolist()
    assert partial["sweep"]["recovered_values"][0][3:] == [None] * 6
    stop = threading.Event()
    stop.set()  # an Event (the command's Ctrl-C, the widget's button) stops the sweep before its first patch
    none, cancelled = requests.here("patching", cancel=stop, **fields)
    assert cancelled is True and none["sweep"]["done"] == 0
    assert none["sweep"]["recovered_values"] == [[None] * 9] * 2


def test_every_surface_words_the_workers_numbers_alike(smollm2):
    said = []
    numbers = work.lens(smollm2, lambda *what: said.append(what), lambda: False, text=EIFFEL, position=8,
                        token=None)  # fmt: skip
    assert said == [("running", 0)]
    here, _ = requests.here("lens", model="smollm2", text=EIFFEL)
    assert requests.view("lens", numbers, job="j1") == here | {"job": "j1"}
