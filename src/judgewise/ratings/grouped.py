"""One leaderboard per group of rows (a prompt category, a dataset, ...) plus the overall one, by the same fit.

``rank_groups`` splits a table by a label per row and applies one ranking function — the very function that made
the overall leaderboard, with its method, bootstrap, seed and level — to each group's rows. A group is therefore
ranked exactly as ranking its filtered table alone would rank it (the test's oracle). A group the fit cannot
rank (one model, a disconnected comparison graph, no usable game, the anchor absent) is reported with the reason
in ``skipped``, never dropped silently. Rows without a value form a group of their own, :data:`MISSING`, kept
apart from every text value; more than :data:`MAX_GROUPS` groups are refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError, JudgewiseError
from judgewise.ratings.result import Ranking

MAX_GROUPS = 1000
"""The most groups ``rank --by`` ranks: each is a fit of its own (with its own bootstrap), so a column of
100,000 distinct values (an id, a free-text field) would take hours; such a column is refused before any fit."""


class _Missing:
    """The group of the rows without a value: a key apart from every text (a cell reading "(missing)" is that text)."""

    def __repr__(self) -> str:
        return "(no value)"

    __str__ = __repr__

    def __reduce__(self):
        return "MISSING"


MISSING = _Missing()


@dataclass
class GroupedRanking:
    """Leaderboards per group and overall, as ``rank --by COLUMN`` reports them.

    Attributes
    ----------
    by : str
        The column the rows were grouped by.
    overall : Ranking
        The leaderboard of all rows.
    groups : dict
        Group value (text) → its leaderboard, values sorted; the rows without a value under the key
        :data:`MISSING` (last), apart from any text.
    skipped : dict
        Group value (or :data:`MISSING`) → why it could not be ranked.
    rows : dict
        Group value (or :data:`MISSING`) → rows in the group (ranked or skipped).
    """

    by: str
    overall: Ranking
    groups: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)
    rows: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready: ``by``, ``groups`` (value → records, best first), ``skipped_groups`` (value → rows and
        reason), ``missing`` (the rows without a value: ``{"rows", "records"}`` when ranked, ``{"rows",
        "reason"}`` when not, null when every row has a value) and ``overall`` (records)."""
        missing = None
        if MISSING in self.rows:
            missing = {"rows": self.rows[MISSING]}
            missing.update({"records": self.groups[MISSING].to_records()} if MISSING in self.groups
                           else {"reason": self.skipped[MISSING]})
        return {"by": self.by,
                "groups": {g: r.to_records() for g, r in self.groups.items() if g is not MISSING},
                "skipped_groups": {g: {"rows": self.rows[g], "reason": why} for g, why in self.skipped.items()
                                   if g is not MISSING},
                "missing": missing,
                "overall": self.overall.to_records()}

    def to_frame(self) -> pd.DataFrame:
        """One row per (board, model): ``by``, ``board`` (``group``, ``missing`` for the rows without a value,
        ``overall`` for the leaderboard of all rows, last), ``group`` (the value; empty on the missing and overall
        boards) and the columns of :meth:`Ranking.to_records`."""
        boards = [("missing" if g is MISSING else "group", None if g is MISSING else g, r)
                  for g, r in self.groups.items()] + [("overall", None, self.overall)]
        parts = [r.to_frame().assign(board=board, group=pd.Series([g] * len(r.models), dtype=object))
                 for board, g, r in boards]
        frame = pd.concat(parts, ignore_index=True).assign(by=self.by)
        return frame[["by", "board", "group", *[c for c in frame.columns if c not in ("by", "board", "group")]]]


def group_labels(values) -> np.ndarray:
    """Each row's group value as text (surrounding blanks removed); missing values (None, NaN, blank) →
    :data:`MISSING`."""
    series = pd.Series(values, dtype=object)
    codes, distinct = pd.factorize(series, use_na_sentinel=True)  # each distinct value turned into text once
    text = np.array([v if isinstance(v, str) else str(v) for v in distinct], dtype=object)
    text = np.array([t.strip() or MISSING for t in text] + [MISSING], dtype=object)
    return text[codes]  # code -1 (a null) picks the last entry: MISSING


def _groups(labels: np.ndarray) -> list[tuple[object, np.ndarray]]:
    """(value, row positions) of each group: text values sorted, :data:`MISSING` last; one pass over the rows."""
    missing = np.fromiter((v is MISSING for v in labels), dtype=bool, count=len(labels))
    codes, distinct = pd.factorize(pd.Series(np.where(missing, None, labels), dtype=object), sort=True)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(-1, len(distinct) + 1))
    found = [(value, order[bounds[k + 1]:bounds[k + 2]]) for k, value in enumerate(distinct)]
    return found + ([(MISSING, order[bounds[0]:bounds[1]])] if missing.any() else [])


def refuse_many_groups(labels: np.ndarray, by: str) -> None:
    """ConfigError when ``labels`` hold more than :data:`MAX_GROUPS` distinct values."""
    count = len(pd.unique(labels))
    if count > MAX_GROUPS:
        raise ConfigError(f"`by={by!r}`: the column has {count:,} distinct values; at most {MAX_GROUPS:,} groups are "
                          "ranked (each is a fit of its own): group by a coarser column")


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

    Raises
    ------
    ConfigError
        More than :data:`MAX_GROUPS` groups (before any fit).
    """
    labels = group_labels(labels)
    if len(labels) != len(frame):
        raise ValueError(f"{len(labels)} labels for {len(frame)} rows")
    refuse_many_groups(labels, by)
    result = GroupedRanking(by, fit(frame))
    for label, at in _groups(labels):
        rows = frame.iloc[at].reset_index(drop=True)
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
