"""Issue 3 acceptance 2: a judging process killed with SIGKILL mid-run is restarted and finishes the job,
with an intact store and exactly one successful (paid) call per stored judgment."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys

import pytest

from tests.support import run_cli
from tests.support.fault_server import FaultServer
from tests.support.judging import sigkill_mid_run, wait_for, write_config


def test_sigkilled_run_restarts_and_pays_each_judgment_exactly_once(tmp_path):
    models = ["m1", "m2", "m3"]
    with FaultServer(latency_s=0.02, rates={"429": 0.05, "500": 0.05}, seed=3) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=40, models=models, limits={"concurrency": 4})
        store = tmp_path / "store.sqlite"
        sigkill_mid_run(srv, ["judge", "-c", config, "--no-progress"], tmp_path, store, after_successes=60,
                        timeout_s=60, with_held_request=True)
        with sqlite3.connect(store) as db:
            stored_before = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            claims_left = db.execute("SELECT COUNT(*) FROM claims").fetchone()[0]
        assert 0 < stored_before < 240 and claims_left > 0  # killed mid-run, with claimed games in flight

        srv.thaw()
        res = run_cli("judge", "-c", config, "--no-progress", "--json", cwd=tmp_path, timeout=120)
        assert res.returncode == 0, res.stderr
        successes = dict(srv.successes)

    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = db.execute("SELECT status, n_calls FROM games").fetchall()
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    assert len(rows) == 3 * 40 * 2 and {s for s, _ in rows} == {"ok"}
    assert set(successes.values()) == {1}  # no successful call repeated across the kill
    assert len(successes) == sum(n for _, n in rows) == len(rows)  # one paid call per stored judgment
    assert srv.events["abandoned"] > 0  # the calls in flight at the kill were never answered nor counted


@pytest.mark.slow
def test_answers_received_before_a_sigkill_are_not_paid_again_by_the_restart(tmp_path):
    """Every first call answers garbage (so the judge re-asks) and every re-ask hangs; the process is killed
    while all re-asks hang. The restart takes the first answers from the store's journal: none is re-sent."""
    hold = {"reask": "timeout"}

    def fault(messages, seen):
        return "garbage" if len(messages) <= 2 else hold["reask"]

    with FaultServer(latency_s=0.0, fault_fn=fault, hang_s=60.0) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=4, models=["m1", "m2"],
                              limits={"concurrency": 8, "timeout_s": 30})
        proc = subprocess.Popen([sys.executable, "-m", "judgewise.cli.app", "judge", "-c", str(config),
                                 "--no-progress"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            wait_for(lambda: srv.total_successes() == 8 and srv.events["timeout"] == 8, 60, "8 hung re-asks")
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        first = dict(srv.successes)
        hold["reask"] = None
        res = run_cli("judge", "-c", config, "--no-progress", "--json", cwd=tmp_path, timeout=120)
        after = dict(srv.successes)

    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert len(first) == 8 and all(after[k] == 1 for k in first)  # no first call paid twice
    assert summary["judged"] == 8 and summary["reused_answers"] == 8 and summary["calls_made"] == 8  # re-asks only
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        assert db.execute("SELECT COUNT(*), SUM(n_calls) FROM games WHERE status = 'ok'").fetchone() == (8, 16)
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 0  # journal emptied as games stored
