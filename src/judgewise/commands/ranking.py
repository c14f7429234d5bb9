"""Rank the models of a judgments file or store, and compare two saved rankings: what ``rank``/``agree`` compute."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from judgewise.analysis.human_anchored import check_alpha
from judgewise.commands.grouping import group_values
from judgewise.commands.options import RankOptions
from judgewise.commands.tables import grouped_blocks, ranking_blocks
from judgewise.errors import ConfigError, InputError, RatingError
from judgewise.io.arenahard_config import read_config
from judgewise.io.provenance import note_dropped, pooled_line
from judgewise.io.schema import detect_anchor
from judgewise.io.scoremaps import read_score_map
from judgewise.io.tables import ReadReport, Table
from judgewise.ratings import rank
from judgewise.ratings.agreement import agreement
from judgewise.ratings.bootstrap import check_interval
from judgewise.ratings.features import style_definition as style_spec
from judgewise.ratings.grouped import rank_groups
from judgewise.ratings.pointwise import grade_pairs, mean_scores
from judgewise.store.reading import read_grades_inputs, read_rated

BOOTSTRAP_UNITS = ("prompt", "battle")


@dataclass
class RankedFile:
    """A ranking of one input and what was read to make it.

    Attributes
    ----------
    ranking : judgewise.ratings.Ranking
        The leaderboard (``ranking.info`` says how intervals were made; ``pooled_judges`` when pooled).
    table : Table
        The table read; ``table.report`` counts rows read / used / skipped (incl. rows the method did not use).
    """

    ranking: object
    table: Table
    grouped: object = None  # judgewise.ratings.grouped.GroupedRanking with --by (``ranking`` is its overall)
    human: object = None  # judgewise.analysis.human_anchored.HumanAnchored with --human (the overall's rank-sets)

    @property
    def report(self) -> ReadReport:
        """The read report (rows read, used, skipped and why)."""
        return self.table.report

    def to_json(self):
        """What ``rank --json`` prints: the records list, or with ``--by`` the dict of groups and overall; with
        ``--human`` ``{"ranking": that, "human_anchored": the rank-sets}``."""
        board = self.grouped.to_dict() if self.grouped is not None else self.ranking.to_records()
        return board if self.human is None else {"ranking": board, "human_anchored": self.human.as_dict()}

    def to_frame(self):
        """One row per model (per group and model with ``--by``, a ``group`` column first)."""
        return self.grouped.to_frame() if self.grouped is not None else self.ranking.to_frame()


def rank_blocks(ranked: RankedFile) -> list:
    """What ``rank`` prints: each ``--by`` group's leaderboard, the overall one, and the ``--human`` rank-sets."""
    groups = grouped_blocks(ranked.grouped) if ranked.grouped is not None else []
    human = []
    if ranked.human is not None:
        from judgewise.commands.human_ranking import human_anchored_blocks  # scipy: only with --human

        human = human_anchored_blocks(ranked.human, ranked.ranking)
    return [*groups, *ranking_blocks(ranked.ranking, ranked.table), *human]


def check_rank_options(bootstrap: int, bootstrap_unit: str, ci_level: float) -> None:
    """Raise :class:`ConfigError` for a negative ``bootstrap``, an unknown unit or a level outside (0, 1)."""
    if bootstrap < 0:
        raise ConfigError(f"--bootstrap must be ≥ 0, got {bootstrap}")
    if bootstrap_unit not in BOOTSTRAP_UNITS:
        raise ConfigError(f"--bootstrap-unit must be one of {', '.join(BOOTSTRAP_UNITS)}, got {bootstrap_unit!r}")
    if not 0 < ci_level < 1:
        raise ConfigError(f"--ci-level must be in (0, 1), got {ci_level}")


def check_style_options(style_control: bool, style_definition: str | None) -> None:
    """Raise :class:`ConfigError` for an unknown ``--style-definition``, or one given without style control (it
    would change nothing)."""
    if style_definition is None:
        return
    style_spec(style_definition)
    if not style_control:
        raise ConfigError(f"--style-definition {style_definition} sets the style features of style control; add "
                          "--style-control")


def lc_options(method: str, difficulty: Path | None, weights: Path | None) -> dict:
    """The ``lc_winrate`` options for AlpacaEval's inputs; a ConfigError when they are given to another method."""
    if difficulty is None and weights is None:
        return {}
    if method != "lc_winrate":
        raise ConfigError(f"--lc-difficulty/--lc-weights are inputs of --method lc_winrate, not {method}")
    return {"difficulty": difficulty, "glm_weights": weights}


def note_unused(ranking, report: ReadReport) -> None:
    """Count the rows the method read but did not use (win rate: rows without the anchor) as skipped."""
    unused = int(ranking.info.get("rows_not_used") or 0)
    if unused:
        report.rows_used = max(report.rows_used - unused, 0)
        report.rows_skipped += unused
        report.skipped_reasons.insert(0, f"{unused:,} rows do not compare a model with the anchor "
                                         f"{ranking.info.get('anchor')} (win rate uses only those)")


def rank_path(path: Path | Sequence[Path], options: RankOptions = RankOptions()) -> RankedFile:
    """Read ``path`` (any format or a judging store; several inputs of one kind are concatenated:
    :func:`judgewise.store.reading.read_inputs`) and rank its models with :func:`judgewise.ratings.rank` as
    ``options`` say: read (:func:`read_ranked`), fit (:func:`rating_fit`), and group (:func:`rank_rows`).

    Raises
    ------
    ConfigError
        Bad options, or style control without texts.
    InputError, RatingError
        Bad input, or data the method cannot rank.

    Examples
    --------
    >>> rank_path(Path("examples/alpacaeval"), RankOptions(method="winrate")).ranking.method  # doctest: +SKIP
    'winrate'
    """
    method, soft = options.method, options.soft
    check_rank_options(options.bootstrap, options.bootstrap_unit, options.ci_level)
    check_interval(options.interval)  # before reading anything
    check_style_options(options.style_control, options.style_definition)
    lc_options(method, options.lc_difficulty, options.lc_weights)
    if options.human is not None:
        check_alpha(options.alpha)
    grades = read_grades_inputs(path, format=options.format, skip_invalid=options.skip_invalid,
                                only_grades=method != MEAN_SCORE)
    if (grades is not None or method == MEAN_SCORE) and soft:
        raise ConfigError("--soft rates pairwise judgments by their soft preferences; pointwise grades are ranked "
                          "by their mean score")
    if (grades is not None or method == MEAN_SCORE) and options.human is not None:
        raise ConfigError("--human anchors pairwise judgments to human pairwise labels; pointwise grades have none")
    if grades is not None or method == MEAN_SCORE:
        return rank_grades(path, grades, replace(options, method=method or MEAN_SCORE))
    options = replace(options, method=method or "bt")
    frame, table = read_ranked(path, options)
    ranked = rank_rows(frame, table, rating_fit(path, table, options), options.by, inputs=as_paths(path),
                       prompts=options.prompts)
    note_unused(ranked.ranking, table.report)
    if options.pool_judges:
        ranked.ranking.info["pooled_judges"] = pooled_line(frame)
    if "panel" in table.extras:
        ranked.ranking.info["panel"] = table.extras["panel"]
    if options.human is not None:
        from judgewise.commands.human_ranking import anchor_to_humans  # scipy: only with --human

        ranked.human = anchor_to_humans(frame, options.human, options.alpha, options.skip_invalid)
    return ranked


def read_ranked(path: Path | Sequence[Path], options: RankOptions):
    """The read step of :func:`rank_path`: the pairwise judgments of ``path`` (a frame and its Table), with
    Arena-Hard's baseline and judge config applied; with ``options.panel``, the panel's derived verdicts
    (:func:`judgewise.commands.panels.read_panel`)."""
    extra = {"baseline": options.baseline, "config": read_arena_hard_config(options.arena_hard_config)}
    if options.panel is not None:
        from judgewise.commands.panels import read_panel  # its κ loads scipy: only with --panel, not at `rank`'s start

        return read_panel(path, options, extra)
    return read_rated(path, format=options.format, skip_invalid=options.skip_invalid, judge=options.judge,
                      pool_judges=options.pool_judges, options=extra)


def rating_fit(path: Path | Sequence[Path], table: Table, options: RankOptions):
    """The fit step of :func:`rank_path`: ``fit(rows)`` ranks rows of ``table`` as ``options`` say (the overall
    first, then each ``by`` group, which takes the anchor the overall detected)."""
    method, style_control, anchor = options.method, options.style_control, options.anchor
    responses = table.extras.get("responses")
    if style_control and responses is None:
        raise ConfigError(f"--style-control needs the responses' texts, and {', '.join(map(str, as_paths(path)))} "
                          "carries none "
                          "(an AlpacaEval results dir with model_outputs.json does, and so does an Arena-Hard "
                          "bench folder with model_answer/)")
    if anchor is None and (method in ("winrate", "lc_winrate") or table.extras.get("pin_anchor")):
        anchor = table.extras.get("anchor")
    opts = {"l2": options.l2} if options.l2 is not None else {}
    if style_control:
        opts["style_definition"] = options.style_definition or table.extras.get("style_definition") or "judgewise"
    opts.update(lc_options(method, options.lc_difficulty, options.lc_weights))
    weights, anchor_of = resolve_weighting(options.weighting, table), {"anchor": anchor, "overall": True}
    texts = responses.frame if responses is not None else None

    def fit(rows):
        pinned = anchor_of["anchor"] or own_anchor(rows, table)
        ranking = rank(rows, method, anchor=pinned, bootstrap=options.bootstrap,
                       bootstrap_unit=options.bootstrap_unit, seed=options.seed, ci_level=options.ci_level,
                       interval=options.interval,
                       style_control=style_control, pool_judges=options.pool_judges, responses=texts,
                       weighting=weights, soft=options.soft, **opts)
        if anchor_of.pop("overall", False):  # groups: the anchor the overall detected (win rate)
            anchor_of["anchor"] = anchor_of["anchor"] or ranking.info.get("anchor")
        return ranking

    return fit


def own_anchor(rows, table: Table) -> str | None:
    """The anchor an input that pins its anchor (Arena-Hard games: ``extras["pin_anchor"]``) has in ``rows``: the
    baseline every row compares with. A ``--by`` group of a bench with one baseline per category (v2.0) is ranked
    with its own baseline pinned, as that category's games alone would be."""
    if not table.extras.get("pin_anchor"):
        return None
    return detect_anchor(rows["model_a"], rows["model_b"], prefer_b=True)


def as_paths(path) -> list[Path]:
    """One input path or several, as a list of Paths."""
    return [Path(p) for p in path] if isinstance(path, (list, tuple)) else [Path(path)]


def rank_rows(frame, table: Table, fit, by: str | None, *, inputs: list[Path], prompts: Path | None) -> RankedFile:
    """``fit(frame)`` as a RankedFile; with ``by``, also ``fit`` on each group of rows sharing a value of ``by``
    (:func:`judgewise.ratings.grouped.rank_groups`, groups found by :func:`judgewise.commands.grouping.group_values`).
    """
    if by is None:
        return RankedFile(fit(frame), table)
    grouped = rank_groups(frame, group_values(frame, table, by, inputs=inputs, prompts=prompts), fit, by)
    return RankedFile(grouped.overall, table, grouped)


WEIGHTINGS = {"arena-hard": "arena_hard", "arena_hard": "arena_hard", "none": None}


def resolve_weighting(weighting: str | None, table: Table) -> str | None:
    """The sample weighting to rate with: ``"arena-hard"`` → Arena-Hard's (``ratings.encode``), ``"none"`` → none,
    None → the input's own (``table.extras["weighting"]``: Arena-Hard games say ``arena_hard``)."""
    if weighting is None:
        return table.extras.get("weighting")
    if weighting not in WEIGHTINGS:
        raise ConfigError(f"--weighting must be one of arena-hard, none; got {weighting!r}")
    if WEIGHTINGS[weighting] is not None and "verdict" not in table.frame.columns:
        raise ConfigError(f"--weighting {weighting} weighs the strong verdicts (A>>B, B>>A) of 5-way labels; "
                          f"{table.report.source} ({table.report.format}) carries no 5-way verdicts")
    return WEIGHTINGS[weighting]


def read_arena_hard_config(path: Path | None):
    """Arena-Hard's judge config (``io.arenahard_config.read_config``), or None without a path."""
    if path is None:
        return None
    return read_config(path)


MEAN_SCORE = "mean_score"  # pointwise grades' method (ratings.pointwise); not a pairwise RATING_METHODS entry


def rank_grades(path: Path, grades: Table | None, options: RankOptions) -> RankedFile:
    """Rank pointwise grades (a ``judge.mode: single`` store, MT-bench ``*_single.jsonl``) by mean score with
    intervals over prompts (:func:`judgewise.ratings.pointwise.mean_scores`)."""
    method, bootstrap, by = options.method, options.bootstrap, options.by
    if grades is None:
        raise InputError("--method mean_score ranks pointwise grades, and this input holds none (a store of "
                         "judge.mode: single, or MT-bench model_judgment/*_single.jsonl)",
                         file=", ".join(map(str, as_paths(path))))
    if bootstrap and options.bootstrap_unit != "prompt":
        raise ConfigError("pointwise grades are bootstrapped over prompts: use --bootstrap-unit prompt")
    if method != MEAN_SCORE:
        return rank_grade_pairs(path, grades, options)

    def fit(rows):
        return mean_scores(rows, bootstrap=bootstrap, seed=options.seed, ci_level=options.ci_level,
                           judge=options.judge, pool_judges=options.pool_judges)

    ranked = rank_rows(grades.frame, grades, fit, by, inputs=as_paths(path), prompts=options.prompts)
    note_dropped(grades.report, ranked.ranking.info["judge_rows_dropped"], options.judge)
    return ranked


def rank_grade_pairs(path, grades: Table, options: RankOptions) -> RankedFile:
    """Rank pointwise grades with a pairwise method: the outcomes of every two models graded on the same prompt
    and turn, from their score difference (:func:`judgewise.ratings.pointwise.grade_pairs`: ties when equal)."""
    pairs, counts = grade_pairs(grades.frame)
    if not len(pairs):
        raise RatingError(f"no two models are graded on the same prompt in {', '.join(map(str, as_paths(path)))} "
                          f"({counts['grades']} scored grades): nothing to compare; rank them by --method mean_score")
    table = Table("judgments", pairs, grades.report)
    ranked = rank_rows(pairs, table, rating_fit(path, table, options), options.by, inputs=as_paths(path),
                       prompts=options.prompts)
    ranked.ranking.info["grade_pairs"] = counts
    note_dropped(grades.report, ranked.ranking.info.get("judge_rows_dropped", 0), options.judge)
    return ranked


def agreement_of_files(a: Path, b: Path, key: str | None = None) -> dict:
    """Rank agreement of two score files (``rank --json`` output or ``{model: score}`` JSON) over their common
    models.

    Parameters
    ----------
    a, b : Path
        The two files.
    key : str, optional
        Read the ``{model: score}`` map under this key in both files.

    Returns
    -------
    dict
        :meth:`judgewise.ratings.agreement.Agreement.as_dict` plus ``only_in_a`` / ``only_in_b`` (sorted names).

    Raises
    ------
    InputError
        When the files share fewer than 2 models, or cannot be read.
    """
    try:
        scores_a = read_score_map(a, key)
        scores_b = read_score_map(b, key, models=scores_a)
    except InputError:  # A may be the ambiguous one: read B first and let it guide the choice in A
        scores_b = read_score_map(b, key)
        scores_a = read_score_map(a, key, models=scores_b)
    common = [m for m in scores_a if m in scores_b]
    if len(common) < 2:
        raise InputError(f"{a} and {b} share {len(common)} model(s); need at least 2 to compare rankings",
                         file=str(b))
    result = agreement([scores_a[m] for m in common], [scores_b[m] for m in common]).as_dict()
    result["only_in_a"] = sorted(set(scores_a) - set(scores_b))
    result["only_in_b"] = sorted(set(scores_b) - set(scores_a))
    return result
