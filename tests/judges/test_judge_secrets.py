"""Issue 3 acceptance 5: with an API key set, the key appears nowhere in the store, logs or outputs — even when
a leaky server echoes the Authorization header back in its error messages."""

from __future__ import annotations

import secrets

from tests.support import run_cli
from tests.support.fault_server import FaultServer, request_key
from tests.support.judging import write_config


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


def test_a_key_echoed_in_the_completion_text_is_scrubbed_from_store_export_and_stats(tmp_path):
    """Issue 10: a leaky endpoint quoting the Authorization header in its answers; the key reached the store,
    the export and the explorer. Every text entering the store is scrubbed now."""
    key = "sk-judgewise-echo-" + secrets.token_hex(24)
    env = {"JW_SECRET_KEY": key}
    with FaultServer(latency_s=0.001, api_key=key, reflect_auth_in_answer=True) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=4, models=["m1", "m2"],
                              judge={"api_key_env": "JW_SECRET_KEY"})
        runs = [run_cli("--verbose", "judge", "-c", config, "--no-progress", "-o", "out.jsonl", cwd=tmp_path, env=env),
                run_cli("store", "export", "store.sqlite", "-o", "export.jsonl", cwd=tmp_path, env=env),
                run_cli("store", "export", "store.sqlite", "-o", "export.parquet", cwd=tmp_path, env=env),
                run_cli("store", "stats", "store.sqlite", "--json", cwd=tmp_path, env=env)]
        assert srv.auth_seen[f"Bearer {key}"] > 0
    assert all(r.returncode == 0 for r in runs), [r.stderr[-500:] for r in runs]
    exported = (tmp_path / "export.jsonl").read_text()
    assert "Bearer [redacted]" in exported  # the echo was there, scrubbed, and the verdict still parsed
    assert '"status": "ok"' in exported and '"status": "failed"' not in exported
    everything = _everything_written(tmp_path, *[t for r in runs for t in (r.stdout, r.stderr)])
    assert key.encode() not in everything and key[-12:].encode() not in everything


def test_scrub_is_the_one_definition_used_by_backend_errors_and_the_store(tmp_path):
    from judgewise.judges.base import RetryableCallError
    from judgewise.redaction import register_secret, scrub
    from judgewise.judges.runner import canonical_json
    from judgewise.store.judgments import GameRecord, JudgmentStore

    key = "sk-direct-" + secrets.token_hex(16)
    register_secret(key)
    assert scrub(f"x {key} y") == "x [redacted] y" and scrub(None) is None
    assert key not in str(RetryableCallError(f"echo {key}"))
    rec = GameRecord(key="k", prompt_id="p", model_a="a", model_b="b", first="a", swapped=False, judge="j",
                     template=None, judge_identity=canonical_json({}), status="failed", raw=f"raw {key}",
                     label=key, error=f"error {key}")
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        store.hold_answer("k2", "c2", {"text": f"held {key}"})
        store.record(rec)
        row = store.frame().iloc[0]
        assert store.held_answer("c2") == {"text": "held [redacted]"}
    assert (row["raw"], row["label"], row["error"]) == ("raw [redacted]", "[redacted]", "error [redacted]")
    assert key.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())
