"""The demo's steps as library calls: rank the shipped AlpacaEval slice, write the run config of a tiny evaluation
judged offline by the embedded judge (``judgewise evaluate`` runs it).

Runs on embedded defaults only: the slice in ``examples/alpacaeval`` and the embedded Gemma 3 270M judge; nothing
from ``../shared`` and no network. The judged verdicts come from a 270M-parameter model and are not meaningful.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from judgewise.errors import ConfigError

DEMO_MODELS = ("claude-2", "gpt-3.5-turbo-1106", "alpaca-7b", "falcon-7b-instruct")
DEMO_TARGET = {"kendall_tau": 0.9}  # the tiny job's target: all pairs stop there or when every pair is judged
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
    """Everything the demo produced; the CLI prints it and the report hook reads it."""

    slice_path: Path
    out_dir: Path
    leaderboard: object = None        # Ranking of the slice (win rate vs the anchor, bootstrap CIs)
    slice_table: object = None        # the judgments Table read from the slice
    config_path: Path | None = None   # the tiny evaluation's run config, or None when judging was skipped
    evaluation: object = None         # its pipeline.evaluate.EvaluateResult
    store_path: Path | None = None
    timings: dict = field(default_factory=dict)


def find_slice(path: Path | None = None) -> Path:
    """The AlpacaEval example slice: ``path`` if given, else ``examples/alpacaeval`` of the working folder (as that
    relative path, so what the demo prints and writes stays short) or of this checkout.

    Raises
    ------
    ConfigError
        When no candidate holds a ``results/`` folder.
    """
    candidates = [path] if path else [Path("examples") / "alpacaeval",
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


def pick_prompts(table, *, models: tuple[str, ...] = DEMO_MODELS, n_prompts: int = 8, max_chars: int = 700,
                 seed: int = 0) -> list[str]:
    """``n_prompts`` instruction ids drawn (seeded) among those every one of ``models`` answered and whose
    instruction + longest response fit in ``max_chars`` characters (keeps the tiny judge quick); sorted.

    Parameters
    ----------
    table : Table
        The slice's judgments table (its ``extras["responses"]`` holds the texts).
    """
    responses = table.extras["responses"].frame
    present = [m for m in models if m in set(responses["model"])]
    if len(present) < 2:
        raise ConfigError(f"the slice has responses from {len(present)} of the demo models {list(models)}")
    mine = responses[responses["model"].isin(present)]
    size = mine["text"].str.len() + mine["instruction"].fillna("").str.len()
    per_prompt = mine.assign(size=size).groupby("prompt_id").agg(size=("size", "max"), n=("model", "nunique"))
    eligible = sorted(per_prompt.index[(per_prompt["n"] == len(present)) & (per_prompt["size"] <= max_chars)])
    if not eligible:
        raise ConfigError(f"no instruction of the slice has responses of {present} within {max_chars} characters; "
                          "raise --max-chars")
    rng = np.random.default_rng(seed)
    return sorted(str(p) for p in rng.choice(eligible, size=min(n_prompts, len(eligible)), replace=False))


def demo_config(slice_path: Path, out_dir: Path, prompt_ids: list[str], *, models: tuple[str, ...] = DEMO_MODELS,
                threads: int | None = None, seed: int = 0) -> dict:
    """The tiny evaluation's run config: the slice's ``models`` on ``prompt_ids``, all pairs in both orders,
    judged by the embedded judge (``backend: local``) until :data:`DEMO_TARGET`, stored in
    ``out_dir/judgments.sqlite``. Paths are relative to ``out_dir``, where the config is written."""
    judge = {"backend": "local", **({"n_threads": int(threads)} if threads else {})}
    return {"responses": _as_seen_from(Path(slice_path), Path(out_dir)),
            "models": list(models), "prompt_ids": list(prompt_ids), "judge": judge,
            "design": {"name": "all_pairs"}, "target": dict(DEMO_TARGET), "orders": "both", "seed": int(seed),
            "store": "judgments.sqlite"}


def _as_seen_from(path: Path, folder: Path) -> str:
    """``path`` as a config in ``folder`` names it: relative when both lie in the working folder (``make demo``:
    ``../examples/alpacaeval`` from ``demo-output/``), so the folder can be moved with the checkout; else absolute."""
    path, folder, here = path.resolve(), folder.resolve(), Path.cwd().resolve()
    if path.is_relative_to(here) and folder.is_relative_to(here):
        return Path(os.path.relpath(path, folder)).as_posix()
    return path.as_posix()


def write_demo_config(out_dir: Path, cfg: dict) -> Path:
    """Write ``cfg`` (:func:`demo_config`) as ``out_dir/run.yaml``, validated; returns its path."""
    from judgewise.pipeline.plan_config import write_run_config

    path = Path(out_dir) / "run.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = ("# written by `judgewise demo`: a tiny evaluation judged offline by the embedded judge (Gemma 3 270M;\n"
              "# its verdicts are not meaningful). Rerun (every verdict is in the store, so 0 calls):\n"
              f"#   judgewise evaluate --config {path}\n")
    return write_run_config(path, cfg, header=header)
