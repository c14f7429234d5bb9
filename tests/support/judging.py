"""Helpers for the judging-engine tests: synthetic responses, run configs, and the real engine chain."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import yaml

from judgewise.judges.base import Comparison
from judgewise.judges.llm_judge import LLMJudge
from judgewise.judges.openai_backend import OpenAIBackend

from tests.support import run_cli

MODEL = "judge-model"


JUDGE_MESSAGES = [{"role": "user", "content": "Which answer is better?"}]


def complete_once(backend: OpenAIBackend, messages=JUDGE_MESSAGES):
    """One ``backend.complete`` call on a fresh event loop, closing the backend after it."""
    async def go():
        try:
            return await backend.complete(messages, max_tokens=16)
        finally:
            await backend.aclose()
    return asyncio.run(go())


def completion_error(backend: OpenAIBackend) -> BaseException:
    """The exception one ``complete_once`` call raises (the test fails if it raises none)."""
    import pytest

    with pytest.raises(Exception) as info:
        complete_once(backend)
    return info.value


def comparisons(n: int, models: tuple[str, str] = ("alpha", "beta")) -> list[Comparison]:
    """``n`` comparisons with distinct prompts and responses (so every request is unique)."""
    a, b = models
    return [Comparison(f"p{i}", f"Question number {i}?", a, b, f"{a} answers {i}.", f"{b} answers {i} too.")
            for i in range(n)]


def llm_judge(url: str | list[str], **backend_kw) -> LLMJudge:
    """The real chain: Arena-Hard template → OpenAI-compatible backend → parser (one re-ask)."""
    return LLMJudge(OpenAIBackend(MODEL, base_urls=url, **backend_kw), "arena_hard_5way")


def write_responses(folder: Path, n_prompts: int, models: list[str]) -> Path:
    """A canonical responses JSONL with an instruction column."""
    path = folder / "responses.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for p in range(n_prompts):
            for m in models:
                fh.write(json.dumps({"prompt_id": f"p{p}", "model": m, "text": f"{m} replies to prompt {p}.",
                                     "instruction": f"Explain thing {p}."}) + "\n")
    return path


def simulated_pool(folder, n_models: int, n_prompts: int) -> dict:
    """responses for m0..m{n-1} on n prompts, and a simulated judge whose true Elo rises 100 per model."""
    models = [f"m{i}" for i in range(n_models)]
    write_responses(folder, n_prompts, models)
    return {"responses": str(folder / "responses.jsonl"), "store": str(folder / "s.sqlite"),
            "judge": {"backend": "simulated", "ratings": {m: 800 + 100 * i for i, m in enumerate(models)},
                      "p_judge": 1.0, "seed": 3}}


def write_config(folder: Path, url: str, *, n_prompts: int, models: list[str], store: str = "store.sqlite",
                 **extra) -> Path:
    """A run.yaml judging all pairs of ``models`` on ``n_prompts`` prompts through ``url``."""
    write_responses(folder, n_prompts, models)
    cfg = {"responses": "responses.jsonl", "store": store, "design": "all_pairs",
           "judge": {"backend": "openai", "model": MODEL, "base_url": url, "template": "arena_hard_5way",
                     **extra.pop("judge", {})},
           "limits": {"concurrency": 8, "timeout_s": 5, "base_delay_s": 0.01, "max_delay_s": 0.2,
                      **extra.pop("limits", {})}, **extra}
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def wait_for(predicate, timeout_s: float, what: str, poll_s: float = 0.05) -> None:
    """Poll ``predicate`` until it holds; an AssertionError naming ``what`` after ``timeout_s``."""
    if not became_true(predicate, timeout_s, poll_s):
        raise AssertionError(f"timed out waiting for {what}")


def became_true(predicate, timeout_s: float = 60.0, poll_s: float = 0.05) -> bool:
    """Poll ``predicate`` until it holds (True) or ``timeout_s`` passes (False)."""
    end = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(poll_s)
    return True


def kill_judge_when(folder, cfg, event) -> None:
    """``judgewise judge -c cfg`` in its own process, SIGKILLed once ``event()`` holds (at a fake server)."""
    from tests.support import forkrun

    started = forkrun.start(["judge", "-c", cfg, "--no-progress"], cwd=folder)
    try:
        assert event(), started.stderr
        started.proc.kill()
        started.proc.join(30)
        assert started.proc.exitcode == -signal.SIGKILL
    finally:
        started.stop()


def stored_calls(path, judge: str | None = None) -> int:
    """Calls the store at ``path`` says were paid (sum of n_calls over games; ``judge``: over that judge's)."""
    where, args = (" WHERE judge = ?", (judge,)) if judge is not None else ("", ())
    with sqlite3.connect(path, timeout=30) as db:
        return db.execute(f"SELECT COALESCE(SUM(n_calls), 0) FROM games{where}", args).fetchone()[0]


def sigkill_mid_run(server, cli_args: list, cwd, store, *, after_successes: int, timeout_s: float,
                    with_held_request: bool = False, judge: str | None = None) -> None:
    """Run the CLI in a real process; once the server has answered ``after_successes`` calls, hold new requests,
    wait until the answers already let through are written (``server.quiet``: the server's count stops moving), then
    until every answer is in ``store`` (``judge``: the answers of that judge, the server's, as a panel's member;
    and, with ``with_held_request``, until a request is being held), then SIGKILL the process: it dies with calls in
    flight. The server stays frozen; the caller thaws it."""
    proc = subprocess.Popen([sys.executable, "-m", "judgewise.cli.app", *map(str, cli_args)], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: server.total_successes() >= after_successes, timeout_s, f"{after_successes} successful calls")
        server.freeze()
        wait_for(server.quiet, 30, "the answers already on their way written")  # then the server's count is final
        wait_for(lambda: stored_calls(store, judge) == server.total_successes(), 30, "answers stored")
        if with_held_request:
            wait_for(lambda: server.held > 0, 10, "a held request")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL


def simulated_store(folder: Path, ratings: dict, *, n_prompts: int, seed: int = 1, store: str = "s.sqlite",
                    columns: dict | None = None, first_prompt: int = 0, **judge) -> Path:
    """A real judging store: ``judgewise judge`` (a subprocess) with the simulated judge on all pairs of
    ``ratings``' models over ``n_prompts`` prompts. ``columns``: name → function of the prompt number, extra
    prompt columns written into the responses file (e.g. a category); prompts are numbered from ``first_prompt``.
    Returns the store's path."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "responses.jsonl").open("w", encoding="utf-8") as fh:
        for p in range(first_prompt, first_prompt + n_prompts):
            extra = {name: fn(p) for name, fn in (columns or {}).items()}
            for m in ratings:
                fh.write(json.dumps({"prompt_id": f"p{p}", "model": m, "text": f"{m} replies to prompt {p}.",
                                     "instruction": f"Explain thing {p}.", **extra}) + "\n")
    cfg = {"responses": "responses.jsonl", "store": store, "design": "all_pairs",
           "judge": {"backend": "simulated", "ratings": ratings, "seed": seed, **judge}}
    name = f"run-{len(list(folder.glob('run-*.yaml')))}.yaml"
    (folder / name).write_text(yaml.safe_dump(cfg), encoding="utf-8")
    res = run_cli("judge", "--config", name, "--no-progress", cwd=folder)
    assert res.returncode == 0, res.stderr
    return folder / store
