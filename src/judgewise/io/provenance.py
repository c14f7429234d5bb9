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
HOW_TO_CHOOSE = ("choose one with --judge NAME (Python: judge=NAME) or pool them on purpose with --pool-judges "
                 "(Python: pool_judges=True)")


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


def _row_keys(frame: pd.DataFrame) -> pd.Series:
    """Per row: the string that identifies its judge (full store identity > judge + template > judge)."""
    judge = _text(frame["judge"]) if "judge" in frame.columns else pd.Series("", index=frame.index)
    key = judge
    if "template" in frame.columns:
        key = key + "\x00" + _text(frame["template"])
    if "judge_identity" in frame.columns:
        identity = _text(frame["judge_identity"])
        key = key.where(identity == "", key + "\x00" + identity)
    return key


def _template_sha(key: str) -> str | None:
    identity = key.split("\x00")[-1]
    try:
        sha = json.loads(identity).get("template_sha") if identity.startswith("{") else None
    except (ValueError, AttributeError):
        return None
    return str(sha) if sha else None


def _key_codes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each row's index into the sorted distinct judge keys, and those keys; a categorical ``judge`` column alone
    (millions of rows read by ``io.columnar``) is keyed on its categories, not row by row."""
    judge = frame["judge"] if "judge" in frame.columns else None
    if judge is None or not isinstance(judge.dtype, pd.CategoricalDtype) or \
            {"template", "judge_identity"} & set(frame.columns):
        return pd.factorize(_row_keys(frame), sort=True)
    per_category = np.append(_text(pd.Series(judge.cat.categories, dtype=object)).to_numpy(dtype=object), "")
    codes = judge.cat.codes.to_numpy().astype(np.int64)
    codes[codes < 0] = len(per_category) - 1  # a null judge: the key ""
    used = np.flatnonzero(np.bincount(codes, minlength=len(per_category)))
    key_of, keys = pd.factorize(per_category[used], sort=True)
    lookup = np.full(len(per_category), -1, dtype=np.int64)
    lookup[used] = key_of
    return lookup[codes], keys


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


def _pick(groups: list[JudgeGroup], judge: str) -> int:
    """Index of the group ``judge`` names: its exact label, or a judge name that covers exactly one identity."""
    exact = [i for i, g in enumerate(groups) if g.label == judge]
    if exact:
        return exact[0]
    by_name = [i for i, g in enumerate(groups) if g.judge == judge]
    if len(by_name) == 1:
        return by_name[0]
    if by_name:
        raise ConfigError(f'judge "{judge}" ran with {len(by_name)} different identities (template or settings): '
                          f"{describe_judges([groups[i] for i in by_name])}; pass one of these labels to --judge")
    raise ConfigError(f'judge "{judge}" is not in the judgments; judges found: {describe_judges(groups)}')


def select_judge(frame: pd.DataFrame, judge: str | None = None, pool: bool = False) -> tuple[pd.DataFrame, int]:
    """The rows of one judge, or all rows when they come from one judge or ``pool`` asks to pool them.

    Returns (frame, number of rows dropped because another judge made them). A table with several judges and
    neither ``judge`` nor ``pool`` raises a ConfigError listing the judges with their row counts.
    """
    if judge is not None and pool:
        raise ConfigError("--judge and --pool-judges exclude each other: keep one judge, or pool them all")
    groups, codes = judge_groups(frame)
    if judge is not None:
        if not groups:
            return frame, 0
        keep = codes == _pick(groups, judge)
        return (frame, 0) if keep.all() else (frame[keep].reset_index(drop=True), int((~keep).sum()))
    if len(groups) > 1 and not pool:
        raise ConfigError(f"the judgments come from {len(groups)} different judges, and one ranking would pool them: "
                          f"{describe_judges(groups)}; {HOW_TO_CHOOSE}")
    return frame, 0


def note_dropped(report: ReadReport, dropped: int, judge: str) -> None:
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
