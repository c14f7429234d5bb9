"""The replay judge: answers games from a recorded canonical judgments table instead of calling a model.

Rows are keyed by (prompt_id, model shown first, model shown second): the ``first`` column names the model
shown first (``model_a`` when the column is absent or empty). A game with no recorded row, or whose row
recorded an error, becomes a failed result with a reason — never a guessed verdict.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgewise.errors import InputError
from judgewise.io.schema import JUDGMENTS_REQUIRED, require_columns
from judgewise.io.tables import Table
from judgewise.judges.base import Game, JudgeResult, Verdict


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value)) and value != ""


def _present_mask(column: pd.Series) -> np.ndarray:
    """Which cells hold a value (not None, NaN or the empty string), vectorised :func:`_present`."""
    present = column.notna().to_numpy()
    if pd.api.types.is_numeric_dtype(column.dtype):
        return present
    return present & (column.astype(str) != "").to_numpy()


def _numbers(frame: pd.DataFrame, field: str, source: str, positions: np.ndarray) -> np.ndarray:
    """Column ``field`` as floats, NaN where absent; a present cell that is not a number is an InputError at
    its row."""
    if field not in frame.columns:
        return np.full(len(frame), np.nan)
    column = frame[field]
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        return column.to_numpy(dtype=float, na_value=np.nan)
    values = pd.to_numeric(column.where(_present_mask(column)), errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(np.isnan(values) & _present_mask(column))
    if len(bad):
        raise InputError(f"{field} = {column.iloc[bad[0]]!r} is not a number", file=source,
                         row=int(positions[bad[0]]), field=field)
    return values


def _shown_first(frame: pd.DataFrame, source: str, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                     np.ndarray]:
    """(model shown first, model shown second, flipped: whether the first is model_b) per row; the ``first``
    column names the model shown first (``model_a`` where absent or empty). A ``first`` naming neither model is
    an InputError at its row."""
    model_a = frame["model_a"].astype(str).to_numpy(dtype=object)
    model_b = frame["model_b"].astype(str).to_numpy(dtype=object)
    first = model_a
    if "first" in frame.columns:
        first = np.where(_present_mask(frame["first"]), frame["first"].astype(str).to_numpy(dtype=object), model_a)
    bad = np.flatnonzero((first != model_a) & (first != model_b))
    if len(bad):
        raise InputError(f'"first" = {first[bad[0]]!r} is neither model_a nor model_b', file=source,
                         row=int(positions[bad[0]]), field="first")
    flip = first != model_a
    return first, np.where(flip, model_a, model_b), flip


class GameKeys:
    """(prompt, model shown first, model shown second) of every row as one integer each, and the lookup of a game's
    key: prompts and models numbered once (``pd.factorize``), key = (prompt · M + first) · M + second for M models
    (< 2⁶³ for any table that fits in memory)."""

    def __init__(self, prompt: np.ndarray, first: np.ndarray, second: np.ndarray):
        prompt_codes, prompts = pd.factorize(prompt)
        model_codes, models = pd.factorize(np.concatenate([first, second]))
        self.prompts = dict(zip(prompts.tolist(), range(len(prompts))))
        self.models = dict(zip(models.tolist(), range(len(models))))
        self.width = max(len(models), 1)
        n = len(prompt)
        self.keys = (prompt_codes.astype(np.int64) * self.width + model_codes[:n]) * self.width + model_codes[n:]

    def duplicates(self) -> np.ndarray:
        """Positions of the rows whose key an earlier row already has, in order."""
        return np.flatnonzero(pd.Series(self.keys).duplicated().to_numpy())

    def key(self, prompt: str, first: str, second: str) -> int | None:
        """The key of one game, None when its prompt or a model is in no row."""
        p, f, s = self.prompts.get(prompt), self.models.get(first), self.models.get(second)
        return None if p is None or f is None or s is None else (p * self.width + f) * self.width + s


class ReplayJudge:
    """A :class:`~judgewise.judges.base.Judge` that looks verdicts up in a judgments table.

    ``judge`` selects one recorded judge when the table holds several (required then). Two rows for the
    same (prompt, first, second) key are an InputError naming the second row.
    """

    def __init__(self, judgments: Table | pd.DataFrame, *, judge: str | None = None, source: str = "table"):
        frame = judgments.frame if isinstance(judgments, Table) else judgments
        source = judgments.report.source if isinstance(judgments, Table) else source
        require_columns(frame, JUDGMENTS_REQUIRED, file=source, what="judgments table")
        judges = sorted(frame["judge"].astype(str).unique())
        if judge is None and len(judges) > 1:
            raise InputError(f"table holds {len(judges)} judges {judges[:5]}: choose one with judge=",
                             file=source, field="judge")
        self.recorded_judge = judge if judge is not None else (judges[0] if judges else "")
        frame = frame.reset_index(drop=True)  # row numbers in errors count over the whole table
        self._index(frame[frame["judge"].astype(str) == self.recorded_judge], source)
        self.identity = {"backend": "replay", "source": source, "judge": self.recorded_judge}

    def _index(self, frame: pd.DataFrame, source: str) -> None:
        """Index the rows once, column by column: each (prompt, first, second) key → its row's position in the
        outcome/verdict/raw/error arrays (outcome and verdict from the shown-first view)."""
        positions = (frame.index + 1).to_numpy()
        first, second, flip = _shown_first(frame, source, positions)
        outcome = _numbers(frame, "outcome", source, positions)
        verdict = _numbers(frame, "verdict", source, positions)
        self._outcome = np.where(flip, 1.0 - outcome, outcome)
        self._verdict = np.where(flip, -verdict, verdict)
        prompt = frame["prompt_id"].astype(str).to_numpy(dtype=object)
        keys = GameKeys(prompt, first, second)
        dup = keys.duplicates()
        if len(dup):
            k = dup[0]
            raise InputError(f"second judgment for prompt {prompt[k]!r} with {first[k]!r} shown before "
                             f"{second[k]!r} (one row per prompt, pair and order)", file=source,
                             row=int(positions[k]))
        self._raw = frame["raw"].to_numpy(dtype=object) if "raw" in frame.columns else np.full(len(frame), None)
        self._error = frame["error"].to_numpy(dtype=object) if "error" in frame.columns else \
            np.full(len(frame), None)
        self._position = positions
        self._keys, self._rows = keys, pd.Index(keys.keys)  # unique: a key's position is its row

    async def judge(self, game: Game) -> JudgeResult:
        """The recorded verdict for this game's prompt, pair and order, from the shown-first view."""
        c = game.comparison
        first = game.first_model
        second = c.model_a if game.swapped else c.model_b
        key = self._keys.key(str(c.prompt_id), first, second)
        i = None if key is None or key not in self._rows else int(self._rows.get_loc(key))
        if i is None:
            return JudgeResult(verdict=None, n_calls=0, error=f"replay: no recorded judgment for prompt "
                               f"{c.prompt_id!r} with {first!r} shown before {second!r}")
        raw, error, outcome, verdict5 = self._raw[i], self._error[i], self._outcome[i], self._verdict[i]
        raw = raw if _present(raw) else ""
        if _present(error) or math.isnan(outcome):
            reason = error if _present(error) else "no outcome"
            return JudgeResult(verdict=None, raw=str(raw), n_calls=0,
                               error=f"replay: recorded judgment (row {self._position[i]}) failed: {reason}")
        verdict = Verdict(outcome=float(outcome), verdict5=None if math.isnan(verdict5) else int(verdict5))
        return JudgeResult(verdict=verdict, raw=str(raw), n_calls=0)
