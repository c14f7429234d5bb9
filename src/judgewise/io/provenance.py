"""Judge provenance: which judge (name, template, full identity) made each judgment; choose one or pool on purpose.

A judgments table may mix judges: two AlpacaEval annotator folders, a canonical table with several ``judge``
values, or a judging store holding two template versions (the store's ``judge_identity`` includes the template
name, version and content hash). Ranking such a table pools different judges into one number, so every command
that ranks goes through :func:`select_judge`, which refuses a mixed table unless the caller names one judge or
asks to pool them.

A *judge* here is one distinct identity: the store's ``judge_identity`` when the table has it, else the
``judge`` value together with ``template`` when that column exists, else the ``judge`` value. Its *label* (what
``--judge`` / ``judge=`` accepts) is the judge name, followed by ``#`` and a short hash when one name covers
several identities (e.g. a template edited without bumping its version).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError
from judgewise.io.tables import ReadReport

MAX_LISTED = 10
HOW_TO_CHOOSE = ("choose one with --judge NAME (Python: judge=NAME), pool them on purpose with --pool-judges "
                 "(Python: pool_judges=True), or let them vote as a panel with --panel A,B,C (rank, diagnose, "
                 "report, serve)")


@dataclass(frozen=True)
class JudgeGroup:
    """One distinct judge of a table: its label, judge name, template (if recorded) and number of rows."""

    label: str
    judge: str
    template: str | None
    template_sha: str | None
    rows: int

    def describe(self) -> str:
        """``"label" (805 rows, template t@1 sha 1a2b…)`` as shown in messages."""
        extra = [f"{self.rows:,} rows"]
        if self.template and self.template not in self.label:
            extra.append(f"template {self.template}")
        if self.template_sha:
            extra.append(f"template sha {self.template_sha[:8]}")
        return f'"{self.label}" ({", ".join(extra)})'


def _text(column: pd.Series) -> pd.Series:
    return column.astype(object).where(column.notna(), "").astype(str)


KEY_COLUMNS = ("judge", "template", "judge_identity")


def _key_text(judge: str, template: str | None, identity: str | None) -> str:
    """The string that identifies a judge (full store identity > judge + template > judge); None: no such column."""
    key = judge if template is None else judge + "\x00" + template
    return key + "\x00" + identity if identity else key


def _template_sha(key: str) -> str | None:
    identity = key.split("\x00")[-1]
    try:
        sha = json.loads(identity).get("template_sha") if identity.startswith("{") else None
    except (ValueError, AttributeError):
        return None
    return str(sha) if sha else None


def _column_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each row's index into the column's distinct values as text (a null: the last entry, ""), and those texts;
    a categorical column is read on its categories, any other factorized once (no per-row text)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes, distinct = column.cat.codes.to_numpy().astype(np.int64), column.cat.categories
    else:
        codes, distinct = pd.factorize(column, use_na_sentinel=True)
        codes = codes.astype(np.int64, copy=False)
    texts = np.append(_text(pd.Series(distinct, dtype=object)).to_numpy(dtype=object), "")
    codes[codes < 0] = len(texts) - 1
    return codes, texts


def _distinct(codes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``codes`` (integers in [0, size)), sorted, and each row's index into them: by a count
    per value when ``size`` is not much more than the rows (one pass, no sort), else by sorting."""
    if size > max(4 * len(codes), 1 << 16):
        return np.unique(codes, return_inverse=True)
    used = np.flatnonzero(np.bincount(codes, minlength=size))
    lookup = np.zeros(size, dtype=np.int64)
    lookup[used] = np.arange(len(used))
    return used, lookup[codes]


def _one_value(column: pd.Series) -> str | None:
    """The text written on every row (no null) of an Arrow-backed text column or of a categorical column of one
    category (the columnar readers' ``judge``), found without hashing the rows; else None. Other columns answer
    None (a comparison of Python objects would cost more than factorizing them)."""
    if not len(column):
        return None
    if isinstance(column.dtype, pd.CategoricalDtype):
        categories = column.cat.categories
        if len(categories) != 1 or (column.cat.codes.to_numpy() < 0).any():
            return None
        return _text(pd.Series(categories, dtype=object)).iloc[0]
    if not (isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow"):
        return None
    first = column.iloc[0]
    return first if isinstance(first, str) and bool(column.eq(first).all()) and not column.isna().any() else None


def _key_codes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each row's index into the sorted distinct judge keys (:func:`_key_text`), and those keys. Each of the
    judge, template and identity columns is coded once and the codes combined into one integer per row, so a
    key's text is built once per distinct judge, not per row (2M rows of a plain string column: one factorize)."""
    present = [c for c in KEY_COLUMNS if c in frame.columns]
    if not present:
        return np.zeros(len(frame), dtype=np.int64), np.array([""], dtype=object)
    only = _one_value(frame["judge"]) if present == ["judge"] else None
    if only is not None:  # one judge written on every row: no hashing
        return np.zeros(len(frame), dtype=np.int64), np.array([only], dtype=object)
    parts = [_column_codes(frame[c]) for c in present]
    sizes = [len(texts) for _, texts in parts]
    if np.prod(np.array(sizes, dtype=float)) >= 2 ** 62:  # too many combinations for one integer: by row tuples
        stacked = np.stack([codes for codes, _ in parts], axis=1)
        used, inverse = np.unique(stacked, axis=0, return_inverse=True)
        inverse = inverse.ravel()
    else:
        combined = parts[0][0]
        for (codes, _), size in zip(parts[1:], sizes[1:]):
            combined = combined * size + codes
        used_codes, inverse = _distinct(combined, int(np.prod(sizes)))
        used = np.stack(np.unravel_index(used_codes, sizes), axis=1) if len(parts) > 1 else used_codes[:, None]
    texts = {c: t for c, (_, t) in zip(present, parts)}
    column_of = {c: i for i, c in enumerate(present)}

    def part(row, name):
        return texts[name][row[column_of[name]]] if name in column_of else None

    keys = [_key_text(part(row, "judge") or "", part(row, "template"), part(row, "judge_identity")) for row in used]
    key_of, distinct = pd.factorize(np.array(keys, dtype=object), sort=True)
    return key_of[inverse], distinct


def judge_groups(frame: pd.DataFrame) -> tuple[list[JudgeGroup], np.ndarray]:
    """The distinct judges of a judgments table (sorted by key) and each row's index into that list."""
    if len(frame) == 0:
        return [], np.zeros(0, dtype=np.int64)
    codes, keys = _key_codes(frame)
    counts = np.bincount(codes, minlength=len(keys))
    keys = [str(k) for k in keys]
    names = [k.split("\x00")[0] for k in keys]
    shas = [_template_sha(k) for k in keys]
    per_name, per_name_sha = Counter(names), Counter(zip(names, shas))
    groups = []
    for i, key in enumerate(keys):
        label = names[i] or "(no judge)"
        if per_name[names[i]] > 1:  # one name, several identities: tell them apart by template hash, else identity
            unique_sha = shas[i] and per_name_sha[names[i], shas[i]] == 1
            label += "#" + (shas[i][:8] if unique_sha else hashlib.sha256(key.encode()).hexdigest()[:8])
        parts = key.split("\x00")
        template = (parts[1] or None) if "template" in frame.columns else None
        groups.append(JudgeGroup(label, names[i], template, shas[i], int(counts[i])))
    return groups, codes


def describe_judges(groups: list[JudgeGroup]) -> str:
    """``"a" (805 rows), "b" (805 rows)`` (at most MAX_LISTED, then how many more)."""
    shown = ", ".join(g.describe() for g in groups[:MAX_LISTED])
    return shown + (f" and {len(groups) - MAX_LISTED} more" if len(groups) > MAX_LISTED else "")


def pick_judge(groups: list[JudgeGroup], judge: str) -> int:
    """Index of the group ``judge`` names: its exact label, or a judge name that covers exactly one identity."""
    exact = [i for i, g in enumerate(groups) if g.label == judge]
    if exact:
        return exact[0]
    by_name = [i for i, g in enumerate(groups) if g.judge == judge]
    if len(by_name) == 1:
        return by_name[0]
    if by_name:
        raise ConfigError(f'judge "{judge}" ran with {len(by_name)} different identities (template or settings): '
                          f"{describe_judges([groups[i] for i in by_name])}; pass one of these labels to `judge`")
    raise ConfigError(f'judge "{judge}" is not in the judgments; judges found: {describe_judges(groups)}')


def select_judge(frame: pd.DataFrame, judge: str | None = None, pool: bool = False) -> tuple[pd.DataFrame, int]:
    """The rows of one judge, or all rows when they come from one judge or ``pool`` asks to pool them.

    Returns (frame, number of rows dropped because another judge made them). A table with several judges and
    neither ``judge`` nor ``pool`` raises a ConfigError listing the judges with their row counts.
    """
    if judge is not None and pool:
        raise ConfigError("`judge` and `pool_judges` exclude each other: keep one judge, or pool them all")
    groups, codes = judge_groups(frame)
    if judge is not None:
        if not groups:
            return frame, 0
        keep = codes == pick_judge(groups, judge)
        return (frame, 0) if keep.all() else (frame[keep].reset_index(drop=True), int((~keep).sum()))
    if len(groups) > 1 and not pool:
        raise ConfigError(f"the judgments come from {len(groups)} different judges, and one ranking would pool them: "
                          f"{describe_judges(groups)}; {HOW_TO_CHOOSE}")
    return frame, 0


def note_dropped(report: ReadReport, dropped: int, judge: str | None) -> None:
    """Count rows left out by ``--judge`` as skipped in a read report, with the reason first among the reasons."""
    if not dropped:
        return
    report.rows_used = max(report.rows_used - dropped, 0)
    report.rows_skipped += dropped
    report.skipped_reasons.insert(0, f'{dropped:,} rows of judges other than "{judge}" (--judge)')


def pooled_line(frame: pd.DataFrame) -> str | None:
    """``judges pooled (--pool-judges): "a" (805 rows), "b" (805 rows)`` when the frame holds several judges."""
    groups, _ = judge_groups(frame)
    if len(groups) < 2:
        return None
    return f"judges pooled (--pool-judges): {describe_judges(groups)}"


def label_judges(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with ``judge`` set to each row's judge label, so grouping by ``judge`` never merges two identities
    that share a name (unchanged when every name is one identity)."""
    groups, codes = judge_groups(frame)
    if all(g.label == g.judge for g in groups):
        return frame
    out = frame.copy()
    out["judge"] = np.array([g.label for g in groups], dtype=object)[codes]
    return out
