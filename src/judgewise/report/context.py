"""What every report section reads: the run, the options, and the leaderboard computed once by ``ratings.rank``."""

from __future__ import annotations

import logging
from functools import cached_property

import pandas as pd

from judgewise.commands.options import MAX_BOOTSTRAP, ReportOptions  # noqa: F401 (re-exported)
from judgewise.io.schema import detect_anchor, pair_ids, usable_mask
from judgewise.ratings import rank
from judgewise.report.head_to_head import tournament_rounds
from judgewise.report.inputs import RunData

log = logging.getLogger(__name__)


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
        if self.options.method != "auto":
            return self.options.method
        return "winrate" if self.design == "anchor" else "bt"

    @cached_property
    def ranking(self):
        """The leaderboard, from ``judgewise.ratings.rank`` — the same call ``judgewise rank`` makes."""
        hints = self.run.rating_hints  # as `rank` rates the input (Arena-Hard games: weighting, pinned baseline)
        kwargs = {"method": self.method, "bootstrap": self.options.bootstrap, "seed": self.options.seed,
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
