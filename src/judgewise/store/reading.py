"""Read the judgments a command works on (any file format or a judging store, one judge chosen); export a store.

The one path from a user's PATH to a judgments :class:`~judgewise.io.tables.Table` for ``rank``, ``diagnose``
and anything else that accepts "a judgments file or the SQLite store ``judgewise judge`` wrote". It lives here
(not in ``io``) because io may not import the store (``judges``), and below ``report`` so that the report, the
explorer and the CLI can all use it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.io.arenahard_config import read_config
from judgewise.io.canonical import from_dataframe
from judgewise.io.combine import combine_tables, refuse_same_file_twice
from judgewise.io.formats import Probe, detect_format, get_format
from judgewise.io.provenance import HOW_TO_CHOOSE, describe_judges, judge_groups, note_dropped, select_judge
from judgewise.io import readers  # its read_judgments: this module's read_judgments adds the stores
from judgewise.io.readers import CANONICAL_SUFFIXES
from judgewise.io.schema import GRADES_REQUIRED, failed_mask, usable_games
from judgewise.io.streams import read_once
from judgewise.io.tables import ReadReport, Table
from judgewise.store.judgments import POINTWISE, export_frame, export_grades, grade_mask, write_export
from judgewise.store.opening import is_store_url, open_store_readonly, store_label, store_location

from judgewise.store.sqlite import SQLITE_HEADER as SQLITE_MAGIC


def is_store(path: Path | str) -> bool:
    """True when ``path`` is an SQLite file (a judging store, or something claiming to be one) or a
    ``postgresql://`` URL (a shared store; possibly with a slash eaten by :class:`~pathlib.Path`).

    Parameters
    ----------
    path : Path
        Any path; directories, missing and unreadable files are not stores.

    Returns
    -------
    bool
    """
    if is_store_url(path):
        return True
    try:
        with open(read_once(path), "rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except (OSError, InputError):  # a directory, missing, unreadable, a symlink loop, a device
        return False


def read_store_table(path: Path | str, *, skip_invalid: bool = False) -> Table:
    """A judging store as a canonical judgments table, read without writing to it.

    Parameters
    ----------
    path : Path
        The SQLite file ``judgewise judge`` writes.
    skip_invalid : bool
        Skip and count malformed rows instead of stopping at the first.

    Returns
    -------
    Table
        ``kind == "judgments"``; failed games are kept (``outcome`` empty, ``error`` set) and are counted as
        skipped by :func:`usable_judgments`; ``report.format == "store"``.

    Raises
    ------
    InputError
        When ``path`` is not an SQLite file or not a judgewise store (naming the file).
    """
    path = store_location(path)
    if not is_store(path):  # --format store on something else
        found = "no such file or directory" if not Path(path).exists() else "not an SQLite file"
        raise InputError(f"{found}: expected a judging store (the SQLite file judgewise judge writes)", file=str(path))
    with open_store_readonly(path) as store:  # refuses a foreign or empty store, never writes
        games = store.frame()
    path = store_label(path)  # a URL's password never reaches a report
    table = from_dataframe(export_frame(games), kind="judgments", skip_invalid=skip_invalid, name=str(path))
    table.report.format = "store"
    n_grades = int(grade_mask(games).sum())
    if n_grades:  # pointwise grades beside the games: not judgments
        table.report.rows_read += n_grades
        table.report.rows_skipped += n_grades
        table.report.skipped_reasons.insert(0, f"{n_grades:,} pointwise grades (judge.mode single) are not pairwise "
                                               "judgments; rank them with --method mean_score")
    return table


GRADE_FORMATS = ("mtbench-judgments", "mtbench")


def read_grades(path: Path | str, *, format: str | None = None, skip_invalid: bool = False,
                only_grades: bool = True) -> Table | None:
    """The pointwise grades ``path`` holds (a store written by ``judge.mode: single``, MT-bench ``*_single.jsonl``
    files), or None when it holds none — or, with ``only_grades``, when a store holds pairwise games too.

    Returns
    -------
    Table or None
        ``kind == "grades"`` (``prompt_id, model, judge, score, turn``, ...); failed grades kept (no score, ``error``
        set) and counted as skipped in the report.
    """
    path = read_once(store_location(path))  # a pipe: its temporary copy
    if format == "store" and not is_store(path):
        return None  # read_store_table says what is wrong with it
    if format == "store" or (format is None and is_store(path)):
        with open_store_readonly(path) as store:
            modes = store.modes()  # counted by the database: a store of games is not read twice
            if not modes.get(POINTWISE) or (only_grades and modes[POINTWISE] < sum(modes.values())):
                return None
            stored = store.frame()
        path = store_label(path)
        frame = export_grades(stored)
        return _failed_grades_skipped(Table("grades", frame, ReadReport(str(path), "store", rows_read=len(frame),
                                                                        rows_used=len(frame))))
    fmt = get_format(format) if format else detect_format(path)
    canonical_grades = fmt.name in CANONICAL_SUFFIXES and _grade_columns(Probe(path).keys)
    if fmt.name not in GRADE_FORMATS and not canonical_grades:
        return None
    table = fmt.read(path, skip_invalid=skip_invalid, kind="grades")
    return _failed_grades_skipped(table) if table.kind == "grades" else None


def read_grades_inputs(paths, *, format: str | None = None, skip_invalid: bool = False,
                       only_grades: bool = True) -> Table | None:
    """:func:`read_grades` of one input or several: None when no input holds grades, their grades concatenated
    (:func:`judgewise.io.combine.combine_tables`) when every input does; an InputError naming which inputs hold
    grades and which pairwise judgments when they are mixed."""
    paths = [Path(p) for p in paths] if isinstance(paths, (list, tuple)) else [Path(paths)]
    refuse_same_file_twice(paths)
    found = [read_grades(p, format=format, skip_invalid=skip_invalid, only_grades=only_grades) for p in paths]
    if all(t is None for t in found):
        return None
    if any(t is None for t in found):
        kinds = "; ".join(f"{p}: {'pairwise judgments' if t is None else 'pointwise grades'}"
                          for p, t in zip(paths, found))
        raise InputError(f"the inputs hold different kinds of tables ({kinds}); rank one kind at a time",
                         file=str(paths[[t is None for t in found].index(True)]))
    return combine_tables([t for t in found if t is not None], [str(p) for p in paths])


def _failed_grades_skipped(table: Table) -> Table:
    """Count the failed grades (an error and no score) as skipped in the table's report, with their reasons; they
    stay in the frame so that the ranking counts them too."""
    failed = table.frame[failed_mask(table.frame.assign(outcome=table.frame["score"]))]
    reasons = failed["error"].astype(str) if "error" in failed.columns else ["status failed"] * len(failed)
    for reason in reasons:  # a canonical grades file may have no error column
        table.report.skip(f"grade failed: {reason}")
    table.report.rows_used = max(table.report.rows_used - len(failed), 0)
    return table


def _grade_columns(keys) -> bool:
    """The columns of a canonical grades table (``judgewise judge`` output of a pointwise run), not judgments."""
    return set(GRADES_REQUIRED) <= set(keys) and not {"model_a", "model_b", "outcome", "text"} & set(keys)


def read_judgments_or_store(path: Path, *, format: str | None = None, skip_invalid: bool = False,
                            any_kind: bool = False, options: dict | None = None) -> Table:
    """Read ``path`` as judgments: a judging store when it is one (or ``format == "store"``), else any format
    :func:`judgewise.io.read_judgments` knows.

    Parameters
    ----------
    path : Path
        A file or folder in any supported format, or a judging store.
    format : str, optional
        Force the format (a reader name or ``"store"``); default: detect.
    skip_invalid : bool
        Skip and count malformed rows.
    any_kind : bool
        Read with :func:`judgewise.io.read_any` (the table's kind is whatever the columns say) instead of
        insisting on judgments; the caller checks ``table.kind``.
    options : dict, optional
        Options of the format's reader (e.g. Arena-Hard games' ``baseline``, ``config``); None values are unset.

    Returns
    -------
    Table
    """
    if format == "store" or (format is None and is_store(path)):
        if any(v is not None for v in (options or {}).values()):
            raise ConfigError(f"a judging store takes no reader options ({', '.join(options or {})})")
        return read_store_table(path, skip_invalid=skip_invalid)
    reader = readers.read_any if any_kind else readers.read_judgments
    return reader(path, format=format, skip_invalid=skip_invalid, options=options)


def read_judgments(source, format: str | None = None, skip_invalid: bool = False, *,
                   options: dict | None = None) -> Table:
    """``judgewise.read_judgments``: a judgments table from every input the CLI reads — a DataFrame, a file or
    folder of any format :func:`judgewise.io.read_judgments` knows, or a judging store (the SQLite file
    ``judgewise judge`` / ``evaluate`` wrote, or a ``postgresql://`` URL), read without writing to it.

    Parameters
    ----------
    source : DataFrame, path or store URL
    format : str, optional
        Force the format (a reader name or ``"store"``); default: detect.
    skip_invalid : bool
        Skip and count malformed rows.
    options : dict, optional
        Options of the format's reader (e.g. Arena-Hard games' ``baseline``).

    Returns
    -------
    Table
    """
    if isinstance(source, pd.DataFrame):
        return readers.read_judgments(source, format, skip_invalid, options=options)
    return read_judgments_or_store(Path(source), format=format, skip_invalid=skip_invalid, options=options)


def usable_judgments(frame: pd.DataFrame) -> pd.DataFrame:
    """The judgments to rate: failed games left out by the package's one rule
    (:func:`judgewise.io.schema.usable_games`). The readers' reports already count them as skipped.

    Parameters
    ----------
    frame : DataFrame
        A canonical judgments table.

    Returns
    -------
    DataFrame
        ``frame`` itself when nothing failed, else a copy without the failed rows (index reset).
    """
    return usable_games(frame).frame


def read_rated(path: Path, *, format: str | None = None, skip_invalid: bool = False, judge: str | None = None,
               pool_judges: bool = False, options: dict | None = None,
               keep_failed: bool = False) -> tuple[pd.DataFrame, Table]:
    """Read ``path`` and keep the rows to rate: failed games out, one judge chosen or several pooled on request.

    The one reader of every command that takes "judgments in any format or a judging store" (``rank``,
    ``anchors``, ``accuracy``; ``diagnose`` reads with :func:`read_judgments_or_store` and chooses judges itself).

    Parameters
    ----------
    path : Path or list of Path
        Judgments in any supported format, or a judging store; several inputs are concatenated
        (:func:`read_inputs`).
    format : str, optional
        Force the format (``"store"`` included).
    skip_invalid : bool
        Skip and count malformed rows.
    judge : str, optional
        Keep this judge's rows; the other judges' rows are counted as skipped in the table's report.
    pool_judges : bool
        Pool several judges on purpose (otherwise a table mixing judges is refused).
    options : dict, optional
        Reader options (:func:`read_judgments_or_store`). An Arena-Hard ``config`` also chooses its
        ``judge_model`` when the input holds several judges and ``judge`` is not given.
    keep_failed : bool
        Keep the failed games (no outcome, ``error`` set) for a caller that counts them itself.

    Returns
    -------
    (DataFrame, Table)
        The rows to rate and the table read (its report counts what was left out).
    """
    table = read_inputs(path, format=format, skip_invalid=skip_invalid, options=options)
    judge = judge or _config_judge((options or {}).get("config"), table.frame, pool_judges)
    if judge is None and not pool_judges:
        refuse_judges_across(table)
    frame = table.frame if keep_failed else usable_judgments(table.frame)
    frame, dropped = select_judge(frame, judge, pool_judges)
    note_dropped(table.report, dropped, judge)
    return frame, table


def read_inputs(paths, *, format: str | None = None, skip_invalid: bool = False,
                options: dict | None = None) -> Table:
    """One judgments table from one input or several (``rank A B C``): each read by
    :func:`read_judgments_or_store`, then concatenated by :func:`judgewise.io.combine.combine_tables` (same kind,
    no judgment twice; ``extras["reports"]`` keeps each input's read report).

    Parameters
    ----------
    paths : Path or list of Path
        The inputs, each in any supported format or a judging store.
    format, skip_invalid, options
        As :func:`read_judgments_or_store`, for every input.

    Returns
    -------
    Table
    """
    paths = [Path(p) for p in paths] if isinstance(paths, (list, tuple)) else [Path(paths)]
    if len(paths) == 1:
        return read_judgments_or_store(paths[0], format=format, skip_invalid=skip_invalid, options=options)
    refuse_same_file_twice(paths)
    tables = [read_judgments_or_store(p, format=format, skip_invalid=skip_invalid, options=options) for p in paths]
    return combine_tables(tables, [str(p) for p in paths])


def refuse_judges_across(table: Table) -> None:
    """A ConfigError naming each input's judges when several inputs (``extras["reports"]``) bring different
    judges and neither ``--judge`` nor ``--pool-judges`` says what to do (one input: ``select_judge`` says it)."""
    reports = table.extras.get("reports")
    groups, codes = judge_groups(table.frame)
    if not reports or len(groups) < 2:
        return
    bounds = np.cumsum([0, *table.extras["input_rows"]])
    per_input = [f"{r.source}: {describe_judges([groups[k] for k in sorted(set(codes[lo:hi]))])}"
                 for r, lo, hi in zip(reports, bounds[:-1], bounds[1:])]
    raise ConfigError(f"the {len(reports)} inputs hold {len(groups)} different judges, and one ranking would pool "
                      f"them: {'; '.join(per_input)}; {HOW_TO_CHOOSE}")


def _config_judge(config, frame: pd.DataFrame, pool_judges: bool) -> str | None:
    """The judge of an Arena-Hard config (a path or ArenaHardConfig) when the table holds several judges."""
    if config is None or pool_judges or frame["judge"].nunique() < 2:
        return None
    return (read_config(config) if isinstance(config, (str, Path)) else config).judge


def export_store(store: Path, output: Path, *, only_ok: bool = False) -> dict:
    """Write a judging store as the canonical judgments table (``.parquet`` or ``.jsonl``, atomically).

    Parameters
    ----------
    store : Path
        The store file (opened read-only: a file that is not a store is refused and never written to).
    output : Path
        The table to write.
    only_ok : bool
        Leave out games stored as failed (by default they are kept with ``outcome`` empty and their ``error``).

    Returns
    -------
    dict
        ``rows`` (written), ``failed`` (failed games in the store), ``failed_exported``, ``output``.
    """
    with open_store_readonly(store) as st:
        stored = st.frame()
    grades = grade_mask(stored)
    if grades.all() and len(stored):  # a store of pointwise grades (judge.mode: single)
        frame = export_grades(stored, only_ok=only_ok)
    else:
        frame = export_frame(stored, only_ok=only_ok)
        stored = stored[~grades]
    failed = int(failed_mask(stored).sum())
    write_export(frame, output)
    return {"rows": len(frame), "failed": failed, "failed_exported": 0 if only_ok else failed, "output": str(output)}


EXPORT_TABLES = ("games", "human_labels")


def export_labels(store: Path, output: Path, *, table: str = "human_labels") -> dict:
    """Write the store's ``human_labels`` table as it is (every row, undos included, in commit order) to
    ``.parquet``, ``.jsonl`` or ``.csv`` (atomically). Returns ``rows``, ``labellers``, ``items``, ``output``.
    ``table`` is checked: a ConfigError names the tables :data:`EXPORT_TABLES` when it is another."""
    if table not in EXPORT_TABLES[1:]:
        raise ConfigError(f"`table={table}` is not a table to export: expected one of {', '.join(EXPORT_TABLES)}")
    with open_store_readonly(store) as st:
        rows = st.labels()
    write_export(rows, output)
    return {"rows": len(rows), "labellers": int(rows["labeller"].nunique()), "items": int(rows["item_id"].nunique()),
            "output": str(output)}
