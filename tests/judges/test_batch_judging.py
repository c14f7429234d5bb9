"""Issue 24 items 1-2: batch judging through a fake OpenAI Files + Batches API (tests/support/batch_server.py) —
every game stored once, no call billed twice (counted at the server, batch lines and live calls alike), counts
reported; faults: failed lines, a malformed output line, an expired batch, a server restart mid-poll, a SIGKILL of
judgewise before and after the batch is created."""

from __future__ import annotations

import json
import sqlite3

from tests.support import run_cli
from tests.support.batch_server import BatchServer
from tests.support.judging import became_true, kill_judge_when, write_config

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
    assert summary["reused_answers"] == 0  # batch answers are counted as such, not as answers of a stopped run


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


def test_batch_answers_are_priced_at_the_batch_discount_and_live_ones_in_full(tmp_path):
    prices = {"input_per_mtok": 1.0, "output_per_mtok": 2.0, "batch_discount": 0.5}
    with BatchServer(tmp_path / "state.json", fail_every=4) as srv:
        summary = _judge(tmp_path, srv, prices=prices)
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        rows = db.execute("SELECT tokens_in, tokens_out, cost FROM games").fetchall()
    full = [(tin * 1.0 + tout * 2.0) / 1e6 for tin, tout, _ in rows]
    halves = sum(abs(cost - 0.5 * f) < 1e-12 for (_, _, cost), f in zip(rows, full))
    wholes = sum(abs(cost - f) < 1e-12 for (_, _, cost), f in zip(rows, full))
    assert halves == summary["batch"]["answered"] and wholes == summary["calls_made"] and halves + wholes == N_GAMES
    assert abs(summary["cost"] - sum(c for _, _, c in rows)) < 1e-6


def test_a_server_restart_mid_poll_is_waited_out_and_the_batch_read_once(tmp_path):
    import threading
    import time

    state = tmp_path / "state.json"
    first = BatchServer(state, polls=10_000)  # never ends while this server runs
    first.__enter__()
    port = first.port
    cfg = _config(tmp_path, first)
    done = {}
    thread = threading.Thread(target=lambda: done.update(res=run_cli("judge", "-c", cfg, "--no-progress", "--json",
                                                                     cwd=tmp_path, timeout=120)))
    thread.start()
    deadline = time.monotonic() + 60
    while not (first.batches and first.batches[0]["polls"] >= 3) and time.monotonic() < deadline:
        time.sleep(0.05)
    first.__exit__(None, None, None)  # the server goes away mid-poll...
    time.sleep(0.5)
    with BatchServer(state, port=port, polls=1) as second:  # ...and comes back on its saved state
        thread.join(120)
        billed, submitted, live = second.billed, second.submitted(), second.state["live"]
    res = done["res"]
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    _check_stored_once(tmp_path, billed)
    assert set(billed.values()) == {1} and set(submitted.values()) == {1} and live == 0
    assert summary["batch"]["batches"] == 1 and summary["batch"]["answered"] == N_GAMES


def _ledger(tmp_path) -> list[tuple]:
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        return db.execute("SELECT state, batch_id FROM batches ORDER BY created_at").fetchall()


def test_sigkill_before_the_batch_is_created_drops_the_intent_and_submits_once(tmp_path):
    with BatchServer(tmp_path / "state.json", hold_create="before") as srv:
        cfg = _config(tmp_path, srv)
        kill_judge_when(tmp_path, cfg, lambda: srv.create_waiting.wait(60))
        assert [s for s, _ in _ledger(tmp_path)] == ["intent"] and not srv.batches  # recorded, never created
        srv.release()
        summary = _judge(tmp_path, srv)
        billed, submitted, uploads = srv.billed, srv.submitted(), srv.uploads()
    _check_stored_once(tmp_path, billed)
    assert set(billed.values()) == {1} and set(submitted.values()) == {1}
    assert uploads == 2 and summary["batch"]["batches"] == 1  # the first upload was never made a batch
    assert [s for s, _ in _ledger(tmp_path)] == ["dropped", "ended"]


def test_sigkill_after_the_batch_is_created_but_before_its_id_is_stored_finds_it_by_metadata(tmp_path):
    with BatchServer(tmp_path / "state.json", hold_create="after") as srv:
        cfg = _config(tmp_path, srv)
        kill_judge_when(tmp_path, cfg, lambda: srv.create_waiting.wait(60))
        assert _ledger(tmp_path) == [("intent", None)] and len(srv.batches) == 1  # created, its id not stored
        srv.release()
        summary = _judge(tmp_path, srv)
        billed, submitted = srv.billed, srv.submitted()
        batch_id = srv.batches[0]["id"]
    _check_stored_once(tmp_path, billed)
    assert set(billed.values()) == {1} and set(submitted.values()) == {1} and len(submitted) == N_GAMES
    assert summary["batch"]["batches"] == 0 and summary["batch"]["resumed"] == 1
    assert summary["batch"]["answered"] == N_GAMES and summary["calls_made"] == 0
    assert _ledger(tmp_path) == [("ended", batch_id)]


def test_sigkill_between_submit_and_results_polls_the_open_batch_instead_of_resubmitting(tmp_path):
    with BatchServer(tmp_path / "state.json", hold_batches=True) as srv:
        cfg = _config(tmp_path, srv)
        kill_judge_when(tmp_path, cfg, lambda: became_true(lambda: srv.batches and srv.batches[0]["polls"] >= 2))
        assert [s for s, _ in _ledger(tmp_path)] == ["submitted"]
        srv.release()
        summary = _judge(tmp_path, srv)
        billed, submitted = srv.billed, srv.submitted()
    _check_stored_once(tmp_path, billed)
    assert set(billed.values()) == {1} and set(submitted.values()) == {1} and len(srv.batches) == 1
    assert summary["batch"]["resumed"] == 1 and summary["batch"]["batches"] == 0 and summary["calls_made"] == 0


def test_evaluate_sends_each_round_as_one_batch_and_pays_each_call_once(tmp_path):
    with BatchServer(tmp_path / "state.json", polls=1) as srv:
        cfg = write_config(tmp_path, srv.url, n_prompts=20, models=["m1", "m2", "m3", "m4"], design="auto",
                           target={"kendall_tau": 0.99}, budget={"max_calls": 60}, judge=FAST)
        out = run_cli("evaluate", "-c", cfg, "--json", "--bootstrap", "0", cwd=tmp_path, timeout=300)
        assert out.returncode == 0, out.stderr
        billed, live, batches = srv.billed, srv.state["live"], srv.batches
    summary = json.loads(out.stdout)
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        stored = db.execute("SELECT COUNT(*), SUM(n_calls) FROM games").fetchone()
        ledger = db.execute("SELECT state FROM batches").fetchall()
    assert set(billed.values()) == {1} and live == 0 and len(billed) == stored[1] <= 60  # within the call budget
    assert summary["calls"] == stored[0] and len(batches) == len(ledger) >= 2  # rounds, each its own batch
    assert summary["trust"]["paid_calls_this_run"] == stored[1]  # batch lines are paid calls
    assert {s for (s,) in ledger} == {"ended"}


def test_batch_options_are_checked_and_belong_to_the_openai_backend(tmp_path):
    from tests.support.judging import write_responses

    with BatchServer(tmp_path / "state.json") as srv:
        bad = run_cli("judge", "-c", _config(tmp_path, srv, batch_retry="sometimes"), "--no-progress", cwd=tmp_path)
    assert bad.returncode != 0 and "judge.batch_retry" in bad.stderr and "Traceback" not in bad.stderr
    write_responses(tmp_path, 2, MODELS)
    (tmp_path / "sim.yaml").write_text(json.dumps({
        "responses": "responses.jsonl", "judge": {"backend": "simulated", "ratings": {m: 1000 for m in MODELS},
                                                  "batch": True}}))
    sim = run_cli("judge", "-c", "sim.yaml", "--no-progress", cwd=tmp_path)
    assert sim.returncode != 0 and "judge.batch" in sim.stderr and "simulated" in sim.stderr


def test_the_judge_summary_says_what_the_batches_did(tmp_path):
    with BatchServer(tmp_path / "state.json", fail_every=6) as srv:
        res = run_cli("judge", "-c", _config(tmp_path, srv), "--no-progress", cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    line = next(x for x in res.stdout.splitlines() if x.startswith("batches:"))
    assert f"{N_GAMES} calls sent in them; {N_GAMES - N_GAMES // 6} answered at the batch price" in line
    assert f"{N_GAMES // 6} failed (0 unreadable), 0 expired" in line


def test_pointwise_grades_go_through_batches_too(tmp_path):
    with BatchServer(tmp_path / "state.json", answer=lambda messages: "Rating: [[7]]") as srv:
        cfg = write_config(tmp_path, srv.url, n_prompts=4, models=MODELS,
                           judge={**FAST, "mode": "single", "template": "mtbench_single"})
        res = run_cli("judge", "-c", cfg, "--no-progress", "--json", cwd=tmp_path, timeout=120)
        assert res.returncode == 0, res.stderr
        billed, live, submitted = srv.billed, srv.state["live"], srv.submitted()
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        rows = db.execute("SELECT status, score FROM games WHERE mode = 'single'").fetchall()
    assert rows and {r for r in rows} == {("ok", 7.0)} and len(rows) == len(submitted) == len(billed)
    assert set(billed.values()) == {1} and live == 0


def test_a_batch_call_costs_the_discounted_live_price():
    from judgewise.judges.openai_backend import Prices

    prices = Prices(input_per_mtok=2.0, output_per_mtok=8.0, batch_discount=0.4)  # 40% off
    assert prices.cost(1000, 500) == (1000 * 2.0 + 500 * 8.0) / 1e6
    assert abs(prices.cost(1000, 500, batch=True) - 0.6 * prices.cost(1000, 500)) < 1e-15


def test_generate_sends_each_turn_as_one_batch(tmp_path):
    from tests.support.generation import answer, write_gen_config, write_questions

    write_questions(tmp_path, 3, turns=2)
    with BatchServer(tmp_path / "state.json", answer=answer) as srv:
        cfg = write_gen_config(tmp_path, srv.url, model_options=FAST)
        res = run_cli("generate", "-c", cfg, "--json", cwd=tmp_path, timeout=120)
        assert res.returncode == 0, res.stderr
        billed, live, batches = srv.billed, srv.state["live"], srv.batches
    out = json.loads(res.stdout)
    with sqlite3.connect(tmp_path / "gens.sqlite") as db:
        rows = db.execute("SELECT status, turn FROM generations").fetchall()
    assert len(rows) == 2 * 3 * 2 and {s for s, _ in rows} == {"ok"}  # 2 models × 3 questions × 2 turns
    assert set(billed.values()) == {1} and len(billed) == len(rows) and live == 0
    assert len(batches) == 4 and out["batch"]["batches"] == 4 and out["batch"]["answered"] == len(rows)
    assert out["reused_answers"] == 0 and out["calls_made"] == 0


def test_calls_are_split_into_batches_within_the_line_and_byte_limits():
    from judgewise.judges.batch import chunks

    calls = {f"call-{i}": (f"game-{i}", b"x" * 50) for i in range(7)}
    by_lines = chunks(calls, max_lines=3)
    assert [len(p) for p in by_lines] == [3, 3, 1] and {k: v for p in by_lines for k, v in p.items()} == calls
    by_bytes = chunks(calls, max_bytes=2 * (50 + len("call-0") + 100))
    assert [len(p) for p in by_bytes] == [2, 2, 2, 1]
    assert chunks({}) == []
