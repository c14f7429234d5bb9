"""Benchmark (issue 35): labels needed to reach a reliability-interval width, selection order vs informative order.

Data: ../shared/data/judgebench (six judges on the same 350 GPT-4o pairs); each judge in turn is the target, Metric
Match (seed s) selects ``--budget`` items, and a simulated labeller labels them one by one as the page would serve
them (``analysis.labelling.next_item`` for the informative order, the selection's order otherwise), typing the
recorded objective label. After each label the page's own summary (``label_summary``, 200 bootstrap draws, seed s)
decides "enough" (interval at most ``--width`` wide, at least ``ENOUGH_MIN_LABELLED`` labels). A run that never
gets there counts the whole budget.

Besides the labels it counts whether the interval at the stop contains the metric on the whole selection (the
estimate labelling every item would give) and on the whole pool of 350: a narrower interval reached by labelling
unrepresentative items would show there. Fewer labels alone also cover less often (a percentile bootstrap on few
items is too narrow), so it also counts that for selection order stopped after as many labels as the other order.

Run: ``.venv/bin/python benchmarks/label_order.py [--seeds 0,...,9] [--width 0.45] [--budget 100] [--metric icc]
[--orders selection,informative,unmatched]`` (``unmatched``: the informative order without its matching step, the
criterion that was tried first).
Last line: ``labels_to_width_selection=<mean> labels_to_width_informative=<mean> ratio=<informative/selection>
covered_selection=<share> covered_informative=<share>``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.analysis.labelling import LabelItem, LabelTask, label_summary, next_item
from judgewise.analysis.reliability import get_metric
from judgewise.analysis.selection import get_strategy
from judgewise.analysis.study import pool_from_scores
from judgewise.io.judgebench import read_judgebench_scores
from judgewise.ratings.bootstrap import rng_from_seed
from judgewise.store.labels import labels_frame

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
LABELLER = "oracle"


def simulate(task: LabelTask, truth: dict) -> tuple[int, list | None, bool]:
    """Label ``task``'s items as the page serves them until it says enough: (labels given, interval at the stop,
    whether it said enough)."""
    rows: list[tuple] = []
    order = iter([i.item_id for i in task.items])
    while True:
        frame = labels_frame(rows)
        summary = label_summary(task, frame)
        if summary["enough"]:
            return len(rows), summary["interval"], True
        item = next_item(task, frame, LABELLER) if task.order == "informative" else next(order, None)
        if item is None:
            return len(rows), summary["interval"], False
        rows.append((len(rows), "bench", LABELLER, item, task.target, "AB", float(truth[item]), "0"))


def run(pool, judge: str, seed: int, args) -> list[dict]:
    """Both orders on one target and one Metric Match selection."""
    metric = get_metric(args.metric)
    target, others = pool.split(judge)[:2]
    idx = get_strategy("metric-match", n_candidates=20).select(target, others, args.budget, metric,
                                                               rng_from_seed(seed))[0]
    ids = [str(i) for i in pool.item_ids[idx]]
    truth = dict(zip(ids, pool.human[idx]))
    whole = {"selection": metric(target[idx], pool.human[idx]), "pool": metric(target, pool.human)}
    out = []
    for order in args.orders.split(","):
        matched = order != "unmatched"  # the informative order without its matching step (no other judges)
        task = LabelTask(store="", items=tuple(LabelItem(i, "", (("A", ""), ("B", ""))) for i in ids),
                         target=judge, metric=args.metric, seed=seed, stop_width=args.width,
                         order="selection" if order == "selection" else "informative",
                         target_scores=dict(zip(ids, target[idx].tolist())),
                         other_scores=dict(zip(ids, map(tuple, others[:, idx].T.tolist()))) if matched else {})
        start = time.perf_counter()
        labels, interval, enough = simulate(task, truth)
        covered = {k: bool(interval and interval[0] <= v <= interval[1]) for k, v in whole.items()}
        out.append({"judge": judge.split("/")[-1][:24], "seed": seed, "order": order, "labels": labels,
                    "reached": enough, "covers_selection": covered["selection"], "covers_pool": covered["pool"],
                    "seconds": time.perf_counter() - start, "same_n": None})
    if out[0]["order"] == "selection":  # selection order stopped after as many labels as each other order
        for row in out[1:]:
            prefix = labels_frame([(k, "bench", LABELLER, i, judge, "AB", float(truth[i]), "0")
                                   for k, i in enumerate(ids[:row["labels"]])])
            interval = label_summary(task, prefix)["interval"]
            row["same_n"] = bool(interval and interval[0] <= whole["selection"] <= interval[1])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED / "data/judgebench"))
    parser.add_argument("--seeds", default="0,1,2,3,4,5,6,7,8,9")
    parser.add_argument("--width", type=float, default=0.45)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--metric", default="icc")
    parser.add_argument("--orders", default="selection,informative",
                        help="comma-separated: selection, informative, unmatched (informative without matching)")
    args = parser.parse_args()
    pool = pool_from_scores(read_judgebench_scores(args.data).frame, target="o1-mini")
    print(f"pool: {len(pool.item_ids)} pairs, {len(pool.judges)} judges; budget {args.budget}, {args.metric} "
          f"interval width <= {args.width}")
    rows = [r for judge in pool.judges for seed in map(int, args.seeds.split(",")) for r in run(pool, judge, seed,
                                                                                                  args)]
    df = pd.DataFrame(rows)
    table = df.pivot_table(index="judge", columns="order", values=["labels", "reached", "covers_selection"],
                           aggfunc="mean")
    print(table.round(2).to_string())
    mean = df.groupby("order").agg(labels=("labels", "mean"), median=("labels", "median"),
                                   reached=("reached", "mean"), covers_selection=("covers_selection", "mean"),
                                   covers_pool=("covers_pool", "mean"), seconds=("seconds", "mean"))
    print(mean.round(3).to_string())
    wins = df.pivot_table(index=["judge", "seed"], columns="order", values="labels")
    for order in wins.columns.drop("selection"):
        print(f"runs: {len(wins)}; {order} needed fewer labels than selection in "
              f"{int((wins[order] < wins.selection).sum())}, more in {int((wins[order] > wins.selection).sum())}")
    same = df[df["order"] != "selection"].groupby("order")["same_n"].mean()
    for order, share in same.items():
        print(f"selection order stopped after as many labels as {order}: its interval contains the selection's "
              f"metric in {share:.0%} of runs (what fewer labels alone give)")
    sel, inf = mean.loc["selection"], mean.loc["informative"]
    print(f"labels_to_width_selection={sel.labels:.1f} labels_to_width_informative={inf.labels:.1f} "
          f"ratio={inf.labels / sel.labels:.2f} covered_selection={sel.covers_selection:.2f} "
          f"covered_informative={inf.covers_selection:.2f}")


if __name__ == "__main__":
    main()
