"""A report's settings (``judgewise report``'s options); light, as the CLI declares its flags from them at start-up."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from judgewise.analysis.panel_text import panel_option
from judgewise.errors import ConfigError
from judgewise.flags import option

MAX_BOOTSTRAP = 100_000  # more replicates change nothing visible and only burn memory and hours


@dataclass
class ReportOptions:
    """Settings of a report. ``method`` "auto" = win rate against the anchor for anchor designs, BT otherwise."""

    method: str = option("auto", "--method", help="auto (win rate vs the anchor for anchor designs, else bt), "
                         "winrate, bt, elo or trueskill.")
    bootstrap: int | None = None  # None: what the run recorded in its store (evaluate), else REPORT_BOOTSTRAP
    seed: int | None = None  # None: the run's recorded seed, else 0
    gold: Path | None = option(None, "--gold", help="Gold ranking (JSON list of {model, score} or a leaderboard CSV) "
                               "for the anchor-quality inverted U.")
    study: object = None  # a StudyResult or the path of `judgewise study --json` output
    command: str | None = None
    title: str = option("judgewise report", "--title", help=None)
    extra_facts: dict = field(default_factory=dict)
    judge: str | None = None  # keep only this judge's rows (io.provenance.select_judge)
    pool_judges: bool = False  # pool several judges on purpose (otherwise a mixed run is refused)
    panel: str | None = panel_option("panel")  # a panel's derived verdicts (analysis.panel.panel_of_options)
    panel_rule: str = panel_option("panel_rule")
    panel_split: str = panel_option("panel_split")
    panel_reference: str | None = panel_option("panel_reference")
    l2: float | None = None  # BT ridge (None: the MLE, a weak prior only on separated data; ratings.bradley_terry)

    def __post_init__(self) -> None:
        self.gold = Path(self.gold) if self.gold else None
        self.study = Path(self.study) if isinstance(self.study, str) else self.study
        self.check()

    def check(self) -> None:
        """Refuse settings that would give no leaderboard or never finish: ConfigError naming the option."""
        from judgewise.ratings import RATING_METHODS  # numpy, scipy: not loaded for --help (the CLI imports this)

        if self.method != "auto" and self.method not in RATING_METHODS:
            raise ConfigError(f"unknown rating method {self.method!r} for `method`: expected auto or one of "
                              f"{', '.join(RATING_METHODS)}")
        if self.bootstrap is not None and (isinstance(self.bootstrap, bool) or not isinstance(self.bootstrap, int)
                                           or not 0 <= self.bootstrap <= MAX_BOOTSTRAP):
            raise ConfigError(f"`bootstrap` must be a whole number from 0 to {MAX_BOOTSTRAP:,}, got {self.bootstrap!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0):
            raise ConfigError(f"`seed` must be a whole number ≥ 0, got {self.seed!r}")

    def command_line(self) -> str:
        return self.command or "judgewise " + " ".join(shlex.quote(a) for a in sys.argv[1:])
