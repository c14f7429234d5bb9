"""The settings of each command as one frozen dataclass, built by the CLI and taken by the commands' functions
(light: no heavy imports, so the CLI declares its options from them at start-up); the report's are
``report.options.ReportOptions``.

A field the command line sets is declared once, here, with :func:`judgewise.flags.option`: its default, its flag and
the help text ``--help`` shows; the CLI (``cli.options.options_command``) turns such fields into options. A field set
by a flag several commands share (``--seed``) is named by the CLI with that flag's alias instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from judgewise.analysis.panel_text import panel_option
from judgewise.errors import ConfigError
from judgewise.flags import option


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
    panel, panel_rule, panel_split, panel_reference : optional
        Rank a panel's derived verdicts (:func:`judgewise.analysis.panel.panel_verdicts`): its judges
        (comma-separated labels or names), the rule (``majority``, ``mean``, ``weighted``), what a split vote becomes
        (``tie`` or ``drop``), and for ``weighted`` the judge of the same input whose labels weigh the members
        (:func:`judgewise.analysis.panel.reliability_weights`; it is not a member).
    human : Path, optional
        Human pairwise labels; with them ``RankedFile.human`` holds the prediction-powered rank-sets
        (:mod:`judgewise.commands.human_ranking`) at level 1 − ``alpha``.
    """

    format: str | None = None
    method: str | None = option(None, "--method", help="winrate (against the anchor) | winshare (share of all games "
                                "won, ties half, any design: the CLB paper's WinRate) | bt (default for judgments) | "
                                "elo | trueskill | lc_winrate (AlpacaEval 2's length-controlled win rate; needs "
                                "texts); mean_score for pointwise grades (their default); a pairwise method on grades "
                                "ranks the pairs they imply (the higher grade wins, equal grades tie)")
    anchor: str | None = option(None, "--anchor", help="Anchor model (win rate) / model pinned (BT).")
    style_control: bool = option(False, "--style-control", help="Style-controlled BT (needs texts).")
    style_definition: str | None = option(None, "--style-definition", help="arena-hard (Arena-Hard/FastChat features "
                                          "and penalty) | judgewise. Default: arena-hard on Arena-Hard games, else "
                                          "judgewise.")
    weighting: str | None = option(None, "--weighting", help="arena-hard (a strong verdict counts 3 times) | none. "
                                   "Default: arena-hard on Arena-Hard games, else none.")
    baseline: str | None = option(None, "--baseline", help="Arena-Hard games: the baseline every game compared with "
                                  "(default: by the records' category, else gpt-4-0314).")
    arena_hard_config: Path | None = option(None, "--arena-hard-config", help="Arena-Hard's judge config yaml: its "
                                            "baseline(s) and judge_model.")
    bootstrap: int = 0
    bootstrap_unit: str = option("prompt", "--bootstrap-unit", help="Resample prompts or battles.")
    seed: int = 0
    ci_level: float = 0.95
    interval: str = option("bca", "--interval", help="Bootstrap interval: bca (default: bias-corrected and accelerated, "
                           "measured to cover where percentile does not; docs/ratings.md) or percentile (FastChat's "
                           "and Arena-Hard-Auto's).")
    by: str | None = option(None, "--by", help="Also rank each group of rows sharing a value of this column (of the "
                            "judgments or their prompts: Arena-Hard category/subcategory, AlpacaEval dataset, "
                            "MT-bench category), same method and intervals; the overall leaderboard comes last.")
    soft: bool = option(False, "--soft", help="Rate each judgment's soft preference from the judge's logprobs (kept "
                        "by the judging store with judge.logprobs: true) as a fractional win; without it, hard "
                        "verdicts (a note says when soft ones exist).")
    prompts: Path | None = option(None, "--prompts", help="A prompts table (prompt_id/question_id/uid + columns, "
                                  "e.g. question.jsonl) where --by looks first.")
    skip_invalid: bool = False
    judge: str | None = None
    pool_judges: bool = False
    lc_difficulty: Path | None = option(None, "--lc-difficulty", help="lc_winrate: AlpacaEval's instruction "
                                        "difficulty (instruction_difficulty.csv or df_gamed.csv): its exact GLM.")
    lc_weights: Path | None = option(None, "--lc-weights", help="lc_winrate: AlpacaEval's GLM weights "
                                     "(baseline_<anchor>.csv or its folder); needs --lc-difficulty.")
    l2: float | None = None
    panel: str | None = panel_option("panel")
    panel_rule: str = panel_option("panel_rule")
    panel_split: str = panel_option("panel_split")
    panel_reference: str | None = panel_option("panel_reference")
    human: Path | None = option(None, "--human", help="Human pairwise labels (a store's human_labels, or a file of "
                                "human verdicts in any judgments format, e.g. Chatbot Arena battles): adds "
                                "prediction-powered rank-sets that cover the human ranking with probability "
                                ">= 1 - alpha (Chatzi et al. 2024).")
    alpha: float = 0.05


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

    methods: str = option("winrate,bt,elo,trueskill", "--methods", help="Aggregators to compare.")
    elo_k: float = option(32.0, "--elo-k", help="Elo step size: 32 from 1000, in the judgments' order, as the "
                          "paper's code; Chatbot Arena uses 4.")
    bt_l2: str = option("1", "--bt-l2", help="BT ridge ½·l2·‖θ‖²: 1 as the paper's code (scikit-learn C=1); 0 = the "
                        "plain MLE (a separated subset is then reported as not estimable); auto = judgewise's rank "
                        "default (MLE, weak ridge 0.01 only when separated).")
    unparsed: str = option("exclude", "--unparsed", help="A pair with an unparsed answer: exclude = in neither pair "
                           "subset (the paper's code); incorrect = the unparsed side counts as incorrect.")
    bootstrap: int = 100
    min_parse_rate: float | None = option(None, "--min-parse-rate", help="App. B filter 1 (e.g. 0.9).")
    baseline: float | None = option(None, "--baseline", help="App. B filter 2: keep accuracy > this.")
    min_gap: float | None = option(None, "--min-gap", help="App. B filter 3: minimum accuracy gap (0.01).")
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

    n_models: int | None = option(None, "--models", help="Number of models to evaluate (default: from PATH).")
    natural_baseline: str | None = option(None, "--natural-baseline", help="Name of a natural baseline model, if one "
                                          "exists.")
    baseline_exists: bool = option(False, "--has-baseline", help="A natural baseline exists (unnamed).")
    full_ranking: bool = option(True, "--full-ranking/--pairs-only", help="Leaderboard (rank all) or only pairs of "
                                "interest.")
    budget: int | None = option(None, "--budget", help="Judge-call budget.")
    effect: float = option(0.05, "--effect", help="Expected edge over 50% (0.05 = 55% win rate).")
    alpha: float = 0.05
    power: float = 0.8
    informativeness: float | None = option(None, "--informativeness", help="Measured anchor informativeness (share "
                                           "of informative anchor comparisons, §4.3; default: from PATH, else the "
                                           "papers' mean 0.54).")
    tokens_in: int | None = option(None, "--tokens-in", help="Prompt tokens of one judge call: prices the plan "
                                   "(live, with the prompt cache, by batch).")
    tokens_out: int = option(1, "--tokens-out", help="With --tokens-in: completion tokens of one call.")
    shared_tokens: int = option(0, "--shared-tokens", help="With --tokens-in: the prompt tokens a prompt's calls share "
                                "(judge instructions + question), for the prompt-cache estimate.")
    judge_model: str = option("gpt-4o-mini", "--judge-model", help="With --tokens-in: the model whose prices apply "
                              "(the shipped price table).")


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
    minutes_per_label: float = option(5.0, "--minutes-per-label", help="Cost model of the savings: minutes an "
                                      "annotator spends per item (the paper's MedVAL example: 5).")
    cost_per_hour: float = option(500.0, "--cost-per-hour", help="Cost model: annotator cost per hour (the paper's "
                                  "MedVAL example: $500, expert clinicians; crowd work is nearer $15).")


@dataclass(frozen=True)
class SignOptions:
    """``judgewise power sign``: the win rates and tie rates (comma lists), the test's level and power, and whether
    to use the exact binomial (``commands.design_runs.sign_study``)."""

    win_rate: str = option(..., "--win-rate", help="Win rate among discordant pairs (comma list ok).")
    tie_rate: str = option("0", "--tie-rate", help="Share of ties / non-informative (comma list ok).")
    alpha: float = 0.05
    power: float = 0.8
    exact: bool = option(False, "--exact", help="Exact binomial instead of the normal approximation.")


@dataclass(frozen=True)
class WilcoxonOptions:
    """``judgewise power wilcoxon``: where the paired differences come from (the judgments' anchor, or a
    distribution), the edge band of the pairs used, the n grid, the simulations and the test's level, power and
    seed (``commands.design_runs.wilcoxon_study``)."""

    anchor: str | None = option(None, "--anchor", help=None)
    distribution: str | None = option(None, "--distribution", help="Paired differences 'value:prob,...'.")
    effect: float = option(0.05, "--effect", help="Edge (win rate − 0.5 among discordant) of pairs used, compared on "
                           "exact counts: a win rate of exactly 0.6 is in the 0.10 band (Anchor App. C uses [effect, "
                           "effect + 0.01)).")
    width: float = option(0.01, "--width", help="Width of the edge interval.")
    n_grid: str = option("50,100,200,300,400,500,600,700,800,900,1000,1200,1500,2000", "--n", help=None)
    simulations: int = option(1000, "--simulations", help=None)
    alpha: float = 0.05
    power: float = 0.8
    seed: int = 0


@dataclass(frozen=True)
class AnchorsOptions:
    """``judgewise anchors``: the anchor(s) to report (default: detected), how to read the judgments, and the
    pilot's prompts and seed (``commands.design_runs.anchors_study``)."""

    anchor: str | None = option(None, "--anchor", help="Anchor(s) to report, comma-separated (default: detected); "
                                "several add per-anchor win rates and the pooled BT (Anchor §5, App. E).")
    format: str | None = None
    judge: str | None = None
    pilot_prompts: int = option(10, "--pilot-prompts", help="Prompts sampled by the pilot (§5.3).")
    seed: int = 0


@dataclass(frozen=True)
class SimulateOptions:
    """``judgewise simulate``: the Arena-lite §4.2 sweep's designs, settings (comma lists), trials and seed, and
    where it runs (``commands.design_runs.simulate_study``)."""

    designs: str = option("tournament,anchor,adaptive", "--designs", help="Comma list of: tournament, anchor, "
                          "quadratic, sampled, adaptive; baseline (Arena-lite's baseline-mediated method: win rate "
                          "against an external reference model, n·|X| calls); insert-binary, insert-anchor (one "
                          "newcomer placed into the others' leaderboard).")
    n_model: str = option("20", "--n-model", help=None)
    prompts: str = option("100", "--prompts", help="|X| per trial (comma list ok).")
    p_judge: str = option("0.8", "--p-judge", help=None)
    trials: int = 20
    seed: int = 0
    reference_elo: float = option(1233.0, "--reference-elo", help="Elo of baseline's external reference (the paper: "
                                  "gpt-4-1106-preview, 1233; the truth is uniform over [1000, 1500]).")
    executor: str = option("process", "--executor", help="serial | process | ray")
    workers: int | None = option(None, "--workers", help=None)
    address: str | None = option(None, "--address", help="Ray cluster address (ray.init(address=...)).")


@dataclass(frozen=True)
class SelectOptions:
    """``judgewise select``: the target judge, how many items humans label, the metric and method of the selection,
    its seed and candidates (the arguments of ``commands.human_validation.select_items``)."""

    target: str = option(..., "--target", help="The judge under test (exact name or unique substring).")
    budget: int = option(50, "--budget", help="How many items humans can label.")
    metric: str = option("icc", "--metric", help="Reliability metric to match (icc, alpha, rho, tau, ...).")
    method: str = option("metric-match", "--method", help="random, stratified, bias-correction, metric-match, "
                         "metric-match-avg-labels, variance-match.")
    seed: int = 0
    candidates: int = 20
    human_rater: str = option("human", "--human-rater", help="Rater name of the human in SCORES (ignored).")
    human: Path | None = option(None, "--human", help="Human labels so far (scores or store): count labelled.")

@dataclass(frozen=True, kw_only=True)
class LabelOptions:
    """``judgewise label``: the store the labels go to, the judge under test, the items (named, or those ``select``
    picks), the scale of one-response items, where the page is served, the order items come in and when it says
    the interval is narrow enough (the arguments of ``commands.labels.label_task`` and ``report.labelling.serve_labels``)."""

    store: str = option(..., "--store", help="Store file or postgresql:// URL the labels go to.")
    target: str = option(..., "--target", help="The judge under test (exact name or unique substring).")
    items: Path | None = option(None, "--items", help="Items to label (default: those `select` picks).")
    responses: Path | None = None
    budget: int = option(30, "--budget", help="Without --items: how many items `select` picks.")
    method: str = option("metric-match", "--method", help="Without --items: the selection method.")
    metric: str = option("icc", "--metric", help="Reliability metric shown as labels arrive.")
    scale: str = option("1-5", "--scale", help="LOW-HIGH score scale of one-response (pointwise) items.")
    seed: int = 0
    human_rater: str = "human"
    port: int = option(8766, "--port", help="Port (0 = any free port).")
    host: str = option("127.0.0.1", "--host", help="Interface to bind (default: this machine only).")
    stop_width: float | None = option(None, "--stop-width", help="Say 'enough' once the interval is this narrow.")
    order: str = option("selection", "--order", help="selection (the items' order) or informative (next the item "
                        "expected to narrow the reliability interval most).")


@dataclass(frozen=True, kw_only=True)
class ReliabilityOptions:
    """``judgewise reliability``: the human's scores, the target judge, the metrics (comma-separated), the items to
    use and the estimator on them (``commands.human_validation.reliability_of_files``)."""

    human: Path | None = None
    target: str = option(..., "--target", help="The judge under test.")
    metric: str = option("icc", "--metric", help="Metric(s), comma-separated (icc, alpha, rho, tau, ...).")
    items: Path | None = option(None, "--items", help="Items to use: one id per line or `select --json` output.")
    human_rater: str = "human"
    estimator: str | None = option(None, "--estimator", help="On --items: plain (ρ̂_S on the items) or "
                                   "bias-correction (ρ^IM + ρ̂_S − ρ̂^IM_S, inter-model metric over all items; Metric "
                                   "Match §3.3). Default: the one matching the method `select --json` recorded "
                                   "(bias-correction for --method bias-correction, else plain).")


@dataclass(frozen=True)
class DiagnoseOptions:
    """``judgewise diagnose``: the responses' texts (when the judgments do not bring them), how to read the
    judgments, style control, the intervals, and the model families of self-preference (``NAME=FAMILY``, parsed by
    ``commands.text.parse_families``), and a panel whose derived verdicts are diagnosed instead of each judge's
    (``panel`` … as :class:`RankOptions`); see ``commands.diagnosis.diagnose_path``."""

    responses: Path | None = None
    format: str | None = None
    style_control: bool = option(True, "--style-control/--no-style-control", help="Fit style-controlled BT and "
                                 "compare rankings (needs texts).")
    bootstrap: int = 0
    family: list[str] | None = option(None, "--family", help="NAME=FAMILY for self-preference (repeatable; NAME is "
                                      "a model/judge name prefix).")
    judge: str | None = None
    ci_level: float = 0.95
    seed: int = 0
    panel: str | None = panel_option("panel")
    panel_rule: str = panel_option("panel_rule")
    panel_split: str = panel_option("panel_split")
    panel_reference: str | None = panel_option("panel_reference")


@dataclass(frozen=True)
class EchoOptions:
    """``judgewise echo-test`` (Correct-looks-better App. F.2): the echo appended and how often, the base pairs used,
    and the paired bootstrap (``commands.diagnosis.echo_intervention_of_config``)."""

    echo_text: str = option("paper", "--echo-text", help="paper = the question and the full answer appended three "
                            "times (the CLB code); final-answer = 'Question: …/Answer: <final answer line>' blocks.")
    times: int = option(3, "--times", help="How many echo blocks are appended (the paper: 3).")
    limit: int | None = option(None, "--limit", help="Use the first N base pairs (the paper: 500).")
    include_echoing: bool = option(False, "--include-echoing", help="Also use base pairs where a response echoes "
                                   "already (the paper keeps pairs where neither does).")
    bootstrap: int = 2000
    seed: int = 0
