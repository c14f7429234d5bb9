"""Write a ranking to a file chosen by its suffix (``rank --output x.json|x.csv|x.parquet``), atomically.

* ``.json``: exactly what ``rank --json`` prints — the records list (best first), or with ``--by`` the object
  ``{"by", "groups": {group: records}, "skipped_groups", "missing", "overall": records}`` (``missing``: the rows
  without a value, ``{"rows", "records"}`` or ``{"rows", "reason"}``; null when every row has one).
* ``.csv`` / ``.parquet``: one row per model with the columns of ``Ranking.to_records`` (``rank, model, score,
  ci_low, ci_high, n``, method extras); with ``--by``, one row per (board, model) with the columns ``by``,
  ``board`` (``group``; ``missing`` for the rows without a value; ``overall``, last) and ``group`` (the value,
  empty on the missing and overall boards) first: no group value stands for anything else.
  A CSV's model and group names that a spreadsheet would run as formulas get a leading ``'``
  (:mod:`judgewise.io.csv_export`).

Every file is written to a temporary name beside the target and renamed over it (``io.atomic``): a failed or
interrupted ``rank`` leaves an existing file as it was.
"""

from __future__ import annotations

from pathlib import Path

from judgewise.commands.text import json_text
from judgewise.errors import ConfigError
from judgewise.io.atomic import atomic_target, check_output_file, write_text_atomic
from judgewise.io.csv_export import write_csv

OUTPUT_SUFFIXES = (".json", ".csv", ".parquet")


def check_ranking_output(path: Path | None) -> None:
    """Fail before any work when ``--output`` cannot be written: a directory, a missing folder, or a suffix that
    names no known format."""
    if path is None:
        return
    check_output_file(path)
    if Path(path).suffix.lower() not in OUTPUT_SUFFIXES:
        raise ConfigError(f"--output {path}: the suffix chooses the format, one of {', '.join(OUTPUT_SUFFIXES)} "
                          f"(found {Path(path).suffix or 'none'!r})")


def ranking_json(ranked) -> str:
    """The JSON text of a ranking (``RankedFile.to_json``), as printed by ``--json``."""
    return json_text(ranked.to_json())


def write_ranking(path: Path, ranked) -> Path:
    """Write ``ranked`` (a :class:`~judgewise.commands.ranking.RankedFile`) to ``path`` in the format of its
    suffix (module docstring), atomically."""
    check_ranking_output(path)
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        return write_text_atomic(path, ranking_json(ranked) + "\n")
    frame = ranked.to_frame()
    if suffix == ".csv":
        return write_csv(frame, path)  # model and group names a spreadsheet would run as formulas neutralised
    with atomic_target(path) as tmp:
        frame.to_parquet(tmp, index=False)
    return Path(path)
