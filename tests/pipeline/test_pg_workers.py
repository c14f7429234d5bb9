"""Workers on a shared PostgreSQL store (``judgewise judge --worker``), as real processes against a real server and
a real OpenAI-compatible endpoint: several at once, one SIGKILLed, a lease left by another machine, a network drop
between a worker and the database. Each game is stored once and no successful call is ever paid twice."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.support import run_cli
from tests.support.fault_server import FaultServer
from tests.support.judging import wait_for, write_config
from tests.support.pg_server import TcpProxy, pg_server, pg_url  # noqa: F401 (fixtures)

pytestmark = pytest.mark.postgres
psycopg = pytest.importorskip("psycopg", reason="psycopg not installed: pip install 'judgewise[postgres]'")

MODELS = ["m1", "m2", "m3"]


def _worker(config, cwd, *extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "judgewise.cli.app", "judge", "-c", str(config), "--worker",
                             "--no-progress", "--json", *extra], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen, timeout: float = 180) -> dict:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{err[-3000:]}"
    return json.loads(out.strip().splitlines()[-1]) | {"stderr": err}


def _one(url: str, sql: str):
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchone()[0]


def _paid_and_held(url: str) -> int:
    """Calls whose answers the store holds: those of stored games plus the journaled ones of games in flight."""
    return _one(url, "SELECT (SELECT COALESCE(SUM(n_calls), 0) FROM judgewise.games) + "
                     "(SELECT COUNT(*) FROM judgewise.answers)")


def _check_once_each(url: str, srv: FaultServer, games: int) -> None:
    assert _one(url, "SELECT COUNT(*) FROM judgewise.games WHERE status = 'ok'") == games
    assert _one(url, "SELECT COUNT(*) FROM judgewise.claims") == 0
    assert _one(url, "SELECT COUNT(*) FROM judgewise.queue") == 0
    assert set(srv.successes.values()) == {1}  # no successful call repeated
    assert len(srv.successes) == _one(url, "SELECT SUM(n_calls) FROM judgewise.games") == games


def test_three_workers_share_a_job_and_judge_each_game_once(pg_url, tmp_path):
    with FaultServer(latency_s=0.02, rates={"429": 0.05, "500": 0.05}, seed=5) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=30, models=MODELS, store=pg_url,
                              limits={"concurrency": 4})
        procs = [_worker(config, tmp_path) for _ in range(3)]
        summaries = [_finish(p) for p in procs]
        _check_once_each(pg_url, srv, 180)
    assert sum(s["judged"] for s in summaries) == 180
    assert all(s["ok_total"] == 180 and s["judged"] + s["by_others"] + s["cached"] == 180 for s in summaries)
    late = run_cli("judge", "-c", config, "--worker", "--no-progress", "--json", cwd=tmp_path)  # a worker too late
    assert late.returncode == 0 and json.loads(late.stdout.splitlines()[-1])["cached"] == 180


def test_a_sigkilled_workers_games_go_to_the_others_and_nothing_is_paid_twice(pg_url, tmp_path):
    with FaultServer(latency_s=0.02, seed=2) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=40, models=MODELS, store=pg_url,
                              limits={"concurrency": 4, "lease_s": 3600})  # only the dead-process check frees them
        victim, survivor = _worker(config, tmp_path), _worker(config, tmp_path)
        try:
            wait_for(lambda: srv.total_successes() >= 60, 120, "60 successful calls")
            srv.freeze()  # hold new requests; every answer delivered reaches the store, then the kill
            wait_for(srv.quiet, 30, "the answers already on their way written")  # then the server's count is final
            wait_for(lambda: _paid_and_held(pg_url) == srv.total_successes(), 30, "answers stored")
            # more held requests than one worker may have in flight (concurrency 4): the victim holds one too
            wait_for(lambda: srv.held > 4, 60, "held requests of both")
            held = _one(pg_url, "SELECT COUNT(*) FROM judgewise.claims")
            victim.send_signal(signal.SIGKILL)
            victim.wait(timeout=30)
        finally:
            srv.thaw()
            if victim.poll() is None:
                victim.kill()
        summary = _finish(survivor)
        _check_once_each(pg_url, srv, 240)
    assert victim.returncode == -signal.SIGKILL and held > 0
    # the victim's stored games count as cached by the survivor (stored before it listed the job) or as done by
    # others (stored while it ran): which, depends on how fast each process started, not on the engine
    assert summary["judged"] + summary["by_others"] + summary["cached"] == 240
    assert summary["by_others"] + summary["cached"] > 0 and summary["judged"] < 240
    assert srv.events["abandoned"] > 0  # the victim's calls in flight were never answered


def test_a_game_leased_by_a_worker_on_another_machine_is_taken_when_the_lease_runs_out(pg_url, pg_server, tmp_path):
    with FaultServer(latency_s=0.0) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=5, models=MODELS[:2], store=pg_url)
        first = run_cli("judge", "-c", config, "--worker", "--no-progress", "--json", "--max-calls", "8",
                        cwd=tmp_path)
        assert first.returncode == 5  # stopped by the budget, games left in the job's queue
        left = [k for (k,) in pg_server.sql(pg_url, "SELECT key FROM queue")]
        assert 0 < len(left) < 10
        pg_server.sql(pg_url, "INSERT INTO claims VALUES (%s, 'gpu-node-7:1234:feedbeef', "
                              "EXTRACT(EPOCH FROM clock_timestamp()) + 4)", (left[0],))
        summary = _finish(_worker(config, tmp_path))
        _check_once_each(pg_url, srv, 10)
    assert summary["judged"] == len(left)  # the abandoned game too, once its lease ran out


def test_a_network_drop_between_worker_and_database_is_survived(pg_url, pg_server, tmp_path):
    proxy = TcpProxy(pg_server.port)
    through_proxy = pg_url.replace(f":{pg_server.port}/", f":{proxy.port}/")
    try:
        with FaultServer(latency_s=0.02) as srv:
            config = write_config(tmp_path, srv.url, n_prompts=20, models=MODELS, store=through_proxy,
                                  limits={"concurrency": 4})
            proc = _worker(config, tmp_path)
            wait_for(lambda: srv.total_successes() >= 30, 120, "30 successful calls")
            srv.freeze()
            wait_for(lambda: sum(srv.requests.values()) > sum(srv.events.values()), 10, "a held request")
            proxy.cut()  # every connection to the database dropped, new ones refused ...
            delivered = srv.total_successes()
            srv.thaw()  # ... while answers arrive: they must be journaled before anything else
            wait_for(lambda: srv.total_successes() > delivered, 30, "an answer delivered during the drop")
            time.sleep(1.0)
            proxy.restore()
            summary = _finish(proc)
            _check_once_each(pg_url, srv, 120)
    finally:
        proxy.close()
    assert "retrying" in summary["stderr"]  # the worker saw the drop and came back
    assert summary["judged"] == 120


def test_worker_mode_needs_a_postgresql_store(tmp_path):
    config = write_config(tmp_path, "http://127.0.0.1:9/v1", n_prompts=2, models=MODELS[:2])
    res = run_cli("judge", "-c", config, "--worker", "--no-progress", cwd=tmp_path)
    assert res.returncode == 2 and "workers share a PostgreSQL store" in res.stderr
    res = run_cli("judge", "-c", config, "--workers", "3", "--no-progress", cwd=tmp_path)
    assert res.returncode == 2 and "needs --executor ray" in res.stderr


@pytest.mark.ray
@pytest.mark.slow
def test_workers_started_on_a_local_ray_instance_share_the_job(pg_url, tmp_path):
    pytest.importorskip("ray", reason="ray not installed (pip install 'judgewise[ray]')")
    from judgewise.pipeline.workers import run_workers

    with FaultServer(latency_s=0.02) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=20, models=MODELS, store=pg_url,
                              limits={"concurrency": 4})
        summaries = run_workers(config, 2, executor="ray")
        _check_once_each(pg_url, srv, 120)
    assert len(summaries) == 2 and sum(s["judged"] for s in summaries) == 120
    assert all(s["ok_total"] == 120 for s in summaries)


def test_workers_started_on_local_processes_share_the_job(pg_url, tmp_path):
    from judgewise.pipeline.workers import run_workers

    with FaultServer(latency_s=0.02) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=20, models=MODELS, store=pg_url,
                              limits={"concurrency": 4})
        summaries = run_workers(config, 2, executor="process")  # the same task runner as Ray's, without Ray
        _check_once_each(pg_url, srv, 120)
    assert len(summaries) == 2 and sum(s["judged"] for s in summaries) == 120
