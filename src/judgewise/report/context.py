"""What every report section reads: the run, the options, and the leaderboard computed once by ``ratings.rank``."""

from __future__ import annotations

import logging
from functools import cached_property

import pandas as pd

from judgewise.io.schema import detect_anchor, pair_ids, usable_mask
from judgewise.ratings import rank
from judgewise.report.head_to_head import tournament_rounds
from judgewise.report.inputs import RunData
from judgewise.report.options import ReportOptions

log = logging.getLogger(__name__)

REPORT_BOOTSTRAP = 200  # bootstrap rounds of a report whose input records none (files; stores `rank` wrote)


class ReportContext:
    """The run plus lazily computed shared results (ranking, design) so no section recomputes them."""

    def __init__(self, run: RunData, options: ReportOptions):
        self.run, self.options = run, options
        self._memo: dict = {}

    def memo(self, key, compute):
        """``compute()`` once per key for this report (results several sections show)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    @cached_property
    def valid(self) -> pd.DataFrame:
        """The usable judgments (:func:`judgewise.io.schema.usable_mask`); failed calls keep their rows in
        ``run.judgments`` and are counted."""
        df = self.run.judgments
        return df[usable_mask(df)].reset_index(drop=True)

    @cached_property
    def models(self) -> list[str]:
        return sorted(set(self.valid["model_a"].astype(str)) | set(self.valid["model_b"].astype(str)))

    @cached_property
    def anchor(self) -> str | None:
        """The model present in every judgment (an anchor design), if exactly one is."""
        anchor = detect_anchor(self.valid["model_a"].astype(str), self.valid["model_b"].astype(str))
        return None if anchor is None else str(anchor)

    @cached_property
    def design(self) -> str:
        summary = self.run.store_summary or {}
        if summary.get("design"):
            return str(summary["design"])
        if "design" in self.run.judgments.columns and self.run.judgments["design"].notna().any():
            return str(self.run.judgments["design"].dropna().iloc[0])
        if "round" in self.run.judgments.columns:
            return "tournament"
        if self.anchor:
            return "anchor"
        if self._every_pair_on_every_prompt():
            return "all pairs"
        return "tournament" if tournament_rounds(self.run.judgments) is not None else "pairs"

    def _every_pair_on_every_prompt(self) -> bool:
        df = self.valid
        n = len(self.models)
        ids, _ = pair_ids(df["model_a"], df["model_b"])
        pairs = pd.Series(ids[ids >= 0]).groupby(df["prompt_id"].astype(str).to_numpy()[ids >= 0]).nunique()
        return bool(len(pairs)) and bool((pairs == n * (n - 1) // 2).all())

    @cached_property
    def method(self) -> str:
        """The report's ``--method``; for "auto", the method the run that wrote the store ranked with (evaluate's
        record), else win rate against the anchor for anchor designs and BT otherwise."""
        if self.options.method != "auto":
            return self.options.method
        recorded = self.run.rating_hints.get("recorded") or {}
        if recorded.get("method"):
            return str(recorded["method"])
        return "winrate" if self.design == "anchor" else "bt"

    @cached_property
    def recorded(self) -> dict:
        """The ``rank`` settings the run that wrote the store recorded (``store.run_settings``), when it ranked by
        this report's method; {} otherwise. The report's own options, when given, win over them."""
        recorded = self.run.rating_hints.get("recorded") or {}
        return recorded if recorded.get("method") == self.method else {}

    @cached_property
    def bootstrap(self) -> int:
        """Bootstrap rounds: the report's option, else the run's recorded rounds, else :data:`REPORT_BOOTSTRAP`."""
        return next(v for v in (self.options.bootstrap, self.recorded.get("bootstrap"), REPORT_BOOTSTRAP)
                    if v is not None)

    @cached_property
    def seed(self) -> int:
        """The seed: the report's option, else the run's recorded seed, else 0."""
        return next(v for v in (self.options.seed, self.recorded.get("seed"), 0) if v is not None)

    @cached_property
    def ranking(self):
        """The leaderboard, from ``judgewise.ratings.rank`` — the same call ``judgewise rank`` makes, with the
        settings the run that wrote the store ranked with (:attr:`recorded`: evaluate's ridge, rounds, seed)."""
        hints = self.run.rating_hints  # as `rank` rates the input (Arena-Hard games: weighting, pinned baseline)
        recorded = {k: v for k, v in self.recorded.items() if k not in ("method", "bootstrap", "seed")}
        kwargs = {**recorded, "method": self.method, "bootstrap": self.bootstrap, "seed": self.seed,
                  "pool_judges": self.options.pool_judges, "weighting": hints.get("weighting")}
        if self.method == "winrate" and self.anchor:
            kwargs["anchor"] = self.anchor
        elif hints.get("pin_anchor") and hints.get("anchor") in self.models:
            kwargs["anchor"] = hints["anchor"]
        if self.method == "bt" and self.options.l2 is not None:
            kwargs["l2"] = self.options.l2
        return rank(self.valid, **kwargs)

    @cached_property
    def order(self) -> list[str]:
        """Models best first (leaderboard order), falling back to names when the ranking fails."""
        try:
            r = self.ranking
            ordered = [r.models[i] for i in r.order()]
            return ordered + [m for m in self.models if m not in ordered]
        except Exception:  # noqa: BLE001 — the leaderboard section reports the failure itself
            return self.models
