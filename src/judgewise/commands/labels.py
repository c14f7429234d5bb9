"""What ``judgewise label`` serves and reads back: the items to label, their texts, and what the labels say so far.

The items are those a selection file names (``select --json`` output or one id per line) or, with none, the ones
``select`` picks with the given settings. Texts come from a responses table (``prompt_id, model, text,
instruction``; a JudgeBench folder gives both the scores and the texts). An item with two responses is labelled
pairwise (which is better, or a tie), one with another number on ``scale`` (pointwise). Labels live in the store
(:mod:`judgewise.store.labels`); the judge's reliability against them and the agreement between labellers are
computed from it (:func:`judgewise.analysis.labelling.label_summary`).
"""

from __future__ import annotations

import math
from pathlib import Path

from judgewise.analysis.label_order import check_order
from judgewise.analysis.labelling import LabelItem, LabelTask
from judgewise.analysis.reliability import get_metric
from judgewise.commands.human_validation import read_selection, score_pool_of_files, select_items
from judgewise.errors import ConfigError, InputError
from judgewise.io.readers import read_responses


def parse_scale(text: str) -> tuple[int, int]:
    """``LOW-HIGH`` (whole numbers, LOW < HIGH, at most 0-10) as a pair; ConfigError naming ``scale`` otherwise."""
    low, sep, high = str(text).partition("-")
    if not (sep and low.strip().isdigit() and high.strip().isdigit() and int(low) < int(high) <= 10):
        raise ConfigError(f"`scale={text}`: expected LOW-HIGH, whole numbers with LOW < HIGH <= 10 (e.g. 1-5)")
    return int(low), int(high)


def label_task(scores: Path, store: str, *, target: str, items: Path | None = None,
               responses: Path | None = None, budget: int = 30, method: str = "metric-match", metric: str = "icc",
               seed: int = 0, scale: tuple[int, int] = (1, 5), human_rater: str = "human",
               stop_width: float | None = None, order: str = "selection") -> LabelTask:
    """The labelling session of ``target``'s items: those ``items`` names, else those ``select`` picks (``budget``,
    ``method``, ``metric``, ``seed``), with their texts from ``responses`` (default: ``scores`` itself). With
    ``stop_width`` the page says "enough" once the reliability interval is at most that wide. ``order``:
    ``selection`` (the items in the order given) or ``informative`` (next the item whose label is expected to
    narrow the interval most, :mod:`judgewise.analysis.label_order`)."""
    if stop_width is not None and not 0 < stop_width < math.inf:
        raise ConfigError(f"`stop_width={stop_width}`: expected a positive finite interval width (e.g. 0.2)")
    if not scale[0] < scale[1]:
        raise ConfigError(f"`scale={scale[0]}-{scale[1]}`: expected LOW-HIGH with LOW < HIGH")
    get_metric(metric)
    check_order(order)
    if items is not None:
        ids = read_selection(items)[0]
    else:
        ids = select_items(scores, target, budget, metric, method, seed, human_rater=human_rater)["items"]
    pool = score_pool_of_files(scores, None, target, human_rater)
    t_scores, others = pool.split(target)[:2]
    by_id = dict(zip(pool.item_ids.astype(str), t_scores.tolist()))
    others_by_id = dict(zip(pool.item_ids.astype(str), map(tuple, others.T.tolist())))
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise InputError(f"{len(unknown)} item(s) not scored by the target (e.g. {unknown[:3]})",
                         file=str(items or scores))
    texts = item_texts(responses or scores, ids)
    return LabelTask(store=store, items=tuple(texts[i] for i in ids), target=pool.judges[pool.judge_index(target)],
                     scale=scale, metric=metric, target_scores={i: by_id[i] for i in ids}, seed=seed,
                     stop_width=stop_width, order=order, other_scores={i: others_by_id[i] for i in ids})


def item_texts(source: Path, ids: list[str]) -> dict[str, LabelItem]:
    """Each item's instruction and responses from a responses table; InputError naming an item without any."""
    frame = read_responses(source).frame
    frame = frame[frame["prompt_id"].astype(str).isin(set(ids))]
    out = {}
    for item_id, rows in frame.groupby(frame["prompt_id"].astype(str), sort=False):
        rows = rows.sort_values("model")
        instruction = rows["instruction"].dropna().astype(str)
        out[item_id] = LabelItem(item_id, instruction.iloc[0] if len(instruction) else "",
                                 tuple(zip(rows["model"].astype(str), rows["text"].astype(str))))
    missing = [i for i in ids if i not in out]
    if missing:
        raise InputError(f"{len(missing)} item(s) have no response text (e.g. {missing[:3]}); give --responses",
                         file=str(source))
    return out
