"""The concepts every layer shares, defined once: table columns, the 5-way verdict scale, usable games, the anchor.

io is the lowest layer, so judges, designs, ratings, analysis, report and cli all import these definitions
instead of spelling their own copy (a copy that "only differs a little" is where bugs hide).

* **Columns** of the canonical tables (``*_REQUIRED``, ``JUDGMENTS_OPTIONAL``) and the one check that a frame
  has them, :func:`require_columns`.
* **The 5-way verdict scale** (Anchor §2; Arena-Hard-Auto's labels): :data:`VERDICT5`, its aliases, the win-rate
  outcome of a verdict and Arena-Hard's strong-verdict weighting.
* **Usable and failed games**: :func:`failed_mask`, :func:`usable_mask`, :func:`usable_games`.
* **Soft outcomes** from logprobs: :func:`soft_outcomes`.
* **The anchor** of an anchor design: :func:`detect_anchor`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgewise.errors import InputError

# --- columns -------------------------------------------------------------------------------------------------

RESPONSES_REQUIRED = ("prompt_id", "model", "text")
JUDGMENTS_REQUIRED = ("prompt_id", "model_a", "model_b", "judge", "outcome")
JUDGMENTS_OPTIONAL = ("verdict", "first", "raw", "error", "judgment_id")
SCORES_REQUIRED = ("item_id", "rater", "score")
GRADES_REQUIRED = ("prompt_id", "model", "judge", "score")
"""Pointwise grades (a judge's rating of one model's response, e.g. MT-bench's 1–10): ``score`` empty for a failed
grade (``error`` set). Optional: ``turn`` (the turn graded), ``label``, ``template``, ``raw``, ``error``."""
TABLE_KINDS = {"responses": RESPONSES_REQUIRED, "judgments": JUDGMENTS_REQUIRED, "scores": SCORES_REQUIRED,
               "grades": GRADES_REQUIRED}


def missing_columns(columns, required) -> list[str]:
    """The names of ``required`` that are not among ``columns``, in ``required``'s order."""
    have = set(map(str, columns))
    return [c for c in required if c not in have]


def require_columns(frame: pd.DataFrame, required, *, file: str | None = None, what: str = "the table") -> None:
    """Raise :class:`InputError` naming the missing columns when ``frame`` lacks any of ``required``.

    The one required-column check of the package: every reader, rating method and analysis calls it, so a
    missing column reads the same everywhere: ``<what> lacks required column(s) [...]: expected [...], found [...]``.
    """
    missing = missing_columns(frame.columns, required)
    if missing:
        found = list(map(str, frame.columns))
        shown = found[:12] + (["…"] if len(found) > 12 else [])
        raise InputError(f"{what} lacks required column(s) {missing}: expected {list(required)}, found {shown}",
                         file=file, field=missing[0])


# --- the 5-way verdict scale -----------------------------------------------------------------------------------

VERDICT5: dict[str, int] = {"A>>B": 2, "A>B": 1, "A=B": 0, "B>A": -1, "B>>A": -2}
"""Anchor §2's 5-way verdict v ∈ {-2..2} from the view of A (the response shown first), keyed by Arena-Hard-Auto's
labels (``[[A>>B]]`` … ``[[B>>A]]`` in its judge prompt)."""
VERDICT5_ALIASES: dict[str, str] = {"A<<B": "B>>A", "A<B": "B>A", "B<A": "A>B", "B<<A": "A>>B", "B=A": "A=B"}
LABEL5: dict[int, str] = {v: k for k, v in VERDICT5.items()}
VERDICT5_TOKEN = r"\[\[\s*([AB]\s*(?:>>|<<|>|<|=)\s*[AB])\s*\]\]"
"""A ``[[A>>B]]``-style token in a judge's text; group 1 is the label (any spelling :func:`verdict5` accepts)."""
VERDICT_OUTCOME: dict[int, float] = {2: 1.0, 1: 1.0, 0: 0.5, -1: 0.0, -2: 0.0}
ARENA_HARD_STRONG_WEIGHT = 3.0


def normalise_label(label: str) -> str:
    """A 5-way label in its canonical spelling: whitespace removed, upper case, aliases (``A<B``) resolved."""
    compact = re.sub(r"\s+", "", str(label)).upper()
    return VERDICT5_ALIASES.get(compact, compact)


def verdict5(label: str) -> int | None:
    """The verdict v ∈ {-2..2} of a 5-way label (``"A>>B"`` → 2, ``"B<A"`` → 1); ``None`` when not a label."""
    return VERDICT5.get(normalise_label(label))


def verdict_outcome(verdict):
    """Anchor §2's win-rate collapse of a 5-way verdict: wins 1, tie 0.5, losses 0 (scalars or arrays)."""
    out = 0.5 + 0.5 * np.sign(np.asarray(verdict, dtype=float))
    return float(out) if out.ndim == 0 else out


def verdict_weight(verdict, strong_weight: float = ARENA_HARD_STRONG_WEIGHT) -> np.ndarray:
    """Arena-Hard-Auto's weighting: a strong verdict (|v| = 2, ``A>>B``/``B>>A``) counts as ``strong_weight`` games.

    arena-hard-auto v0.1 ``show_result.py`` repeats each ``>>`` battle 3 times before fitting; a frequency weight
    of 3 is the same likelihood. Every other verdict counts once.
    """
    return np.where(np.abs(np.asarray(verdict, dtype=float)) == 2, float(strong_weight), 1.0)


# --- usable and failed games -----------------------------------------------------------------------------------

def _given_text(values: pd.Series) -> np.ndarray:
    """True where a text cell holds something (not None/NaN and not blank)."""
    text = values.astype("string").str.strip()
    return (values.notna() & text.notna() & (text != "")).fillna(False).to_numpy(bool)


def failed_mask(frame: pd.DataFrame, value: str = "outcome") -> np.ndarray:
    """Rows that are recorded failures of the judge: ``status`` "failed" (a store frame), or an ``error`` and no
    ``value`` — the outcome of a judgment, the ``score`` of a grade (a store export, Arena-Hard/JudgeBench
    unparsed outputs). A failure is counted, never rated."""
    failed = np.zeros(len(frame), dtype=bool)
    if "status" in frame.columns:
        failed |= (frame["status"].astype("string") == "failed").fillna(False).to_numpy(bool)
    if "error" in frame.columns and value in frame.columns:
        failed |= _given_text(frame["error"]) & pd.to_numeric(frame[value], errors="coerce").isna().to_numpy()
    return failed


def usable_mask(frame: pd.DataFrame) -> np.ndarray:
    """Rows that can be rated: not a failure (:func:`failed_mask`) and with an outcome."""
    outcome = pd.to_numeric(frame["outcome"], errors="coerce").notna().to_numpy()
    return outcome & ~failed_mask(frame)


@dataclass
class UsableGames:
    """What :func:`usable_games` returns: the usable rows, how many failed games were left out, and why."""

    frame: pd.DataFrame
    n_failed: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def __iter__(self):  # ``usable, n_failed, reasons = usable_games(frame)``
        return iter((self.frame, self.n_failed, self.reasons))


def failure_reasons(frame: pd.DataFrame, limit: int = 10) -> dict[str, int]:
    """The most common reasons of the failed rows (their ``error``, first 80 characters), reason → count."""
    failed = frame[failed_mask(frame)]
    if "error" not in failed.columns:
        return {"judge call failed": len(failed)} if len(failed) else {}
    reasons = failed["error"].astype("string").fillna("judge call failed").str.slice(0, 80)
    return {str(k): int(v) for k, v in reasons.value_counts().head(limit).items()}


def usable_games(frame: pd.DataFrame) -> UsableGames:
    """The games to rate (failed games dropped, index reset), the number of failed games and their reasons.

    The one rule of the package for "usable" and "failed" (:func:`failed_mask`): rank, the report, the
    diagnostics and the store summaries all call it. Rows without an outcome that are not recorded failures are
    kept, so that the reader or rating that meets them says what is wrong with them.
    """
    failed = failed_mask(frame)
    if not failed.any():
        return UsableGames(frame, 0, {})
    return UsableGames(frame[~failed].reset_index(drop=True), int(failed.sum()), failure_reasons(frame))


# --- soft outcomes ---------------------------------------------------------------------------------------------

SOFT_COLUMN = "soft"
"""A judgment's soft preference: the judge's expected outcome for model_a, Σ_v P(verdict token v)·outcome(v) over
the verdict tokens' probabilities from logprobs, renormalised (``judges.parsing.soft_from_logprobs``; stored in
model_a's view by the judging store). Empty when the backend returned no logprobs or the verdict spans tokens."""


def soft_count(frame: pd.DataFrame) -> int:
    """How many rows carry a soft preference (a number in ``soft``)."""
    if SOFT_COLUMN not in frame.columns:
        return 0
    return int(pd.to_numeric(frame[SOFT_COLUMN], errors="coerce").notna().sum())


def soft_outcomes(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The frame with ``outcome`` replaced by the soft preference wherever a row has one (a fractional win, e.g.
    0.7 = seven tenths of a win for model_a), and the number of rows replaced; rows without one keep their hard
    outcome. The one definition of "rate by soft outcomes" (``rank(..., soft=True)``, ``rank --soft``)."""
    n = soft_count(frame)
    if not n:
        return frame, 0
    soft = pd.to_numeric(frame[SOFT_COLUMN], errors="coerce")
    out = frame.copy()
    out["outcome"] = soft.where(soft.notna(), pd.to_numeric(frame["outcome"], errors="coerce"))
    return out, n


# --- the anchor ------------------------------------------------------------------------------------------------

def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def anchor_candidates(model_a, model_b, min_share: float = 1.0) -> list:
    """The models taking part in at least ``min_share`` of the rows (default: every row), most present first
    (hash counts, fast for millions of rows of names or integer ids)."""
    a, b = pd.Series(np.asarray(model_a)), pd.Series(np.asarray(model_b))
    if not len(a):
        return []
    counts = pd.concat([a, b[b.to_numpy() != a.to_numpy()]], ignore_index=True).value_counts()
    return [_plain(m) for m in counts.index[counts.to_numpy() >= min_share * len(a)]]


def name_ordered(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row of a pairwise table read from its models in name order: (the first model by name, the second —
    object arrays — and the first's outcome). The one reading of "the comparison, whichever way it was asked"."""
    a = frame["model_a"].astype(str).to_numpy(object)
    b = frame["model_b"].astype(str).to_numpy(object)
    swap = a > b
    outcome = frame["outcome"].to_numpy(float)
    return np.where(swap, b, a), np.where(swap, a, b), np.where(swap, 1.0 - outcome, outcome)


def two_model_prompts(frame: pd.DataFrame) -> pd.Series:
    """The prompts (as text) on which a pairwise table compares exactly two models, each with its two models in name
    order (``[first, second]``): the items ``judgewise label`` shows, responses A and B."""
    models = pd.concat([frame["model_a"], frame["model_b"]]).astype(str)
    prompts = pd.concat([frame["prompt_id"], frame["prompt_id"]]).astype(str)
    pairs = models.groupby(prompts.to_numpy()).agg(lambda s: sorted(set(s)))
    return pairs[pairs.map(len) == 2]


def pair_ids(model_a, model_b) -> tuple[np.ndarray, int]:
    """Each row's *unordered* model pair as one integer (``lo·n + hi`` over the models' codes; a row with one model
    on both sides gets ``-1``) and ``n``, the number of models. Works alike on strings and on the categoricals the
    columnar readers give (whose unordered categories have no min/max and no string concatenation)."""
    both = pd.Series(np.concatenate([np.asarray(model_a, dtype=object), np.asarray(model_b, dtype=object)]))
    codes, models = pd.factorize(both)
    n = len(models)
    a, b = codes[:len(codes) // 2], codes[len(codes) // 2:]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return np.where(lo != hi, lo * n + hi, -1), n


def compares_every_pair(model_a, model_b) -> bool:
    """True when every pair of the models meets in some row: an all-pairs (quadratic) table, which has no anchor
    however large each model's share of the rows (3 or 4 models each take part in half of them or more)."""
    ids, n = pair_ids(model_a, model_b)
    met = np.unique(ids[ids >= 0])
    return n >= 2 and len(met) == n * (n - 1) // 2


def detect_anchor(model_a, model_b, *, prefer_b: bool = False):
    """The anchor of an anchor design: the one model taking part in every row (Anchor §2: every model is compared
    with one anchor). ``None`` when no model or several models do (an all-pairs table, or only two models).

    ``prefer_b``: in formats whose ``model_b`` is the reference by construction (AlpacaEval's ``generator_1``,
    Arena-Hard's baseline), a two-model table's anchor is the model that is always ``model_b``.
    """
    in_all = anchor_candidates(model_a, model_b)
    if prefer_b and len(in_all) == 2 and len(b := pd.unique(pd.Series(np.asarray(model_b)))) == 1:
        in_all = [_plain(b[0])]
    return in_all[0] if len(in_all) == 1 else None


def require_matching_responses(judgments: pd.DataFrame, responses: pd.DataFrame, *, file: str | None = None) -> None:
    """InputError naming the responses ``file`` when none of its ``(prompt_id, model)`` rows is a side of a judged
    game: the figures that read texts (length, echo, gaming, style) would have nothing to read."""
    prompt = judgments["prompt_id"].astype(str).to_numpy()
    judged = pd.MultiIndex.from_arrays([np.concatenate([prompt, prompt]), np.concatenate(
        [judgments["model_a"].astype(str).to_numpy(), judgments["model_b"].astype(str).to_numpy()])])
    given = pd.MultiIndex.from_arrays([responses["prompt_id"].astype(str), responses["model"].astype(str)])
    if not len(judged) or given.isin(judged).any():
        return
    found = f"e.g. {given[0]}" if len(given) else "no rows at all"
    raise InputError(f"no response matches a judged (prompt_id, model): the judgments have e.g. {judged[0]}, the "
                     f"responses {found}; give the model outputs of the judged prompts", file=file)


def text_prompt_id(text: str, prefix: str) -> str:
    """Stable id of a prompt known only by its text: ``prefix`` + SHA-1(UTF-8 text)[:16], the same in every file."""
    return prefix + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
