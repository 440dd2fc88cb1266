"""The bridge to real models: one real row in the explorer's terms, == trace_query on the same vectors."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.display import display_strings
from attnlab.lab.explorer.geometry import pie
from attnlab.lab.realmodel.bridge import LABELLED, bridge_view
from attnlab.lab.realmodel.neuron import row_words
from attnlab.models.toy import ToyModel
from attnlab.web.realmodel.bridge import BridgeView


def _assert_equals_trace_query(view: dict, ref) -> None:
    t = view["trace"]
    assert t["q"] == list(ref.q) and t["keys"] == [list(k) for k in ref.keys]
    assert t["dots"] == list(ref.dots) and t["scores"] == list(ref.scores)
    assert (t["m"], t["z"], t["scale"]) == (ref.m, ref.z, ref.scale)
    assert t["exps"] == list(ref.exps) and t["weights"] == list(ref.weights)
    assert t["output"] == list(ref.output) and t["allowed"] == list(ref.allowed)
    assert (view["d_k"], view["d_v"], view["n_keys"]) == (ref.d_k, ref.d_v, ref.n_sources)


@pytest.mark.parametrize("model, query", [("smollm2", 4), ("minilm", 2)])
def test_the_bridge_is_trace_query_on_the_heads_real_vectors(reference_row, model, query):
    trace = ToyModel(model).trace("one two three four five six seven", details=True)
    view = bridge_view(trace, 1, 1, query)
    ref = reference_row(trace, 1, 1, query)
    _assert_equals_trace_query(view, ref)
    assert view["trace"]["blocked"] == list(ref.blocked)
    # the explorer's strings, and the words of a real row
    explorer = display_strings(ref)
    for ours, theirs in zip(view["display"]["sources"], explorer["sources"]):
        assert {k: ours[k] for k in ("label", "score", "percent", "dot", "allowed")} == {
            k: theirs[k] for k in ("label", "score", "percent", "dot", "allowed")
        }
        key = [float(x) for x in ours["key_precise"].strip("[]").split(", ")]
        assert key == list(ref.keys[ours["index"]])
    assert view["display"]["q_precise"] == explorer["q_precise"] == fmt.precise_vector(ref.q)
    assert [float(x) for x in view["display"]["q_precise"].strip("[]").split(", ")] == list(ref.q)
    assert view["display"]["output_precise"] == explorer["output_precise"]
    # the scale has one meaning: the factor each dot product is multiplied by (the toy's: 1/sqrt(4))
    assert view["display"]["scale"] == "0.5" and view["display"]["scale_shown"] == "1/√4 = 0.5"
    assert [s["exact"] for s in view["display"]["sources"]] == trace.tokens
    assert all(k["exact"] == trace.tokens[k["index"]] for k in view["plane"]["keys"])
    assert view["words"] == row_words(ref, query)
    assert view["geometry"]["pie"] == pie(ref)


def test_the_plane_holds_q_keeps_every_score_and_labels_only_the_top_shares(reference_row):
    trace = ToyModel("minilm").trace(" ".join(f"w{i}" for i in range(20)), details=True)
    view = bridge_view(trace, 0, 1, 7)
    ref = reference_row(trace, 0, 1, 7)
    p = view["plane"]
    q_len = math.sqrt(sum(x * x for x in ref.q))
    assert p["q"] == [q_len, 0.0]
    for key in p["keys"]:  # every score is |q| x (coordinate along q) x scale
        i = key["index"]
        assert key["score"] == ref.scores[i]
        assert math.isclose(q_len * key["x"] * ref.scale, ref.scores[i], rel_tol=1e-9, abs_tol=1e-12)
        v = p["view"]
        assert v["xmin"] <= key["x"] <= v["xmax"] and v["ymin"] <= key["y"] <= v["ymax"]
    top = sorted(range(20), key=lambda i: (-ref.weights[i], i))[:LABELLED]
    assert sorted(k["index"] for k in p["keys"] if k["labelled"]) == sorted(top)
    assert p["caption"]["text"].startswith("A projection")
    assert p["leaves_out"]["text"].startswith("It leaves out the other 2 directions")
    assert "4 dimensions" in p["leaves_out"]["text"]
    assert "only the 5 with the largest shares are labelled" in p["labels_note"]["text"]
    assert p["labels_note"]["claims"]["labelled"] == sorted(top)
    assert "keeps every score exactly" in p["exact"]["text"]


def test_a_query_outside_the_text_is_refused_naming_the_field():
    trace = ToyModel("minilm").trace("one two three", details=True)
    with pytest.raises(ValueError, match=r"^query 3 does not exist; the text has tokens 0..2"):
        bridge_view(trace, 0, 0, 3)


# --- through the app and the real models -------------------------------------------------

TEXT = "The capital of France is Paris. The cat sat on the mat"


@pytest.mark.models
@pytest.mark.parametrize("model, d_k", [("minilm", 32), ("smollm2", 64)])
def test_the_bridge_api_equals_trace_query_on_a_real_head(reference_row, client, traced, model, d_k, request):
    m = request.getfixturevalue(model)
    job = traced(model, TEXT)
    layer, head, query = 2, 5, 9
    r = client.get(f"/api/models/jobs/{job['id']}/bridge/{layer}/{head}/{query}")
    assert r.status_code == 200, r.text
    view = r.json()
    BridgeView.model_validate(view)
    ref = reference_row(m.trace(TEXT, details=True), layer, head, query)
    _assert_equals_trace_query(view, ref)
    assert view["d_k"] == d_k and len(view["trace"]["q"]) == d_k
    assert view["plane"]["caption"]["text"].startswith("A projection")
    assert f"other {d_k - 2} directions" in view["plane"]["leaves_out"]["text"]


@pytest.mark.models
def test_the_bridge_api_refuses_a_bad_path_naming_the_field(client, traced, minilm):
    job = traced("minilm", TEXT)
    n = len(job["result"]["tokens"])
    for path, field in ((f"0/0/{n}", "query"), ("0/12/0", "head"), ("6/0/0", "layer"), ("0/0/-1", "query")):
        r = client.get(f"/api/models/jobs/{job['id']}/bridge/{path}")
        assert r.status_code == 422, (path, r.text)
        assert r.json()["detail"][0]["field"].endswith(field), r.json()
    assert client.get("/api/models/jobs/nope/bridge/0/0/0").status_code == 404


def test_the_eleven_shares_add_up_to_100_and_the_rest_is_100_less_the_top_five():
    # the issue: a real row's eleven shares summed to 101%, and "the rest hold 35% together" stood beside a
    # top five of 66%; now the row's shares are one set and "the rest" is what the top five leave of 100
    trace = ToyModel("minilm").trace("one two three four five six seven eight nine ten eleven", details=True)
    assert len(trace.tokens) == 11
    for layer in range(trace.n_layer):
        for head in range(trace.n_head):
            for query in (0, 5, 10):
                view = bridge_view(trace, layer, head, query)
                shown = [s["percent"] for s in view["display"]["sources"] if s["allowed"]]
                assert total(shown) == 100, shown
                share = view["words"]["share"]
                top_five, rest = share["claims"]["shown"], share["claims"]["rest_shown"]
                assert total(top_five) + value(rest) == 100 or rest.startswith("<")
                assert f"the rest hold {rest} together" in share["text"]


def total(texts) -> Decimal:
    return sum((value(t) for t in texts), Decimal(0))


def value(text: str) -> Decimal:
    """A shown percent as its rounded number (``"<0.01%"``: 0, ``">99.99%"``: 100)."""
    body = text.removesuffix("%")
    return Decimal(0) if body.startswith("<") else Decimal(100) if body.startswith(">") else Decimal(body)
