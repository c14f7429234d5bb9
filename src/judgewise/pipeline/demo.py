"""The demo's steps as library calls: rank the shipped AlpacaEval slice, judge a tiny job offline, rank it.

Runs on embedded defaults only: the slice in ``examples/alpacaeval`` and the embedded Gemma 3 270M judge; nothing
from ``../shared`` and no network. The judged verdicts come from a 270M-parameter model and are not meaningful.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError

DEMO_MODELS = ("claude-2", "gpt-3.5-turbo-1106", "alpaca-7b", "falcon-7b-instruct")
#: what the demo shows last: how to judge the same slice with a real model
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
    """Everything the demo produced; the CLI prints it and the report hook reads it."""

    slice_path: Path
    out_dir: Path
    leaderboard: object = None        # Ranking of the slice (win rate vs the anchor, bootstrap CIs)
    slice_table: object = None        # the judgments Table read from the slice
    judged: object = None             # Ranking of the tiny job (BT), or None when skipped
    run: object = None                # judges.runner.RunResult of the tiny job
    store_path: Path | None = None
    timings: dict = field(default_factory=dict)


def find_slice(path: Path | None = None) -> Path:
    """The AlpacaEval example slice: ``path`` if given, else ``examples/alpacaeval`` of the working folder or of
    this checkout.

    Raises
    ------
    ConfigError
        When no candidate holds a ``results/`` folder.
    """
    candidates = [path] if path else [Path.cwd() / "examples" / "alpacaeval",
                                      Path(__file__).resolve().parents[3] / "examples" / "alpacaeval"]
    for candidate in candidates:
        if candidate is not None and (candidate / "results").is_dir():
            return candidate
    raise ConfigError(f"AlpacaEval example slice not found (looked in {', '.join(map(str, candidates))}); "
                      "run the demo from a judgewise checkout or pass --slice PATH")


def rank_slice(slice_path: Path, *, bootstrap: int = 1000, seed: int = 0):
    """Win rate of each slice model against the AlpacaEval anchor, with prompt-bootstrap intervals.

    Returns
    -------
    (Ranking, Table)
    """
    from judgewise.io import read_judgments
    from judgewise.ratings import rank

    table = read_judgments(slice_path)
    ranking = rank(table.frame, "winrate", anchor=table.extras.get("anchor"), bootstrap=bootstrap, seed=seed)
    return ranking, table


def pick_job(table, *, models: tuple[str, ...] = DEMO_MODELS, n_prompts: int = 8, max_chars: int = 700,
             seed: int = 0) -> list:
    """All-pairs comparisons of ``models`` on ``n_prompts`` instructions drawn (seeded) among those whose
    instruction + longest response fit in ``max_chars`` characters (keeps the tiny judge quick).

    Parameters
    ----------
    table : Table
        The slice's judgments table (its ``extras["responses"]`` holds the texts).

    Returns
    -------
    list of Comparison
    """
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


def judge_job(comparisons, store_path: Path, *, threads: int = 1, progress=None):
    """Judge the comparisons in both orders with the embedded judge (its default template) into the store.

    ``progress`` is :func:`judgewise.judges.runner.run_judging`'s callback. Returns its ``RunResult``.
    """
    from judgewise.judges.local_backend import embedded_judge
    from judgewise.judges.runner import run_judging

    judge = embedded_judge(n_threads=threads)
    store_path.parent.mkdir(parents=True, exist_ok=True)
    return run_judging(comparisons, judge, str(store_path), orders="both", concurrency=1, progress=progress)


def _judged(judgments: pd.DataFrame) -> pd.DataFrame:
    """The games of a run with a verdict: :func:`judgewise.io.schema.usable_mask` (failed games left out)."""
    from judgewise.io.schema import usable_mask

    return judgments[usable_mask(judgments)]


def rank_job(run, *, bootstrap: int = 1000, seed: int = 0):
    """Bradley–Terry ranking of the judged games (failed games are counted, not ranked); None when none."""
    from judgewise.ratings import rank

    ok = _judged(run.judgments)
    return None if ok.empty else rank(ok, "bt", bootstrap=bootstrap, seed=seed)


def first_shown_win_rate(judgments: pd.DataFrame) -> float:
    """Share of judged games won outright by the response shown first (0.5 means no position bias); NaN when none.

    The outcome in the first-shown view is :func:`judgewise.analysis.bias.first_shown_outcome`.
    """
    from judgewise.analysis.bias import first_shown_outcome

    ok = _judged(judgments)
    if ok.empty:
        return float("nan")
    return float((first_shown_outcome(ok) == 1.0).mean())
