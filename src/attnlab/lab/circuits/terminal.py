"""The circuits views in a terminal: ``attnlab ablate``, ``patch`` and ``lens`` print these lines.

Each function takes the view the page shows (``models/circuitviews``: the answers of
:mod:`.ablation`, :mod:`.patching` and :mod:`.lens`) and returns what the command prints,
in order: a sentence (a string) or a table (a list of rows of cells, the header first).
The command only lines tables up; every word and number is the view's or written here.
Also here: the commands' help, their refusals' words, and the sweep's progress line.
"""

from __future__ import annotations

from collections.abc import Sequence

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


def progress_line(done: int, total: int) -> str:
    """``[######------------------] 30 of 120 patches``: a sweep's bar on stderr."""
    filled = BAR * done // total if total else BAR
    unit = "patch" if total == 1 else "patches"
    return f"[{'#' * filled}{'-' * (BAR - filled)}] {done:,} of {total:,} {unit}"


# -- the commands' help and their own refusals --------------------------------------------


def help_texts(*, models: Sequence[str], decoders: Sequence[str]) -> dict[str, dict[str, str]]:
    """Each command's help and its arguments', by command (``models``: the registry's names)."""

    def one_of(names: Sequence[str]) -> str:
        return f"one of {', '.join(names)} (default {names[0]})"

    json_help = "the view's every number at full precision, with the words, as JSON"
    return {
        "ablate": {
            "command": "switch heads off (zero or mean ablation) and see what changes",
            "text": 'the text, e.g. "The Eiffel Tower is in the city of Paris"',
            "--heads": "the heads to switch off, e.g. L18H6,L17H4",
            "--mean": "set each head's output to its mean over the text (default: to 0)",
            "--model": one_of(models),
            "--json": json_help,
        },
        "patch": {
            "command": "patch the clean prompt's activations into the corrupted run, one at a time",
            "clean": 'the clean prompt, e.g. "The Eiffel Tower is in the city of"',
            "corrupt": "the corrupted prompt, of the same token length: "
            '"The Colosseum is in the city of"',
            "--answers": 'the right and the other answer, one token each: " Paris"," Rome" (a decoder)',
            "--sweep": "what is patched: the residual stream at each layer and token (default), each "
            "query head's output, or each MLP's output",
            "--model": one_of(models),
            "--json": json_help,
        },
        "lens": {
            "command": "the logit lens: each block's output read as if it were the last",
            "text": 'the text, e.g. "The Eiffel Tower is in the city of"',
            "--position": "the token read, from 0; negative counts from the end (default -1, the last)",
            "--model": one_of(decoders),
            "--json": json_help,
        },
    }


def answers_not_two(text: str) -> str:
    return f'--answers {text!r:.60} is not two answers; write them as " Paris"," Rome"'


def needs_answers(title: str) -> str:
    return f'--answers is needed: {title} is a decoder; give two answers as " Paris"," Rome"'


def no_answers_for_an_encoder(title: str) -> str:
    return f"--answers is not for {title}: an encoder's patching reads the cosine with the clean embedding"
