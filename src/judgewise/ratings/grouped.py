"""One leaderboard per group of rows (a prompt category, a dataset, ...) plus the overall one, by the same fit.

``rank_groups`` splits a table by a label per row and applies one ranking function — the very function that made
the overall leaderboard, with its method, bootstrap, seed and level — to each group's rows. A group is therefore
ranked exactly as ranking its filtered table alone would rank it (the test's oracle). A group the fit cannot
rank (one model, a disconnected comparison graph, no usable game, the anchor absent) is reported with the reason
in ``skipped``, never dropped silently. Rows without a label form the group :data:`MISSING_GROUP`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from judgewise.errors import JudgewiseError
from judgewise.ratings.result import Ranking

MISSING_GROUP = "(missing)"
OVERALL = "(overall)"


@dataclass
class GroupedRanking:
    """Leaderboards per group and overall, as ``rank --by COLUMN`` reports them.

    Attributes
    ----------
    by : str
        The column the rows were grouped by.
    overall : Ranking
        The leaderboard of all rows.
    groups : dict[str, Ranking]
        Group label → its leaderboard (labels sorted, :data:`MISSING_GROUP` last).
    skipped : dict[str, str]
        Group label → why it could not be ranked.
    rows : dict[str, int]
        Group label → rows in the group (ranked or skipped).
    """

    by: str
    overall: Ranking
    groups: dict[str, Ranking] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready: ``by``, ``groups`` (label → records, best first), ``skipped_groups`` (label → rows and
        reason) and ``overall`` (records)."""
        return {"by": self.by,
                "groups": {g: r.to_records() for g, r in self.groups.items()},
                "skipped_groups": {g: {"rows": self.rows[g], "reason": why} for g, why in self.skipped.items()},
                "overall": self.overall.to_records()}

    def to_frame(self) -> pd.DataFrame:
        """One row per (group, model): ``by``, ``group`` (:data:`OVERALL` for the overall rows, last) and the
        columns of :meth:`Ranking.to_records`."""
        parts = [r.to_frame().assign(group=g) for g, r in [*self.groups.items(), (OVERALL, self.overall)]]
        frame = pd.concat(parts, ignore_index=True).assign(by=self.by)
        return frame[["by", "group", *[c for c in frame.columns if c not in ("by", "group")]]]


def group_labels(values) -> np.ndarray:
    """Each row's group label as text; missing values (None, NaN, blank) → :data:`MISSING_GROUP`."""
    series = pd.Series(values, dtype=object)
    text = series.map(lambda v: v if isinstance(v, str) else (str(v) if pd.notna(v) else ""))
    text = text.map(lambda s: s.strip() or MISSING_GROUP)
    return text.to_numpy(dtype=object)


def _order(labels) -> list[str]:
    return sorted(set(labels) - {MISSING_GROUP}) + ([MISSING_GROUP] if MISSING_GROUP in set(labels) else [])


def rank_groups(frame: pd.DataFrame, labels, fit: Callable[[pd.DataFrame], Ranking], by: str) -> GroupedRanking:
    """Rank ``frame`` overall and within each group of ``labels`` with the same ``fit``.

    Parameters
    ----------
    frame : DataFrame
        The rows to rank (a judgments or grades table).
    labels : array-like
        One group value per row of ``frame`` (see :func:`group_labels` for missing values).
    fit : callable
        ``fit(rows) -> Ranking``, e.g. ``lambda f: rank(f, "bt", bootstrap=1000, seed=0)``; the overall fit runs
        first and its errors propagate (bad options fail once, not per group).
    by : str
        The grouping column's name (reported).

    Returns
    -------
    GroupedRanking
    """
    labels = group_labels(labels)
    if len(labels) != len(frame):
        raise ValueError(f"{len(labels)} labels for {len(frame)} rows")
    result = GroupedRanking(by, fit(frame))
    for label in _order(labels):
        rows = frame[labels == label].reset_index(drop=True)
        result.rows[label] = len(rows)
        try:
            ranking = fit(rows)
        except JudgewiseError as exc:  # the group's data cannot be ranked: say why
            result.skipped[label] = str(exc)
            continue
        if len(ranking.models) < 2:
            result.skipped[label] = f"only {len(ranking.models)} model: nothing to rank"
            continue
        result.groups[label] = ranking
    return result
