"""Concatenate the tables read from several inputs (``rank A B C``) into one, keeping each input's read report.

The inputs must hold the same kind of table (all pairwise judgments, or all pointwise grades); a judgment that
two inputs share (the same ``judgment_id``, e.g. one store given twice) is refused, since it would count twice.
The combined report sums the counts, prefixes each skip reason with its input, ``extras["reports"]`` keeps
the per-input reports and ``extras["input_rows"]`` the number of frame rows of each input (in order). Extras: responses and prompts tables are concatenated when every input has them; any
other extra (the anchor, a weighting, ...) is kept only when every input says the same.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from judgewise.errors import InputError
from judgewise.io.tables import ReadReport, Table

TABLE_EXTRAS = ("responses", "prompts")


def refuse_same_file_twice(paths: list[Path]) -> None:
    """InputError when two inputs are one file, however named (a hard or symbolic link, ``./x``, an absolute path,
    ``/dev/stdin`` twice): found by (device, inode); inputs that are no file (a store URL) by their resolved path.
    Read twice, its rows would count twice."""
    seen: dict = {}
    for path in paths:
        try:
            info = os.stat(path)
            key = (info.st_dev, info.st_ino)
        except (OSError, ValueError):
            key = os.path.realpath(path)
        if key in seen:
            raise InputError(f"given twice as an input (the same file as {seen[key]}, under this or another name: "
                             "a link, ./, an absolute path): its rows would count twice; give each input once",
                             file=str(path))
        seen[key] = str(path)


def combine_tables(tables: list[Table], sources: list[str]) -> Table:
    """One table from the tables of several inputs (module docstring).

    Parameters
    ----------
    tables : list of Table
        The tables read, one per input.
    sources : list of str
        The inputs' names (paths), for messages and the combined report.

    Returns
    -------
    Table

    Raises
    ------
    InputError
        Inputs of different kinds, or a judgment found in two inputs.
    """
    if len(tables) == 1:
        return tables[0]
    kinds = {t.kind for t in tables}
    if len(kinds) > 1:
        listed = "; ".join(f"{s}: {t.kind}" for s, t in zip(sources, tables))
        raise InputError(f"the inputs hold different kinds of tables ({listed}); rank one kind at a time",
                         file=sources[0])
    frames = [t.frame.assign(_input=i) for i, t in enumerate(tables)]
    frame = pd.concat(frames, ignore_index=True, sort=False)
    _refuse_shared_judgments(frame, sources)
    table = Table(tables[0].kind, frame.drop(columns="_input"), combined_report(tables, sources),
                  combined_extras(tables))
    table.extras["reports"] = [t.report for t in tables]
    table.extras["input_rows"] = [len(t.frame) for t in tables]  # the frame's rows come input after input
    return table


def _refuse_shared_judgments(frame: pd.DataFrame, sources: list[str]) -> None:
    """InputError naming the first ``judgment_id`` found in two inputs."""
    if "judgment_id" not in frame.columns:
        return
    ids = frame[["judgment_id", "_input"]].dropna(subset=["judgment_id"]).drop_duplicates()
    shared = ids["judgment_id"].duplicated(keep=False)
    if shared.any():
        first = ids[shared].iloc[0]["judgment_id"]
        where = [sources[i] for i in ids.loc[ids["judgment_id"] == first, "_input"]]
        raise InputError(f"judgment {first!r} is in {where[0]} and in {where[1]} ({int(shared.sum()) // 2:,} shared "
                         "judgments): it would count twice; give each input once", file=where[1],
                         field="judgment_id")


def combined_report(tables: list[Table], sources: list[str]) -> ReadReport:
    """The sum of the inputs' read reports; each skip reason prefixed with its input."""
    formats = list(dict.fromkeys(t.report.format for t in tables))
    report = ReadReport(source=f"{len(tables)} inputs", format="+".join(formats))
    for source, t in zip(sources, tables):
        report.rows_read += t.report.rows_read
        report.rows_used += t.report.rows_used
        report.rows_skipped += t.report.rows_skipped
        report.skipped_reasons += [f"{source}: {reason}" for reason in t.report.skipped_reasons]
    return report


def combined_extras(tables: list[Table]) -> dict:
    """Extras every input agrees on; responses/prompts tables concatenated when every input has them."""
    out = {}
    for key in dict.fromkeys(k for t in tables for k in t.extras):
        values = [t.extras.get(key) for t in tables]
        if key in TABLE_EXTRAS:
            if all(v is not None for v in values):
                out[key] = _concat(values)
        elif all(_same(v, values[0]) for v in values):
            out[key] = values[0]
    return out


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays, frames: not a shared setting
        return False


def _concat(values: list):
    """Tables or frames concatenated, duplicate rows (the same response in two inputs) once."""
    frames = [getattr(v, "frame", v) for v in values]
    frame = pd.concat(frames, ignore_index=True, sort=False)
    keys = [c for c in ("prompt_id", "model") if c in frame.columns]
    frame = frame.drop_duplicates(subset=keys or None, ignore_index=True)
    first = values[0]
    if isinstance(first, Table):
        return Table(first.kind, frame, ReadReport(f"{len(values)} inputs", first.report.format,
                                                   rows_read=len(frame), rows_used=len(frame)))
    return frame
