"""Issue 33 part 3: batch judging through Anthropic's Message Batches API (a fake server written from its
reference, tests/support/anthropic_server.py) under the OpenAI batches' rules — the ledger, never paying twice
(counted at the server, batch requests and live calls alike), expired requests sent again, a SIGKILL after a poll
and one after the create resumed — every game stored once."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.support import run_cli
from tests.support.anthropic_server import AnthropicServer
from tests.support.judging import became_true, kill_judge_when, write_config

KEY = "sk-ant-batch-0123456789abcdef"
MODELS = ["m1", "m2", "m3"]
N_PROMPTS = 6
N_GAMES = 3 * N_PROMPTS * 2
FAST = {"batch": True, "batch_poll_s": 0.05}


def _config(tmp_path, srv, keyed: bool = True, **judge):
    """A batch run's config; ``keyed``: the key from ANT_KEY (else none: the killed runs' process gets no
    environment of ours, and their server asks for no key)."""
    key = {"api_key_env": "ANT_KEY"} if keyed else {}
    return write_config(tmp_path, srv.url, n_prompts=N_PROMPTS, models=MODELS,
                        judge={"backend": "anthropic", "model": "claude-3-5-haiku-latest", **key, **FAST, **judge})


def _judge(tmp_path, cfg):
    res = run_cli("judge", "-c", cfg, "--no-progress", "--json", cwd=tmp_path, env={"ANT_KEY": KEY}, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _check_stored_once(tmp_path, billed) -> list[tuple]:
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        games = db.execute("SELECT key, status, n_calls, cost FROM games").fetchall()
    assert len(games) == N_GAMES == len({k for k, *_ in games}) and {s for _, s, _, _ in games} == {"ok"}
    assert set(billed.values()) == {1} and len(billed) == sum(c for _, _, c, _ in games)  # each call paid once
    return games


def _ledger(tmp_path) -> list[tuple]:
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        return db.execute("SELECT state, batch_id FROM batches ORDER BY created_at").fetchall()


def test_a_message_batch_answers_every_game_once_at_half_the_price(tmp_path):
    with AnthropicServer(api_key=KEY) as srv:
        summary = _judge(tmp_path, _config(tmp_path, srv))
        billed, live, submitted = srv.billed, srv.live, srv.submitted()
    games = _check_stored_once(tmp_path, billed)
    assert live == 0 and set(submitted.values()) == {1} and len(submitted) == N_GAMES
    batch = summary["batch"]
    assert (batch["batches"], batch["lines"], batch["answered"], batch["failed"]) == (1, N_GAMES, N_GAMES, 0)
    assert summary["calls_made"] == 0 and _ledger(tmp_path)[0][0] == "ended"
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        rows = db.execute("SELECT tokens_in, tokens_out, cost FROM games").fetchall()
    # claude-3-5-haiku-latest: $0.80 input, $4 output per million tokens, half through the batch API (no cache
    # here: the fake server caches only a system prompt of 1,024 tokens or more)
    assert all(cost == pytest.approx(0.5 * (tin * 0.80 + tout * 4.0) / 1e6, rel=1e-9) for tin, tout, cost in rows)
    assert len(games) == len(rows)


def test_expired_and_errored_requests_are_sent_live_once(tmp_path):
    with AnthropicServer(api_key=KEY, expire_after=N_GAMES - 8, errored_every=5) as srv:
        summary = _judge(tmp_path, _config(tmp_path, srv))
        billed, live = srv.billed, srv.live
    _check_stored_once(tmp_path, billed)
    batch = summary["batch"]
    errored = (N_GAMES - 8) // 5
    assert batch["expired"] == 8 and batch["failed"] == errored and batch["answered"] == N_GAMES - 8 - errored
    assert live == summary["calls_made"] == 8 + errored


def test_expired_requests_go_into_a_new_batch_with_batch_retry(tmp_path):
    with AnthropicServer(api_key=KEY, expire_after=N_GAMES // 2) as srv:
        summary = _judge(tmp_path, _config(tmp_path, srv, batch_retry="batch", batch_max_rounds=2))
        billed, live, submitted = srv.billed, srv.live, srv.submitted()
    _check_stored_once(tmp_path, billed)
    # round 1 runs half and expires the rest; round 2 (a new batch of the rest) runs half of those, expiring none
    # past N/2: all of its N/2 requests are within expire_after
    assert summary["batch"]["batches"] == 2 and max(submitted.values()) == 2 and live == 0
    assert summary["batch"]["expired"] == N_GAMES - N_GAMES // 2


def test_sigkill_after_a_poll_resumes_the_open_batch_instead_of_submitting_again(tmp_path):
    with AnthropicServer(hold_batches=True) as srv:
        cfg = _config(tmp_path, srv, keyed=False)
        kill_judge_when(tmp_path, cfg, lambda: became_true(lambda: srv.batches and
                                                           next(iter(srv.batches.values()))["polls"] >= 2))
        assert [s for s, _ in _ledger(tmp_path)] == ["submitted"]
        srv.release()
        summary = _judge(tmp_path, cfg)
        billed, submitted, live = srv.billed, srv.submitted(), srv.live
    _check_stored_once(tmp_path, billed)
    assert len(srv.batches) == 1 and set(submitted.values()) == {1} and live == 0
    assert summary["batch"]["resumed"] == 1 and summary["batch"]["batches"] == 0 and summary["calls_made"] == 0


def test_sigkill_after_the_create_before_its_id_is_stored_finds_the_batch_in_the_list(tmp_path):
    with AnthropicServer(hold_create="after") as srv:
        cfg = _config(tmp_path, srv, keyed=False)
        kill_judge_when(tmp_path, cfg, lambda: srv.create_waiting.wait(60))
        assert _ledger(tmp_path) == [("intent", None)] and len(srv.batches) == 1  # created, its id not stored
        srv.release()
        summary = _judge(tmp_path, cfg)
        billed, submitted, live = srv.billed, srv.submitted(), srv.live
    _check_stored_once(tmp_path, billed)
    assert set(submitted.values()) == {1} and len(srv.batches) == 1 and live == 0
    assert summary["batch"]["resumed"] == 1 and summary["batch"]["batches"] == 0
    assert _ledger(tmp_path) == [("ended", "msgbatch_0001")]


def test_batch_is_refused_for_gemini_with_the_backends_that_have_one(tmp_path):
    from tests.support.judging import write_responses

    write_responses(tmp_path, 2, MODELS)
    (tmp_path / "g.yaml").write_text(json.dumps({
        "responses": "responses.jsonl",
        "judge": {"backend": "gemini", "model": "gemini-2.5-flash", "base_url": "http://127.0.0.1:9", "batch": True}}))
    res = run_cli("judge", "-c", "g.yaml", "--no-progress", cwd=tmp_path)
    assert res.returncode != 0 and "judge.batch" in res.stderr and "gemini" in res.stderr
