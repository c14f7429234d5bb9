"""Tab-separated judgments: the canonical judgments columns, one row a line (a toy format, docs/extending.md)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgewise.io.canonical import from_dataframe
from judgewise.io.formats import Probe
from judgewise.io.tables import Table

COLUMNS = {"prompt_id", "model_a", "model_b", "judge", "outcome"}


def looks_like_tsv(probe: Probe) -> bool:
    """A ``.tsv`` file whose first line names the columns."""
    return probe.suffix == ".tsv" and COLUMNS <= set(probe.head.partition("\n")[0].strip().split("\t"))


def read_tsv(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """The file's rows as a canonical judgments table, checked as every reader's are (errors name file and row)."""
    frame = pd.read_csv(path, sep="\t", dtype={"prompt_id": str, "model_a": str, "model_b": str})
    table = from_dataframe(frame, kind="judgments", skip_invalid=skip_invalid, name=str(path))
    table.report.format = "tsv"
    return table
