"""Validate a judge against humans from score files: which items to label, its reliability, the per-judge study.

What ``judgewise select``, ``reliability`` and ``study`` compute (Metric Match Alg. 1, §3.3, §4). SCORES and HUMAN
are anything :func:`judgewise.io.readers.read_scores` reads (a canonical scores table or a JudgeBench outputs
folder, which brings the objective label as rater ``human``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.analysis.reliability import get_metric
from judgewise.analysis.selection import get_strategy, inter_model
from judgewise.analysis.study import (StudyResult, pool_from_scores, refuse_repeated_targets, run_study,
                                      warn_human_outside)
from judgewise.commands.options import StudyOptions
from judgewise.errors import ConfigError, InputError
from judgewise.io.containers import decode_utf8, parse_json, read_bytes
from judgewise.io.readers import read_scores
from judgewise.io.tables import ReadReport
from judgewise.io.validate import Validator, show
from judgewise.ratings.bootstrap import rng_from_seed
from judgewise.ratings.pointwise import grades_as_scores
from judgewise.store.labels import labels_as_scores
from judgewise.store.opening import is_store_url, open_store_readonly, store_label
from judgewise.store.reading import read_grades
from judgewise.store.sqlite import SQLITE_HEADER, file_head

log = logging.getLogger(__name__)


def read_score_tables(scores: Path, human: Path | None = None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """SCORES as a scores frame and HUMAN (when given) as a one-rater scores frame.

    Parameters
    ----------
    scores : Path
        Scores of the judges (``item_id, rater, score``), or a JudgeBench outputs folder.
    human : Path, optional
        The human's scores (one rater).

    Returns
    -------
    (DataFrame, DataFrame or None)

    Raises
    ------
    InputError
        A bad file, or a HUMAN table holding several raters.
    """
    grades = read_grades(scores)  # a judge's pointwise grades (a store, grades.jsonl): one rater per judge
    table = read_scores(scores) if grades is None else replace(grades, frame=grades_as_scores(grades.frame))
    log.debug("read %d score rows from %s [%s]", table.report.rows_used, scores, table.report.format)
    if human is None:
        return table.frame, None
    if is_label_store(human):
        return table.frame, human_scores_of_store(human)
    human_frame = read_scores(human).frame
    raters = human_frame["rater"].unique() if "rater" in human_frame else []
    if len(raters) > 1:
        raise InputError(f"holds several raters ({', '.join(map(str, raters[:5]))}); a human scores table has "
                         "one rater (average several annotators first)", file=str(human), field="rater")
    return table.frame, human_frame


def is_label_store(location) -> bool:
    """True when ``location`` is a judgewise store (a SQLite file or a ``postgresql://`` URL), whose human labels
    (``judgewise label``) are then the human's scores."""
    if is_store_url(location):
        return True
    path = Path(location)
    return path.is_file() and file_head(path) == SQLITE_HEADER


def human_scores_of_store(location, labeller: str | None = None) -> pd.DataFrame:
    """The human labels in a store as a one-rater scores table (mean over labellers per item, or one labeller's).

    Raises
    ------
    InputError
        A store with no labels (of ``labeller``).
    """
    with open_store_readonly(location) as store:
        rows = store.labels()
    scores = labels_as_scores(rows, labeller=labeller)
    if scores.empty:
        who = f" by labeller {labeller!r}" if labeller else ""
        raise InputError(f"the store holds no human labels{who}; label items with `judgewise label` first",
                         file=store_label(location))
    return scores


def score_pool_of_files(scores: Path, human: Path | None, target: str | None, human_rater: str = "human"):
    """Read SCORES (and HUMAN) into a :class:`~judgewise.analysis.study.ScorePool` of the target's items."""
    frame, human_frame = read_score_tables(scores, human)
    return pool_from_scores(frame, human_frame, target=target, human_rater=human_rater, source=str(scores),
                            human_source=str(human))


def read_item_ids(path: Path) -> list[str]:
    """Item ids from a file: one per line, a JSON list, or the JSON that ``judgewise select --json`` prints.

    Raises
    ------
    InputError
        A missing, empty or non-UTF-8 file, or JSON of another shape (naming the file).
    """
    return read_selection(path)[0]


def read_selection(path: Path) -> tuple[list[str], dict | None]:
    """(item ids, the ``select --json`` record or None) of an items file (:func:`read_item_ids`)."""
    v = Validator(str(path), ReadReport(str(path), "items"))
    text = decode_utf8(read_bytes(path, v), v).strip()
    if text.startswith(("[", "{")):
        data = parse_json(text, v, expected="a JSON list of item ids or the output of select --json")
        items = data.get("items") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise InputError('expected a JSON list of item ids or an object with "items"', file=str(path))
        return _distinct_ids(list(enumerate(items, 1)), v), (data if isinstance(data, dict) else None)
    return _distinct_ids([(k, line.strip()) for k, line in enumerate(text.splitlines(), 1) if line.strip()], v), None


def _distinct_ids(numbered: list[tuple[int, object]], v) -> list[str]:
    """Item ids of (row, value) pairs; a value that is no id (an object, a list, a boolean) or an id listed twice is
    an InputError naming its row (a line, or the position in the JSON list)."""
    first: dict[str, int] = {}
    for row, value in numbered:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise v.error(f"expected an item id (text or a whole number), found {show(value)}", row=row)
        item = str(value).strip()
        if item in first:
            raise v.error(f"item {item!r} listed again (first at row {first[item]}); each item once", row=row)
        first[item] = row
    return list(first)


ESTIMATORS = {"plain": "random", "bias-correction": "bias-correction"}
"""Reliability estimators on labelled items → the selection strategy whose ``estimate`` they are: ``plain`` is
ρ̂_S = T(target[S], human[S]) (random, stratified and the matching methods, Metric Match §3.2–3.3); ``bias-correction``
is ρ̂ = ρ^IM + ρ̂_S − ρ̂^IM_S with the inter-model metric over all items (§3.3, App. D)."""


def choose_estimator(estimator: str | None, selection: dict | None) -> tuple[str, str]:
    """(estimator, why): the one given, else the one matching the selection's method (``select --json``), else
    plain."""
    if estimator is not None:
        if estimator not in ESTIMATORS:
            raise ConfigError(f"unknown estimator {estimator!r}; known: {', '.join(ESTIMATORS)}")
        return estimator, "--estimator"
    method = (selection or {}).get("method")
    if method is None:
        return "plain", "default (no selection record)"
    return ("bias-correction" if method == "bias-correction" else "plain"), f"select --json method {method}"


def select_items(scores: Path, target: str, budget: int = 50, metric: str = "icc", method: str = "metric-match",
                 seed: int = 0, candidates: int = 20, human_rater: str = "human", human: Path | None = None) -> dict:
    """Pick ``budget`` items of the target judge for human labels (Metric Match Alg. 1 by default).

    Parameters
    ----------
    scores : Path
        Scores of the target and the other judges.
    target : str
        The judge under test (exact name or unique substring).
    budget : int
        How many items humans can label.
    metric : str
        Reliability metric to match (``icc``, ``alpha``, ``rho``, ``tau``, ...).
    method : str
        A selection strategy of :func:`judgewise.analysis.selection.get_strategy`.
    seed : int
        Seed (same seed, same items).
    candidates : int
        Candidate subsets C of the matching methods.
    human_rater : str
        The human's rater name in SCORES (left out of the judges).
    human : Path, optional
        Human labels so far (a scores table, or a store with ``judgewise label``'s labels): the picked items
        already labelled are listed in ``labelled``.

    Returns
    -------
    dict
        ``target, method, metric, budget, seed, n_pool, other_judges, items`` and, with other judges,
        ``inter_model_pool`` / ``inter_model_subset`` (the metric among judges on the pool and on the subset);
        with ``human``, ``labelled``.
    """
    pool = score_pool_of_files(scores, None, target, human_rater)
    t_scores, others, other_names = pool.split(target)
    metric_fn = get_metric(metric)
    strategy = get_strategy(method, **({"n_candidates": candidates} if "match" in method else {}))
    idx = strategy.select(t_scores, others, budget, metric_fn, rng_from_seed(seed), n_draws=1)[0]
    record = {"target": pool.judges[pool.judge_index(target)], "method": method, "metric": metric,
              "budget": budget, "seed": seed, "n_pool": len(pool.item_ids), "other_judges": other_names,
              "items": [str(i) for i in pool.item_ids[idx]]}
    if len(others):
        record["inter_model_pool"] = float(inter_model(metric_fn, t_scores, others))
        record["inter_model_subset"] = float(inter_model(metric_fn, t_scores, others, idx[None, :])[0])
    if human is not None:
        frame = human_scores_of_store(human) if is_label_store(human) else read_score_tables(human)[0]
        known = set(frame["item_id"].astype(str))
        record["labelled"] = [i for i in record["items"] if i in known]
    return record


def _items_mask(pool, wanted: list[str], items_file: Path, human_file: Path) -> np.ndarray:
    """Boolean mask of ``wanted`` in the pool; every one must be scored by the target and by the human."""
    position = {item: i for i, item in enumerate(pool.item_ids.astype(str))}
    unknown = [i for i in wanted if i not in position]
    if unknown:
        raise InputError(f"{len(unknown)} item(s) not scored by the target (e.g. {unknown[:3]})", file=str(items_file))
    if len(wanted) < 2:
        raise InputError(f"{len(wanted)} item(s) listed; reliability on a selection needs at least 2",
                         file=str(items_file))
    keep = np.zeros(len(pool.item_ids), bool)
    keep[[position[i] for i in wanted]] = True
    no_human = [i for i in wanted if np.isnan(pool.human[position[i]])]
    if no_human:
        raise InputError(f"{len(no_human)} selected item(s) have no human score (e.g. {no_human[:3]}); label "
                         "them first", file=str(human_file))
    return keep


def reliability_of_files(scores: Path, target: str, metrics: list[str], *, human: Path | None = None,
                         items: Path | None = None, human_rater: str = "human", estimator: str | None = None) -> dict:
    """The target's reliability against humans for each metric: on the listed items (an estimate) or on every
    item with both scores.

    Parameters
    ----------
    scores : Path
        Scores of the target and the other judges (and the human, as rater ``human_rater``, unless ``human``).
    target : str
        The judge under test.
    metrics : list of str
        Reliability metrics (:func:`judgewise.analysis.reliability.get_metric`).
    human : Path, optional
        The human's scores table.
    items : Path, optional
        Item ids to use (:func:`read_item_ids`); default: all items with a human score.
    human_rater : str
        The human's rater name in SCORES.
    estimator : str, optional
        :data:`ESTIMATORS` on selected items; default: the one matching the method recorded by
        ``select --json`` (:func:`choose_estimator`).

    Returns
    -------
    dict
        ``target, scope`` (``population``, ``items with a human score`` or ``selected``), ``n_items``, ``values``
        (metric → value), ``estimator`` and ``estimator_source``; with bias correction also ``plain_values``.
    """
    pool = score_pool_of_files(scores, human, target, human_rater)
    if pool.human is None:
        raise InputError("no human scores: pass --human HUMAN or include a rater named "
                         f"{human_rater!r} in SCORES", file=str(scores))
    t_scores, others, _ = pool.split(target)
    selection = None
    if items is None:
        keep = ~np.isnan(pool.human)
        scope = "population" if keep.all() else "items with a human score"
    else:
        wanted, selection = read_selection(items)
        keep = _items_mask(pool, wanted, items, human or scores)
        scope = "selected"
    if items is None and estimator is not None:
        raise ConfigError("--estimator applies to the items of --items (a selection); give --items too")
    name, why = choose_estimator(estimator, selection) if items is not None else ("plain", "all labelled items")
    if name == "bias-correction" and not len(others):
        raise InputError("bias correction needs the scores of other judges on the same items; found none",
                         file=str(scores))
    idx = np.flatnonzero(keep)[None, :]
    plain = {m: get_metric(m)(t_scores[keep], pool.human[keep]) for m in metrics}
    strategy = get_strategy(ESTIMATORS[name])
    values = {m: float(strategy.estimate(t_scores, pool.human, others, idx, get_metric(m))[0]) for m in metrics}
    out = {"target": pool.judges[pool.judge_index(target)], "scope": scope, "n_items": int(keep.sum()),
           "values": values, "estimator": name, "estimator_source": why}
    if name != "plain":
        out["plain_values"] = plain
    return out


@dataclass
class _PoolNotes:
    """What building every target's pool found, told once per cause after all pools are built: judges left out
    of a target's pool (scored other items), targets left out (nobody else scored their items), human scores
    outside the pools."""

    left_out: dict = field(default_factory=dict)  # judges left out -> first target whose pool left them out
    alone: list = field(default_factory=list)  # targets no other judge shares items with
    outside: dict = field(default_factory=dict)  # (human scores outside, pool size) -> targets

    def note(self, pool, name: str, judges: set) -> None:
        left_out = tuple(sorted(judges - set(pool.judges)))
        if left_out:
            self.left_out.setdefault(left_out, pool.judges[pool.judge_index(name)])
        if pool.human_outside:
            self.outside.setdefault((pool.human_outside, len(pool.item_ids)), []).append(
                pool.judges[pool.judge_index(name)])

    def tell(self, source: str) -> None:
        if self.alone:
            log.info("left out %s: no other judge scored its items", ", ".join(self.alone))
        for judges, target in self.left_out.items():
            if not set(judges) <= set(self.alone):  # those are told above
                log.info("judges with no score on the items of %s (and judges sharing them) are left out: %s",
                         target, ", ".join(judges))
        for (outside, size), targets in self.outside.items():
            warn_human_outside(source, outside, size, targets if len(self.outside) > 1 else None)


def pools_per_target(scores: Path, human: Path | None, targets: list[str], human_rater: str = "human"):
    """``(target, ScorePool)`` pairs, each target on its own item pool; without ``targets`` every judge that shares
    its items with another judge (the others are logged and left out). What was left out is told once per cause.

    Raises
    ------
    InputError
        A named target that shares its items with no other judge, or no judge to study at all.
    """
    frame, human_frame = read_score_tables(scores, human)
    judges = set(frame["rater"].astype(str)) - {human_rater}
    names = targets if targets else sorted(judges)
    pairs, notes = [], _PoolNotes()
    for name in names:
        pool = pool_from_scores(frame, human_frame, target=name, human_rater=human_rater, source=str(scores),
                                human_source=str(human), warn_outside=False)
        if len(pool.judges) < 2:
            if targets:
                raise InputError(f"no other judge scored the items of {name!r}: Metric Match needs other judges")
            notes.alone.append(pool.judges[pool.judge_index(name)])
            continue
        notes.note(pool, name, judges)
        pairs.append((pool.judges[pool.judge_index(name)], pool))
    notes.tell(str(scores) if human is None else str(human))
    if not pairs:
        raise InputError("no judge shares its items with another judge: nothing to study", file=str(scores))
    return pairs


def study_of_files(scores: Path, options: StudyOptions = StudyOptions(), *, human: Path | None = None):
    """The Metric Match study (§3.3, §4) for each target judge on its own item pool, as one result.

    Parameters
    ----------
    scores, human
        As :func:`reliability_of_files` (the human's rater name: ``options.human_rater``).
    options : StudyOptions
        The targets (default: every judge sharing its items with another judge), and the settings of
        :func:`judgewise.analysis.study.run_study`.

    Returns
    -------
    StudyResult
        Trials and population values of every target; ``settings`` adds ``targets``, ``n_items`` (per target)
        and ``scores``.
    """
    o = options
    pools = pools_per_target(scores, human, list(o.targets), o.human_rater)
    refuse_repeated_targets([name for name, _ in pools])
    results = [run_study(pool, targets=[name], metrics=list(o.metrics), budgets=list(o.budgets), trials=o.trials,
                         methods=list(o.methods), n_candidates=o.candidates, seed=o.seed,
                         minutes_per_label=o.minutes_per_label, cost_per_hour=o.cost_per_hour)
               for name, pool in pools]
    settings = {**results[0].settings, "targets": [name for name, _ in pools],
                "n_items": {name: len(pool.item_ids) for name, pool in pools}, "scores": str(scores)}
    return StudyResult(pd.concat([r.trials for r in results], ignore_index=True),
                       pd.concat([r.population for r in results], ignore_index=True), settings)
