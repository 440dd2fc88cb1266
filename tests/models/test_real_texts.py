"""Real texts through both models: every view opens every query of any text the tokenizer accepts.

Texts with line breaks (and a lone carriage return), tabs, control characters (NUL
too), no-break spaces, emoji, right-to-left scripts, lone combining marks and a chat
template's control token; lone surrogates are not text a tokenizer accepts
(JSON cannot carry them), so they are refused at the text field instead.
Also: "Continue the text" continues it (no chat template), the chat choice
applies the template, and the words of real rows claim the rows' numbers.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from attnlab.lab.realmodel.tokens import token_label

pytestmark = pytest.mark.models

PIECES = [
    "cat",
    " sat",
    "\n",
    "\t",
    "\r\n",
    "\x07",
    "\x1b",
    "😀",
    "שלום",
    "مرحبا",
    "\u0301",
    "e\u0301",
    " ",
    "\u200f",
    ".",
    "\x00",
    "\r",
    "\u00a0",
    "<|im_start|>",
]
TEXTS = st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join).filter(lambda t: t.strip())


def _no_nan(text: str) -> dict:
    def refuse(name):
        raise AssertionError(f"{name} in a view's JSON")

    return json.loads(text, parse_constant=refuse)


def _views(client, job: dict, layer: int, head: int) -> None:
    i, n = job["id"], len(job["result"]["tokens"])
    shown = job["result"]["shown"]
    for path in ("model-view", f"heads/{layer}/{head}?packed=true"):
        r = client.get(f"/api/models/jobs/{i}/{path}")
        assert r.status_code == 200, (path, r.text)
        _no_nan(r.text)
    for query in range(n):
        assert shown[query]["label"] == f"{query} {token_label(job['result']['tokens'][query])['label']}"[:32]
        paths = [f"rows/{layer}/{head}/{query}", f"bridge/{layer}/{head}/{query}",
                 f"neuron/{layer}/{head}/{query}/{max(query - 1, 0)}", f"journey/{query}"]  # fmt: skip
        if job["result"]["has_logits"]:
            paths.append(f"next/{query}?temperature=0.7&top_k=40&top_p=0.9")
        for path in paths:
            r = client.get(f"/api/models/jobs/{i}/{path}")
            assert r.status_code == 200, (path, r.text)
            body = _no_nan(r.text)
            if path.startswith("rows"):
                assert [s["exact"] for s in body["sources"]] == job["result"]["tokens"]
            if path.startswith("next"):  # every token shown visibly, its exact text kept
                assert all(e["token_exact"] == e["token"] for e in body["entries"])


@pytest.mark.parametrize(("model", "layer", "head"), [("minilm", 1, 3), ("smollm2", 17, 6)])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
@example(text="The cat\nsat\ton the mat.")
@example(text="a\x00b\rc\u00a0d<|im_start|>e")
def test_every_view_opens_every_query_of_any_text(client, traced, model, layer, head, text, request):
    request.getfixturevalue(model)  # skips when the model is not installed
    _views(client, traced(model, text), layer, head)


def test_a_lone_surrogate_is_refused_at_the_text_field(client):
    body = '{"model": "smollm2", "text": "a\\ud800b"}'
    r = client.post("/api/models/jobs", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert "text" in json.dumps(r.json()["detail"][0]["loc"])


def _generate(client, body: dict) -> dict:
    job = client.post("/api/models/generate", json=body).json()
    deadline = time.monotonic() + 180
    while (job := client.get(f"/api/models/generate/{job['id']}").json())["status"] not in ("done", "error"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert job["status"] == "done", job["message"]
    return job


def test_continue_the_text_continues_it_and_the_chat_choice_applies_the_template(client, traced, smollm2):
    from attnlab.models.chat import user_turn

    text = "The capital of France is"
    job = traced("smollm2", text)
    n = len(job["result"]["tokens"])
    after = client.get(f"/api/models/jobs/{job['id']}/next/{n - 1}").json()
    top = after["entries"][0]
    assert top["token"] == " Paris" and top["token_label"] == "␣Paris"
    # the default is to continue: no template, the first token is the next-token view's arg-max
    plain = _generate(client, {"prompt": text, "max_new_tokens": 3})
    assert not plain["chat"] and plain["mode"] == "Continue the text"
    assert plain["pieces"][0] == " Paris" and plain["steps"][0]["id"] == top["id"]
    # the chat choice wraps it in the template, as the model's own greedy run on the template does
    chat = _generate(client, {"prompt": text, "max_new_tokens": 3, "chat": True})
    ids = list(smollm2.generate_ids(smollm2.encode(user_turn(text)), max_new_tokens=3))
    assert chat["chat"] and [s["id"] for s in chat["steps"]] == ids[: len(chat["steps"])]
    assert chat["mode"] == "Answer as the assistant (chat template)"


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_the_words_of_real_rows_claim_their_numbers(client, traced, model, request):
    request.getfixturevalue(model)
    job = traced(model, "The cat sat on the mat.\nThe dog sat on the rug.")
    n = len(job["result"]["tokens"])
    for layer, head, query in ((0, 0, n - 1), (2, 5, n // 2), (4, 1, 3)):
        view = client.get(f"/api/models/jobs/{job['id']}/bridge/{layer}/{head}/{query}").json()
        t, w = view["trace"], view["words"]
        allowed = [i for i, ok in enumerate(t["allowed"]) if ok]
        top = max(allowed, key=lambda i: (t["weights"][i], -i))
        assert w["summary"]["claims"]["top"] == t["labels"][top]
        assert w["summary"]["claims"]["share"] == t["weights"][top]
        assert w["summary"]["claims"]["blocked"] == len(t["blocked"])
        largest = sorted((t["weights"][i] for i in allowed), reverse=True)[:5]
        assert [x[1] for x in w["share"]["claims"]["largest"]] == largest
        assert math.isclose(w["mix"]["claims"]["length"], float(np.linalg.norm(t["output"])), rel_tol=1e-9)
        assert (
            view["lede"]["claims"]["blocked"] == len(t["blocked"])
            and view["lede"]["claims"]["d_k"] == t["d_k"]
        )


def test_a_lone_surrogate_is_refused_by_the_token_count_too(client):
    body = '{"text": "a\\udc00"}'
    r = client.post("/api/models/smollm2/tokens", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422 and "text" in json.dumps(r.json()["detail"][0]["loc"])
