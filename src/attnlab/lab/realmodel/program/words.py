"""The words of 'How is this computed?': the control's labels, each view's numbers, what a program reproduces.

:func:`control_words` is what the page's control places (``js/realmodel/how.js``): its
summary, buttons and status lines, the pickers' labels, and for each view of the Real model
page the numbers it shows, each with the descriptor fields it fixes and the fields it asks
for (``needs``: a picker each). :func:`path_said` is the sentence every program answer
carries about the path the page shows and the path the program follows, with its claims.
"""

from __future__ import annotations

from attnlab.lab.said import said

PROGRAM_PATH = "float32"  # the path every program follows: gguf's dequantized values, float32 throughout


def _choice(value: str, label: str, kind: str, needs: tuple[str, ...] = (), **fixed) -> dict:
    return {"value": value, "label": label, "kind": kind, "needs": list(needs), "fixed": fixed}


def _scores() -> list[dict]:
    names = {"previous": "the previous-token score", "first": "the first-token score",
             "induction": "the induction score", "duplicate": "the duplicate-token score",
             "self": "the self score", "breadth": "the breadth"}  # fmt: skip
    return [_choice(s, f"This head's {label}", "head_score", score=s) for s, label in names.items()]


def _journey() -> list[dict]:
    norms = {
        "resid_in": "The norm of the residual stream entering a block",
        "attn": "The norm of what attention adds",
        "mlp": "The norm of what the MLP adds",
        "resid_out": "The norm of the residual stream leaving a block",
    }
    out = [_choice(q, label, "journey", ("layer",), quantity=q) for q, label in norms.items()]
    for i, which in ((1, "first"), (2, "second")):
        for stat, words in (("mean", "mean"), ("rms", "root mean square"), ("max_abs", "largest magnitude")):
            q = f"norm_{i}.{stat}"
            label = f"The {words} of what the {which} norm normalises"
            out.append(_choice(q, label, "journey", ("layer",), quantity=q))
    out.append(
        _choice("mlp_unit", "A strongest MLP unit's value", "journey", ("layer", "rank"), quantity="mlp_unit")
    )
    return out


_ROW = [
    _choice("row_score", "A row's scaled score (query → key)", "row", ("query", "key"), quantity="score"),
    _choice(
        "row_share", "A row's share, as the explorer computes it", "row", ("query", "key"), quantity="share"
    ),
    _choice("row_exp", "A row's exp(score − m)", "row", ("query", "key"), quantity="exp"),
    _choice("row_m", "A row's largest allowed score m", "row", ("query",), quantity="m"),
    _choice("row_z", "A row's softmax denominator", "row", ("query",), quantity="z"),
]

VIEWS = {
    "head": [
        _choice("weight", "A share in the heatmap (query → key)", "weight", ("query", "key")),
        *_scores(),
        *_ROW,
    ],
    "neuron": [
        _choice("q", "A coordinate of q", "row", ("coordinate",), quantity="q"),
        _choice("k", "A coordinate of k", "row", ("coordinate",), quantity="k"),
        _choice("product", "A product q[d] × k[d]", "row", ("coordinate",), quantity="product"),
        _choice("running", "The sum of the products 0..d", "row", ("coordinate",), quantity="running"),
        _choice("dot", "The dot product q · k", "row", quantity="dot"),
        _choice("score", "The score", "row", quantity="score"),
        _choice("share", "The key's share", "row", quantity="share"),
        _choice("m", "The row's largest allowed score m", "row", quantity="m"),
        _choice("z", "The softmax's denominator", "row", quantity="z"),
    ],
    "next": [
        _choice("logit", "A token's logit", "next", ("token",), quantity="logit"),
        _choice("p_model", "A token's probability (the model's)", "next", ("token",), quantity="p_model"),
        _choice(
            "p", "A token's probability after temperature, top-k and top-p", "next", ("token",), quantity="p"
        ),
    ],
    "journey": _journey(),
}

FIELDS = {
    "choice": "Number",
    "query": "Query token",
    "key": "Key token",
    "coordinate": "Coordinate",
    "layer": "Block",
    "rank": "Rank",
    "token": "Token",
}


def control_words() -> dict:
    """Everything the 'How is this computed?' control shows besides a program (GET .../programs/words)."""
    return {
        "summary": "How is this computed?",
        "lede": (
            "A NumPy program that reads the model file itself and runs the same operations, in the same "
            "order, up to the number you choose, then prints it. It imports nothing of attnlab."
        ),
        "fields": FIELDS,
        "views": VIEWS,
        "show": "Write the program",
        "writing": "Writing the program…",
        "copy": "Copy",
        "copied": "Copied to the clipboard",
        "copy_failed": "The browser did not allow copying: select the program and copy it yourself",
        "download": "Download {file}",
        "program_label": "The program, as Python source",
        "ranks": [f"{i + 1}" for i in range(5)],
    }


def path_said(page_path: str) -> dict:
    """What the program reproduces against what the page shows, with its claims.

    ``page_path``: the path the page's numbers ran on ("float32" or "q4_1"). The program
    always follows the float32 path: equal bit for bit when the page shows it too, else
    the same weights' values with products summed in another order (rounding apart).
    """
    same = page_path == PROGRAM_PATH
    if page_path not in ("float32", "q4_1"):
        text = (
            "This program follows the float32 path. Which path made this page's numbers is no longer known "
            "(the model's worker started again): on the float32 path the program prints them bit for bit, "
            "on the q4_1 path up to rounding."
        )
    elif same:
        text = (
            "This page shows the float32 path, and so does this program: run, it prints the page's number "
            "bit for bit (same NumPy calls, same layouts, one BLAS thread)."
        )
    else:
        text = (
            f"This page shows the {page_path} path: the same weights, kept as the file's blocks, with "
            "products that add in another order. This program follows the float32 path, gguf's values of "
            "those weights: the two agree up to rounding."
        )
    return said(text, page_path=page_path, program_path=PROGRAM_PATH, bit_for_bit=same)
