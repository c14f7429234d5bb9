"""The replay judge: answers games from a recorded canonical judgments table instead of calling a model.

Rows are keyed by (prompt_id, model shown first, model shown second): the ``first`` column names the model
shown first (``model_a`` when the column is absent or empty). A game with no recorded row, or whose row
recorded an error, becomes a failed result with a reason — never a guessed verdict.
"""

from __future__ import annotations

import math

import pandas as pd

from judgewise.errors import InputError
from judgewise.io.schema import JUDGMENTS_REQUIRED, require_columns
from judgewise.io.tables import Table
from judgewise.judges.base import Game, JudgeResult, Verdict


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value)) and value != ""


def _shown_first_view(row: dict) -> tuple[str, str, float | None, int | None]:
    """(first model, second model, outcome, verdict5) with outcome/verdict from the first-shown side."""
    first = row["first"] if _present(row.get("first")) else row["model_a"]
    if first not in (row["model_a"], row["model_b"]):
        raise ValueError(f'"first" = {first!r} is neither model_a nor model_b')
    flip = first != row["model_a"]
    second = row["model_a"] if flip else row["model_b"]
    outcome = float(row["outcome"]) if _present(row.get("outcome")) else None
    verdict5 = int(row["verdict"]) if _present(row.get("verdict")) else None
    if flip:
        outcome = None if outcome is None else 1.0 - outcome
        verdict5 = None if verdict5 is None else -verdict5
    return first, second, outcome, verdict5


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
        self._rows = self._index(frame[frame["judge"].astype(str) == self.recorded_judge], source)
        self.identity = {"backend": "replay", "source": source, "judge": self.recorded_judge}

    @staticmethod
    def _index(frame: pd.DataFrame, source: str) -> dict[tuple[str, str, str], dict]:
        rows: dict[tuple[str, str, str], dict] = {}
        for position, row in zip((frame.index + 1).tolist(), frame.to_dict("records")):
            try:
                first, second, outcome, verdict5 = _shown_first_view(row)
            except (ValueError, TypeError) as exc:
                raise InputError(str(exc), file=source, row=position, field="first") from exc
            key = (str(row["prompt_id"]), str(first), str(second))
            if key in rows:
                raise InputError(f"second judgment for prompt {key[0]!r} with {key[1]!r} shown before "
                                 f"{key[2]!r} (one row per prompt, pair and order)", file=source, row=position)
            rows[key] = {"outcome": outcome, "verdict5": verdict5, "raw": row.get("raw"),
                         "error": row.get("error"), "row": position}
        return rows

    async def judge(self, game: Game) -> JudgeResult:
        """The recorded verdict for this game's prompt, pair and order, from the shown-first view."""
        c = game.comparison
        first = game.first_model
        second = c.model_a if game.swapped else c.model_b
        rec = self._rows.get((str(c.prompt_id), first, second))
        if rec is None:
            return JudgeResult(verdict=None, n_calls=0, error=f"replay: no recorded judgment for prompt "
                               f"{c.prompt_id!r} with {first!r} shown before {second!r}")
        raw = rec["raw"] if _present(rec["raw"]) else ""
        if _present(rec["error"]) or rec["outcome"] is None:
            reason = rec["error"] if _present(rec["error"]) else "no outcome"
            return JudgeResult(verdict=None, raw=str(raw), n_calls=0,
                               error=f"replay: recorded judgment (row {rec['row']}) failed: {reason}")
        verdict = Verdict(outcome=rec["outcome"], verdict5=rec["verdict5"])
        return JudgeResult(verdict=verdict, raw=str(raw), n_calls=0)
