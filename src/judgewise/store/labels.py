"""Human labels in a store: the append-only ``human_labels`` table, its rows, and the labels they add up to.

One row per answer a labeller gives (``judgewise label``): who (``labeller``, plain data), which item, the order
the two responses were shown in (``shown``: ``AB`` or ``BA``; empty for a pointwise item), the value in the
response-A view (pairwise: 1 = A better, 0 = B better, 0.5 = tie; pointwise: the score), and when. Rows are never
updated or deleted: an undo is a row with no value (``value`` NULL), and a labeller's label of an item is their
last row for it (:func:`current_labels`). The table is made the first time a label is written (SQLite and
PostgreSQL alike, ``CREATE TABLE IF NOT EXISTS``), so a store without labels is unchanged and needs no migration;
reading a store that has none gives an empty frame.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pandas as pd

from judgewise.errors import InputError

TABLE = "human_labels"
LABEL_COLUMNS = ("seq", "session", "labeller", "item_id", "target", "shown", "value", "created_at")
WRITE_COLUMNS = LABEL_COLUMNS[1:]  # ``seq`` is given by the database, in commit order

_BODY = """session TEXT NOT NULL, labeller TEXT NOT NULL, item_id TEXT NOT NULL, target TEXT NOT NULL DEFAULT '',
    shown TEXT NOT NULL DEFAULT '', value {real}, created_at {real} NOT NULL"""
SQLITE_DDL = (f"CREATE TABLE IF NOT EXISTS {TABLE} (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
              + _BODY.format(real="REAL") + ")")
PG_DDL = (f"CREATE TABLE IF NOT EXISTS {TABLE} (seq BIGSERIAL PRIMARY KEY, "
          + _BODY.format(real="DOUBLE PRECISION") + ")")
INSERT = f"INSERT INTO {TABLE} ({', '.join(WRITE_COLUMNS)}) VALUES ({', '.join(['%s'] * len(WRITE_COLUMNS))})"
SELECT = f"SELECT {', '.join(LABEL_COLUMNS)} FROM {TABLE} ORDER BY seq"
MAX_TEXT = 200  # a labeller name or an item id longer than this is no name


@dataclass(frozen=True)
class HumanLabel:
    """One answer of a labeller (``value`` None: their earlier label of the item withdrawn, an undo)."""

    session: str
    labeller: str
    item_id: str
    value: float | None
    shown: str = ""
    target: str = ""
    created_at: float = field(default_factory=time.time)

    def values(self) -> tuple:
        """The row's values in :data:`WRITE_COLUMNS` order, checked: text fields are short non-empty text."""
        for name in ("labeller", "item_id"):
            text = getattr(self, name)
            problem = label_text_problem(text)
            if problem:
                raise InputError(f"{name} must be {problem}, found {text!r:.60}", field=name)
        if self.shown not in ("", "AB", "BA"):
            raise InputError(f"shown must be AB, BA or empty, found {self.shown!r:.20}", field="shown")
        return tuple(getattr(self, c) for c in WRITE_COLUMNS)


def label_text_problem(text) -> str | None:
    """What a labeller name or an item id must be when ``text`` is not one the store can hold, else None: 1 to
    :data:`MAX_TEXT` characters, not only blanks, no NUL (PostgreSQL text cannot hold it) and no lone surrogate
    (``"\\ud800"`` from a JSON escape is no character: it cannot be written as UTF-8)."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
        return f"1 to {MAX_TEXT} characters of text"
    if "\x00" in text:
        return "text without NUL characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "valid Unicode text (a lone surrogate such as \\ud800 is no character)"
    return None


def labels_frame(rows: list[tuple]) -> pd.DataFrame:
    """Rows of ``human_labels`` (in :data:`LABEL_COLUMNS` order) as a frame with those columns."""
    df = pd.DataFrame.from_records(rows, columns=list(LABEL_COLUMNS))
    df["value"] = pd.to_numeric(df["value"], errors="coerce").astype(float)
    df["created_at"] = df["created_at"].astype(float)
    return df


def current_labels(rows: pd.DataFrame) -> pd.DataFrame:
    """Each labeller's label of each item: their last row for it (by ``seq``), left out when that is an undo."""
    if rows.empty:
        return rows.copy()
    last = rows.sort_values("seq").drop_duplicates(["labeller", "item_id"], keep="last")
    return last[last["value"].notna()].reset_index(drop=True)


def labels_as_scores(rows: pd.DataFrame, rater: str = "human", labeller: str | None = None) -> pd.DataFrame:
    """The labels as a one-rater scores table (``item_id, rater, score``): per item the mean over its labellers
    (or the one ``labeller``'s label)."""
    labels = current_labels(rows)
    if labeller is not None:
        labels = labels[labels["labeller"] == labeller]
    scores = labels.groupby("item_id", sort=False)["value"].mean().rename("score").reset_index()
    scores.insert(1, "rater", rater)
    return scores
