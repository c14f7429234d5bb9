"""A panel of judges in ``judgewise evaluate``: each round judged by every member, the panel's verdicts derived.

:class:`PanelVerdicts` answers a round for :class:`judgewise.pipeline.target_rounds.TargetRounds` as one judge
would: each member judges the round's comparisons through its own engine
(:class:`judgewise.judges.engine_verdicts.EngineVerdicts`: its own judge identity, so its own stored calls — a
rerun or a resumed run pays nothing twice — and its own batch settings and cost cap), one member after another;
the panel's verdicts are then derived from theirs by :func:`judgewise.analysis.panel.panel_verdicts` (never
stored as calls), and those are what the design, the BT fit and the stop read. The run counts every member's
calls (``budget.max_calls`` holds for each member, so the round loop's cap is that times the members);
``budget.max_cost`` caps each member's own dollars, and the first member to reach it stops the run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pandas as pd

from judgewise.analysis.panel import Panel, panel_verdicts
from judgewise.errors import BudgetExceeded, ConfigError
from judgewise.io.provenance import label_judges
from judgewise.judges.engine_verdicts import EngineVerdicts
from judgewise.judges.game_keys import judge_name
from judgewise.judges.limits import Budget
from judgewise.judges.run_result import RunResult, average_orders
from judgewise.pipeline.config import RunConfig
from judgewise.pipeline.job import Job, build_job

MEMBER = "panel_member"  # within a round's table: the index of the member that judged each game


def panel_reason(cfg: RunConfig) -> str:
    """What a panel does to the design's rounds and the budget, as a line of the design's reasons."""
    spec = cfg.judge
    return (f"a panel of {len(spec['panel'])} judges: every member judges each comparison (the calls and budget "
            f"above are each member's), the panel's verdicts ({spec.get('rule') or 'majority'} rule) are what the "
            "design and the target read")


def panel_job(cfg: RunConfig, pool) -> Job:
    """The job of a panel config: each member's job (:func:`judgewise.pipeline.job.build_job` with the member as
    the judge, on the responses read once) in ``members``; the panel job's own judge is the first member's."""
    members = [build_job(dataclasses.replace(cfg, judge=member, output=None), allow_rounds=True, pool=pool)
               for member in cfg.judge["panel"]]
    return dataclasses.replace(members[0], config=cfg, members=members)


@dataclass
class PanelVerdicts:
    """The round's verdicts of a panel (module docstring): ``members`` (one engine per member, in the config's
    order), the config's ``rule`` and ``split``, and ``max_cost`` per member."""

    members: list[EngineVerdicts]
    rule: str = "majority"
    split: str = "tie"
    max_cost: float | None = None
    run_options: dict = field(default_factory=dict)
    results: list[RunResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.spent = [0.0] * len(self.members)  # each member's dollars over the evaluation's games
        self.games = [0] * len(self.members)

    @property
    def pool(self):
        return self.members[0].pool

    @property
    def skipped(self) -> list[str]:
        return self.members[0].skipped

    def __call__(self, prompt: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Each member judges the comparisons (prompt, model_a, model_b index arrays); model_a's outcome per
        comparison under the panel's verdicts, averaged over the orders judged (NaN where no member could)."""
        done, frames, results = 0, [], []
        for i, member in enumerate(self.members):
            stop = self._capped(i)
            if stop is None:
                member.run_options.update(self._member_options(i, done))
                try:
                    member(prompt, a, b)
                    result = member.results[-1]
                except BudgetExceeded as exc:
                    member.results.append(exc.result)
                    result, stop = exc.result, exc
                self._count(i, result)
                done += len(result.judgments)
                results.append(result)
                frames.append(result.judgments.assign(**{MEMBER: i}))
            if stop is not None:
                stopped = BudgetExceeded(f"panel member {self.label(i)}: {stop}")
                stopped.result = self._combined(results, frames)
                raise stopped
        self.results.append(self._combined(results, frames))
        return self._outcomes(prompt, a, b, self.ranked_games(self.results[-1].judgments))

    def label(self, i: int) -> str:
        """Member ``i``'s judge name (as the judgments table names it)."""
        return judge_name(self.members[i].judge.identity)

    def _capped(self, i: int) -> BudgetExceeded | None:
        """The cost cap, when member ``i`` has spent it already."""
        if self.max_cost is not None and self.spent[i] >= self.max_cost:
            return BudgetExceeded(f"cost budget reached: ${self.spent[i]:.4f} of ${self.max_cost:g} spent")
        return None

    def _member_options(self, i: int, done: int) -> dict:
        """Member ``i``'s run options for this round: the round's, with its own cost cap and cost per game, and
        progress counted after the ``done`` games earlier members judged in the round."""
        budget = Budget(max_cost=self.max_cost - self.spent[i], stored_cost_counts=True) \
            if self.max_cost is not None else Budget()
        progress = self.run_options.get("progress")
        shifted = None if progress is None else (
            lambda p: progress(SimpleNamespace(done=done + p.done, cached=p.cached)))
        return {**{k: v for k, v in self.run_options.items() if k not in ("progress", "budget")}, "budget": budget,
                "est_cost_per_game": self.spent[i] / self.games[i] if self.games[i] else 0.0, "progress": shifted}

    def _count(self, i: int, result: RunResult) -> None:
        judgments = result.judgments
        self.games[i] += len(judgments)
        if len(judgments) and "cost" in judgments.columns:
            self.spent[i] += float(judgments["cost"].fillna(0).sum())

    @staticmethod
    def _combined(results: list[RunResult], frames: list[pd.DataFrame]) -> RunResult:
        frames = [f for f in frames if len(f)]
        return RunResult.combine(results, judgments=pd.concat(frames, ignore_index=True) if frames
                                 else pd.DataFrame())

    def ranked_games(self, judgments: pd.DataFrame) -> pd.DataFrame:
        """The panel's verdicts on a round's games (every member's, :data:`MEMBER` saying whose): derived by the
        config's rule from the members present (a round the budget cut may lack some; one member alone gives
        its own verdicts)."""
        if not len(judgments):
            return judgments
        frame = judgments.drop(columns=[c for c in ("template", "judge_identity") if c in judgments.columns])
        frame = frame.assign(judge=frame[MEMBER].astype(str))
        present = [str(i) for i in sorted(frame[MEMBER].unique())]
        if len(present) < 2:
            return frame
        return panel_verdicts(frame, present, self.rule, split=self.split).judgments

    def _outcomes(self, prompt, a, b, verdicts: pd.DataFrame) -> np.ndarray:
        """model_a's outcome per asked comparison: its verdicts averaged over the orders judged
        (:func:`~judgewise.judges.run_result.average_orders`, as one judge's), read the other way round where the
        verdicts name the pair so (the panel writes model_a < model_b); NaN where none is usable."""
        pool = self.pool
        triples = [(pool.prompt_ids[p], pool.models[i], pool.models[j]) for p, i, j in zip(prompt, a, b)]
        if not len(verdicts):
            return np.full(len(triples), np.nan)
        averaged = average_orders(verdicts.assign(prompt_id=verdicts["prompt_id"].astype(str)))
        mean = dict(zip(zip(averaged["prompt_id"], averaged["model_a"], averaged["model_b"]), averaged["outcome"]))
        return np.array([mean.get((p, x, y), 1.0 - mean.get((p, y, x), np.nan)) for p, x, y in triples], dtype=float)

    def member_judgments(self) -> tuple[pd.DataFrame, list[str]]:
        """Every member's games of the evaluation (each once), judges labelled as ``rank --panel`` names them,
        and each member's label."""
        frames = [m.judgments().assign(**{MEMBER: i}) for i, m in enumerate(self.members)]
        judged = label_judges(pd.concat([f for f in frames if len(f)], ignore_index=True))
        first = judged.groupby(MEMBER)["judge"].first()
        labels = [str(first[i]) if i in first.index else self.label(i) for i in range(len(self.members))]
        return judged.drop(columns=MEMBER), labels

    def panel(self) -> tuple[Panel, pd.DataFrame]:
        """The panel's verdicts on every game of the evaluation (:func:`~judgewise.analysis.panel.panel_verdicts`
        over :meth:`member_judgments`, with each member's cost), and the members' judgments."""
        judged, labels = self.member_judgments()
        missing = [label for label, n in zip(labels, self.games) if not n]
        if missing:
            raise ConfigError(f"panel members {missing} judged no game before the budget stopped the run; raise "
                              "budget.max_calls / budget.max_cost (stored games are not paid again)")
        return panel_verdicts(judged, labels, self.rule, split=self.split), judged

    def judgments(self) -> pd.DataFrame:
        """The panel's derived verdicts on every game of the evaluation: what the final ranking rests on."""
        return self.panel()[0].judgments


def panel_block(engine: PanelVerdicts, panel: Panel) -> dict:
    """The trust block's panel part: the panel's summary (members, rule, Fleiss' κ between members, comparisons
    judged by every member or by some, splits, each member's verdicts and cost) and each member's calls (games
    of the evaluation, stored earlier or judged now) and calls paid by this run."""
    paid = [sum(r.paid_calls for r in member.results) for member in engine.members]
    return {**panel.as_dict(), "member_calls": dict(zip(panel.members, map(int, engine.games))),
            "member_paid_calls": dict(zip(panel.members, map(int, paid)))}


def panel_engine(job: Job, pool, store) -> PanelVerdicts:
    """The rounds' verdicts of a panel job (:func:`panel_job`) on ``pool``: an engine per member with the member's
    run options (its batch settings; the budget is set per round), the config's rule, split and cost cap."""
    members = [EngineVerdicts(pool, m.judge, store, {k: v for k, v in m.config.run_options().items() if k != "budget"})
               for m in job.members]
    spec = job.config.judge
    return PanelVerdicts(members, spec.get("rule") or "majority", spec.get("split") or "tie",
                         job.config.budget.get("max_cost"))
