"""Human pairwise labels matched to a judge's verdicts on the same comparisons: the input of prediction-powered ranking.

A *comparison* is a prompt and an unordered pair of models. Judge verdicts and human labels are oriented to the
pair's first model by name and averaged per comparison (a judge asked in both orders, or several labellers, give one
value each); a human label on a comparison the judge never made is *unmatched*: counted and reported, not used.
Labels of a store (``judgewise label``) name an item, a prompt the judgments compare exactly two models on, in the
response-A view with the responses in model-name order (:func:`judgewise.analysis.labelling.judge_scores_per_item`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgewise.errors import InputError
from judgewise.io.schema import name_ordered, two_model_prompts

SEP = "\x1f"


def oriented(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s verdicts per comparison: ``key``, ``first``/``second`` model (by name) and ``y`` = the first
    model's result, averaged over the rows of one comparison (first-seen order kept)."""
    first, second, y = name_ordered(frame)
    out = pd.DataFrame({"key": oriented_keys(frame), "first": first, "second": second, "y": y})
    return out.groupby("key", sort=False).agg(first=("first", "first"), second=("second", "first"),
                                              y=("y", "mean")).reset_index()


def store_label_frame(labels: pd.DataFrame, judgments: pd.DataFrame) -> pd.DataFrame:
    """A store's labels (``item_id, score``: the mean label per item, :func:`judgewise.store.labels
    .labels_as_scores`) as pairwise verdicts ``prompt_id, model_a, model_b, outcome`` on the prompts where
    ``judgments`` compare exactly two models (model_a = the first by name, the labels' response A). Items on other
    prompts get empty models and count as unmatched."""
    pairs = two_model_prompts(judgments)
    ids = labels["item_id"].astype(str)
    first = ids.map(lambda i: pairs[i][0] if i in pairs.index else "")
    second = ids.map(lambda i: pairs[i][1] if i in pairs.index else "")
    return pd.DataFrame({"prompt_id": ids, "model_a": first, "model_b": second,
                         "outcome": labels["score"].to_numpy(float)})


@dataclass
class MatchedComparisons:
    """Comparisons coded for :func:`judgewise.analysis.human_anchored.human_anchored`: ``labelled`` = (a, b,
    human y, judge y), ``unlabelled`` = (a, b, judge y), ``models`` (the codes' names) and the ``labels`` counts."""

    labelled: tuple
    unlabelled: tuple
    models: list
    labels: dict


def match_labels(judgments: pd.DataFrame, human: pd.DataFrame, source: str = "labels") -> MatchedComparisons:
    """Pair each human-labelled comparison with the judge's verdict on it; the judge's other comparisons are the
    unlabelled ones. InputError (naming ``source``) when no label matches a judged comparison."""
    judge = oriented(judgments)
    labels = oriented(human) if len(human) else pd.DataFrame(columns=["key", "first", "second", "y"])
    row_keys = oriented_keys(human)
    matched_rows = np.isin(row_keys, judge["key"].to_numpy())
    counts = {"given": int(len(human)), "matched": int(matched_rows.sum()),
              "unmatched": int((~matched_rows).sum()),
              "unmatched_examples": [k.replace(SEP, " / ") for k in pd.unique(row_keys[~matched_rows])[:3]]}
    if not counts["matched"]:
        raise InputError(f"none of its {counts['given']:,} human labels is on a comparison (prompt and pair of "
                         f"models) the judgments hold (e.g. {', '.join(counts['unmatched_examples']) or '—'}); "
                         "give labels of the same prompts and models", file=source)
    models = sorted(set(judge["first"]) | set(judge["second"]))
    code = {m: i for i, m in enumerate(models)}
    both = judge.merge(labels[["key", "y"]].rename(columns={"y": "human"}), on="key", how="left")
    has = both["human"].notna().to_numpy()
    a = both["first"].map(code).to_numpy(int)
    b = both["second"].map(code).to_numpy(int)
    y, h = both["y"].to_numpy(float), both["human"].to_numpy(float)
    return MatchedComparisons((a[has], b[has], h[has], y[has]), (a[~has], b[~has], y[~has]), models, counts)


def oriented_keys(frame: pd.DataFrame) -> np.ndarray:
    """Each row's comparison key (prompt, first model, second model by name), as :func:`oriented` makes it."""
    if not len(frame):
        return np.array([], dtype=str)
    first, second, _ = name_ordered(frame)
    return frame["prompt_id"].astype(str).to_numpy().astype(object) + SEP + first + SEP + second
