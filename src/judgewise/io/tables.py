"""Canonical table schemas (responses, judgments, scores) and the read report every reader returns.

Canonical tables are pandas DataFrames with these columns (extra columns are kept; the names are defined in
:mod:`judgewise.io.schema`):

* **responses**: ``prompt_id, model, text`` (+ optional metadata, e.g. ``instruction``, ``n_tokens``).
* **judgments** (pairwise): ``prompt_id, model_a, model_b, judge, outcome`` where ``outcome`` in [0, 1] is
  model_a's result (1 win, 0 loss, 0.5 tie, fractional for soft preferences). Optional: ``verdict`` in
  {-2,-1,0,1,2} (5-way, from A's view), ``first`` (the model shown first), ``raw``, ``error``,
  ``judgment_id`` (unique when present).
* **scores** (pointwise): ``item_id, rater, score``.
* **grades** (a pointwise judge's ratings): ``prompt_id, model, judge, score`` (+ optional ``turn``, ``label``,
  ``raw``, ``error``: a failed grade has an error and no score).

``prompt_id``/``model*``/``judge``/``item_id``/``rater`` are strings; ``outcome``/``score`` floats.
Hot paths never work on these string columns directly: they encode models to integer ids first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from judgewise.errors import shown_file

from judgewise.io.schema import (JUDGMENTS_OPTIONAL, JUDGMENTS_REQUIRED, RESPONSES_REQUIRED,  # noqa: F401
                                 SCORES_REQUIRED, TABLE_KINDS)


@dataclass
class ReadReport:
    """What a reader did: rows read, used and skipped (with one reason per skipped row)."""

    source: str
    format: str
    rows_read: int = 0
    rows_used: int = 0
    rows_skipped: int = 0
    skipped_reasons: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.source = shown_file(self.source)  # a pipe read from its temporary copy: named as given

    def skip(self, reason: str) -> None:
        self.rows_skipped += 1
        self.skipped_reasons.append(reason)

    def as_dict(self) -> dict:
        return {
            "source": self.source,
            "format": self.format,
            "rows_read": self.rows_read,
            "rows_used": self.rows_used,
            "rows_skipped": self.rows_skipped,
            "skipped_reasons": self.skipped_reasons[:20],
        }


@dataclass
class Table:
    """A canonical table plus the report of how it was read. ``kind`` is a key of ``TABLE_KINDS``."""

    kind: str
    frame: pd.DataFrame
    report: ReadReport
    extras: dict = field(default_factory=dict)  # e.g. {"responses": Table} when a source carries outputs too
