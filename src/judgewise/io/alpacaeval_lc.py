"""Readers for AlpacaEval's length-controlled inputs: the instruction-difficulty table and the fitted GLM weights.

AlpacaEval 2's length-controlled win rate (Dubois et al. 2024, "Length-Controlled AlpacaEval", §3; GLM
``length_controlled_v1``) reads two things fitted once on its leaderboard, which a user may have:

* **instruction difficulty** — one number per instruction of the 805-instruction evaluation set. AlpacaEval's own
  file (``instruction_difficulty.csv``) is a CSV whose first column is the instruction's position in the evaluation
  set (0, 1, …) and whose other column is ``instruction_difficulty``. Its ``df_gamed.csv`` holds the same numbers
  (column ``index`` = the position) *plus* the annotations of the anchor's own length-gamed variants (``preference``
  in [0, 1], ``std_delta_len``, ``not_gamed_baseline`` false), which AlpacaEval's fit uses to regularise the length
  slope; those rows are kept as :attr:`LcDifficulty.gamed`. A table keyed by ``instruction`` (text) or
  ``prompt_id`` instead of a position is accepted too.
* **GLM weights** — ``weights/<annotator>/length_controlled_v1/baseline_<anchor>.csv``: one row per model (first
  column the model's name) with the columns ``np.tanh(std_delta_len)``, ``instruction_difficulty`` and
  ``not_gamed_baseline.astype(float)``: the length slope, the difficulty slope and the intercept of that model's
  GLM against the anchor. A directory is searched for ``baseline_<anchor>.csv`` (also under
  ``length_controlled_v1/``).

Reading only: turning positions into prompts and the formula live in ``ratings.lc_winrate``.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.io.containers import decode_utf8, read_bytes
from judgewise.io.tables import ReadReport
from judgewise.io.validate import Validator, show

DIFFICULTY = "instruction_difficulty"
#: AlpacaEval's weight column → judgewise's name for it
WEIGHT_COLUMNS = {"np.tanh(std_delta_len)": "length", "instruction_difficulty": "difficulty",
                  "not_gamed_baseline.astype(float)": "intercept"}
KEYS = ("index", "instruction", "prompt_id")
GAMED_COLUMNS = ("preference", "std_delta_len", "not_gamed_baseline")


@dataclass
class LcDifficulty:
    """A per-instruction difficulty table as read.

    Attributes
    ----------
    key : str
        What identifies an instruction: ``"index"`` (its position in AlpacaEval's evaluation set),
        ``"instruction"`` (its text) or ``"prompt_id"``.
    keys : list
        One key per entry (int positions, texts or ids), in file order, each once.
    values : numpy.ndarray
        The difficulty of each entry.
    gamed : pandas.DataFrame or None
        ``df_gamed.csv``'s gamed-baseline rows (columns ``key``, ``preference`` ∈ [0, 1], ``std_delta_len``,
        ``difficulty``), or None when the file holds none.
    source : str
        The file read.
    """

    key: str
    keys: list
    values: np.ndarray
    gamed: pd.DataFrame | None
    source: str


def _read_table(path: Path, what: str) -> tuple[pd.DataFrame, Validator]:
    """A CSV (first column may be unnamed, as pandas writes an index) or JSON list, every cell as text."""
    v = Validator(str(path), ReadReport(source=str(path), format=what))
    text = decode_utf8(read_bytes(path, v), v)
    try:
        if path.suffix.lower() in (".json", ".jsonl"):
            frame = pd.read_json(io.StringIO(text), lines=path.suffix.lower() == ".jsonl", dtype=False)
        else:
            frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except ValueError as exc:
        raise v.error(f"not a readable {what} table ({exc})") from None
    if not len(frame):
        raise v.error(f"the {what} table has no data rows")
    return frame, v


def _numbers(frame: pd.DataFrame, column: str, v: Validator, what: str) -> np.ndarray:
    """The column as finite floats; the first bad cell is an error naming its row."""
    out = np.empty(len(frame))
    for i, value in enumerate(frame[column].tolist()):
        try:
            out[i] = float(value)
        except (TypeError, ValueError):
            out[i] = math.nan
        if not math.isfinite(out[i]):
            raise v.error(f"expected a finite number ({what}), found {show(value)}", row=i + 1, field=column)
    return out


def _difficulty_key(frame: pd.DataFrame, v: Validator) -> tuple[str, list]:
    """Which column names the instruction, and its values (positions as ints), each once."""
    column = next((c for c in KEYS if c in frame.columns), None)
    if column is None:
        first = frame.columns[0]
        if first not in ("", "Unnamed: 0") and first != DIFFICULTY:
            raise v.error(f"expected a column naming the instruction ({', '.join(KEYS)}) or an unnamed first "
                          f"column of positions (AlpacaEval's instruction_difficulty.csv), found {list(frame.columns)}")
        column = first
    key = "index" if column not in ("instruction", "prompt_id") else column
    values = frame[column].tolist()
    if key == "index":
        try:
            values = [int(str(x)) for x in values]
        except ValueError:
            bad = next(i for i, x in enumerate(values) if not str(x).lstrip("-").isdigit())
            raise v.error(f"expected the instruction's position (an integer), found {show(values[bad])}",
                          row=bad + 1, field=column or "index") from None
    return key, values


def read_lc_difficulty(path: str | Path) -> LcDifficulty:
    """Read an instruction-difficulty table (module doc): AlpacaEval's ``instruction_difficulty.csv`` or
    ``df_gamed.csv``, or a CSV/JSON with ``instruction`` or ``prompt_id`` and ``instruction_difficulty``.

    Raises
    ------
    InputError
        Unreadable file, no difficulty column, a non-numeric value, or an instruction given two difficulties.
    """
    path = Path(path)
    frame, v = _read_table(path, "instruction difficulty")
    if DIFFICULTY not in frame.columns:
        raise v.error(f"expected a column {DIFFICULTY!r} (AlpacaEval's instruction difficulty), found "
                      f"{list(frame.columns)}")
    key, keys = _difficulty_key(frame, v)
    values = _numbers(frame, DIFFICULTY, v, "an instruction's difficulty")
    gamed = None
    if all(c in frame.columns for c in GAMED_COLUMNS):  # df_gamed.csv: gamed rows + the difficulty of each
        gamed = pd.DataFrame({"key": keys, "preference": _numbers(frame, "preference", v, "a preference in [0, 1]"),
                              "std_delta_len": _numbers(frame, "std_delta_len", v, "a standardised length gap"),
                              "difficulty": values})
        if ((gamed["preference"] < 0) | (gamed["preference"] > 1)).any():
            i = int(np.flatnonzero((gamed["preference"] < 0) | (gamed["preference"] > 1))[0])
            raise v.error(f"expected a preference in [0, 1] (df_gamed.csv), found {gamed['preference'][i]}",
                          row=i + 1, field="preference")
    firsts = pd.Series(values).groupby(pd.Series(keys, dtype=object), sort=False)
    if (firsts.nunique() > 1).any():
        dup = firsts.nunique()[lambda s: s > 1].index[0]
        raise v.error(f"instruction {show(dup)} is given two different difficulties", field=DIFFICULTY)
    first_rows = ~pd.Series(keys, dtype=object).duplicated().to_numpy()
    return LcDifficulty(key, [k for k, keep in zip(keys, first_rows) if keep], values[first_rows], gamed, str(path))


def weights_file(path: str | Path, anchor: str) -> Path:
    """The weights CSV for ``anchor``: ``path`` itself, or ``baseline_<anchor>.csv`` in the directory ``path``
    (or its ``length_controlled_v1/``)."""
    path = Path(path)
    if path.is_file():
        return path
    name = f"baseline_{anchor}.csv"
    for candidate in (path / name, path / "length_controlled_v1" / name):
        if candidate.is_file():
            return candidate
    found = sorted(p.name for p in path.glob("**/baseline_*.csv")) if path.is_dir() else []
    v = Validator(str(path), ReadReport(source=str(path), format="lc weights"))
    raise v.error(f"no {name} (AlpacaEval's GLM weights against the anchor {anchor!r}) in this directory"
                  + (f"; found {found}" if found else "") if path.is_dir() else "no such file or directory")


def read_lc_weights(path: str | Path, anchor: str) -> pd.DataFrame:
    """AlpacaEval's fitted GLM weights against ``anchor`` (module doc), one row per model, columns
    ``length``, ``difficulty``, ``intercept``.

    Raises
    ------
    InputError
        No weights file for the anchor, a missing column, a non-numeric weight, or a model listed twice.
    """
    file = weights_file(path, anchor)
    frame, v = _read_table(file, "lc weights")
    missing = [c for c in WEIGHT_COLUMNS if c not in frame.columns]
    if missing:
        raise v.error(f"expected AlpacaEval's GLM weight columns {list(WEIGHT_COLUMNS)}, missing {missing} "
                      f"(found {list(frame.columns)})")
    names = frame[frame.columns[0]].astype(str).tolist()
    dup = pd.Series(names).duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise v.error(f"model {show(names[i])} is listed twice", row=i + 1, field=frame.columns[0] or "model")
    out = pd.DataFrame({new: _numbers(frame, old, v, "a GLM weight") for old, new in WEIGHT_COLUMNS.items()},
                       index=pd.Index(names, name="model"))
    out.attrs["source"] = str(file)
    return out
