"""The settings of each command as one frozen dataclass, built by the CLI and taken by the commands' functions
(light: no heavy imports, so the CLI declares its options from them at start-up)."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from judgewise.errors import ConfigError

MAX_BOOTSTRAP = 100_000  # more replicates change nothing visible and only burn memory and hours


@dataclass(frozen=True)
class RankOptions:
    """How :func:`rank_path` reads and ranks an input (``judgewise rank``'s options).

    Attributes
    ----------
    method : str
        A rating method (``winrate``, ``winshare``, ``bt``, ``elo``, ``trueskill``, ``lc_winrate``; ``mean_score``
        for pointwise grades).
    format, skip_invalid, judge, pool_judges
        As :func:`judgewise.store.reading.read_rated`.
    anchor : str, optional
        Win rate's anchor (default: the one the reader knows, e.g. AlpacaEval's ``generator_1``).
    style_control : bool
        Style-controlled BT; needs the responses' texts, which the input must carry.
    style_definition : str, optional
        ``"arena-hard"`` or ``"judgewise"`` (``ratings.features``); default: the input's (Arena-Hard games:
        ``arena-hard``), else ``judgewise``.
    weighting : str, optional
        ``"arena-hard"`` (a strong verdict counts 3 times) or ``"none"``; default: what the input implies
        (Arena-Hard games: ``arena-hard``; see :func:`resolve_weighting`).
    baseline, arena_hard_config : optional
        Arena-Hard games: the baseline of every game, or Arena-Hard's judge config yaml (its baseline(s) and
        judge); default: the records' category baselines, else v0.1's ``gpt-4-0314`` (``io.arenahard``).
    bootstrap, bootstrap_unit, seed, ci_level
        Interval settings (0 rounds: no intervals).
    by : str, optional
        Also rank each group of rows sharing a value of this column (of the judgments or of their prompts:
        :mod:`judgewise.commands.grouping`) with the same method and intervals; ``RankedFile.grouped`` holds the
        groups, ``ranking`` stays the overall leaderboard.
    soft : bool
        Rate each judgment's soft preference from logprobs (the ``soft`` column a judging store keeps) as a
        fractional win where it has one (``judgewise.ratings.rank(soft=True)``); pairwise judgments only.
    prompts : Path, optional
        A prompts table (``prompt_id``/``question_id``/``uid`` + columns) where ``by`` is looked up first.
    lc_difficulty, lc_weights : Path, optional
        ``lc_winrate`` only: AlpacaEval's instruction difficulty and fitted GLM weights, for its exact
        length-controlled win rate (:mod:`judgewise.ratings.lc_winrate`).
    l2 : float, optional
        The method's ridge (BT: default None = the MLE, a weak prior only on separated data; 0 = refuse those).
    """

    format: str | None = None
    method: str = "bt"
    anchor: str | None = None
    style_control: bool = False
    style_definition: str | None = None
    weighting: str | None = None
    baseline: str | None = None
    arena_hard_config: Path | None = None
    bootstrap: int = 0
    bootstrap_unit: str = "prompt"
    seed: int = 0
    ci_level: float = 0.95
    by: str | None = None
    soft: bool = False
    prompts: Path | None = None
    skip_invalid: bool = False
    judge: str | None = None
    pool_judges: bool = False
    lc_difficulty: Path | None = None
    lc_weights: Path | None = None
    l2: float | None = None


@dataclass
class ReportOptions:
    """Settings of a report. ``method`` "auto" = win rate against the anchor for anchor designs, BT otherwise."""

    method: str = "auto"
    bootstrap: int = 200
    seed: int = 0
    gold: Path | None = None
    study: object = None  # a StudyResult or the path of `judgewise study --json` output
    command: str | None = None
    title: str = "judgewise report"
    extra_facts: dict = field(default_factory=dict)
    judge: str | None = None  # keep only this judge's rows (io.provenance.select_judge)
    pool_judges: bool = False  # pool several judges on purpose (otherwise a mixed run is refused)
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
        if isinstance(self.bootstrap, bool) or not isinstance(self.bootstrap, int) or \
                not 0 <= self.bootstrap <= MAX_BOOTSTRAP:
            raise ConfigError(f"`bootstrap` must be a whole number from 0 to {MAX_BOOTSTRAP:,}, got {self.bootstrap!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f"`seed` must be a whole number ≥ 0, got {self.seed!r}")

    def command_line(self) -> str:
        return self.command or "judgewise " + " ".join(shlex.quote(a) for a in sys.argv[1:])


@dataclass(frozen=True)
class RunOverrides:
    """What the command line sets over a run (or generate) config: each None/False keeps the config's own
    (``pipeline.load_with_overrides`` checks each against the config field it replaces)."""

    store: str | None = None
    output: str | None = None
    retry_failed: bool = False
    max_calls: int | None = None
    max_cost: float | None = None
    concurrency: int | None = None

    def given(self) -> dict:
        """The overrides as keyword arguments of ``load_with_overrides``."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class AccuracyOptions:
    """How ``judgewise accuracy`` compares the aggregators with ground truth (Correct-looks-better §5, App. B/C):
    ``methods`` comma-separated, ``bt_l2`` a number or ``auto``, ``unparsed`` exclude | incorrect, the App. B
    filters (``min_parse_rate``, ``baseline``, ``min_gap``; None = off) and the intervals."""

    methods: str = "winrate,bt,elo,trueskill"
    elo_k: float = 32.0
    bt_l2: str = "1"
    unparsed: str = "exclude"
    bootstrap: int = 100
    min_parse_rate: float | None = None
    baseline: float | None = None
    min_gap: float | None = None
    seed: int = 0
    ci_level: float = 0.95
    format: str | None = None
    judge: str | None = None

    def filters(self) -> dict:
        """The App. B filters as ``accuracy_alignment`` takes them."""
        return {"min_parse_rate": self.min_parse_rate, "baseline": self.baseline, "min_gap": self.min_gap}

    def ridge(self) -> float | None:
        """``bt_l2`` as ``accuracy_alignment`` takes it: a number ≥ 0, or None for ``auto``."""
        if self.bt_l2.strip().lower() == "auto":
            return None
        try:
            return float(self.bt_l2)
        except ValueError:
            raise ConfigError(f"`bt_l2` must be a number >= 0 or auto, got {self.bt_l2!r}") from None


@dataclass(frozen=True)
class PlanOptions:
    """What ``judgewise plan`` is told before spending (``analysis.planning.PlanInputs``): the number of models
    (default: counted in the judgments given), a natural baseline (named, or ``baseline_exists``), the goal, the
    budget, the expected edge, the test's level and power, and a measured anchor informativeness (default: measured
    in the judgments given, else the papers' mean)."""

    n_models: int | None = None
    natural_baseline: str | None = None
    baseline_exists: bool = False
    full_ranking: bool = True
    budget: int | None = None
    effect: float = 0.05
    alpha: float = 0.05
    power: float = 0.8
    informativeness: float | None = None


@dataclass(frozen=True)
class StudyOptions:
    """The Metric Match study's settings (§3.3, §4; ``analysis.study.run_study``): target judges (default: every
    judge sharing its items with another), budgets, trials per budget, metrics, selection methods, candidate
    subsets, seed, the human's rater name, and the cost model of the savings (minutes per label, cost per hour)."""

    targets: tuple[str, ...] = ()
    budgets: tuple[int, ...] = tuple(range(5, 55, 5))
    trials: int = 40
    metrics: tuple[str, ...] = ("icc", "alpha", "rho", "tau-a")
    methods: tuple[str, ...] = ("random", "stratified", "bias-correction", "metric-match", "variance-match")
    candidates: int = 20
    seed: int = 0
    human_rater: str = "human"
    minutes_per_label: float = 5.0
    cost_per_hour: float = 500.0
