"""Acceptance 3: the embedded Gemma model served by ``llama_cpp.server`` on 127.0.0.1 judges a 3-model ×
5-prompt all-pairs job in both orders through ``judgewise judge`` (OpenAI backend → runner → SQLite store).

Checks format, determinism and plumbing — never whether the tiny model's verdicts are right.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time

import httpx
import pandas as pd
import pytest
import yaml

from .conftest import cli_json

pytestmark = [pytest.mark.slow, pytest.mark.local]

PROMPTS = {
    "p1": "What is the capital of Australia?",
    "p2": "Give a synonym of 'happy'.",
    "p3": "How many legs does a spider have?",
    "p4": "Name a primary colour.",
    "p5": "What is 12 times 3?",
}
ANSWERS = {
    "model-short": ["Canberra.", "Glad.", "Eight.", "Red.", "36."],
    "model-wordy": ["The capital of Australia is Canberra, not Sydney.", "A good synonym is 'joyful'.",
                    "Spiders have eight legs.", "Blue is a primary colour.", "12 × 3 = 36."],
    "model-wrong": ["Sydney.", "Sad.", "Six.", "Green, probably.", "32."],
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server():
    pytest.importorskip("llama_cpp", reason="embedded judge extra not installed: pip install 'judgewise[local]'")
    pytest.importorskip("uvicorn", reason="llama_cpp.server needs llama-cpp-python[server] (judgewise[local])")
    from judgewise.judges.local_backend import ensure_model

    port = _free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(ensure_model()), "--host", "127.0.0.1",
           "--port", str(port), "--chat_format", "gemma", "--n_ctx", "4096", "--seed", "0", "--verbose", "False"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited {proc.returncode}: {proc.stderr.read()[-2000:]}")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not answer within 180 s")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _write_job(folder, base_url: str, store: str) -> str:
    rows = [{"prompt_id": pid, "model": m, "text": ANSWERS[m][i], "instruction": text}
            for i, (pid, text) in enumerate(PROMPTS.items()) for m in ANSWERS]
    pd.DataFrame(rows).to_json(folder / "responses.jsonl", orient="records", lines=True)
    config = {"responses": "responses.jsonl", "design": {"name": "all_pairs"}, "orders": "both", "seed": 0,
              "store": store, "limits": {"concurrency": 2, "timeout_s": 300},
              "judge": {"backend": "openai", "model": "gemma-3-270m", "base_url": base_url,
                        "template": "llmbar_binary", "use_grammar": True, "params": {"temperature": 0, "seed": 0}}}
    path = folder / f"{store}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return str(path)


def test_llama_cpp_server_judges_an_all_pairs_job_in_both_orders_deterministically(llama_server, tmp_path):
    games = 5 * 3 * 2  # prompts × pairs × orders
    first = cli_json("judge", "--config", _write_job(tmp_path, llama_server, "a.sqlite"), "--json",
                     "--output", str(tmp_path / "a.jsonl"), "--no-progress", timeout=1800)
    assert (first["games"], first["judged"], first["failed"], first["comparisons"]) == (games, games, 0, 15)
    table = pd.read_json(tmp_path / "a.jsonl", lines=True)
    assert len(table) == games and set(table["status"]) == {"ok"}
    assert all(re.fullmatch(r"Output \([ab]\)", raw) for raw in table["raw"])  # grammar held over HTTP
    assert set(table["outcome"]) <= {0.0, 1.0}
    assert table.groupby(["prompt_id", "model_a", "model_b"])["first"].nunique().eq(2).all()

    rerun = cli_json("judge", "--config", _write_job(tmp_path, llama_server, "a.sqlite"), "--json",
                     "--no-progress", timeout=600)
    assert rerun["calls_made"] == 0 and rerun["cached"] == games  # a rerun pays for nothing

    fresh = cli_json("judge", "--config", _write_job(tmp_path, llama_server, "b.sqlite"), "--json",
                     "--output", str(tmp_path / "b.jsonl"), "--no-progress", timeout=1800)
    assert fresh["judged"] == games
    again = pd.read_json(tmp_path / "b.jsonl", lines=True)
    key = ["prompt_id", "model_a", "model_b", "first"]
    merged = table.merge(again, on=key, suffixes=("", "_again"))
    assert len(merged) == games
    assert (merged["raw"] == merged["raw_again"]).all()  # same verdicts from a fresh store
    json.dumps(first)  # the summary is plain JSON
