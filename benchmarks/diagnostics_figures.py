"""Figures of issue 6 (bias diagnostics, echo, judge gaming) on the real data in ../shared, plus the echo
intervention through the engine with the simulated judge and (``--embedded``) the embedded Gemma judge.

1. JudgeBench (both orders, objective labels): per judge, agreement with the label (per judgment, ties half,
   JudgeBench's per-pair rule), swap consistency, P(first shown wins), with Wilson intervals.
2. AlpacaEval: judge-gaming flags (NullModel and the false-flag rate on the other 28 folders).
3. Echo detector firing rates on real answers (JudgeBench, Arena-Hard, AlpacaEval outputs).
4. Echo intervention (CLB App. F.2): contrast P(A | echo on B) − P(A | echo on A) with a paired bootstrap CI.

Run: ``.venv/bin/python benchmarks/diagnostics_figures.py [--shared ../shared] [--embedded] [--pairs 20]``.
Last line: ``nullmodel_flagged=<bool> false_flags=<k>/<n> o1mini_label=<x> grm2b_label=<y> o1mini_swap=<z>``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from judgewise.analysis import bias
from judgewise.analysis.echo import detect_echo
from judgewise.analysis.echo_intervention import run_echo_intervention
from judgewise.analysis.gaming import detect_gaming, win_rates_from
from judgewise.io import read_any
from judgewise.judges.base import Comparison
from judgewise.judges.simulated import SimulatedJudge


def judgebench_figures(shared: Path) -> dict:
    frame = read_any(shared / "data" / "judgebench" / "outputs").frame
    frame = frame.assign(truth=frame["label"].map({"A>B": 1.0, "B>A": 0.0}))
    out = {}
    print("judge | label agreement per judgment | ties half | per pair (JudgeBench) | swap consistency | "
          "P(first wins) | tie rate")
    for judge, g in frame.groupby("judge"):
        la = bias.label_agreement(g, "truth")
        row = {"per_judgment": la["per_judgment"], "ties_half": la["ties_half"], "per_pair": la["per_pair"],
               "swap": bias.swap_consistency(g), "first": bias.position_bias(g), "ties": la["tie_rate"]}
        out[judge] = row
        print(judge, "|", " | ".join(f"{p.estimate:.3f} [{p.ci_low:.3f}, {p.ci_high:.3f}]" for p in row.values()))
    return out


def gaming_figures(shared: Path) -> tuple[bool, int, int]:
    table = read_any(shared / "data" / "alpacaeval" / "results")
    report = detect_gaming(table.extras["responses"].frame, win_rates=win_rates_from(table.frame))
    for f in report.flags:
        print(f"flag: {f.model}: {f.reason}")
    others = [m for m in report.features.index if m != "NullModel"]
    false = [m for m in report.flagged_models if m != "NullModel"]
    print(f"gaming: NullModel flagged={'NullModel' in report.flagged_models}; false flags {len(false)}/{len(others)}"
          f" (rate {len(false) / len(others):.3f}) {false}")
    return "NullModel" in report.flagged_models, len(false), len(others)


def echo_rates(shared: Path) -> None:
    sets = {"judgebench": [], "arenahard": [], "alpacaeval": []}
    for file in sorted((shared / "data" / "judgebench" / "data").glob("*.jsonl")):
        for line in file.read_text().splitlines():
            rec = json.loads(line)
            sets["judgebench"] += [rec["response_A"], rec["response_B"]]
    for file in sorted((shared / "data" / "arenahard" / "model_answer").glob("*.jsonl")):
        sets["arenahard"] += [json.loads(line)["messages"][1]["content"]["answer"]
                              for line in file.read_text().splitlines()]
    table = read_any(shared / "data" / "alpacaeval" / "results")
    sets["alpacaeval"] = table.extras["responses"].frame["text"].fillna("").tolist()
    for name, texts in sets.items():
        flags = [detect_echo(t).echo for t in texts]
        print(f"echo detector on {name}: {sum(flags)}/{len(texts)} flagged ({np.mean(flags):.4f})")


def base_pairs(n: int) -> list[Comparison]:
    return [Comparison(f"q{i}", f"What is {i} + {i + 3}?", "m1", "m2",
                       f"Adding {i} and {i + 3} gives {2 * i + 3}. The answer is {2 * i + 3}.",
                       f"{i} plus {i + 3} equals {2 * i + 3}, so the answer is {2 * i + 3}.") for i in range(n)]


def intervention(judge, pairs: int, label: str, **kw) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        res, run = run_echo_intervention(base_pairs(pairs), judge, Path(tmp) / "store.sqlite", **kw)
    p = res.p_a
    print(f"echo intervention [{label}]: {res.n_base} base pairs, {run.n_games} games, "
          f"P(A) original {p['original'].estimate:.3f}, echo on A {p['echo_a'].estimate:.3f}, "
          f"echo on B {p['echo_b'].estimate:.3f}; contrast {res.contrast:+.3f} "
          f"[{res.ci_low:+.3f}, {res.ci_high:+.3f}] ({time.perf_counter() - t0:.0f}s)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared")
    ap.add_argument("--embedded", action="store_true", help="also run the intervention with the embedded judge")
    ap.add_argument("--pairs", type=int, default=20, help="base pairs for the embedded-judge intervention")
    args = ap.parse_args()
    jb = judgebench_figures(args.shared)
    flagged, n_false, n_others = gaming_figures(args.shared)
    echo_rates(args.shared)
    intervention(SimulatedJudge({"m1": 1000.0, "m2": 1000.0}, p_judge=0.9, seed=4), 200, "simulated judge",
                 concurrency=4)
    if args.embedded:
        from judgewise.judges.local_backend import embedded_judge

        intervention(embedded_judge("clb_confidence", n_ctx=2048), args.pairs, "embedded Gemma 3 270M",
                     concurrency=1)
    o1, rm = jb["o1-mini-2024-09-12"], jb["Ray2333/GRM-Gemma-2B-rewardmodel-ft"]
    print(f"nullmodel_flagged={flagged} false_flags={n_false}/{n_others} "
          f"o1mini_label={o1['per_judgment'].estimate:.3f} grm2b_label={rm['per_judgment'].estimate:.3f} "
          f"o1mini_swap={o1['swap'].estimate:.3f}")


if __name__ == "__main__":
    main()
