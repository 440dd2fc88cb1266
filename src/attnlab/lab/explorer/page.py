"""The explorer's words on the page: the fixed ones its modules place, and the first answer's.

:func:`page_words` is served once inside the page (``web/assets.py`` writes it
into index.html as a JSON data block): the words ``js/explorer`` places that
never depend on the numbers (a card's "Dot", the offline note, the own-example
form's names, a refused link's sentences). Number-dependent words come in
every answer instead (``lab.explorer.display``, ``lab.explorer.texts``).

:func:`first_sentences` is what index.html shows before the page's first answer
arrives: the worked example's own sentences, from that very answer
(``lab.explorer.state.example_answer``), written in by the server at the
page's ``<!-- fill:name -->`` markers, so the page never holds a copy that can
drift (a "shaded triangle" for four sources, a "/ √2" for a scale of 0.5), and
:func:`page_text`'s fixed headings, labels and notes (a sentence that states a
fact about the numbers as a :func:`said`).
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.explorer.state import example_answer
from attnlab.lab.limits import MAX_SOURCES, limit_words
from attnlab.lab.page import fill_texts
from attnlab.lab.said import said

OWN_NAMES = "ABCDEFGH"  # a new source's name: the first of these its example does not use yet


def page_words() -> dict:
    """The explorer's fixed words, by the module that places them."""
    return {
        "offline": (
            "The attnlab server is not answering. Your numbers are kept in this tab; start attnlab "
            "again and the page will pick up where you left off."
        ),
        "link": {
            "own_damaged": "This link's own example is damaged, so it is not shown.",
            "damaged": (
                "This link is damaged (its example cannot be read), so the worked example is shown instead."
            ),
            "own_refused": "This link's own example cannot be opened:",
            "refused": "This link's example cannot be opened:",
            "worked_shown": "The worked example is shown instead.",
        },
        # a typed number the browser cannot read (the server checks every number again)
        "number": {
            "empty": "Enter a number, for example 2 or -0.5.",
            "not_a_number": "This is not a number. Use digits, a point and an optional minus sign.",
            "too_large": "That number is too large for a float. Use a smaller one.",
        },
        "query_fields": ["Query q, x", "Query q, y"],
        "details": {
            "dot": "Dot",
            "score": "Scaled",
            "share": "Share",
            "normalization": ["Shared normalization: m = ", "; Z = ", "."],  # around the m and Z boxes
            "output": "Output o = ",
            # for a screen reader, after a number the comparison marks (changed, or the same as q = [2, 1])
            "changed": " (changed)",
            "same": " (same as reference)",
        },
        "python": {
            "filename": "attention_one_query.py",
            "copied": "Copied the program to the clipboard.",
            "no_clipboard": "The clipboard is not available here; the code is selected, press Ctrl+C.",
            "downloaded": "Downloaded attention_one_query.py.",
        },
        "own": {
            "sources": [
                {"legend": f"Source {n}", "remove": f"Remove source {n}"} for n in range(1, MAX_SOURCES + 1)
            ],
            "names": list(OWN_NAMES[:MAX_SOURCES]),
            "name": "Name",
            "key": ["Key x", "Key y"],
            "value": ["Value x", "Value y"],
            "new": {"key": ["1", "1"], "value": ["1", "1"]},  # a new source's key and value, as typed
        },
    }


# The explorer's three steps, as the page and the Explorer widget title them.
STEPS = {
    "match": "Match: how far does q reach along each key?",
    "share": "Share: softmax turns scores into one pie",
    "mix": "Mix: the output is the shares’ blend of the values",
}


def widget_words() -> dict:
    """The Explorer widget's fixed words (``widgets/explorer.py`` sends them once, in ``_words``)."""
    return {
        "title": "Follow one query through attention",
        "steps": [{"number": str(n), "title": title} for n, title in enumerate(STEPS.values(), start=1)],
        "pie": "Attention shares as a pie; the numbers are in the table below",
        "strip": "Attention shares as a strip in source order; the numbers are in the table below",
        "mix_plot": (
            "Value plane: the values, the carries w·v added tip to tail, the hull of the values and "
            "the output o"
        ),
        "precise": "Every number at full precision",
        # a snapshot (``to_html``) is frozen: these replace the drag's help and name the still plane
        "snapshot_help": "A snapshot: q stays where it was in the notebook, and nothing here can be "
        "dragged. Move q in the notebook itself, then take a new snapshot.",
        "snapshot_plane": "Key plane: the keys, q and how far q reaches along each key, frozen in this "
        "snapshot",
    }


def reference_words() -> dict[str, dict]:
    """The fixed sentences that name the comparison's reference, the worked example's q."""
    q = fmt.vector(WORKED.q)
    return {
        "legend": said(
            f"Solid dot or edge: current q. Hollow ring or dashed line: same current keys and values "
            f"with q = {q}.",
            q=list(WORKED.q),
        ),
        "reference_note": said(
            f"The reference uses the same current keys and values, with q = {q}. Not every query edit "
            "changes the mixture. Solid amber borders mark numerical changes; dashed teal borders mark "
            "values unchanged within 1e-12. Labels round to three decimals, not the calculation.",
            q=list(WORKED.q), tolerance=1e-12,
        ),
    }


# What "Reset example" restores: row 0's query, the first value's x (lab.explorer.sequence.reset).
RESTORES = {"query_row": 0, "value": (0, 0)}
RESET_HINT = said(
    "Reset example restores the query and the first value’s x coordinate only. All other inputs stay "
    "unchanged.",
    **RESTORES,
)


def page_text() -> dict[str, str | dict]:
    """The explorer's fixed headings, labels and notes in index.html, by marker: a string, or a
    :func:`said` where the words state a fact about the numbers."""
    widget = widget_words()
    return {
        "present": "Present",
        "explorer_title": widget["title"],
        "explorer_intro": (
            "Drag q and watch three steps happen at once: match (how far q reaches along each key), share "
            "(softmax splits the attention) and mix (the output blends the values). You can explore before "
            "answering anything; go at your own pace."
        ),
        "pie_label": widget["pie"],
        "strip_label": widget["strip"],
        "mix_plot_label": widget["mix_plot"] + "; the numbers are in the summary below",
        "share_hint": said(
            "Softmax exponentiates each score, then divides by the total. Only differences between scores "
            "matter.",
            shift_invariant=True,
        ),
        "challenge_badge": "Challenge complete",
        "challenge_open": "Hints and Check",
        "challenge_open_hint": "Each Check and hint is kept in the study history below.",
        "reset": "Reset example",
        "reset_hint": RESET_HINT,
        "words_title": "Read the same calculation",
        "rounding_note": said(
            "Displayed numbers are rounded to three decimals, and shares shown as percentages are rounded "
            "together so that they add up to 100; the calculation is not.",
            digits=3, shares_total=100,
        ),
        "every_number": "Show every number, the formula and the Python",
        "worked_note": said(
            "Worked example, not a test or model run. Given vectors, not learned meanings. Match the query "
            "with keys; mix values, not keys.",
            example="worked", q=list(WORKED.q), keys=[list(k) for k in WORKED.keys],
            values=[list(v) for v in WORKED.values],
        ),
        "formula_match": "Match and scale",
        "formula_match_math": "q · kᵢ →",
        "formula_share": "Share one denominator",
        "formula_share_math": "wᵢ = exp(sᵢ − m) / Z",
        "formula_share_exps": "exps = [exp(s - max(scores)) for s in scores]",
        "formula_share_weights": "weights = [e / sum(exps) for e in exps]",
        "formula_mix": "Carry the values",
        "formula_mix_math": "cᵢ = wᵢvᵢ; o = Σᵢ cᵢ",
        "formula_mix_code": "sum(w * v[j] for w, v in zip(weights, values))",
        "normalization_note": said(
            "m is the shared maximum scaled score; Z is the sum of exp(sᵢ − m) over the allowed sources. "
            "Subtracting the same maximum avoids large exponentials without changing the shares. Each "
            "carry is a weighted source value; sum the contributions coordinate by coordinate for output o.",
            m="max allowed score", z="sum of allowed exps", shift_invariant=True, output="sum of carries",
        ),
        "precise_title": "Inspect precise numbers and input coordinates",
        "precise_note": said(
            "Python floats from attnlab's engine before display rounding; −0 is kept where supplied. Tiny "
            "allowed shares can underflow to zero; that is not a mask.",
            negative_zero_kept=True, underflow_is_not_mask=True,
        ),
        "python_title": "Read the same calculation in Python",
        "python_intro": (
            "This runnable Python uses the current controls and the same labels. No NumPy or random inputs "
            "are needed."
        ),
        "python_note": said(
            "Float operands and left-to-right sums from 0.0 follow attnlab's engine step for step, so the "
            "program prints exactly the numbers on this page. Cancellation can hide a nonzero exact "
            "change; exp and sqrt can differ across platforms.",
            exact=True,
        ),
        "copy_python": "Copy the Python",
        "download_python": "Download the Python",
        "python_code_label": "Generated Python program",
        "geometry_title": "Inspect key and value geometry",
        "geometry_keys": "Key space only.",
        "geometry_values": "Value space only.",
        "current_title": "Read the current numbers",
        "current_notation": (
            "i names a source. s is a scaled score, w its share, and o the output. Displayed decimals are "
            "rounded; calculations are not."
        ),
        "keys_caption": "Keys in key space",
        "keys_source": "Source",
        "keys_key": "Key k",
        "keys_q": "q",
        "values_title": "Values (editable)",
        "values_hint": (
            "Change any coordinate of any value and press Enter. A value that is not a number is refused "
            "next to its field and the last good state stays."
        ),
        "own_title": "Make your own example: sources, names, keys, values and scale",
        "own_add": "Add a source",
        "own_scale": "Scale (blank: divide by √d_k)",
        "own_use": "Use this example",
    }


def first_sentences() -> dict[str, str]:
    """The explorer's sentences for index.html's markers (``<!-- fill:name -->``), from the first answer."""
    answer = example_answer()
    explorer = answer["sequence"]["explorer"]
    labels = answer["explorer"]["display"]["labels"]
    texts = explorer["texts"]
    challenge = answer["explorer"]["challenge"]
    said_ = {
        "row_label": explorer["heading"],
        "row_explain": texts["row"],
        "explorer_given": texts["given"],
        "q_legend": texts["q_legend"],
        "current_allowed": texts["allowed"],
        "words_example": texts["example"],
        "eyebrow": labels["eyebrow"],
        "caption": labels["caption"],
        "mix_hint": labels["mix_hint"],
        "score_title": labels["score_title"],
        "share_title": labels["share_title"],
        "score_formula": labels["score_formula"],
        "score_code": labels["score_code"],
        "scale_note": labels["scale_note"],
        "own_hint": limit_words()["own_example"],
        **reference_words(),
    }
    return {
        **fill_texts(page_text()),
        **{name: s["text"] for name, s in said_.items()},
        "challenge_goal": challenge["goal"],
        **{f"step_{name}": title for name, title in STEPS.items()},
        "match_help": answer["explorer"]["display"]["words"]["match_help"]
        + " The coloured segment along each key shows how far q reaches along it; the thin dashed "
        "line drops from q onto the key.",
    }
