"""Issue 3 acceptance 3: a real model over HTTP — llama.cpp's server (llama_cpp.server) with the embedded Gemma
model on 127.0.0.1 judges a 3-model × 5-prompt all-pairs job in both orders, end to end through
``judgewise judge`` (config → OpenAI backend → scheduler → SQLite store → JSONL output).

Checks format, plumbing, caching and determinism — never whether the tiny model's verdicts are right. The
answers are short and hand-written so that the whole file stays near two minutes on a busy 2-core machine
(the shipped AlpacaEval slice's long answers took ~3.5 min for the same job).
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request

import pandas as pd
import pytest
import yaml

from tests.support import cli_json

pytestmark = [pytest.mark.slow, pytest.mark.local]

PROMPTS = {
    "p1": "What is the capital of Australia?",
    "p2": "Give a synonym of 'happy'.",
    "p3": "How many legs does a spider have?",
    "p4": "Name a primary colour.",
    "p5": "What is 12 times 3?",
    "p6": "What is the boiling point of water at sea level in Celsius?",  # left out by max_prompts: 5
}
ANSWERS = {
    "model-short": ["Canberra.", "Glad.", "Eight.", "Red.", "36.", "100."],
    "model-wordy": ["The capital of Australia is Canberra, not Sydney.", "A good synonym is 'joyful'.",
                    "Spiders have eight legs.", "Blue is a primary colour.", "12 × 3 = 36.", "It boils at 100 °C."],
    "model-wrong": ["Sydney.", "Sad.", "Six.", "Green, probably.", "32.", "90."],
    "model-unused": ["?"] * 6,  # left out by the config's models list
}
MODELS = ["model-short", "model-wordy", "model-wrong"]
GAMES = 5 * 3 * 2  # prompts × pairs × orders


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(url: str, proc: subprocess.Popen, log, timeout_s: float = 180) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"llama_cpp.server exited {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"llama_cpp.server did not answer within {timeout_s} s")


@pytest.fixture(scope="module")
def gemma_server(tmp_path_factory):
    pytest.importorskip("llama_cpp", reason="judgewise[local] extra (llama-cpp-python) not installed")
    pytest.importorskip("uvicorn", reason="llama_cpp.server needs llama-cpp-python[server] (uvicorn, fastapi)")
    pytest.importorskip("fastapi", reason="llama_cpp.server needs llama-cpp-python[server] (uvicorn, fastapi)")
    from judgewise.judges.local_backend import ensure_model

    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"  # a file, not a pipe: its chatter would fill a pipe
    with log.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(ensure_model()),
                                 "--host", "127.0.0.1", "--port", str(port), "--chat_format", "gemma",
                                 "--n_ctx", "2048", "--seed", "0", "--model_alias", "gemma-3-270m"],
                                stdout=subprocess.DEVNULL, stderr=stderr)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def _config(folder, url: str, store: str, max_prompts: int) -> str:
    rows = [{"prompt_id": pid, "model": m, "text": ANSWERS[m][i], "instruction": text}
            for i, (pid, text) in enumerate(PROMPTS.items()) for m in ANSWERS]
    pd.DataFrame(rows).to_json(folder / "responses.jsonl", orient="records", lines=True)
    path = folder / f"{store}.yaml"
    path.write_text(yaml.safe_dump({
        "responses": "responses.jsonl", "models": MODELS,
        "max_prompts": max_prompts, "design": "all_pairs", "orders": "both", "seed": 0, "store": store,
        "judge": {"backend": "openai", "base_url": url, "model": "gemma-3-270m", "template": "llmbar_binary",
                  "use_grammar": True, "params": {"temperature": 0, "seed": 0}},
        "limits": {"concurrency": 2, "timeout_s": 300}}), encoding="utf-8")
    return str(path)


def _judge(config: str, folder, output: str | None = None) -> dict:
    extra = ["--output", str(folder / output)] if output else []
    return cli_json("judge", "--config", config, "--json", "--no-progress", *extra, cwd=folder, timeout=1800)


def test_llama_cpp_server_judges_three_models_on_five_prompts_in_both_orders(gemma_server, tmp_path):
    config = _config(tmp_path, gemma_server, "a.sqlite", max_prompts=5)
    first = _judge(config, tmp_path, "a.jsonl")
    assert (first["comparisons"], first["games"]) == (15, GAMES)
    assert (first["judged"], first["failed"]) == (GAMES, 0)
    table = pd.read_json(tmp_path / "a.jsonl", lines=True)
    assert len(table) == GAMES and set(table["status"]) == {"ok"} and table["swapped"].sum() == GAMES // 2
    assert set(table["model_a"]) | set(table["model_b"]) == set(MODELS)
    assert set(table["prompt_id"]) == set(list(PROMPTS)[:5])
    assert table.groupby(["prompt_id", "model_a", "model_b"])["first"].nunique().eq(2).all()  # both orders
    assert all(re.fullmatch(r"Output \([ab]\)", raw) for raw in table["raw"])  # the grammar held over HTTP
    assert set(table["outcome"]) <= {0.0, 1.0}

    rerun = _judge(config, tmp_path)
    assert rerun["calls_made"] == 0 and rerun["cached"] == GAMES  # a rerun pays for nothing

    fresh = _judge(_config(tmp_path, gemma_server, "b.sqlite", max_prompts=1), tmp_path, "b.jsonl")
    assert (fresh["judged"], fresh["cached"]) == (6, 0)  # a new store: every game of one prompt called again
    again = pd.read_json(tmp_path / "b.jsonl", lines=True)
    merged = again.merge(table, on=["prompt_id", "model_a", "model_b", "first"], suffixes=("", "_first_run"))
    assert len(merged) == 6 and (merged["raw"] == merged["raw_first_run"]).all()  # the same verdicts
