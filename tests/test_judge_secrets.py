"""Issue 3 acceptance 5: with an API key set, the key appears nowhere in the store, logs or outputs — even when
a leaky server echoes the Authorization header back in its error messages."""

from __future__ import annotations

import secrets

from tests.conftest import run_cli
from tests.fault_server import FaultServer, request_key
from tests.judge_support import write_config


def _always_fail_some(messages, seen):
    """500 on every attempt for a fixed share of requests (those games end failed, error text stored)."""
    return "500" if int(request_key(messages)[:2], 16) < 40 else None


def _everything_written(folder, *texts) -> bytes:
    files = [p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()]
    return b"\n".join(files) + "\n".join(texts).encode()


def test_api_key_never_reaches_store_logs_or_outputs(tmp_path):
    key = "sk-judgewise-test-" + secrets.token_hex(24)
    env = {"JW_SECRET_KEY": key}
    with FaultServer(latency_s=0.001, api_key=key, reflect_auth=True, fault_fn=_always_fail_some) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=6, models=["m1", "m2", "m3"],
                              judge={"api_key_env": "JW_SECRET_KEY"},
                              limits={"max_attempts": 2, "base_delay_s": 0.001})
        runs = [run_cli("--verbose", "judge", "-c", config, "--no-progress", "-o", "out.jsonl", cwd=tmp_path, env=env),
                run_cli("store", "stats", "store.sqlite", cwd=tmp_path, env=env)]
        wrong = "sk-wrong-" + secrets.token_hex(24)  # a rejected key: the 401 message echoes it back
        refused = run_cli("--verbose", "judge", "-c", config, "--store", "other.sqlite", cwd=tmp_path,
                          env={"JW_SECRET_KEY": wrong})
        assert srv.auth_seen[f"Bearer {key}"] > 0 and srv.auth_seen[f"Bearer {wrong}"] > 0  # keys were really sent

    assert all(r.returncode == 0 for r in runs), [r.stderr[-500:] for r in runs]
    assert refused.returncode == 4 and "HTTP 401" in refused.stderr
    logs = [t for r in [*runs, refused] for t in (r.stdout, r.stderr)]
    everything = _everything_written(tmp_path, *logs)
    assert "failed x" in runs[1].stdout  # failure reasons (with the scrubbed echo) are part of the stats output
    assert b"[redacted]" in everything  # the echoed key was there to leak, and was scrubbed
    assert key.encode() not in everything and wrong.encode() not in everything
    assert key[-12:].encode() not in everything  # not even a fragment
