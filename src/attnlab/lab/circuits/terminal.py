"""The circuits views in a terminal: ``attnlab ablate``, ``patch`` and ``lens`` print these lines.

Each function takes the view the page shows (:mod:`.requests`: the answers of
:mod:`.ablation`, :mod:`.patching` and :mod:`.lens`) and returns what the command prints,
in order: a sentence (a string) or a table (a list of rows of cells, the header first).
The command only lines tables up; every word and number is the view's or written here.
Also here: the commands' help, their refusals' words, and the sweep's progress line.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.lab.heads import heads_named

Printed = list  # of str (a line) or list[list[str]] (a table: header row first)

BAR = 24  # the progress bar's width in characters


def _top_tokens(top: Sequence[dict]) -> str:
    return ", ".join(f"{t['label']} {t['display']}" for t in top)


def ablation_lines(view: dict) -> Printed:
    """An ablation view: what was switched off, what changed most, then every position's numbers."""
    out: Printed = [view["lede"]["text"]]
    if view["kind"] == "next_token":
        out.append(view["mean_loss"]["text"])
        out += [s["text"] for s in view["biggest"]]
        rows = [view["columns"]]
        for p in view["positions"]:
            if "next" not in p:
                continue
            rows.append([p["label"], p["next"]["label"], p["p_before_display"], p["p_after_display"],
                         p["loss_before_display"], p["loss_after_display"]])  # fmt: skip
        out.append(rows)
        last = view["positions"][-1]
        out.append(f"After {last['label']}, the top tokens before: {_top_tokens(last['top_before'])}; "
                   f"after: {_top_tokens(last['top_after'])}.")  # fmt: skip
        return out
    out += [s["text"] for s in view["biggest"]]
    if view.get("pooled"):
        out.append(view["pooled"]["text"])
    if view.get("note"):
        out.append(view["note"]["text"])
    rows = [view["columns"]]
    for p in view["positions"]:
        rows.append([p["label"], p["norm_display"], p["change_display"], p["relative_display"],
                     p["cosine_display"]])  # fmt: skip
    out.append(rows)
    return out


def patching_lines(view: dict) -> Printed:
    """A patching view: what a cell means, the two runs' metric, the map of fractions recovered."""
    pair, sweep = view["pair"], view["sweep"]
    out: Printed = [view["meaning"]["text"], pair["values"]["text"], pair["recovered"]["text"],
                    pair["differ_words"]["text"]]  # fmt: skip
    grid = sweep["map"]
    out.append(grid["label"] + ", each cell the fraction recovered:")
    rows = [["", *grid["columns"]]]
    for label, cells in zip(grid["rows"], grid["cells"]):
        rows.append([label, *(c or "·" for c in cells)])
    out.append(rows)
    out += [sweep["top"]["text"], sweep["status"]["text"]]
    if sweep.get("skipped"):
        out.append(sweep["skipped"]["text"])
    return out


def lens_lines(view: dict) -> Printed:
    """A logit-lens view: what the lens is, each block's top tokens, the block that names the answer."""
    out: Printed = [view["lens_words"]["text"]]
    rows = [view["columns"]]
    for layer in view["layers"]:
        rows.append([str(layer["layer"]), _top_tokens(layer["top"]), layer["token_p_display"],
                     layer["rank_display"]])  # fmt: skip
    out.append(rows)
    out.append(view["named"]["text"])
    if view.get("followed"):
        out.append(view["followed"]["text"])
    return out


# -- the number each command's --python prints the program of ------------------------------------


def ablation_number(view: dict, heads, how: str, n_tokens: int) -> dict:
    """The ablation's headline number: the next token's probability after it, where it changed most
    (the text's last next token when nothing changed); an encoder's pooled embedding's cosine."""
    pairs = ",".join(f"{layer}.{head}" for layer, head in heads)
    if view["kind"] != "next_token":
        value = view["pooled"]["claims"]["cosine"] if view.get("pooled") else None
        return {"kind": "ablation", "heads": pairs, "how": how, "quantity": "pooled_cosine", "value": value}
    at = view["biggest"][0]["claims"]["position"]
    at = max(0, n_tokens - 2) if at is None else at
    value = view["positions"][at].get("p_after")
    return {"kind": "ablation", "heads": pairs, "how": how, "quantity": "p_next_after", "position": at,
            "value": value}  # fmt: skip


def patch_number(view: dict, answers: tuple[int, int] | None, position: int | None) -> dict:
    """The sweep's headline number: the fraction recovered of its most recovered patch (the clean
    run's metric when no patch recovers anything)."""
    sweep = view["sweep"]
    top = sweep["top"]["claims"]["top"]
    number: dict = {"kind": "patch"}
    if answers is not None:
        number |= {"answers": f"{answers[0]},{answers[1]}", "position": position}
    if not top:
        return number | {"quantity": "clean", "value": view["pair"]["clean_value"]}
    layer, column, value = top[0]
    target = {"residual": f"resid_{sweep['site']}", "heads": "head", "mlp": "mlp", "pattern": "pattern",
              "keys": "keys", "values": "values"}[sweep["kind"]]  # fmt: skip
    number |= {"quantity": "recovered", "target": target, "layer": layer, "value": value}
    return number if column is None else number | {"column": column}


def lens_number(view: dict) -> dict:
    """The lens's headline number: the answer's probability after the block where it first comes top."""
    layer = view["named"]["claims"]["first_top1"]
    return {"kind": "lens", "position": view["position"], "layer": layer, "quantity": "token_p",
            "value": view["layers"][layer]["token_p"]}  # fmt: skip


def progress_line(done: int, total: int) -> str:
    """``[######------------------] 30 of 120 patches``: a sweep's bar on stderr."""
    filled = BAR * done // total if total else BAR
    unit = "patch" if total == 1 else "patches"
    return f"[{'#' * filled}{'-' * (BAR - filled)}] {done:,} of {total:,} {unit}"


# -- the commands' help and their own refusals --------------------------------------------


def help_texts(*, models: Sequence[str], decoders: Sequence[str]) -> dict[str, dict[str, str]]:
    """Each command's help and its arguments', by command (``models``: the registry's names)."""

    def one_of(names: Sequence[str]) -> str:
        return f"one of {', '.join(names)} (default {decoders[0]})"

    json_help = "the view's every number at full precision, with the words, as JSON"
    python = "the runnable NumPy program that reads the model file and prints "
    return {
        "ablate": {
            "command": "switch heads off (zero or mean ablation) and see what changes",
            "text": 'the text, e.g. "The Eiffel Tower is in the city of Paris"',
            "--heads": f"the heads to switch off, e.g. '{heads_named([(18, 6), (17, 4)])}'",
            "--mean": "set each head's output to its mean over the text (default: to 0)",
            "--model": one_of(models),
            "--json": json_help,
            "--python": python + "the next token's probability after the ablation where it changed most",
        },
        "patch": {
            "command": "patch the clean prompt's activations into the corrupted run, one at a time",
            "clean": 'the clean prompt, e.g. "The Eiffel Tower is in the city of"',
            "corrupt": "the corrupted prompt, of the same token length: "
            '"The Colosseum is in the city of"',
            "--answers": 'the right and the other answer, one token each: " Paris"," Rome" (a decoder)',
            "--sweep": "what is patched: the residual stream at each layer and token (default), each "
            "query head's output, each MLP's output, each query head's attention pattern, or each KV head's "
            "keys or values",
            "--model": one_of(models),
            "--json": json_help,
            "--python": python + "the fraction recovered of the most recovered patch",
        },
        "lens": {
            "command": "the logit lens: each block's output read as if it were the last",
            "text": 'the text, e.g. "The Eiffel Tower is in the city of"',
            "--position": "the token read, from 0; negative counts from the end (default -1, the last)",
            "--model": one_of(decoders),
            "--json": json_help,
            "--python": python + "the answer's probability after the block where it first comes top",
        },
    }


def answers_not_two(text: str) -> str:
    return f'--answers {text!r:.60} is not two answers; write them as " Paris"," Rome"'


def needs_answers(title: str) -> str:
    return f'--answers is needed: {title} is a decoder; give two answers as " Paris"," Rome"'


def no_answers_for_an_encoder(title: str) -> str:
    return f"--answers is not for {title}: an encoder's patching reads the cosine with the clean embedding"
