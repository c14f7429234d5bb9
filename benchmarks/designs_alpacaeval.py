"""Designs on real verdicts (issue 12): judge calls to reach Kendall τ ≥ 0.9 with a judge derived from AlpacaEval 2.0.

The judge. AlpacaEval compares every model with one shared anchor (``gpt4_1106_preview``) and GPT-4-turbo gives a
continuous preference per prompt. A pairwise judge is derived from those verdicts by Anchor §4.3's logic
(:func:`judgewise.analysis.anchor_pairwise.derived_pairwise`): for models i, j on prompt p, i beats j when its
preference against the anchor is higher on p, loses when lower, and a tie when they are equal. The **reference**
ranking is the Bradley–Terry fit of that judge on all pairs on all prompts (the anchor itself is not ranked).

The runs. Each design runs through the real engine: a replay judge (``judge: {backend: replay, judgments: ...}``)
over the derived verdicts written to a file, a fresh SQLite store per run in a temporary folder, ``orders: one``
(the derived judge has no position effect, so one call per comparison). After every round the benchmark refits BT
(:func:`judgewise.ratings.bradley_terry.fit_bt_arrays`) on the games judged so far and measures Kendall τ-b against
the reference (it sees the reference for measuring only); the calls to reach τ ≥ 0.9 are those at the first round
that reaches it. Rounds: adaptive — its own rounds (``n_models`` calls); tournament — one bracket per prompt
(Arena-lite Alg. 1), played a few prompts at a time (≈ ``--step`` calls); quadratic (all pairs) and anchor — their
comparisons in a seeded random prompt order, ``--step`` comparisons at a time. The anchor design uses an in-pool
mediocre anchor (Anchor §5.3): the half's median model by the published AlpacaEval win rate (known before any
judging), scored by BT. A run that has not reached the target by ``--max-calls`` counts as never reaching it: its
calls are counted at the cap in the mean (shown with ">=") and the count of such seeds is printed.

Tuning. The 28 judged models are split by their AlpacaEval win rate (100·mean(preference − 1) against the anchor, as\n``leaderboard.csv`` publishes it; text_davinci_003 has no row there), best first:
ranks 1, 3, 5, … are half A, ranks 2, 4, 6, … half B (14 models each). The adaptive design's defaults
(``judgewise/designs/adaptive.py``) were tuned on half A only; half B is data they were not tuned on. The last line
is half B's. What tuning on half A changed (20 seeds each, mean calls to τ ≥ 0.9): the global look-ahead now values
a call by its effect on *all* pairs (``NEAR = 0``; was pairs within 3 ranks): 526 vs 614 (6 ranks: 525). It costs
5% more calls on the simulated designs benchmark (adaptive_calls 2,340 → 2,470). Not adopted, though better
on half A: rounds of n/2 calls (488; with all pairs 473) and ``lookahead: direct`` (507) — on the simulated
``evaluate`` acceptance setup (``benchmarks/evaluate_simulated.py``) they stopped on the target with a mean realised
τ below 0.9 over their first seeds.

Run: ``.venv/bin/python benchmarks/designs_alpacaeval.py ../shared/data/alpacaeval [--seeds 20] [--prompts 805]
[--step 50] [--max-calls 20000] [--halves A,B]``. ``--prompts N`` lets the designs draw from the first N prompts
(by prompt id, a hash: effectively random) — the reference stays all prompts.
Last line: ``adaptive_calls=<n> tournament_calls=<n> quadratic_calls=<n> anchor_calls=<n> ratio=<adaptive/tournament>``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.analysis.anchor_pairwise import derived_pairwise
from judgewise.io.alpacaeval import read_alpacaeval
from judgewise.judges.engine_verdicts import EngineVerdicts
from judgewise.store.judgments import JudgmentStore
from judgewise.pipeline.config import build_design
from judgewise.pipeline.job import build_job
from judgewise.ratings import rank
from judgewise.ratings.agreement import kendall_tau_b
from judgewise.ratings.bradley_terry import fit_bt_arrays

TARGET = 0.9
DESIGNS = ("adaptive", "tournament", "quadratic", "anchor")


@dataclass
class RealData:
    """The derived judge's verdicts, the responses and the published leaderboard of one AlpacaEval folder."""

    derived: pd.DataFrame     # one row per prompt and unordered pair (model_a's outcome)
    responses: pd.DataFrame
    leaderboard: list[str]    # judged models, best first by the published win rate


def load(path: Path) -> RealData:
    table = read_alpacaeval(path)
    anchor = table.extras["anchor"]
    derived = derived_pairwise(table.frame, anchor)
    win_rate = rank(table.frame, "winrate", anchor=anchor)  # AlpacaEval's win rate, 100·mean(preference − 1)
    board = [win_rate.models[i] for i in win_rate.order() if win_rate.models[i] != anchor]
    return RealData(derived, table.extras["responses"].frame, board)


def halves(leaderboard: list[str]) -> dict[str, list[str]]:
    """Half A: published ranks 1, 3, 5, …; half B: ranks 2, 4, 6, … (module docstring)."""
    return {"A": leaderboard[0::2], "B": leaderboard[1::2]}


def replay_rows(derived: pd.DataFrame) -> pd.DataFrame:
    """The derived verdicts as replay rows for both answer orders (``first``): the derived judge ignores order."""
    return pd.concat([derived.assign(first=derived["model_a"]), derived.assign(first=derived["model_b"])],
                     ignore_index=True)


def reference_scores(derived: pd.DataFrame, models: list[str]) -> np.ndarray:
    """BT scores of ``models`` from all pairs on all prompts of the derived judge (the reference ranking)."""
    index = {m: k for k, m in enumerate(models)}
    a, b = derived["model_a"].map(index).to_numpy(int), derived["model_b"].map(index).to_numpy(int)
    return fit_bt_arrays(a, b, derived["outcome"].to_numpy(float), len(models))[0]


class Reached(Exception):
    """Ends a design's run once the target is reached."""


@dataclass
class TauRecorder:
    """A design verdict callback around the engine: after each batch, BT on every usable game so far, Kendall τ-b
    against the reference; raises :class:`Reached` at the first batch with τ ≥ the target or past the cap."""

    engine: EngineVerdicts
    reference: np.ndarray
    max_calls: int
    target: float = TARGET
    prompt_map: np.ndarray | None = None  # chunk prompt ids → pool prompt ids (tournament chunks)
    parts: list = field(default_factory=list)
    trajectory: list = field(default_factory=list)  # (calls, τ)

    @property
    def calls(self) -> int:
        return sum(len(r.judgments) for r in self.engine.results)

    def __call__(self, prompt, a, b) -> np.ndarray:
        room = self.max_calls - self.calls
        prompt, a, b = prompt[:room], a[:room], b[:room]
        pool_prompt = prompt if self.prompt_map is None else self.prompt_map[prompt]
        out = self.engine(pool_prompt, a, b)
        self.parts.append((a, b, out))
        aa, bb, oo = (np.concatenate(x) for x in zip(*self.parts))
        tau = kendall_tau_b(fit_bt_arrays(aa, bb, oo, len(self.reference))[0], self.reference)
        self.trajectory.append((self.calls, tau))
        if tau >= self.target or self.calls >= self.max_calls:
            raise Reached
        return out


def feed_static(design, models, prompt_ids, recorder: TauRecorder, rng, step: int) -> None:
    """A single-shot design's comparisons in a seeded random prompt order, ``step`` comparisons per round."""
    pairs = design.pairs(models, prompt_ids, rng)
    position = rng.permutation(len(prompt_ids))[pairs.prompt]
    order = np.argsort(position, kind="stable")
    for start in range(0, len(order), step):
        take = order[start:start + step]
        recorder(pairs.prompt[take], pairs.a[take], pairs.b[take])


def feed_tournament(models, prompt_ids, recorder: TauRecorder, rng, step: int) -> None:
    """Arena-lite tournaments, a few prompts at a time (≈ ``step`` calls), in a seeded random prompt order."""
    per_chunk = max(1, round(step / (len(models) - 1)))
    order = rng.permutation(len(prompt_ids))
    design = build_design({"name": "tournament"})
    for start in range(0, len(order), per_chunk):
        chunk = order[start:start + per_chunk]
        recorder.prompt_map = chunk
        design.run(models, [prompt_ids[p] for p in chunk], recorder, rng)


def run_design(name: str, job, reference, seed: int, args, folder: Path, anchor: str) -> dict:
    """One design, one seed, through the engine into a fresh store; calls at the first τ ≥ target (or None)."""
    models, prompt_ids = job.models, job.pool.prompt_ids
    rng = np.random.default_rng([seed, DESIGNS.index(name)])
    with JudgmentStore(folder / f"{name}-{seed}.sqlite") as store:
        options = {**job.config.run_options(), "seed": seed}
        recorder = TauRecorder(EngineVerdicts(job.pool, job.judge, store, options), reference, args.max_calls,
                               getattr(args, "stop_at", TARGET))
        try:
            if name == "tournament":
                feed_tournament(models, prompt_ids, recorder, rng, args.step)
            elif name in ("quadratic", "anchor"):
                spec = {"name": name, **({"anchor": anchor} if name == "anchor" else {})}
                feed_static(build_design(spec), models, prompt_ids, recorder, rng, args.step)
            else:
                budget = min(args.max_calls, len(prompt_ids) * len(models) * (len(models) - 1) // 2)
                build_design({"name": "adaptive", "budget": budget}).run(models, prompt_ids, recorder, rng)
        except Reached:
            pass
    hits = [calls for calls, tau in recorder.trajectory if tau >= TARGET]
    return {"design": name, "seed": seed, "calls": hits[0] if hits else args.max_calls, "reached": bool(hits),
            "trajectory": recorder.trajectory}


def prepare_half(label: str, models: list[str], data: RealData, args, folder: Path):
    """The job (replay judge over the half's derived verdicts, written to a file; responses; prompts), the reference
    scores and the anchor design's anchor (the half's median model by win rate)."""
    derived = data.derived[data.derived["model_a"].isin(models) & data.derived["model_b"].isin(models)]
    judgments_file = folder / f"derived-{label}.parquet"
    replay_rows(derived).to_parquet(judgments_file)
    responses = data.responses[data.responses["model"].isin(models)]
    config = {"responses": responses, "models": models, "orders": "one", "store": str(folder / "unused.sqlite"),
              "judge": {"backend": "replay", "judgments": str(judgments_file)}}
    if args.prompts:
        config["max_prompts"] = args.prompts
    by_board = [m for m in data.leaderboard if m in models]
    return build_job(config, allow_rounds=True), reference_scores(derived, models), by_board[len(by_board) // 2]


def measure_half(label: str, models: list[str], data: RealData, args, folder: Path) -> dict[str, float]:
    """Every design × seed on one half; prints a table and the half's line; returns mean calls per design."""
    job, reference, anchor = prepare_half(label, models, data, args, folder)
    derived = data.derived[data.derived["model_a"].isin(models) & data.derived["model_b"].isin(models)]
    order = np.argsort(-reference)
    print(f"\n== half {label}: {len(models)} models, {len(job.pool.prompt_ids)} prompts to draw from; reference "
          f"(BT, all {len(derived):,} derived games) best first: {', '.join(models[i] for i in order)}; "
          f"derived ties {np.mean(derived['outcome'] == 0.5):.1%}; anchor design's anchor: {anchor} ==")
    rows = []
    for name in DESIGNS:
        start = time.perf_counter()
        for seed in range(args.seeds):
            rows.append(run_design(name, job, reference, seed, args, folder, anchor))
        runs = pd.DataFrame([r for r in rows if r["design"] == name])
        hit = runs[runs["reached"]]
        print(f"{name:>10}: mean calls to τ≥{TARGET} {runs['calls'].mean():7.0f} (never reached: "
              f"{int((~runs['reached']).sum())} of {len(runs)} seeds, counted at the cap {args.max_calls}; over the "
              f"seeds that reached it: mean {hit['calls'].mean():.0f}, min {hit['calls'].min()}, max "
              f"{hit['calls'].max()}); {time.perf_counter() - start:.0f}s", flush=True)
    means = pd.DataFrame(rows).groupby("design")["calls"].mean().to_dict()
    print(f"half {label}: {headline(means)}")
    return means


def headline(means: dict) -> str:
    return " ".join(f"{d}_calls={means[d]:.0f}" for d in DESIGNS) + f" ratio={means['adaptive'] / means['tournament']:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="an AlpacaEval results folder, e.g. ../shared/data/alpacaeval")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--prompts", type=int, default=0, help="draw from the first N prompts (0: all)")
    parser.add_argument("--step", type=int, default=50, help="comparisons per round of the fixed designs")
    parser.add_argument("--max-calls", type=int, default=20000, help="a run not at the target by then never reaches it")
    parser.add_argument("--halves", default="A,B", help="which halves to run; the last line is the last one's")
    args = parser.parse_args()
    start = time.perf_counter()
    data = load(args.path)
    split = halves(data.leaderboard)
    print(f"derived judge: {len(data.derived):,} games over {data.derived['prompt_id'].nunique()} prompts and "
          f"{len(data.leaderboard)} models; half A (tuned on): {', '.join(split['A'])}; half B: {', '.join(split['B'])}")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label in args.halves.split(","):
            results[label] = measure_half(label, split[label], data, args, Path(tmp))
    print(f"runtime {time.perf_counter() - start:.0f} s; the last line is half {label} "
          f"({'not tuned on' if label == 'B' else 'tuned on'})")
    print(headline(results[label]))


if __name__ == "__main__":
    main()
