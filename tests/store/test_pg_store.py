"""The PostgreSQL judgment store against a real server: the SQLite store's rows and claims, the SKIP LOCKED queue,
leases that expire, schema versions (a newer store refused, migration steps taken), store copy both ways, and
rank / stats / export reading a URL."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from judgewise.errors import InputError, StoreUnavailable
from judgewise.store import judgments as sqlite_store
from judgewise.store import postgres as pg_store
from judgewise.judges.base import Comparison
from judgewise.store.postgres import PgJudgmentStore, masked
from judgewise.judges.runner import run_judging
from judgewise.store.judgments import GAME_COLUMNS, GameRecord, JudgmentStore
from judgewise.store.opening import copy_store, open_store, store_location

from tests.support import cli_json, run_cli
from tests.support.fault_server import FaultServer
from tests.support.judging import comparisons, llm_judge, wait_for
from tests.support.pg_server import TcpProxy, pg_server, pg_url  # noqa: F401 (fixtures)

pytestmark = pytest.mark.postgres
psycopg = pytest.importorskip("psycopg", reason="psycopg not installed: pip install 'judgewise[postgres]'")


def _record(key: str, status: str, outcome: float | None, **kw) -> GameRecord:
    return GameRecord(key=key, prompt_id="p", model_a="a", model_b="b", first="a", swapped=False, judge="j",
                      template=None, judge_identity="{}", status=status, outcome=outcome,
                      error=None if status == "ok" else "boom", n_calls=1, **kw)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values("key").reset_index(drop=True)


def test_a_judging_run_stores_the_same_rows_in_postgresql_as_in_sqlite(pg_url, tmp_path):
    comps = comparisons(6, ("m1", "m2"))
    with FaultServer(latency_s=0.0) as srv:
        on_pg = run_judging(comps, llm_judge(srv.url), pg_url, concurrency=4)
        on_file = run_judging(comps, llm_judge(srv.url), tmp_path / "s.sqlite", concurrency=4)
    assert on_pg.judged + on_pg.failed == 12 and on_file.cached == 0
    with open_store(pg_url) as pg, JudgmentStore(tmp_path / "s.sqlite") as lite:
        a, b = _sorted(pg.frame()), _sorted(lite.frame())
        pg_stats, lite_stats = pg.stats(), lite.stats()
    same = [c for c in GAME_COLUMNS if c not in ("created_at", "latency_s")]
    pd.testing.assert_frame_equal(a[same], b[same], check_dtype=False)
    assert {k: v for k, v in pg_stats.items() if k not in ("store", "queued")} == \
        {k: v for k, v in lite_stats.items() if k != "store"}
    again = run_judging(comps, llm_judge("http://127.0.0.1:9/v1"), pg_url)  # nothing left to call
    assert again.cached == 12 and again.calls_made == 0


def test_claims_done_busy_released_and_a_judged_game_never_overwritten(pg_url):
    with PgJudgmentStore(pg_url) as one, PgJudgmentStore(pg_url) as two:
        assert one.claim("k1") == "claimed" and two.claim("k1") == "busy"
        one.release("k1")
        assert two.claim("k1") == "claimed"
        two.record(_record("k1", "ok", 1.0))
        assert one.claim("k1") == "done"
        one.record(_record("k1", "failed", None))  # a late, failed copy never replaces the judged row
        two.record(_record("k2", "failed", None))
        assert one.claim("k2") == "done" and one.claim("k2", retry_failed=True) == "claimed"
        one.record(_record("k2", "ok", 0.0))
        rows = one.frame().set_index("key")
        assert one.stats()["in_flight_claims"] == 0
    assert rows.loc["k1", "outcome"] == 1.0 and rows.loc["k2", "status"] == "ok" and rows.loc["k2", "outcome"] == 0.0


def test_a_claim_from_another_machine_holds_until_its_lease_runs_out(pg_url, pg_server):
    with PgJudgmentStore(pg_url) as store:
        pg_server.sql(pg_url, "INSERT INTO claims VALUES ('k1', 'elsewhere:4242:abcd', "
                              "EXTRACT(EPOCH FROM clock_timestamp()) + 1.5)")
        assert store.claim("k1") == "busy"  # a live lease of a process this host cannot see
        assert store.expire_dead_claims() == 0
        wait_for(lambda: store.claim("k1") == "claimed", 30, "the other machine's lease to run out", poll_s=0.2)
        assert pg_server.sql(pg_url, "SELECT owner FROM claims WHERE key = 'k1'") == [(store.owner,)]


def test_a_claim_of_a_dead_process_on_this_host_is_taken_over_at_once(pg_url):
    code = ("import os; from judgewise.store.postgres import PgJudgmentStore; "
            f"s = PgJudgmentStore({pg_url!r}, lease_s=3600); assert s.claim('k1') == 'claimed'; "
            "s.enqueue('job', ['k1', 'k2']); assert sorted(s.claim_batch('job', 5)) == ['k1', 'k2']; os._exit(0)")
    subprocess.run([sys.executable, "-c", code], check=True)
    with PgJudgmentStore(pg_url) as store:
        assert store.claim_batch("job", 5) == []  # both held for an hour by a process that is gone ...
        assert store.expire_dead_claims() == 1  # ... which this host can tell
        assert sorted(store.claim_batch("job", 5)) == ["k1", "k2"]


def test_queue_batches_skip_locked_rows_and_never_hand_a_game_out_twice(pg_url, pg_server):
    keys = [f"k{i:02d}" for i in range(20)]
    with PgJudgmentStore(pg_url) as one, PgJudgmentStore(pg_url) as two:
        one.enqueue("job", keys)
        two.enqueue("job", keys)  # every worker does it: idempotent
        assert one.queued("job") == 20
        with psycopg.connect(pg_url) as conn:  # another worker in the middle of taking k00..k04: rows locked
            conn.execute("SELECT key FROM judgewise.queue WHERE job = 'job' ORDER BY seq LIMIT 5 FOR UPDATE")
            first = one.claim_batch("job", 6)  # does not wait for the lock: takes the next rows
            assert first == sorted(keys[5:11])
        second = two.claim_batch("job", 100)
        assert sorted(second) == sorted(keys[:5] + keys[11:])  # the rest, none of one's
        assert one.claim_batch("job", 100, exclude=first) == []  # one's own claims in play are not handed out again
        for k in first:
            one.record(_record(k, "ok", 1.0))
        assert one.queued("job") == 14
        one.record(_record("k00", "ok", 0.0))  # stored by one while two holds it: still one row, two's is dropped
        two.record(_record("k00", "failed", None))
        assert one.statuses(["k00"]) == {"k00": "ok"} and one.queued("job") == 13


def test_a_store_of_a_newer_schema_version_is_refused_with_a_clear_error(pg_url, pg_server, tmp_path):
    PgJudgmentStore(pg_url).close()
    pg_server.sql(pg_url, "UPDATE meta SET value = '99' WHERE name = 'schema_version'")
    for opener in (PgJudgmentStore, PgJudgmentStore.open_readonly):
        with pytest.raises(InputError, match=r"schema version 99, newer than this judgewise reads .*upgrade judgewise"):
            opener(pg_url)
    res = run_cli("store", "stats", pg_url)
    assert res.returncode == 2 and "schema version 99" in res.stderr and "upgrade judgewise" in res.stderr
    assert pg_server.sql(pg_url, "SELECT value FROM meta WHERE name = 'schema_version'") == [("99",)]  # untouched


def test_migration_steps_after_the_stored_version_are_taken_once(pg_url, pg_server, monkeypatch):
    PgJudgmentStore(pg_url).close()
    nxt = sqlite_store.SCHEMA_VERSION + 1
    for module in (pg_store, sqlite_store):
        monkeypatch.setattr(module, "SCHEMA_VERSION", nxt)
    monkeypatch.setitem(sqlite_store.MIGRATIONS, nxt, ("ALTER TABLE games ADD COLUMN reviewer TEXT",))
    for _ in range(2):  # the second opening finds the new version: nothing to do
        PgJudgmentStore(pg_url).close()
    assert pg_server.sql(pg_url, "SELECT value FROM meta WHERE name = 'schema_version'") == [(str(nxt),)]
    assert pg_server.sql(pg_url, "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                                 "'judgewise' AND table_name = 'games' AND column_name = 'reviewer'") == [("reviewer",)]


def test_a_judgewise_schema_holding_something_else_is_refused(pg_url, pg_server):
    pg_server.sql(pg_url, "CREATE SCHEMA judgewise")
    pg_server.sql(pg_url, "CREATE TABLE judgewise.invoices (id INTEGER)")
    with pytest.raises(InputError, match="not a judgewise store"):
        PgJudgmentStore(pg_url)
    with pytest.raises(InputError, match="no judgewise store"):
        PgJudgmentStore.open_readonly(pg_url.rsplit("/", 1)[0] + "/postgres")  # a database without one


def test_store_copy_moves_a_store_between_sqlite_and_postgresql_and_rank_reads_both(pg_url, tmp_path):
    source, back = tmp_path / "judgments.sqlite", tmp_path / "back.sqlite"
    comps = [Comparison(f"p{p}", f"Question {p}?", a, b, f"{a} says {p}", f"{b} says {p}")
             for p in range(8) for a, b in (("m1", "m2"), ("m2", "m3"), ("m1", "m3"))]
    with FaultServer(latency_s=0.0) as srv:
        run_judging(comps, llm_judge(srv.url), source, concurrency=4)
    with JudgmentStore(source) as lite:
        lite.hold_answer("unfinished-game", "call-1", {"text": "[[A>B]]"})  # a journaled answer moves too
    up = cli_json("store", "copy", source, pg_url, "--json")
    assert up["games"] == 48 and up["answers"] == 1 and up["target_games"] == 48 and up["target_games_before"] == 0
    assert cli_json("store", "copy", source, pg_url, "--json")["target_games"] == 48  # again: nothing doubles
    down = cli_json("store", "copy", pg_url, back, "--json")
    assert down["target_games"] == 48 and down["answers"] == 1
    with JudgmentStore.open_readonly(source) as a, JudgmentStore.open_readonly(back) as b:
        pd.testing.assert_frame_equal(_sorted(a.frame()), _sorted(b.frame()))
        assert b.answer_rows() == a.answer_rows()
    ranked = cli_json("rank", source, "--json")
    assert cli_json("rank", pg_url, "--json") == ranked == cli_json("rank", back, "--json")
    stats = cli_json("store", "stats", pg_url, "--json")
    assert stats["games"] == 48 and stats["store"] == pg_url
    exported = tmp_path / "out.jsonl"
    assert run_cli("store", "export", pg_url, "--output", exported).returncode == 0
    assert len(exported.read_text().splitlines()) == 48
    assert copy_store(pg_url, tmp_path / "third.sqlite")["target_ok"] == stats["ok"]


def test_a_password_in_the_url_is_never_shown(pg_url, tmp_path):
    with_password = pg_url.replace("judgewise@", "judgewise:hunter2@")  # the test server trusts local TCP
    with FaultServer(latency_s=0.0) as srv:
        run_judging(comparisons(2), llm_judge(srv.url), with_password)
    res = run_cli("store", "stats", with_password)
    assert res.returncode == 0 and "hunter2" not in res.stdout + res.stderr and ":***@" in res.stdout
    assert masked(with_password) == pg_url.replace("judgewise@", "judgewise:***@")
    bad = run_cli("store", "stats", pg_url.replace("judgewise@", "judgewise:hunter2@").replace("/t", "/missing_t"))
    assert bad.returncode == 2 and "cannot connect to PostgreSQL" in bad.stderr and "hunter2" not in bad.stderr


def test_a_database_gone_longer_than_the_reconnect_window_is_a_clear_error_and_its_return_is_picked_up(pg_url,
                                                                                                   pg_server):
    proxy = TcpProxy(pg_server.port)
    try:
        with PgJudgmentStore(pg_url.replace(f":{pg_server.port}/", f":{proxy.port}/"), reconnect_s=1.0) as store:
            assert store.claim("k1") == "claimed"
            proxy.cut()
            with pytest.raises(StoreUnavailable, match=r"could not store a game: the database did not answer for 1s"):
                store.record(_record("k1", "ok", 1.0))
            store.release("k1")  # best effort: no error, no wait
            proxy.restore()
            store.record(_record("k1", "ok", 1.0))  # the pool connects again
            assert store.statuses(["k1"]) == {"k1": "ok"}
    finally:
        proxy.close()


def test_a_url_that_went_through_pathlib_is_repaired():
    from pathlib import Path

    assert store_location(Path("postgresql://u@h:5432/db")) == "postgresql://u@h:5432/db"
    assert store_location("postgres://h/db?sslmode=disable") == "postgres://h/db?sslmode=disable"
    assert store_location("runs/judgments.sqlite") == Path("runs/judgments.sqlite")
    assert json.loads(json.dumps(str(store_location(Path("x.sqlite"))))) == "x.sqlite"
