"""The head census over many texts: each score's mean over the texts with a 95% interval, and its words.

The unit is the text: for each text, a head's score is already a mean over that text's
queries (:func:`attnlab.lab.realmodel.kinds.head_scores`); the census averages those
per-text values over the n texts that have the score (induction and duplicate-token
need a repeated token, so a text without one does not count for them). Per score and
head (float64, texts summed in file order):

- ``mean`` = (1/n) Σ x_t;
- ``sd`` = √(Σ (x_t − mean)² / (n − 1)), the sample standard deviation;
- the 95% interval is Student's t-interval ``mean ± t(0.975, n − 1) · sd / √n``, with
  ``t`` the two-sided 95% point of the t distribution with n − 1 degrees of freedom
  (:func:`t_critical`: exact, from the distribution's closed form for whole degrees of
  freedom); ``None`` when fewer than 2 texts have the score (no spread to estimate). It is
  not clipped to [0, 1]: a share's interval may reach past its range when texts disagree.

The scores of the census are :data:`SCORES`, the five of the head-kinds item. Every line
``attnlab census`` prints is here, with the refusals of its input file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.heads import head_name
from attnlab.lab.said import said
from attnlab.models.circuits.scores import CENSUS

SCORES = CENSUS  # the scores a census averages over texts (one definition: models/circuits/scores.py)
NAMES = {
    "previous": "previous token",
    "first": "first token",
    "induction": "induction",
    "duplicate": "duplicate token",
    "breadth": "breadth",
}
LEVEL = 0.95
METHOD = "t-interval over texts"
TOP = 5  # heads listed for each score
BAR = 24  # the progress bar's width in characters
MOST_TOP = 270  # --top at most: every head of SmolLM2


# -- the t distribution --------------------------------------------------------------------


def _central(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` (whole) degrees of freedom (Abramowitz & Stegun 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2 == 1:
        if df == 1:
            return 2 * theta / math.pi
        term, total = math.cos(theta), math.cos(theta)
        for k in range(1, (df - 1) // 2):
            term *= (2 * k) / (2 * k + 1) * c2
            total += term
        return 2 / math.pi * (theta + math.sin(theta) * total)
    term = total = 1.0
    for k in range(0, df // 2 - 1):
        term *= (2 * k + 1) / (2 * k + 2) * c2
        total += term
    return math.sin(theta) * total


def t_critical(df: int, level: float = LEVEL) -> float:
    """The t with P(|T| <= t) = ``level`` for ``df`` >= 1 degrees of freedom (bisection to the last bit)."""
    if isinstance(df, bool) or not isinstance(df, int) or df < 1:
        raise ValueError(f"degrees of freedom must be a whole number of at least 1, not {df!r}")
    lo, hi = 0.0, 1.0
    while _central(hi, df) < level:
        lo, hi = hi, 2 * hi
    while True:
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            return hi
        if _central(mid, df) < level:
            lo = mid
        else:
            hi = mid


# -- the numbers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """One score over the texts: ``n`` texts have it; ``mean``, ``sd``, ``low``, ``high`` (L, H) float64.

    ``sd``, ``low`` and ``high`` are None when n < 2; everything is None when n == 0.
    """

    name: str
    n: int
    mean: np.ndarray | None
    sd: np.ndarray | None
    t: float | None  # t(0.975, n - 1)
    low: np.ndarray | None
    high: np.ndarray | None


@dataclass(frozen=True)
class Census:
    """Every score's :class:`Score`; ``tokens`` per text, in file order; ``shape`` (layers, heads)."""

    model: str
    title: str
    tokens: tuple[int, ...]
    shape: tuple[int, int]
    scores: dict[str, Score]

    @property
    def texts(self) -> int:
        return len(self.tokens)


def score_summary(name: str, values: Sequence[np.ndarray]) -> Score:
    """The mean and 95% t-interval of one score over texts (``values``: one (L, H) array per text)."""
    n = len(values)
    if n == 0:
        return Score(name, 0, None, None, None, None, None)
    x = np.stack([np.asarray(v, dtype=np.float64) for v in values])  # (n, L, H)
    mean = x.mean(axis=0)
    if n < 2:
        return Score(name, 1, mean, None, None, None, None)
    sd = x.std(axis=0, ddof=1)
    t = t_critical(n - 1)
    half = t * sd / math.sqrt(n)
    return Score(name, n, mean, sd, t, mean - half, mean + half)


def summary(per_text: Sequence[dict], *, model: str, title: str) -> Census:
    """The census of ``per_text`` (``models.census.score_texts``' results, in file order)."""
    first = next(v for v in per_text[0]["scores"].values() if v is not None)
    scores = {}
    for name in SCORES:
        values = [t["scores"][name] for t in per_text if t["scores"][name] is not None]
        scores[name] = score_summary(name, values)
    tokens = tuple(int(t["tokens"]) for t in per_text)
    return Census(model=model, title=title, tokens=tokens, shape=tuple(np.shape(first)), scores=scores)


def ranked(score: Score, top: int) -> list[tuple[int, int]]:
    """The ``top`` heads with the largest means, largest first (ties: lower layer, then lower head)."""
    if score.mean is None:
        return []
    flat = score.mean.ravel()
    order = np.lexsort((np.arange(flat.size), -flat))[:top]
    n_head = score.mean.shape[1]
    return [(int(i) // n_head, int(i) % n_head) for i in order]


def data(c: Census) -> dict:
    """Every head's mean and interval per score, as ``attnlab census --json`` prints it (plain JSON)."""

    def cell(a: np.ndarray | None, layer: int, head: int) -> float | None:
        return None if a is None else float(a[layer, head])

    scores = {}
    for name, s in c.scores.items():
        heads = [
            {"layer": layer, "head": head, "mean": cell(s.mean, layer, head), "low": cell(s.low, layer, head),
             "high": cell(s.high, layer, head), "sd": cell(s.sd, layer, head)}
            for layer in range(c.shape[0]) for head in range(c.shape[1])
        ] if s.n else []  # fmt: skip
        scores[name] = {"texts": s.n, "t": s.t, "heads": heads}
    return {
        "model": c.model,
        "texts": c.texts,
        "tokens": list(c.tokens),
        "layers": c.shape[0],
        "heads": c.shape[1],
        "interval": {"level": LEVEL, "method": METHOD, "unit": "text",
                     "formula": "mean ± t(0.975, n − 1) · sd / √n"},  # fmt: skip
        "scores": scores,
    }


# -- the words -----------------------------------------------------------------------------


def shown(name: str, x: float) -> str:
    """A score as the census prints it: a share as a percentage, breadth to three decimals."""
    return fmt.rounded(x, 3) if name == "breadth" else fmt.percent(x, 1)  # never 0% for a share that is not


def heading(c: Census) -> dict:
    n, tokens = c.texts, sum(c.tokens)
    texts = fmt.plural(n, "text")
    return said(
        f"{c.title}: every head's scores over {texts} ({fmt.plural(tokens, 'token')}), {c.shape[0]} layers × "
        f"{c.shape[1]} heads.",
        texts=n,
        tokens=tokens,
        layers=c.shape[0],
        heads=c.shape[1],
    )


def method() -> dict:
    """How the means and intervals are made, as the command says it."""
    return said(
        "Each text's score of a head is already a mean over its tokens; a head's census mean is the mean of "
        "those per-text scores over the texts that have the score (the text is the unit). The 95% interval "
        "is Student's t-interval over texts, mean ± t(0.975, n − 1) · sd / √n, not clipped to 0 to 1; with "
        "fewer than 2 texts there is no interval.",
        level=LEVEL,
        method=METHOD,
        unit="text",
    )


def score_sentence(c: Census, name: str) -> dict:
    """The head with the largest mean for one score, with its interval and how many texts had the score."""
    s = c.scores[name]
    label = NAMES[name].capitalize()
    if s.n == 0:
        return said(
            f"{label}: no text repeats a token, so no head has this score.", score=name, texts=0
        )
    layer, head = ranked(s, 1)[0]
    mean = float(s.mean[layer, head])
    over = fmt.plural(s.n, "text")
    if s.low is None:
        return said(
            f"{label}: the highest mean is layer {layer}, head {head}'s, {shown(name, mean)} over {over} "
            "(no interval from one text).",
            score=name, layer=layer, head=head, mean=mean, low=None, high=None, texts=s.n,
        )  # fmt: skip
    low, high = float(s.low[layer, head]), float(s.high[layer, head])
    return said(
        f"{label}: the highest mean is layer {layer}, head {head}'s, {shown(name, mean)} (95% interval "
        f"{shown(name, low)} to {shown(name, high)}, over {over}).",
        score=name, layer=layer, head=head, mean=mean, low=low, high=high, texts=s.n,
    )  # fmt: skip


def top_rows(c: Census, name: str, top: int = TOP) -> list[list[str]]:
    """The ``top`` heads by mean for one score: the header row, then one row a head."""
    s = c.scores[name]
    rows = [["rank", "head", "mean", "95% interval", "texts"]]
    for rank, (layer, head) in enumerate(ranked(s, top), 1):
        interval = "—" if s.low is None else (
            f"{shown(name, s.low[layer, head])} to {shown(name, s.high[layer, head])}"
        )  # fmt: skip
        rows.append([str(rank), head_name(layer, head), shown(name, s.mean[layer, head]), interval, str(s.n)])
    return rows


def table_title(name: str) -> str:
    return f"{NAMES[name].capitalize()}: the heads with the highest means"


def progress_line(done: int, total: int) -> str:
    """``[############------------] 2 of 4 texts scored``: the bar the command draws on stderr."""
    filled = BAR * done // total if total else BAR
    return f"[{'#' * filled}{'-' * (BAR - filled)}] {done:,} of {fmt.plural(total, 'text')} scored"


# -- the command's help and refusals (one line on stderr each) -----------------------------


def help_texts(models: Sequence[str]) -> dict[str, str]:
    return {
        "command": "score every head over many texts: each score's mean with a 95% interval",
        "--model": f"one of {', '.join(models)} (default {models[0]})",
        "--texts": 'a JSON Lines file: one object a line with a "text" field',
        "--ray": "run on Ray: a Ray instance on this machine, or the cluster at RAY_ADDRESS (pip install "
        "'attnlab[ray]')",
        "--workers": "processes of the local pool (default: one per CPU, at most 4)",
        "--top": f"heads listed for each score (default {TOP}; 1 to {MOST_TOP})",
        "--json": "every head's mean and 95% interval per score, as JSON",
        "--python": "instead, the runnable NumPy program behind one head's score on the first text (the head "
        "with the highest mean previous-token score; its first line says which)",
    }


def program_comment(name: str, layer: int, head: int, texts: int) -> str:
    """``attnlab census --python``'s first line: which number the program after it prints."""
    over = "its text" if texts == 1 else f"its {texts:,} texts"
    score = NAMES[name].replace(" ", "-") + " score"  # "previous-token score"
    return (
        f"# attnlab census --python: this program prints the {score} of {head_name(layer, head)} on the "
        f"first text of the file, as the census computes it ({head_name(layer, head)} has the highest mean "
        f"{score} over {over})."
    )


def bad_line(number: int, problem: str) -> str:
    """A line of the texts file that cannot be used: its number (from 1) and what is wrong."""
    return f"--texts line {number}: {problem}"


def not_json(why: str) -> str:
    return f"is not JSON ({why})"


def not_an_object(kind: str) -> str:
    return f'is a JSON {kind}; each line must be an object with a "text" field'


def no_text_field() -> str:
    return 'has no "text" field'


def text_not_a_string(kind: str) -> str:
    return f'has a "text" that is a JSON {kind}, not a string'


def empty_text() -> str:
    return 'has an empty "text"'


def cannot_read(path: str, why: str) -> str:
    return f"--texts {path} cannot be read: {why}"


def not_utf8(path: str, number: int) -> str:
    return f"--texts line {number} of {path} is not UTF-8 text"


def no_texts(path: str) -> str:
    return f"--texts {path} has no texts: give one JSON object a line"


def workers_out_of_range(value: int) -> str:
    return f"--workers must be from 1 to 64, not {value}"


def top_out_of_range(value: int) -> str:
    return f"--top must be from 1 to {MOST_TOP}, not {value}"


def no_ray() -> str:
    return "--ray needs Ray: pip install 'attnlab[ray]'"


# -- what `census --texts` reads, at most, and a line it cannot ----------------------------------

MAX_TEXTS = 10_000  # texts a census reads from one file (more: split the file)
MAX_LINE_CHARS = 20_000  # characters of one line (a text of at most 2,000, escaped, fits many times over)


def too_many_texts(path: str) -> str:
    return f"--texts {path} has more than {MAX_TEXTS:,} texts: a census reads at most {MAX_TEXTS:,}; split it"


def line_too_long() -> str:
    return f"is longer than {MAX_LINE_CHARS:,} characters, the most a line may have"


def nested_too_deeply() -> str:
    return "nests too deeply to read (arrays or objects inside each other thousands of levels deep)"


def number_too_long(limit: int) -> str:
    return f"has a number of more than {limit:,} digits, the most a number may have"


def ray_failed(why: str) -> str:
    """Ray did not start (``why``: the first line of its error): one line, with what to try."""
    return (
        f"--ray: Ray did not start ({why}). Try again, set RAY_ADDRESS to a running Ray cluster, or leave "
        "out --ray to use this machine's processes"
    )
