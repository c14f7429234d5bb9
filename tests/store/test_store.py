"""The judgment store: claims between processes, never overwriting a judged game, retrying failed games only
when asked, export to the canonical judgments table, and stats."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import time

import pandas as pd
import pytest

from judgewise.io import read_judgments
from judgewise.judges.runner import run_judging
from judgewise.judges.scheduler import RetryPolicy
from judgewise.store.judgments import GameRecord, JudgmentStore, export_frame, write_export

from tests.support import REPO, run_cli
from tests.support.fault_server import FaultServer
from tests.support.judging import comparisons, llm_judge


def _record(key: str, status: str, outcome: float | None) -> GameRecord:
    return GameRecord(key=key, prompt_id="p", model_a="a", model_b="b", first="a", swapped=False, judge="j",
                      template=None, judge_identity="{}", status=status, outcome=outcome,
                      error=None if status == "ok" else "boom", n_calls=1)


def test_claim_held_by_a_live_process_makes_others_skip_until_its_lease_expires(tmp_path):
    with JudgmentStore(tmp_path / "s.sqlite", lease_s=0.3) as holder, JudgmentStore(tmp_path / "s.sqlite") as other:
        assert holder.claim("k1") == "claimed"
        assert other.claim("k1") == "busy"
        time.sleep(0.4)
        assert other.claim("k1") == "claimed"  # the holder's lease ran out (it never renewed)
        other.record(_record("k1", "ok", 1.0))
        assert holder.claim("k1") == "done"


def test_claim_of_a_dead_process_is_taken_over_at_once(tmp_path):
    path = tmp_path / "s.sqlite"
    code = ("import os, sys; from judgewise.store.judgments import JudgmentStore; "
            f"s = JudgmentStore({str(path)!r}, lease_s=3600); assert s.claim('k1') == 'claimed'; os._exit(0)")
    subprocess.run([sys.executable, "-c", code], check=True)
    with JudgmentStore(path) as store:
        owner = store._db.execute("SELECT owner FROM claims WHERE key = 'k1'").fetchone()[0]
        assert owner != store.owner
        assert store.claim("k1") == "claimed"  # an hour-long lease, but its owner is gone


def test_a_judged_game_is_never_overwritten_but_a_failed_one_is(tmp_path):
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        store.record(_record("ok-key", "ok", 1.0))
        store.record(_record("ok-key", "failed", None))
        store.record(_record("bad-key", "failed", None))
        store.record(_record("bad-key", "ok", 0.5))
        rows = store.frame().set_index("key")
    assert rows.loc["ok-key", "status"] == "ok" and rows.loc["ok-key", "outcome"] == 1.0
    assert rows.loc["bad-key", "status"] == "ok" and rows.loc["bad-key", "outcome"] == 0.5


def test_failed_games_are_judged_again_only_with_retry_failed(tmp_path):
    fail_first = lambda messages, seen: "500" if seen == 0 else None  # noqa: E731
    comps = comparisons(10)
    one_try = RetryPolicy(max_attempts=1)
    with FaultServer(fault_fn=fail_first) as srv:
        judge = llm_judge(srv.url)  # one judge object serves several runs (each its own event loop)
        first = run_judging(comps, judge, tmp_path / "s.sqlite", retry=one_try)
        assert first.failed == 20 and first.judged == 0
        assert first.judgments["error"].str.contains("gave up after 1 attempts").all()
        n_requests = sum(srv.requests.values())
        rerun = run_judging(comps, judge, tmp_path / "s.sqlite", retry=one_try)
        assert sum(srv.requests.values()) == n_requests and rerun.cached == 20  # no call without the flag
        retried = run_judging(comps, judge, tmp_path / "s.sqlite", retry=one_try, retry_failed=True)
    assert retried.judged == 20 and retried.failed == 0
    assert (retried.judgments["status"] == "ok").all()


RACER = """
import json, sys
from judgewise.judges.runner import run_judging
from tests.support.judging import comparisons, llm_judge
result = run_judging(comparisons(60), llm_judge(sys.argv[1]), sys.argv[2], concurrency=4)
print(json.dumps(result.summary()))
"""


def test_two_processes_on_one_store_never_pay_for_the_same_game_twice(tmp_path):
    with FaultServer(latency_s=0.02, seed=5) as srv:
        srv.freeze()  # hold the first calls until both processes are waiting on the server
        procs = [subprocess.Popen([sys.executable, "-c", RACER, srv.url, str(tmp_path / "s.sqlite")], cwd=REPO,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        deadline = time.monotonic() + 60
        while sum(srv.requests.values()) < 8 and time.monotonic() < deadline:  # 4 in flight from each
            time.sleep(0.05)
        srv.thaw()
        outs = [p.communicate(timeout=120) for p in procs]
        successes = dict(srv.successes)
    assert [p.returncode for p in procs] == [0, 0], [e[-800:] for _, e in outs]
    summaries = [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]
    assert all(s["judged"] > 0 for s in summaries)  # both really raced for the same games
    assert sum(s["judged"] for s in summaries) == 120
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        frame = store.frame()
        assert store.integrity_check() == "ok"
    assert len(frame) == 120 and (frame["status"] == "ok").all()
    assert set(successes.values()) == {1} and len(successes) == 120


def _open_when_released(path, barrier) -> str:
    """Open (and so create) the store at ``path`` the moment every process is ready; the error, if any."""
    barrier.wait()
    try:
        with JudgmentStore(path):
            return ""
    except Exception as exc:  # noqa: BLE001 - reported to the test, which names it
        return repr(exc)


def test_processes_creating_one_store_at_once_all_open_it(tmp_path):
    # SQLite does not wait (no busy handler) when two connections race to switch a new file to WAL mode; before
    # the switch was retried, 1 round in 5 of four processes failed with "database is locked" (CI, stop 29)
    ctx = multiprocessing.get_context("spawn")  # not fork: the test process may hold threads (a lock copied while held)
    errors = []
    with ctx.Manager() as manager, ctx.Pool(4) as pool:
        for round_ in range(15):
            path, barrier = tmp_path / f"s{round_}.sqlite", manager.Barrier(4)
            errors += [e for e in pool.starmap(_open_when_released, [(path, barrier)] * 4) if e]
            with JudgmentStore(path) as store:
                assert store.integrity_check() == "ok"
    assert errors == []


def test_export_is_the_canonical_judgments_table_and_keeps_failures_visible(tmp_path):
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        store.record(_record("k-ok", "ok", 1.0))
        store.record(_record("k-failed", "failed", None))
        frame = store.frame()
    full = export_frame(frame)
    assert list(full.columns[:5]) == ["prompt_id", "model_a", "model_b", "judge", "outcome"]
    assert set(full["judgment_id"]) == {"k-ok", "k-failed"}
    write_export(full, tmp_path / "all.jsonl")
    lines = pd.read_json(tmp_path / "all.jsonl", lines=True)
    assert lines.loc[lines["status"] == "failed", "error"].tolist() == ["boom"]
    assert lines.loc[lines["status"] == "failed", "outcome"].isna().all()
    report = read_judgments(tmp_path / "all.jsonl").report  # failed games are counted by the reader, not rated
    assert (report.rows_used, report.rows_skipped) == (1, 1) and "boom" in report.skipped_reasons[0]
    write_export(export_frame(frame, only_ok=True), tmp_path / "ok.parquet")
    table = read_judgments(tmp_path / "ok.parquet")
    assert table.report.rows_used == 1 and table.frame["outcome"].tolist() == [1.0]


@pytest.mark.parametrize("name", ["out.jsonl", "out.parquet"])
def test_an_export_that_fails_midway_leaves_the_previous_file_whole(tmp_path, name):
    target = tmp_path / name
    target.write_text("previous export\n")
    good = {"prompt_id": "p1", "outcome": 1.0}
    unwritable = pd.DataFrame([good, {"prompt_id": "p2", "outcome": object()}])  # row 2 cannot be serialised
    with pytest.raises(Exception):
        write_export(unwritable, target)
    assert target.read_text() == "previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary file left behind


def test_store_stats_count_ok_and_failed_overall_and_per_model(tmp_path):
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        for i, status in enumerate(["ok", "ok", "failed"]):
            store.record(_record(f"k{i}", status, 1.0 if status == "ok" else None))
    res = run_cli("store", "stats", tmp_path / "s.sqlite", "--json")
    assert res.returncode == 0, res.stderr
    stats = json.loads(res.stdout)
    assert (stats["games"], stats["ok"], stats["failed"], stats["calls"]) == (3, 2, 1, 3)
    assert stats["by_model"]["a"]["failed"] == 1 and stats["failure_reasons"] == {"boom": 1}
