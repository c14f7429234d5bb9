"""Diagnose the judge of a judgments file or store, and compare rankings with ground-truth accuracy from files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgewise.analysis.accuracy import ground_truth_accuracy, refuse_repeated_answers
from judgewise.analysis.alignment import accuracy_alignment, check_methods
from judgewise.analysis.diagnostics import diagnose, with_truth
from judgewise.analysis.echo_intervention import run_echo_intervention
from judgewise.commands.options import AccuracyOptions, DiagnoseOptions, EchoOptions
from judgewise.commands.panels import panel_frame
from judgewise.commands.text import parse_families, split_list
from judgewise.errors import ConfigError, InputError
from judgewise.io import read_responses
from judgewise.io.containers import read_table
from judgewise.io.provenance import judge_groups, label_judges, note_dropped, select_judge
from judgewise.io.schema import require_matching_responses
from judgewise.io.tables import Table
from judgewise.pipeline.job import build_job
from judgewise.store.reading import is_store, read_grades, read_judgments_or_store, read_rated


def diagnose_path(path: Path, responses_path: Path | None = None, *, format: str | None = None,
                  style_control: bool = True, ci_level: float = 0.95, seed: int = 0, skip_invalid: bool = False,
                  bootstrap: int = 0, families: dict | None = None, judge: str | None = None, panel=None):
    """Read judgments (any format or a store) and diagnose their judge(s) with
    :func:`judgewise.analysis.diagnostics.diagnose`.

    Parameters
    ----------
    path : Path
        Judgments in any supported format (an AlpacaEval results dir or JudgeBench outputs bring their texts and
        labels), or a judging store.
    responses_path : Path, optional
        A responses table (``prompt_id, model, text``) replacing the one the input carries.
    format, skip_invalid
        As :func:`judgewise.store.reading.read_judgments_or_store`.
    style_control, bootstrap, ci_level, seed, families
        As :func:`~judgewise.analysis.diagnostics.diagnose`.
    judge : str, optional
        Keep one judge (the others' rows counted as skipped); default: figures per judge identity.
    panel : DiagnoseOptions, optional
        Options naming a panel (``panel``, ``panel_rule``, ``panel_split``, ``panel_reference``): diagnose the
        panel's derived verdicts (:func:`judgewise.analysis.panel.panel_of_options`, as ``rank --panel``) as one
        judge; ``table.extras["panel"]`` is its summary, the rows of other judges counted as skipped.

    Returns
    -------
    (Diagnosis, Table)
        The diagnosis (a warning is added when gaming/echo/self-preference pool several judges) and the table read.

    Raises
    ------
    ConfigError
        Bad options, or an input that is not a judgments table.
    """
    if not 0 < ci_level < 1 or bootstrap < 0:
        raise ConfigError(f"--ci-level must be in (0, 1) and --bootstrap ≥ 0, got {ci_level}, {bootstrap}")
    table = read_judgments_or_store(path, format=format, skip_invalid=skip_invalid, any_kind=True)
    responses = table.extras.get("responses")
    if table.kind == "responses" and isinstance(table.extras.get("judgments"), Table):
        table, responses = table.extras["judgments"], table  # a folder of answers and their judgments (MT-bench)
    if table.kind != "judgments":
        raise ConfigError(f"{path} holds a {table.kind} table; diagnose needs pairwise judgments")
    if responses_path is not None:
        responses = read_responses(responses_path, skip_invalid=skip_invalid)
        require_matching_responses(table.frame, responses.frame, file=str(responses_path))
    frame, truth = with_truth(table.frame)
    if panel is not None and panel.panel is not None:
        frame, truth = panel_frame(frame, table, panel), None
    elif judge is not None:
        frame, dropped = select_judge(frame, judge)
        note_dropped(table.report, dropped, judge)
    frame = label_judges(frame)
    result = diagnose(frame, responses.frame if responses is not None else None, truth_col=truth,
                      style_control=style_control, families=families, bootstrap=bootstrap, level=ci_level,
                      seed=seed)
    n_judges = len(judge_groups(frame)[0])
    if n_judges > 1 and responses is not None:
        result.warnings.append(f"judge gaming, echo and self-preference pool the verdicts of the {n_judges} judges "
                               "(the other figures are per judge); --judge NAME diagnoses one judge alone")
    return result, table


def direct_grades(path: Path) -> pd.DataFrame:
    """A direct judge's grades (``prompt_id, model, label``): a table file, or the judging store of a
    ``judge.mode: single`` run with the ``direct_correctness`` template (its grades' labels)."""
    if is_store(path):
        table = read_grades(path, only_grades=False)
        if table is None:
            raise InputError("the store holds no pointwise grades (judge it with judge.mode: single and template: "
                             "direct_correctness)", file=str(path))
        return table.frame
    return read_table(path)


def _with_file(fn, path: Path, *args, **kw):
    """Call ``fn``; an InputError without a file gets ``path`` as its file."""
    try:
        return fn(*args, **kw)
    except InputError as exc:
        if exc.file:
            raise
        raise InputError(exc.detail, file=str(path), row=exc.row, field=exc.field) from None


def diagnose_with_options(path: Path, o: DiagnoseOptions, *, skip_invalid: bool = False):
    """:func:`diagnose_path` with ``judgewise diagnose``'s settings."""
    return diagnose_path(path, o.responses, format=o.format, style_control=o.style_control, ci_level=o.ci_level,
                         seed=o.seed, skip_invalid=skip_invalid, bootstrap=o.bootstrap,
                         families=parse_families(o.family), judge=o.judge, panel=o)


def accuracy_of_files(judgments: Path, correctness: Path, direct: Path | None = None, *,
                      methods: list[str] | tuple[str, ...] = ("winrate", "bt", "elo", "trueskill"),
                      bootstrap: int = 100, seed: int = 0, ci_level: float = 0.95, filters: dict | None = None,
                      format: str | None = None, judge: str | None = None, **settings) -> tuple[object, Table]:
    """Read judgments, ground-truth correctness and (optionally) direct-judge grades, and compare each
    aggregator's ranking with accuracy (:func:`judgewise.analysis.alignment.accuracy_alignment`; CLB §5, App. B/C).

    Parameters
    ----------
    judgments : Path
        Pairwise judgments in any supported format, or a judging store (read as ``rank`` reads it:
        :func:`judgewise.store.reading.read_rated`).
    correctness : Path
        ``prompt_id, model, correct`` (1/0; empty = unparsed).
    direct : Path, optional
        ``prompt_id, model, label`` (correct / incorrect / not_attempted).
    methods, bootstrap, seed, ci_level, filters
        As :func:`~judgewise.analysis.alignment.accuracy_alignment`.
    format : str, optional
        Force the judgments' format (``"store"`` included).
    judge : str, optional
        Keep this judge's rows (the others counted as skipped); needed when the input holds several judges.
    **settings
        ``elo_k``, ``bt_l2``, ``unparsed`` of :func:`~judgewise.analysis.alignment.accuracy_alignment` (default:
        the paper's).

    Returns
    -------
    (AccuracyAlignment, Table)
    """
    if bootstrap < 0 or not 0 < ci_level < 1:
        raise ConfigError(f"--bootstrap must be ≥ 0 and --ci-level in (0, 1); got {bootstrap}, {ci_level}")
    check_methods(methods, "--methods")  # before any file is read: the option is what is wrong
    frame, table = read_rated(judgments, format=format, judge=judge, keep_failed=True)  # failed games: counted
    corr = read_table(correctness)
    _with_file(ground_truth_accuracy, correctness, corr)  # validates with the file name in errors
    _with_file(refuse_repeated_answers, correctness, corr, "correctness value")
    grades = direct_grades(direct) if direct is not None else None
    if grades is not None:
        _with_file(refuse_repeated_answers, direct, grades, "direct-judge grade")
    result = _with_file(accuracy_alignment, direct or correctness, frame, corr, grades, methods=list(methods),
                        bootstrap=bootstrap, level=ci_level, seed=seed, filters=filters or {}, **settings)
    return result, table


def accuracy_with_options(judgments: Path, correctness: Path, direct: Path | None,
                          options: AccuracyOptions) -> tuple[object, Table]:
    """:func:`accuracy_of_files` with ``judgewise accuracy``'s settings (``methods`` comma-separated, ``bt_l2`` a
    number or ``auto``)."""
    return accuracy_of_files(judgments, correctness, direct, methods=split_list(options.methods),
                             bootstrap=options.bootstrap, seed=options.seed, ci_level=options.ci_level,
                             filters=options.filters(), format=options.format, elo_k=options.elo_k,
                             bt_l2=options.ridge(), unparsed=options.unparsed, judge=options.judge)


def echo_intervention_of_config(config, *, text: str = "paper", times: int = 3, skip_echoing: bool = True,
                                limit: int | None = None, bootstrap: int = 2000, seed: int = 0):
    """CLB App. F.2's echo intervention on a run config's comparisons, through its judge and into its store
    (:func:`judgewise.analysis.echo_intervention.run_echo_intervention`; the conditions' prompt ids are tagged
    ``<id>::<condition>``, so they never collide with the run's own games).

    Parameters
    ----------
    config : path or dict
        A run config (responses, judge, store; the design's comparisons are the base pairs).
    text, times : str, int
        The echo appended (:data:`~judgewise.analysis.echo_intervention.ECHO_TEXTS`, default the paper's) and
        how often.
    skip_echoing : bool
        Keep only base pairs where neither response echoes already (the paper's baseline pairs).
    limit : int, optional
        Use the first ``limit`` base comparisons (the paper used 500 pairs per condition).
    bootstrap, seed
        Rounds and seed of the paired bootstrap.

    Returns
    -------
    (EchoIntervention, RunResult)
    """
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be ≥ 1, got {limit}")
    job = build_job(config)
    base = job.comparisons[:limit] if limit else job.comparisons
    options = {k: v for k, v in job.config.run_options().items() if k != "seed"}
    return run_echo_intervention(base, job.judge, job.config.store, times=times, text=text,
                                 skip_echoing=skip_echoing, bootstrap=bootstrap, seed=seed, **options)


def echo_with_options(config, o: EchoOptions):
    """:func:`echo_intervention_of_config` with ``judgewise echo-test``'s settings."""
    return echo_intervention_of_config(config, text=o.echo_text, times=o.times, skip_echoing=not o.include_echoing,
                                       limit=o.limit, bootstrap=o.bootstrap, seed=o.seed)
