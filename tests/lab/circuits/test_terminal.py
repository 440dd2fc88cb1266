"""What `attnlab ablate`, `patch` and `lens` print, from the lab's views on made-up numbers (no model):
the lines in order, each table's rows, the number each --python names, the sweep's bar."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from attnlab.lab.circuits import terminal
from attnlab.lab.circuits.ablation import next_token_view
from attnlab.lab.circuits.lens import lens_view

TEXTS = {i: f" t{i}" for i in range(8)}


def lens_of(ranks: list[int]) -> SimpleNamespace:
    n = len(ranks)
    return SimpleNamespace(position=1, top_ids=np.tile(np.arange(5), (n, 1)), top_p=np.full((n, 5), 0.2),
                           answer=0, token=0, token_p=np.linspace(0.1, 0.9, n), token_rank=np.array(ranks),
                           first_top1=ranks.index(0), settled=ranks.index(0))  # fmt: skip


def test_the_lens_lines_and_its_number():
    view = lens_view(lens_of([3, 2, 0, 0]), tokens=["a", " b"], texts=TEXTS)
    lines = terminal.lens_lines(view)
    assert lines[0] == view["lens_words"]["text"] and lines[-1] == view["named"]["text"]
    table = lines[1]
    assert table[0] == view["columns"] and [row[0] for row in table[1:]] == ["0", "1", "2", "3"]
    assert table[3][1] == "␣t0 20%, ␣t1 20%, ␣t2 20%, ␣t3 20%, ␣t4 20%"
    assert table[3][2:] == [view["layers"][2]["token_p_display"], view["layers"][2]["rank_display"]]
    assert terminal.lens_number(view) == {"kind": "lens", "position": 1, "layer": 2, "quantity": "token_p",
                                          "value": view["layers"][2]["token_p"]}  # fmt: skip


def test_the_ablation_lines_and_its_number():
    n = 4
    pb, pa = np.array([0.5, 0.2, 0.9]), np.array([0.5, 0.1, 0.95])
    change = {
        "next_ids": np.array([1, 2, 3]), "p_next_before": pb, "p_next_after": pa,
        "loss_before": -np.log(pb), "loss_after": -np.log(pa),
        "top_ids_before": np.tile(np.arange(3), (n, 1)), "top_p_before": np.full((n, 3), 0.3),
        "top_ids_after": np.tile(np.arange(3), (n, 1)), "top_p_after": np.full((n, 3), 0.3),
        "kl": np.zeros(n),
    }  # fmt: skip
    tokens = ["a", " b", " c", " d"]
    view = next_token_view(change, heads=[(1, 2)], how="zero", tokens=tokens, texts=TEXTS)
    lines = terminal.ablation_lines(view)
    assert lines[:2] == [view["lede"]["text"], view["mean_loss"]["text"]]
    assert lines[2:4] == [s["text"] for s in view["biggest"]]
    table = lines[4]
    assert table[0] == view["columns"] and len(table) == 1 + n - 1  # every token with a next token
    second = view["positions"][1]
    assert table[2][2:4] == [second["p_before_display"], second["p_after_display"]]
    assert lines[5].startswith(f"After {view['positions'][-1]['label']}, the top tokens before: ␣t0 30%")
    number = terminal.ablation_number(view, [(1, 2)], "zero", n)  # position 1: its loss moved most
    assert number == {"kind": "ablation", "heads": "1.2", "how": "zero", "quantity": "p_next_after",
                      "position": 1, "value": 0.1}  # fmt: skip


def test_the_sweeps_bar():
    assert terminal.progress_line(0, 270) == "[------------------------] 0 of 270 patches"
    assert terminal.progress_line(135, 270) == "[############------------] 135 of 270 patches"
    assert terminal.progress_line(1, 1) == "[########################] 1 of 1 patch"


def test_the_help_names_the_default_model():
    said = terminal.help_texts(models=("minilm", "smollm2"), decoders=("smollm2",))
    assert said["ablate"]["--model"] == "one of minilm, smollm2 (default smollm2)"
    assert said["lens"]["--model"] == "one of smollm2 (default smollm2)"
    assert set(said) == {"ablate", "patch", "lens"} and all("--python" in s for s in said.values())
