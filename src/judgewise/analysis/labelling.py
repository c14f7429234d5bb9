"""A labelling session's items, and what its labels say: agreement between labellers, the judge's reliability."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgewise.analysis.label_order import next_informative
from judgewise.analysis.reliability import cohen_kappa, get_metric, krippendorff_alpha
from judgewise.errors import InputError
from judgewise.io.schema import name_ordered, two_model_prompts
from judgewise.ratings.bootstrap import rng_from_seed
from judgewise.store.labels import current_labels

ENOUGH_MIN_LABELLED = 10
"""Labelled items below which the page never says "enough": on 3 binary labels the bootstrap interval can be
[0, 0] (every resample constant), and the informative order would stop there (benchmarks/label_order.py)."""

PAIRWISE_VALUES = {1: 1.0, 2: 0.0, 3: 0.5}
"""Key pressed on a pairwise item (1 = the response shown first is better, 2 = the second, 3 = tie) → the label
in the response-A view before the shown order is undone (:func:`a_view_value`)."""


@dataclass(frozen=True)
class LabelItem:
    """One item to label: its id, the instruction, and its responses as (slot, text) in slot order."""

    item_id: str
    instruction: str
    responses: tuple[tuple[str, str], ...]

    @property
    def pairwise(self) -> bool:
        return len(self.responses) == 2


@dataclass(frozen=True)
class LabelTask:
    """What a labelling session serves: the items in order, the judge under test and its scores on them, the
    pointwise scale, the metric shown, and where the labels go."""

    store: str
    items: tuple[LabelItem, ...]
    target: str = ""
    scale: tuple[int, int] = (1, 5)
    metric: str = "icc"
    target_scores: dict = field(default_factory=dict)  # item id -> the target's score
    seed: int = 0
    stop_width: float | None = None  # say "enough" once the interval is at most this wide
    order: str = "selection"  # or "informative": the next item is :func:`next_item`'s
    other_scores: dict = field(default_factory=dict)  # item id -> the other judges' scores (the matching step)

    def item(self, item_id: str) -> LabelItem | None:
        return next((i for i in self.items if i.item_id == item_id), None)

    def shown_order(self, labeller: str, item: LabelItem) -> str:
        """``AB`` or ``BA``: the order a labeller sees a pairwise item's responses in (random per labeller and
        item, the same on every visit); empty for a pointwise item."""
        if not item.pairwise:
            return ""
        digest = hashlib.sha256(f"{self.seed}\x00{labeller}\x00{item.item_id}".encode()).digest()
        return "BA" if digest[0] & 1 else "AB"

    def a_view_value(self, item: LabelItem, shown: str, key: int) -> float:
        """The stored value of pressing ``key`` on ``item`` shown in order ``shown``; InputError off the scale."""
        if isinstance(key, bool) or not isinstance(key, int):
            raise InputError(f"value {str(key)[:20]!r} is not a whole number on the scale", field="value")
        if item.pairwise:
            if key not in PAIRWISE_VALUES:
                raise InputError(f"value {key!r} is not on the scale: 1 (first better), 2 (second), 3 (tie)",
                                 field="value")
            value = PAIRWISE_VALUES[key]
            return 1.0 - value if shown == "BA" else value
        low, high = self.scale
        if not low <= key <= high:
            raise InputError(f"value {key!r} is not on the scale {low}..{high}", field="value")
        return float(key)


def labeller_agreement(rows: pd.DataFrame) -> dict | None:
    """Agreement between labellers on the items several labelled: Cohen's κ for two labellers, Krippendorff's α
    (nominal) for more; None when no item has two labels. ``value`` is None while the statistic is not yet defined
    (every shared item carries the same label: no disagreement is expected by chance, κ and α divide by zero)."""
    labels = current_labels(rows)
    wide = labels.pivot(index="item_id", columns="labeller", values="value") if len(labels) else pd.DataFrame()
    shared = wide[wide.notna().sum(axis=1) >= 2] if len(wide) else wide
    if shared.empty:
        return None
    if shared.shape[1] == 2:
        both = shared.dropna()
        return {"statistic": "Cohen's kappa", "value": _finite(cohen_kappa(both.iloc[:, 0], both.iloc[:, 1])),
                "n_items": len(both), "labellers": 2}
    alpha = krippendorff_alpha(shared.to_numpy(), "nominal")
    return {"statistic": "Krippendorff's alpha (nominal)", "value": _finite(alpha),
            "n_items": len(shared), "labellers": int(shared.shape[1])}


def label_summary(task: LabelTask, rows: pd.DataFrame, *, bootstrap: int = 200) -> dict:
    """What the labels say so far: labelled items, the target's reliability against them
    (:func:`reliability_so_far`), agreement between labellers, and ``enough`` (the interval is at most
    ``task.stop_width`` wide, on at least :data:`ENOUGH_MIN_LABELLED` labelled items)."""
    labels = current_labels(rows)
    out = {**reliability_so_far(task.target_scores, rows, task.metric, seed=task.seed, bootstrap=bootstrap),
           "items": len(task.items), "labels": int(len(labels)), "metric": task.metric,
           "agreement": labeller_agreement(rows), "stop_width": task.stop_width}
    out["enough"] = bool(task.stop_width and out["interval"] and out["labelled"] >= ENOUGH_MIN_LABELLED
                         and out["interval"][1] - out["interval"][0] <= task.stop_width)
    return out


def next_item(task: LabelTask, rows: pd.DataFrame, labeller: str) -> str | None:
    """The item ``labeller`` sees next under ``task.order == "informative"``: of the items nobody labelled yet,
    :func:`~judgewise.analysis.label_order.next_informative`'s pick on the judge's scores, the mean labels so far
    and the other judges' scores; once every item carries someone's label, the first one ``labeller`` has not
    labelled (selection order); None when they labelled all, or under selection order (the page moves on itself)."""
    if task.order != "informative":
        return None
    labels = current_labels(rows)
    ids = [item.item_id for item in task.items]
    mean = labels.groupby("item_id")["value"].mean() if len(labels) else pd.Series(dtype=float)
    mine = set(labels.loc[labels["labeller"] == labeller, "item_id"]) if len(labels) else set()
    y = mean.reindex(ids).to_numpy(float)
    x = np.array([task.target_scores[i] for i in ids], float)
    others = np.array([task.other_scores[i] for i in ids], float).T if task.other_scores else None
    pick = next_informative(get_metric(task.metric), x, y, others).position
    if pick is not None and ids[pick] not in mine:
        return ids[pick]
    return next((i for i in ids if i not in mine), None)


def reliability_so_far(judge: dict, rows: pd.DataFrame, metric: str = "icc", *, seed: int = 0,
                       bootstrap: int = 200) -> dict:
    """The judge's reliability (``metric``) against the labels on the items it scored (``judge``: item id → score)
    and labellers labelled (the mean label per item), with a percentile 95% bootstrap interval over those items.

    Returns ``labelled`` (items), ``reliability`` and ``interval`` (None below 3 items or when undefined)."""
    labels = current_labels(rows)
    human = labels[labels["item_id"].isin(judge)].groupby("item_id")["value"].mean()
    out: dict = {"labelled": int(len(human)), "reliability": None, "interval": None}
    if len(human) >= 3:
        x = np.array([judge[i] for i in human.index], float)
        y = human.to_numpy(float)
        fn = get_metric(metric)
        out["reliability"] = _finite(fn(x, y))
        draws = rng_from_seed(seed).integers(0, len(x), size=(bootstrap, len(x)))
        values = fn.many(x[draws], y[draws])
        values = values[np.isfinite(values)]
        if len(values) >= bootstrap // 2:
            out["interval"] = [float(np.quantile(values, 0.025)), float(np.quantile(values, 0.975))]
    return out


def judge_scores_per_item(games: pd.DataFrame) -> dict:
    """A judge's "first response is better" score per item, a prompt on which the judgments compare exactly two
    models (:func:`judgewise.io.schema.two_model_prompts`; responses in model-name order, as ``judgewise label``
    shows them): the mean outcome of the first-named model over the prompt's games, both orders."""
    first_score = pd.Series(name_ordered(games)[2], index=games["prompt_id"].astype(str).to_numpy())
    keep = first_score[first_score.index.isin(two_model_prompts(games).index)]
    return keep.groupby(level=0, sort=True).mean().to_dict()


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None
