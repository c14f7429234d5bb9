"""``rank --human LABELS``: the judge's verdicts anchored to a few human labels as prediction-powered rank-sets.

LABELS is a judgewise store whose ``human_labels`` table holds pairwise labels (``judgewise label``) or a file of
human pairwise verdicts in any judgments format (e.g. Chatbot Arena battles). The statistics are
:func:`judgewise.analysis.human_anchored.human_anchored_labels` (the labels matched to the judge's
comparisons, then the rank-sets).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgewise.analysis.human_anchored import (HumanAnchored, check_alpha, human_anchored_labels,
                                              rank_set_text as span)
from judgewise.analysis.human_pairs import store_label_frame
from judgewise.commands.human_validation import human_scores_of_store, is_label_store
from judgewise.commands.tables import TextTable, clip, fmt_num
from judgewise.errors import InputError
from judgewise.store.reading import read_rated


def read_human_labels(labels: Path, judgments: pd.DataFrame, skip_invalid: bool = False) -> pd.DataFrame:
    """The human pairwise verdicts of ``labels`` (``prompt_id, model_a, model_b, outcome``): a store's
    ``human_labels`` placed on the two models ``judgments`` compare on each item's prompt, or a judgments file
    read as the human's verdicts (several labellers pooled)."""
    if is_label_store(labels):
        return store_label_frame(human_scores_of_store(labels), judgments)
    frame, _ = read_rated(labels, skip_invalid=skip_invalid, pool_judges=True)
    return frame


def check_human_labels(labels: Path | None, alpha: float) -> None:
    """Before any judging (``evaluate --human``): ConfigError for ``alpha`` outside (0, 1), InputError for a
    LABELS path that does not exist."""
    check_alpha(alpha)
    if labels is not None and not Path(labels).exists():
        raise InputError("no such file or folder (the human labels of --human)", file=str(labels))


def anchor_to_humans(judgments: pd.DataFrame, labels: Path, alpha: float = 0.05,
                     skip_invalid: bool = False) -> HumanAnchored:
    """Prediction-powered rank-sets of the models of ``judgments`` with the human labels of ``labels``.

    Raises
    ------
    ConfigError
        ``alpha`` outside (0, 1).
    InputError
        LABELS missing, empty or unreadable, or holding no label on a comparison the judgments hold.
    """
    check_alpha(alpha)  # before reading LABELS
    return human_anchored_labels(judgments, read_human_labels(labels, judgments, skip_invalid), alpha, str(labels))


def human_anchored_lines(result: HumanAnchored) -> list[str]:
    """The lines under ``rank --human``'s table: labels used, the judge's weight and the rectifier's size."""
    labels = result.labels
    unmatched = labels.get("unmatched", 0)
    note = (f": no judge verdict on their prompt and pair, e.g. {', '.join(labels['unmatched_examples'])}"
            if unmatched else "")
    return [f"human labels used: {labels.get('matched', result.n_human):,} (of {labels.get('given', 0):,} given; "
            f"{unmatched:,} unmatched{note}) on {result.n_human:,} "
            f"comparisons; {result.n_judge:,} comparisons judged only",
            f"rectifier: the judge's win probabilities are off the humans' by up to {result.rectifier_size:.3f} on "
            f"the labelled comparisons (verdicts differ by {result.disagreement:.3f} on average); judge weight "
            f"lambda = {result.lam:.2f} (PPI++)",
            f"rank-sets hold the human ranking with probability >= {1 - result.alpha:g} "
            "(Chatzi et al. 2024, prediction-powered ranking)"]


def human_anchored_blocks(result: HumanAnchored, ranking) -> list:
    """``rank --human``'s table — per model (in the judge's order): the judge's rank, the rank-set, the human-only
    and judge-only rank-sets from the same data, θ̂ — then :func:`human_anchored_lines`."""
    index = {m: i for i, m in enumerate(result.models)}
    level = f"{(1 - result.alpha) * 100:g}%"
    columns = [("judge rank", "right"), ("model", "left", {"no_wrap": True}), (f"rank-set {level}", "right"),
               ("humans only", "right"), ("judge only", "right"), ("P(preferred)", "right")]
    rows = []
    for rec in ranking.to_records():
        i = index.get(rec["model"])
        if i is None:
            continue
        rows.append([str(rec["rank"]), clip(rec["model"]), span(result.lo[i], result.hi[i]),
                     span(result.human_only["lo"][i], result.human_only["hi"][i]),
                     span(result.judge_only["lo"][i], result.judge_only["hi"][i]), fmt_num(result.theta[i], 3)])
    title = f"human-anchored ranking · prediction-powered rank-sets (alpha {result.alpha:g})"
    return [TextTable(title, columns, rows, wrap_title=True), *human_anchored_lines(result)]
