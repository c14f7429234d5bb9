"""Issue 32 item 1: one payer per call across processes and copies — a batch whose create reached a provider whose
list leaves out metadata is found again, ``store copy`` carries the batch ledger, a second batch run and a live run
beside a batch are refused, an output file answering a call twice keeps (and counts) the first answer, and a
generate config repeating a model entry is refused. Everything counted at the fake Files + Batches server
(tests/support/batch_server.py)."""

from __future__ import annotations

import json
import sqlite3

import pytest
import yaml

from tests.support import forkrun, run_cli
from tests.support.batch_server import BatchServer
from tests.support.judging import became_true, kill_judge_when, write_config

MODELS = ["m1", "m2", "m3"]
N_PROMPTS = 4
N_GAMES = 3 * N_PROMPTS * 2  # 3 pairs, both orders
FAST = {"batch": True, "batch_poll_s": 0.05}
BUSY = 8  # StoreBusy's exit code


def _config(tmp_path, srv, store="store.sqlite", **judge):
    return write_config(tmp_path, srv.url, n_prompts=N_PROMPTS, models=MODELS, store=store, judge=judge)


def _judge(tmp_path, cfg):
    res = run_cli("judge", "-c", cfg, "--no-progress", "--json", cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _stored(tmp_path, store="store.sqlite") -> list[tuple]:
    with sqlite3.connect(tmp_path / store) as db:
        return db.execute("SELECT key, status, n_calls, raw FROM games").fetchall()


def _paid_once(srv, tmp_path, store="store.sqlite") -> None:
    """Every game stored ok, and every call the stored games made billed exactly once at the server."""
    games = _stored(tmp_path, store)
    assert len(games) == N_GAMES and {s for _, s, _, _ in games} == {"ok"}
    assert set(srv.billed.values()) == {1} and len(srv.billed) == sum(n for _, _, n, _ in games)


@pytest.mark.parametrize("omits", [("metadata",), ("metadata", "input_file_id")], ids=["no-metadata", "bare"])
def test_a_batch_created_before_a_sigkill_is_found_in_a_list_without_metadata(tmp_path, omits):
    with BatchServer(tmp_path / "state.json", hold_create="after", list_omits=omits) as srv:
        cfg = _config(tmp_path, srv, **FAST)
        kill_judge_when(tmp_path, cfg, lambda: srv.create_waiting.wait(60))
        assert len(srv.batches) == 1 and "metadata" not in srv.listing(100, None)["data"][0]
        srv.release()
        summary = _judge(tmp_path, cfg)
        assert len(srv.batches) == 1 and srv.state["live"] == 0  # the batch found again, no second one
        _paid_once(srv, tmp_path)
    assert summary["batch"]["resumed"] == 1 and summary["batch"]["batches"] == 0


def test_store_copy_carries_an_open_batch_and_the_copy_polls_it(tmp_path):
    with BatchServer(tmp_path / "state.json", hold_batches=True) as srv:
        cfg = _config(tmp_path, srv, **FAST)
        kill_judge_when(tmp_path, cfg, lambda: became_true(lambda: srv.batches and srv.batches[0]["polls"] >= 2))
        copied = run_cli("store", "copy", "store.sqlite", "copy.sqlite", "--json", cwd=tmp_path)
        assert copied.returncode == 0, copied.stderr
        assert json.loads(copied.stdout)["open_batches"] == 1
        srv.release()
        on_copy = _judge(tmp_path, _config(tmp_path, srv, store="copy.sqlite", **FAST))
        assert len(srv.batches) == 1 and srv.state["live"] == 0
        _paid_once(srv, tmp_path, "copy.sqlite")
        on_source = _judge(tmp_path, _config(tmp_path, srv, **FAST))  # the source reads the same batch: no new one
        assert len(srv.batches) == 1 and srv.state["live"] == 0
        _paid_once(srv, tmp_path)
    assert on_copy["batch"]["resumed"] == on_source["batch"]["resumed"] == 1
    assert on_copy["batch"]["batches"] == on_source["batch"]["batches"] == 0


def test_a_second_batch_run_on_the_store_is_refused_while_the_first_runs(tmp_path):
    with BatchServer(tmp_path / "state.json", hold_create="before") as srv:
        cfg = _config(tmp_path, srv, **FAST)
        first = forkrun.start(["judge", "-c", cfg, "--no-progress"], cwd=tmp_path)
        second = None
        try:
            assert srv.create_waiting.wait(60), first.stderr  # the first run recorded its batch, is creating it
            second = forkrun.start(["judge", "-c", cfg, "--no-progress"], cwd=tmp_path)
            second.proc.join(30)
            srv.release()
            first.proc.join(120)
            assert first.proc.exitcode == 0, first.stderr
            assert second.proc.exitcode == BUSY, second.stderr
            assert "running batches on it" in second.stderr and "Traceback" not in second.stderr
        finally:
            srv.release()
            first.stop()
            if second is not None:
                second.stop()
        assert len(srv.batches) == 1 and srv.state["live"] == 0
        _paid_once(srv, tmp_path)


def test_a_live_run_beside_a_running_batch_run_is_refused(tmp_path):
    with BatchServer(tmp_path / "state.json", hold_batches=True) as srv:
        cfg = _config(tmp_path, srv, **FAST)
        batch_run = forkrun.start(["judge", "-c", cfg, "--no-progress"], cwd=tmp_path)
        try:
            assert became_true(lambda: srv.batches and srv.batches[0]["polls"] >= 2), batch_run.stderr
            live = run_cli("judge", "-c", _live_config(tmp_path), "--no-progress", cwd=tmp_path, timeout=60)
            assert live.returncode == BUSY and srv.state["live"] == 0, live.stderr
            assert srv.batches[0]["id"] in live.stderr and "paid twice" in live.stderr
            srv.release()
            batch_run.proc.join(120)
            assert batch_run.proc.exitcode == 0, batch_run.stderr
        finally:
            srv.release()
            batch_run.stop()
        _paid_once(srv, tmp_path)


def _live_config(tmp_path, responses: str | None = None, concurrency: int = 8):
    """The same run without batches (on ``responses`` when given), in its own config file."""
    cfg = yaml.safe_load((tmp_path / "run.yaml").read_text())
    cfg["judge"] = {k: v for k, v in cfg["judge"].items() if not k.startswith("batch")}
    cfg["responses"] = responses or cfg["responses"]
    cfg["limits"]["concurrency"] = concurrency
    (tmp_path / "live.yaml").write_text(yaml.safe_dump(cfg))
    return tmp_path / "live.yaml"


def test_a_live_run_on_other_games_of_a_store_a_batch_run_holds_is_refused(tmp_path):
    with BatchServer(tmp_path / "state.json", hold_batches=True) as srv:
        cfg = _config(tmp_path, srv, **FAST)
        other = tmp_path / "other.jsonl"  # other prompts: no call of the open batch
        other.write_text("".join(json.dumps({"prompt_id": f"q{p}", "model": m, "text": f"{m} on q{p}.",
                                             "instruction": f"Other thing {p}."}) + "\n"
                                 for p in range(2) for m in MODELS))
        batch_run = forkrun.start(["judge", "-c", cfg, "--no-progress"], cwd=tmp_path)
        try:
            assert became_true(lambda: srv.batches and srv.batches[0]["polls"] >= 2), batch_run.stderr
            live = run_cli("judge", "-c", _live_config(tmp_path, "other.jsonl"), "--no-progress", cwd=tmp_path,
                           timeout=60)
            assert live.returncode == BUSY and srv.state["live"] == 0, live.stderr
            assert "running batches on it" in live.stderr and srv.batches[0]["id"] in live.stderr
        finally:
            srv.release()
            batch_run.proc.join(120)
            batch_run.stop()
        _paid_once(srv, tmp_path)


def test_a_batch_run_beside_a_live_run_is_refused(tmp_path):
    with BatchServer(tmp_path / "state.json", live_delay_s=0.8) as srv:
        cfg = _config(tmp_path, srv, **FAST)
        live = forkrun.start(["judge", "-c", _live_config(tmp_path, concurrency=3), "--no-progress"], cwd=tmp_path)
        try:
            assert became_true(lambda: srv.state["live"] >= 1), live.stderr
            batch = run_cli("judge", "-c", cfg, "--no-progress", cwd=tmp_path, timeout=60)
            assert batch.returncode == BUSY and not srv.batches, batch.stderr
            assert "judging it live" in batch.stderr
            live.proc.join(120)
            assert live.proc.exitcode == 0, live.stderr
        finally:
            live.stop()
        _paid_once(srv, tmp_path)


def test_a_live_run_on_a_store_with_an_open_batch_is_refused_and_told_how_to_resume(tmp_path):
    with BatchServer(tmp_path / "state.json", hold_batches=True) as srv:
        cfg = _config(tmp_path, srv, **FAST)
        kill_judge_when(tmp_path, cfg, lambda: became_true(lambda: srv.batches and srv.batches[0]["polls"] >= 2))
        live = run_cli("judge", "-c", _live_config(tmp_path), "--no-progress", cwd=tmp_path, timeout=60)
        assert live.returncode == BUSY and srv.state["live"] == 0, live.stderr
        assert srv.batches[0]["id"] in live.stderr and "judge.batch: true" in live.stderr
        assert live.stderr.strip().splitlines()[-1].startswith("error:") and "Traceback" not in live.stderr
        srv.release()
        summary = _judge(tmp_path, cfg)  # resumed as the message says
        assert len(srv.batches) == 1 and srv.state["live"] == 0
        _paid_once(srv, tmp_path)
    assert summary["batch"]["resumed"] == 1


def test_an_output_file_answering_each_call_twice_keeps_the_first_answer_and_says_so(tmp_path):
    verdict = lambda messages: "Both are fine. My final verdict is [[A>B]]."  # noqa: E731
    with BatchServer(tmp_path / "state.json", duplicate_lines="opposite", answer=verdict) as srv:
        res = run_cli("judge", "-c", _config(tmp_path, srv, **FAST), "--no-progress", "--json", cwd=tmp_path,
                      timeout=120)
        assert res.returncode == 0, res.stderr
        assert srv.state["live"] == 0
    batch = json.loads(res.stdout)["batch"]
    assert (batch["answered"], batch["duplicates"], batch["conflicting"]) == (N_GAMES, N_GAMES, N_GAMES)
    assert {raw for *_, raw in _stored(tmp_path)} == {verdict([])}  # the first answer of each call, not the last
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        counts = json.loads(db.execute("SELECT counts FROM batches").fetchone()[0])
    assert counts["conflicting"] == N_GAMES  # noted in the ledger too
    text = run_cli("judge", "-c", tmp_path / "run.yaml", "--no-progress", cwd=tmp_path, timeout=60)
    assert text.returncode == 0  # everything stored: nothing sent


def test_generate_refuses_two_model_entries_that_differ_only_in_name(tmp_path):
    from tests.support.generation import MODEL, write_questions

    write_questions(tmp_path, 2, turns=1)
    with BatchServer(tmp_path / "state.json") as srv:
        entry = {"model": MODEL, "base_url": srv.url, "max_tokens": 32, **FAST}
        cfg = {"prompts": "question.jsonl", "store": "gens.sqlite", "output": "answers.jsonl",
               "models": [{"name": "alpha", **entry}, {"name": "beta", **entry}]}
        (tmp_path / "gen.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
        res = run_cli("generate", "-c", "gen.yaml", cwd=tmp_path, timeout=60)
        assert not srv.batches and srv.state["live"] == 0 and not srv.billed
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert 'models[1] ("beta") repeats models[0] ("alpha")' in res.stderr
    assert not (tmp_path / "gens.sqlite").exists()


def test_a_batch_the_list_cannot_tell_apart_stops_the_run_until_its_output_says_which_it_is(tmp_path):
    from judgewise.judges.openai_batch import BatchClient

    with BatchServer(tmp_path / "state.json", hold_create="after", hold_batches=True, polls=0,
                     list_omits=("metadata", "input_file_id")) as srv:
        cfg = _config(tmp_path, srv, **FAST)
        kill_judge_when(tmp_path, cfg, lambda: srv.create_waiting.wait(60))
        srv.hold_create = None
        client = BatchClient(srv.url, {})  # another batch of as many requests, created after ours: a look-alike
        decoy = b"".join(json.dumps({"custom_id": f"other-{i}", "method": "POST", "url": "/v1/chat/completions",
                                     "body": {"model": "x", "messages": [{"role": "user", "content": f"hi {i}"}]}}
                                    ).encode() + b"\n" for i in range(N_GAMES))
        client.create(client.upload(decoy, "decoy.jsonl"), {})
        stopped = run_cli("judge", "-c", cfg, "--no-progress", cwd=tmp_path, timeout=60)
        assert stopped.returncode != 0 and "cannot be told apart" in stopped.stderr, stopped.stderr
        assert len(srv.batches) == 2 and srv.state["live"] == 0  # no batch of its own submitted without proof
        srv.release()  # both end; their output files say which one holds this store's calls
        summary = _judge(tmp_path, cfg)
        assert len(srv.batches) == 2 and srv.state["live"] == 0
    assert summary["batch"]["resumed"] == 1 and summary["batch"]["batches"] == 0
    assert summary["batch"]["answered"] == N_GAMES and len(_stored(tmp_path)) == N_GAMES
