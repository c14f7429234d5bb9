"""A `judgewise generate` process killed with SIGKILL mid-run is rerun and finishes the job, paying for no answer
twice; two processes sharing one store split the work without paying for any answer twice."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys

import pytest

from tests.support import run_cli
from tests.support.generation import server, stored_answers, write_gen_config, write_questions
from tests.support.judging import wait_for


def _start(config, cwd):
    return subprocess.Popen([sys.executable, "-m", "judgewise.cli.app", "generate", "-c", str(config), "--no-progress",
                             "--json"], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_sigkilled_generation_resumes_and_pays_each_answer_exactly_once(tmp_path):
    write_questions(tmp_path, 15)
    with server(latency_s=0.02, rates={"429": 0.05, "500": 0.05}, seed=2) as srv:
        # a call timing out may be paid twice (the answer on its way when the client gives up; counted as
        # maybe_charged_timeouts): a wide timeout keeps a loaded machine from mixing that into this test of the kill
        config = write_gen_config(tmp_path, srv.url, limits={"timeout_s": 60})
        store = tmp_path / "gens.sqlite"
        proc = _start(config, tmp_path)
        try:
            wait_for(lambda: srv.total_successes() >= 20, 120, "20 answers")
            srv.freeze()  # hold new requests: the process dies with calls in flight
            # the answers let through before the freeze are written first: comparing counts while one is on its way
            # could kill the process between the server counting an answer and the client storing it
            wait_for(srv.quiet, 30, "the answers already on their way written")
            wait_for(lambda: stored_answers(store) == srv.total_successes(), 30, "answers stored")
            wait_for(lambda: srv.held > 0, 10, "a held request")
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        with sqlite3.connect(store) as db:
            stored_before = db.execute("SELECT COUNT(*) FROM generations").fetchone()[0]
            claims_left = db.execute("SELECT COUNT(*) FROM generation_claims").fetchone()[0]
        assert 0 < stored_before < 60 and claims_left > 0  # killed mid-run, with claimed answers in flight
        srv.thaw()
        res = run_cli("generate", "-c", config, "--no-progress", "--json", cwd=tmp_path, timeout=300)
        assert res.returncode == 0, res.stderr
        summary = json.loads(res.stdout)
        successes = dict(srv.successes)
        again = json.loads(run_cli("generate", "-c", config, "--no-progress", "--json", cwd=tmp_path).stdout)
        assert sum(srv.successes.values()) == sum(successes.values())  # the third run: 0 calls
    assert summary["cached"] == stored_before and summary["generated"] == 60 - stored_before
    assert summary["maybe_charged_timeouts"] == 0, summary  # else a double pay below is a timeout's, not the kill's
    assert set(successes.values()) == {1} and len(successes) == 60  # no answer paid twice across the kill
    assert again["calls_made"] == 0 and again["cached"] == 60
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT COUNT(*) FROM generation_claims").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*), SUM(n_calls) FROM generations WHERE status = 'ok'").fetchone() == (60, 60)


@pytest.mark.slow
def test_two_processes_sharing_a_store_never_pay_for_the_same_answer(tmp_path):
    write_questions(tmp_path, 12)
    with server(latency_s=0.01) as srv:
        config = write_gen_config(tmp_path, srv.url, limits={"concurrency": 3})
        srv.freeze()  # hold every request until both processes have 3 calls in flight (one alone has at most 3)
        procs = [_start(config, tmp_path) for _ in range(2)]
        try:
            wait_for(lambda: sum(srv.requests.values()) - sum(srv.events.values()) >= 6, 120, "6 held requests")
        finally:
            srv.thaw()
        outs = [p.communicate(timeout=300) for p in procs]
        successes = dict(srv.successes)
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    summaries = [json.loads(out) for out, _ in outs]
    assert set(successes.values()) == {1} and len(successes) == 48
    assert all(s["generated"] >= 3 for s in summaries)  # both worked, on different answers
    assert sum(s["generated"] for s in summaries) == 48
