"""``judgewise demo`` (rank the shipped AlpacaEval slice, then judge a tiny real job offline) and ``version``.

Runs on embedded defaults only: the slice in ``examples/alpacaeval`` and the embedded Gemma 3 270M judge;
nothing from ``../shared`` and no network. The second part's verdicts come from a 270M-parameter model and
are not meaningful (it is strongly position-biased): the point is to show the whole pipeline working.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import typer
from rich.console import Console

from judgewise.cli.richtext import plain, say
from judgewise.errors import ConfigError

out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 120)  # tables unsqueezed when piped
DEMO_MODELS = ("claude-2", "gpt-3.5-turbo-1106", "alpaca-7b", "falcon-7b-instruct")
REAL_JUDGE_HINT = """\
To judge with a real model, write run.yaml and run `judgewise judge --config run.yaml`:
  responses: examples/alpacaeval
  models: [claude-2, gpt-3.5-turbo-1106, alpaca-7b, falcon-7b-instruct]
  max_prompts: 50
  judge: {model: gpt-4o-mini, base_url: https://api.openai.com/v1, api_key_env: OPENAI_API_KEY,
          template: arena_hard_5way}
  design: {name: all_pairs}
(any OpenAI-compatible server works: vLLM, SGLang, llama.cpp's server, Ollama, a LiteLLM proxy — set base_url)"""


@dataclass
class DemoRun:
    """Everything the demo produced; the report hook reads it."""

    slice_path: Path
    out_dir: Path
    leaderboard: object = None        # Ranking of the slice (win rate vs the anchor, bootstrap CIs)
    slice_table: object = None        # the judgments Table read from the slice
    judged: object = None             # Ranking of the tiny job (BT), or None when skipped
    run: object = None                # judges.runner.RunResult of the tiny job
    store_path: Path | None = None
    timings: dict = field(default_factory=dict)


def find_slice(path: Path | None) -> Path:
    """The AlpacaEval example slice: ``path`` if given, else ``examples/alpacaeval`` of this checkout."""
    candidates = [path] if path else [Path.cwd() / "examples" / "alpacaeval",
                                      Path(__file__).resolve().parents[3] / "examples" / "alpacaeval"]
    for candidate in candidates:
        if candidate is not None and (candidate / "results").is_dir():
            return candidate
    raise ConfigError(f"AlpacaEval example slice not found (looked in {', '.join(map(str, candidates))}); "
                      "run the demo from a judgewise checkout or pass --slice PATH")


def rank_slice(slice_path: Path, *, bootstrap: int, seed: int):
    """Win rate of each slice model against the AlpacaEval anchor, with prompt-bootstrap intervals."""
    from judgewise.io import read_judgments
    from judgewise.ratings import rank

    table = read_judgments(slice_path)
    ranking = rank(table.frame, "winrate", anchor=table.extras.get("anchor"), bootstrap=bootstrap, seed=seed)
    return ranking, table


def pick_job(table, *, models: tuple[str, ...], n_prompts: int, max_chars: int, seed: int):
    """All-pairs comparisons of ``models`` on ``n_prompts`` instructions drawn (seeded) among those whose
    instruction + longest response fit in ``max_chars`` characters (keeps the tiny judge quick)."""
    from judgewise.designs import design_triples
    from judgewise.judges.pairs import build_comparisons, prompt_texts

    responses = table.extras["responses"].frame
    present = [m for m in models if m in set(responses["model"])]
    if len(present) < 2:
        raise ConfigError(f"the slice has responses from {len(present)} of the demo models {list(models)}")
    mine = responses[responses["model"].isin(present)]
    size = mine["text"].str.len() + mine["instruction"].fillna("").str.len()
    per_prompt = mine.assign(size=size).groupby("prompt_id").agg(size=("size", "max"), n=("model", "nunique"))
    eligible = sorted(per_prompt.index[(per_prompt["n"] == len(present)) & (per_prompt["size"] <= max_chars)])
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(eligible, size=min(n_prompts, len(eligible)), replace=False))
    built = build_comparisons(mine, design_triples("all_pairs", present, chosen), prompt_texts(mine))
    return built.comparisons


def judge_job(comparisons, store_path: Path, *, threads: int, show_progress: bool):
    """Judge the comparisons in both orders with the embedded judge (its default template) into the SQLite store."""
    from judgewise.cli.judge_cmd import _with_progress
    from judgewise.judges.local_backend import embedded_judge
    from judgewise.judges.runner import run_judging

    judge = embedded_judge(n_threads=threads)
    store_path.parent.mkdir(parents=True, exist_ok=True)
    return _with_progress(show_progress, 2 * len(comparisons), lambda update: run_judging(
        comparisons, judge, str(store_path), orders="both", concurrency=1, progress=update))


def rank_job(run, *, bootstrap: int, seed: int):
    """Bradley–Terry ranking of the judged games (failed games are counted, not ranked)."""
    from judgewise.ratings import rank

    ok = run.judgments[run.judgments["status"].eq("ok") & run.judgments["outcome"].notna()]
    if ok.empty:
        return None
    return rank(ok, "bt", bootstrap=bootstrap, seed=seed)


def first_shown_win_rate(judgments) -> float:
    """Share of judged games won outright by the response shown first (0.5 means no position bias)."""
    ok = judgments[judgments["status"].eq("ok") & judgments["outcome"].notna()]
    if ok.empty:
        return float("nan")
    first_outcome = np.where(ok["first"] == ok["model_a"], ok["outcome"], 1.0 - ok["outcome"])
    return float((first_outcome == 1.0).mean())


def write_demo_report(demo: DemoRun) -> list[Path]:
    """Write the HTML reports of the demo into ``demo.out_dir``: the AlpacaEval slice (``report.html``) and,
    when the tiny job was judged, its store (``judged-report.html``); returns their paths."""
    from judgewise.report import write_report

    demo.out_dir.mkdir(parents=True, exist_ok=True)
    slice_report = demo.out_dir / "report.html"
    paths = [write_report(demo.slice_path, slice_report,
                          command=f"judgewise report {demo.slice_path} -o {slice_report}")]
    if demo.store_path is not None:
        judged_report = demo.out_dir / "judged-report.html"
        paths.append(write_report(demo.store_path, judged_report, responses=demo.slice_path,
                                  command=f"judgewise report {demo.store_path} --responses {demo.slice_path} "
                                          f"-o {judged_report}"))
    return paths


def _print_leaderboard(title: str, ranking, report) -> None:
    from judgewise.cli.rank_cmd import render_table

    out.rule(plain(title))  # the title carries the user's --slice path
    render_table(ranking, ranking.to_records(), report, out)


def _print_job(demo: DemoRun) -> None:
    from judgewise.cli.judge_cmd import _summary_lines
    from judgewise.io.tables import ReadReport

    summary = demo.run.summary()
    out.rule("2 · a tiny real job judged offline by the embedded judge (Gemma 3 270M)")
    for line in _summary_lines(summary, None):
        out.print(line, highlight=False, markup=False)
    calls = max(summary["calls_made"], 1)
    out.print(f"embedded judge: {summary['calls_made']} calls in {demo.timings['judge_s']:.1f}s "
              f"({calls / max(demo.timings['judge_s'], 1e-9):.2f} calls/s), parse failures: {summary['failed']}; "
              f"store: {demo.store_path}", highlight=False, markup=False)
    first_wins = first_shown_win_rate(demo.run.judgments)
    if demo.judged is not None:
        report = ReadReport(source=str(demo.store_path), format="judgewise store",
                            rows_read=len(demo.run.judgments), rows_used=summary["ok_total"])
        report.rows_skipped = summary["failed_total"]
        _print_leaderboard("Bradley–Terry ranking of the tiny job (Elo scale)", demo.judged, report)
    say(out, f"The embedded judge is a 270M-parameter model: it chose the response shown first in {first_wins:.0%} "
             "of games (position bias), so this ranking says nothing about the models. It is here to show judging, "
             "storing and ranking working offline.", label="These verdicts are not meaningful.", style="bold yellow")
    out.print(REAL_JUDGE_HINT, highlight=False, markup=False)


def run_demo(*, slice_path: Path | None, out_dir: Path, judge: bool, threads: int, bootstrap: int, seed: int,
             n_prompts: int, max_chars: int, show_progress: bool | None) -> DemoRun:
    """The demo, part by part, printing as it goes; returns what it made."""
    start = time.perf_counter()
    demo = DemoRun(slice_path=find_slice(slice_path), out_dir=out_dir)
    demo.leaderboard, demo.slice_table = rank_slice(demo.slice_path, bootstrap=bootstrap, seed=seed)
    demo.timings["rank_slice_s"] = time.perf_counter() - start
    _print_leaderboard(f"1 · AlpacaEval 2.0 slice ({demo.slice_path}): win rate vs "
                       f"{demo.slice_table.extras.get('anchor')}, judged by GPT-4-turbo",
                       demo.leaderboard, demo.slice_table.report)
    if judge:
        comparisons = pick_job(demo.slice_table, models=DEMO_MODELS, n_prompts=n_prompts, max_chars=max_chars,
                               seed=seed)
        demo.store_path = out_dir / "judgments.sqlite"
        t0 = time.perf_counter()
        demo.run = judge_job(comparisons, demo.store_path, threads=threads, show_progress=show_progress)
        demo.timings["judge_s"] = time.perf_counter() - t0
        demo.judged = rank_job(demo.run, bootstrap=bootstrap, seed=seed)
        _print_job(demo)
    for path in write_demo_report(demo):
        out.print(f"report: {path.resolve()}", highlight=False, markup=False)
    explore = demo.store_path if demo.store_path is not None else demo.slice_path
    extra = f" --responses {demo.slice_path}" if demo.store_path is not None else ""
    out.print(f"explore the run in your browser: judgewise serve {explore}{extra}", highlight=False, markup=False)
    demo.timings["total_s"] = time.perf_counter() - start
    out.print(f"demo finished in {demo.timings['total_s']:.1f}s", highlight=False, markup=False)
    return demo


def register(app: typer.Typer) -> None:
    """Add ``demo`` and ``version`` to the app."""

    @app.command()
    def version() -> None:
        """Print the judgewise version."""
        from judgewise import __version__

        typer.echo(__version__)

    @app.command()
    def demo(
        slice_path: Path = typer.Option(None, "--slice", help="AlpacaEval results dir (default: examples/alpacaeval)."),
        output: Path = typer.Option(Path("demo-output"), "--output", "-o", help="Folder for the store (and report)."),
        judge: bool = typer.Option(True, "--judge/--no-judge", help="Also judge a tiny job with the embedded judge."),
        prompts: int = typer.Option(8, help="Instructions in the tiny job (4 models, all pairs, both orders)."),
        max_chars: int = typer.Option(700, help="Only instructions whose instruction+response fit in this."),
        threads: int = typer.Option(os.cpu_count() or 1, help="CPU threads for the embedded judge."),
        bootstrap: int = typer.Option(1000, help="Bootstrap rounds for the intervals."),
        seed: int = typer.Option(0, help="Seed for the prompt draw and the bootstrap."),
        progress: bool = typer.Option(None, "--progress/--no-progress", help="Progress bar (default: on a TTY)."),
    ) -> None:
        """Rank the shipped AlpacaEval slice, then judge, store and rank a tiny job with the embedded judge."""
        run_demo(slice_path=slice_path, out_dir=output, judge=judge, threads=threads, bootstrap=bootstrap,
                 seed=seed, n_prompts=prompts, max_chars=max_chars, show_progress=progress)
