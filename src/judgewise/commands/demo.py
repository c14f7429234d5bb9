"""The demo's steps as library calls: ``judgewise evaluate`` on replayed real verdicts, checked against every recorded
verdict; then the embedded judge judging, storing and resuming a tiny job; and what ``judgewise demo`` prints.

Each part (:func:`replay_part`, :func:`embedded_part`) runs ``judgewise evaluate`` on a shipped run config with its
store in the output folder and yields what the demo prints as it goes (``commands.tables`` blocks).

Runs on shipped files only (``examples/``: the AlpacaEval 2.0 slice, its verdicts made pairwise, the run configs
``evaluate-replay.yaml`` and ``evaluate-embedded.yaml``); nothing from ``../shared`` and no network but the
embedded model's one download. Part 2's verdicts come from a 270M-parameter model and are not meaningful.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from judgewise.commands.tables import Note, Rule, evaluation_blocks
from judgewise.commands.text import discordant_text
from judgewise.errors import ConfigError
from judgewise.io import read_judgments
from judgewise.io.atomic import check_output_folder
from judgewise.pipeline.config import load_config
from judgewise.ratings import rank
from judgewise.ratings.agreement import kendall_tau_b
from judgewise.ratings.bootstrap import check_bootstrap
from judgewise.report import ReportOptions, write_report

REPLAY_CONFIG = "evaluate-replay.yaml"
EMBEDDED_CONFIG = "evaluate-embedded.yaml"
#: what the demo shows last: how to evaluate the same slice with a real model
REAL_JUDGE_HINT = """\
To evaluate with a real model, write run.yaml and run `judgewise evaluate --config run.yaml`:
  responses: examples/alpacaeval
  models: [claude-2, gpt-3.5-turbo-1106, alpaca-7b, falcon-7b-instruct]
  max_prompts: 100
  judge: {model: gpt-4o-mini, base_url: https://api.openai.com/v1, api_key_env: OPENAI_API_KEY,
          template: arena_hard_5way}
  design: auto
  target: {kendall_tau: 0.9}
  budget: {max_calls: 2000}
(any OpenAI-compatible server works: vLLM, SGLang, llama.cpp's server, Ollama, a LiteLLM proxy — set base_url)"""


@dataclass
class DemoRun:
    """Everything the demo produced; the CLI prints it and :func:`write_demo_report` reads it."""

    examples: Path
    out_dir: Path
    replay: object = None            # part 1's pipeline.evaluate.EvaluateResult
    replay_store: Path | None = None
    check: ReplayCheck | None = None
    embedded: object = None          # part 2's last EvaluateResult
    embedded_store: Path | None = None
    steps: list = field(default_factory=list)  # part 2: (what, EvaluateResult, seconds)
    timings: dict = field(default_factory=dict)


@dataclass
class ReplayCheck:
    """Part 1's ranking against the one every recorded verdict gives, and against AlpacaEval's own leaderboard."""

    all_verdicts: int          # recorded pairwise verdicts (one answer order)
    reference: list[str]       # BT on every recorded verdict, best first
    tau: float                 # Kendall τ-b of the run's scores against the reference's
    discordant: list[tuple[str, str]]  # pairs the run orders the other way (the reference's better model first)
    overlapping: list[bool]    # per discordant pair: the run's 95% intervals of the two overlap (not told apart)
    published: list[tuple[str, float]]  # AlpacaEval win rate vs the anchor over every instruction, best first
    published_prompts: int
    tau_published: float


def find_examples(path: Path | None = None) -> Path:
    """The shipped ``examples`` folder: ``path`` if given, else ``examples`` of the working folder (as that relative
    path, so what the demo prints stays short) or of this checkout.

    Raises
    ------
    ConfigError
        When no candidate holds the demo's run configs.
    """
    candidates = [path] if path else [Path("examples"), Path(__file__).resolve().parents[3] / "examples"]
    for candidate in candidates:
        if (candidate / REPLAY_CONFIG).is_file() and (candidate / "alpacaeval" / "results").is_dir():
            return candidate
    raise ConfigError(f"the demo's examples ({REPLAY_CONFIG}, alpacaeval/) not found in "
                      f"{', '.join(map(str, candidates))}; run the demo from a judgewise checkout or pass --examples")


def check_options(out_dir: Path, *, bootstrap: int, threads: int | None) -> None:
    """Every option of the demo, checked before part 1 runs: the bootstrap rounds, the embedded judge's CPU threads
    (None: its default) and the output folder (made if missing; an existing one is reused, the demo's stores and
    reports in it replaced; a file there, or a folder that cannot be made, is an InputError)."""
    check_bootstrap(bootstrap, name="`bootstrap`")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ConfigError(f"`threads={threads}`: expected a number of CPU threads >= 1")
    check_output_folder(out_dir)


def fresh_config(path: Path, store: Path, **changes):
    """The run config at ``path`` with its store at ``store`` (removed first, so the run judges from nothing) and
    ``changes`` (e.g. ``budget``) applied."""
    store.parent.mkdir(parents=True, exist_ok=True)
    for leftover in (store, *store.parent.glob(store.name + "-*")):  # the SQLite file and its -wal/-shm
        leftover.unlink(missing_ok=True)
    return dataclasses.replace(load_config(path), store=str(store), **changes)


def replay_check(result, cfg) -> ReplayCheck:
    """Compare an evaluation judged by the replay judge with the ranking of every verdict the judge holds (BT with
    the same ridge, one answer order) and with AlpacaEval's win rate on the slice the config names."""
    recorded = read_judgments(cfg.judge["judgments"]).frame
    one_order = recorded[recorded["first"].astype(str) == recorded["model_a"].astype(str)]
    models = list(result.ranking.models)
    full = rank(one_order, "bt", l2=result.l2)
    ref = dict(zip(full.models, full.scores))
    got = dict(zip(models, result.ranking.scores))
    reference = sorted(models, key=lambda m: -ref[m])
    discordant = [(a, b) for i, a in enumerate(reference) for b in reference[i + 1:] if got[a] < got[b]]
    interval = {r["model"]: (r["ci_low"], r["ci_high"]) for r in result.ranking.to_records()}
    overlapping = [_overlap(interval[a], interval[b]) for a, b in discordant]
    slice_table = read_judgments(cfg.responses)
    win = rank(slice_table.frame, "winrate", anchor=slice_table.extras.get("anchor"))
    published = sorted(((m, float(s)) for m, s in zip(win.models, win.scores) if m in got), key=lambda p: -p[1])
    scores = np.array([got[m] for m in models])
    return ReplayCheck(len(one_order), reference, kendall_tau_b(scores, np.array([ref[m] for m in models])),
                       discordant, overlapping, published, int(slice_table.frame["prompt_id"].nunique()),
                       kendall_tau_b(scores, np.array([dict(published)[m] for m in models])))


def _overlap(one: tuple, other: tuple) -> bool:
    """Whether two (low, high) intervals overlap (False when either is missing: no bootstrap)."""
    if None in one or None in other:
        return False
    return one[0] <= other[1] and other[0] <= one[1]


def reused(result) -> int:
    """Games of an evaluation taken from the store rather than judged by this run."""
    return int(result.calls - result.paid_calls)


def position_share(result) -> str:
    """The share of games won by the answer shown first, as text (— when unknown)."""
    position = result.trust.get("position_bias_first_shown_wins")
    return f"{position['estimate']:.0%}" if position else "—"


Evaluate = Callable[[object], object]
"""A loaded run config → its evaluation (``judgewise evaluate``'s, with the CLI's progress)."""


def replay_part(demo: DemoRun, evaluate: Evaluate) -> Iterator:
    """Part 1: ``judgewise evaluate`` on the replay config from an empty store, then the check against every
    recorded verdict and AlpacaEval's own leaderboard; yields what the demo prints, as it goes."""
    config = demo.examples / REPLAY_CONFIG
    demo.replay_store = demo.out_dir / "replay.sqlite"
    cfg = fresh_config(config, demo.replay_store)
    yield Rule(f"1 · the main job on real verdicts: rank {len(cfg.models)} AlpacaEval models, stop at the target")
    yield ("judge: GPT-4-turbo's recorded AlpacaEval 2.0 preferences, replayed as pairwise verdicts (Anchor §4.3: "
           "on an instruction, the answer GPT-4-turbo preferred more over the shared anchor wins); offline, free")
    yield f"$ judgewise evaluate --config {config} --store {demo.replay_store}"
    start = time.perf_counter()
    demo.replay = evaluate(cfg)
    demo.timings["replay_s"] = time.perf_counter() - start
    yield from evaluation_blocks(demo.replay)
    demo.check = check = replay_check(demo.replay, cfg)
    n_pairs = len(check.reference) * (len(check.reference) - 1) // 2
    agree = n_pairs - len(check.discordant)
    yield Note(f"all {check.all_verdicts:,} recorded verdicts rank the models {' > '.join(check.reference)}; this run "
               f"({demo.replay.calls:,} calls, {demo.replay.calls / check.all_verdicts:.1%} of them) orders {agree} "
               f"of {n_pairs} pairs the same way (Kendall τ {check.tau:.3f})" + discordant_text(check),
               "check (possible here because every verdict is recorded):")
    yield Note(f"{' · '.join(f'{m} {s:.1f}' for m, s in check.published)} (Kendall τ of this run against it: "
               f"{check.tau_published:.3f})", f"AlpacaEval's own leaderboard (win rate vs its anchor, all "
                                                f"{check.published_prompts} instructions):")
    yield f"part 1 took {demo.timings['replay_s']:.1f}s"


def embedded_part(demo: DemoRun, evaluate: Evaluate, *, threads: int | None) -> Iterator:
    """Part 2: the embedded judge on a tiny job — stopped by a budget half way, resumed, rerun with 0 new calls;
    yields what the demo prints, as it goes (a note and nothing else when the embedded runtime is missing)."""
    if importlib.util.find_spec("llama_cpp") is None:
        yield Note("part 2 (the embedded judge) needs the embedded runtime: pip install 'judgewise[local]' (from a "
                   "checkout, `make demo` builds it), then run `judgewise demo --no-replay`", "skipped:")
        return
    config = demo.examples / EMBEDDED_CONFIG
    demo.embedded_store = store = demo.out_dir / "embedded.sqlite"
    cfg = fresh_config(config, store)
    if threads:
        cfg = dataclasses.replace(cfg, judge={**cfg.judge, "n_threads": int(threads)})
    total = len(cfg.models) * (len(cfg.models) - 1) * len(cfg.prompt_ids)  # all pairs, both orders
    half = total // 4 * 2  # whole comparisons (both orders), about half the games
    yield Rule("2 · the embedded judge (Gemma 3 270M), live and offline: judging, storing, resuming")
    yield Note("a 270M-parameter model mostly picks the answer shown first, so the ranking below says nothing about "
               "the models; this part shows the machinery working on your machine.", "Its verdicts mean nothing:",
               "bold yellow")
    yield (f"run config: {config} ({len(cfg.models)} models × {len(cfg.prompt_ids)} instructions, all pairs, both "
           f"orders: {total} games); store: {store}")
    budgets = [(f"1. judge until a budget of {half} calls stops it (as Ctrl-C would)",
                {**cfg.budget, "max_calls": half}),
               ("2. run it again: the stored verdicts are reused, only the missing games judged", dict(cfg.budget)),
               ("3. run it once more", dict(cfg.budget))]
    for what, budget in budgets:
        start = time.perf_counter()
        result = evaluate(dataclasses.replace(cfg, budget=budget))
        seconds = time.perf_counter() - start
        demo.steps.append((what, result, seconds))
        yield (f"{what}: {result.paid_calls} new calls, {reused(result)} reused from the store, stopped: "
               f"{result.stopped} ({seconds:.1f}s)")
    demo.embedded = result
    yield from evaluation_blocks(result)
    paid = sum(r.paid_calls for _, r, _ in demo.steps)
    judge_s = sum(s for _, r, s in demo.steps if r.paid_calls)
    yield (f"embedded judge: {paid} calls in {judge_s:.1f}s ({paid / max(judge_s, 1e-9):.2f} calls/s), the answer "
           f"shown first won {position_share(result)} of its games; parse failures: {result.trust['failed']}")
    yield f"rerun it yourself (0 new calls): judgewise evaluate --config {config} --store {store}"


def write_demo_report(demo: DemoRun) -> list[Path]:
    """Write the HTML report of each part's store into ``demo.out_dir`` (``replay-report.html``,
    ``embedded-report.html``), with the slice's answers; returns their paths."""
    responses = demo.examples / "alpacaeval"
    paths = []
    for store, name in ((demo.replay_store, "replay-report.html"), (demo.embedded_store, "embedded-report.html")):
        if store is not None:
            report = demo.out_dir / name
            command = f"judgewise report {store} --responses {responses} -o {report}"
            paths.append(write_report(store, report, ReportOptions(command=command), responses=responses))
    return paths


def closing_lines(demo: DemoRun, reports: list[Path], *, judge: bool) -> list[str]:
    """What the demo prints last: its reports, how to explore a run and (after part 2) to use a real judge."""
    lines = [f"report: {path}" for path in reports]
    stores = [s for s in (demo.replay_store, demo.embedded_store) if s is not None]
    if stores:
        lines.append(f"explore a run in your browser: judgewise serve {stores[-1]} --responses "
                     f"{demo.examples / 'alpacaeval'}")
    return lines + ([REAL_JUDGE_HINT] if judge else [])
