"""The judging engine as a design's verdict callback, for multi-round designs (tournament, adaptive, insertion).

A multi-round design asks for a batch of verdicts, decides the next batch from the answers, and so on. Here
each batch becomes one :func:`~judgewise.judges.runner.run_judging` run on the same store (so reruns and
crashes resume batch by batch at no extra cost); the answer per comparison is model_a's outcome averaged
over the judged orders, NaN when every order failed or the responses are missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgewise.judges.base import Judge
from judgewise.judges.pairs import Answers, build_comparisons
from judgewise.judges.run_result import RunResult
from judgewise.judges.runner import run_judging
from judgewise.store.protocol import JudgmentStoreLike


@dataclass
class EngineVerdicts:
    """``VerdictFn`` (prompt ids, model_a ids, model_b ids as integer arrays → outcomes) answered by a judge.

    ``pool`` is a :class:`~judgewise.judges.pairs.Pool`; ``run_options`` go to ``run_judging``.
    """

    pool: object
    judge: Judge
    store: JudgmentStoreLike
    run_options: dict = field(default_factory=dict)
    results: list[RunResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    answers: Answers | None = None  # the pool's answer lookup, built on the first round and kept

    def __call__(self, prompt: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        pool = self.pool
        triples = [(pool.prompt_ids[p], pool.models[i], pool.models[j]) for p, i, j in zip(prompt, a, b)]
        if self.answers is None:
            self.answers = Answers.of(pool.responses, pool.every_turn)
        built = build_comparisons(self.answers, triples, pool.texts, pool.references,
                                  pool.turns if pool.every_turn else None)
        self.skipped += built.skipped
        result = run_judging(built.comparisons, self.judge, self.store, **self.run_options)
        self.results.append(result)
        averaged = result.by_comparison()
        outcome = {(r.prompt_id, r.model_a, r.model_b): r.outcome for r in averaged.itertuples()}
        return np.array([outcome.get(t, np.nan) for t in triples], dtype=float)

    def judgments(self) -> pd.DataFrame:
        """Every game judged for the design, one row per game, in the order asked."""
        return self.totals().judgments

    def ranked_games(self, judgments: pd.DataFrame) -> pd.DataFrame:
        """The games of a round's ``judgments`` a ranking rests on: one judge's are its judgments themselves (a
        panel of judges derives its own verdicts from its members': ``judgewise.pipeline.panel_rounds``)."""
        return judgments

    def totals(self) -> RunResult:
        """The rounds' runs as one (:meth:`RunResult.combine`): counters summed, every game judged once."""
        return RunResult.combine(self.results)

    def summary(self, totals: RunResult | None = None) -> dict:
        """Counts summed over the rounds (``totals``, when the caller has them), plus the totals of the judgments
        table; ``stopped`` None (a round's stop is the design's to report)."""
        totals = self.totals() if totals is None else totals
        return {**totals.counts(), "rounds": len(self.results), "ok_total": totals.ok_total,
                "failed_total": totals.failed_total, "skipped_comparisons": len(self.skipped),
                "swap_consistency": totals.swap_consistency, "stopped": None}
