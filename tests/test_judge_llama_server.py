"""Issue 3 acceptance 3: a real model over HTTP — llama.cpp's server (llama_cpp.server) with the embedded Gemma
model on 127.0.0.1 judges a 3-model × 5-prompt all-pairs job in both orders, end to end through the CLI."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

from tests.conftest import REPO, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.local]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(url: str, proc: subprocess.Popen, log, timeout_s: float = 180) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError("llama_cpp.server did not become ready")


@pytest.fixture(scope="module")
def gemma_server(tmp_path_factory):
    pytest.importorskip("llama_cpp", reason="judgewise[local] extra (llama-cpp-python) not installed")
    pytest.importorskip("uvicorn", reason="llama_cpp.server needs llama-cpp-python[server] (uvicorn, fastapi)")
    pytest.importorskip("fastapi", reason="llama_cpp.server needs llama-cpp-python[server] (uvicorn, fastapi)")
    from judgewise.judges.local_backend import ensure_model

    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"  # a file, not a pipe: its chatter would fill a pipe
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(ensure_model()),
                             "--host", "127.0.0.1", "--port", str(port), "--chat_format", "gemma",
                             "--n_ctx", "4096", "--model_alias", "gemma-3-270m"],
                            stdout=subprocess.DEVNULL, stderr=log.open("w"))
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(url, proc, log)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_llama_cpp_server_judges_three_models_on_five_prompts_in_both_orders(gemma_server, tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "responses": str(REPO / "examples" / "alpacaeval" / "results"),
        "models": ["alpaca-7b", "claude-2", "gpt-3.5-turbo-1106"], "max_prompts": 5,
        "judge": {"backend": "openai", "base_url": gemma_server, "model": "gemma-3-270m",
                  "template": "llmbar_binary", "use_grammar": True, "params": {"temperature": 0}},
        "design": "all_pairs", "orders": "both", "store": "store.sqlite",
        "limits": {"concurrency": 2, "timeout_s": 300}}))
    first = run_cli("judge", "-c", config, "--json", "-o", "judgments.jsonl", cwd=tmp_path, timeout=1800)
    assert first.returncode == 0, first.stderr[-2000:]
    summary = json.loads(first.stdout)
    assert summary["comparisons"] == 15 and summary["games"] == 30
    assert summary["judged"] + summary["failed"] == 30 and summary["judged"] > 0
    rows = [json.loads(line) for line in (tmp_path / "judgments.jsonl").read_text().splitlines()]
    assert len(rows) == 30 and sum(r["swapped"] for r in rows) == 15
    assert all(r["status"] == "ok" and r["outcome"] in (0.0, 1.0) or r["error"] for r in rows)
    again = json.loads(run_cli("judge", "-c", config, "--json", cwd=tmp_path, timeout=600).stdout)
    assert again["calls_made"] == 0 and again["cached"] == 30
