"""Issue 16 item 5: fewer, cheaper commits per judged game without losing anything paid for. Claims taken many in
one transaction answer as one-at-a-time claims do; an answer journaled inside an event loop is committed with its
game's row, or before that game's next call is sent, or on the loop's next turn, and always at close; WAL checkpoints
run in a background thread during a run. Real SQLite files, read from a second connection as another process would."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from judgewise.judges.runner import run_judging
from judgewise.store import leases
from judgewise.store.judgments import GameRecord, JudgmentStore

from tests.support.fault_server import FaultServer
from tests.support.judging import comparisons, llm_judge

ANSWER = {"text": "[[A>B]]", "tokens_in": 10, "tokens_out": 3, "latency_s": 0.1, "cost": 0.0, "top_logprobs": None,
          "raw": {}}


def _record(key: str) -> GameRecord:
    return GameRecord(key=key, prompt_id="p", model_a="a", model_b="b", first="a", swapped=False, judge="j",
                      template=None, judge_identity="{}", status="ok", outcome=1.0, n_calls=1)


def _journal(path) -> list[tuple]:
    """The journal as another process sees it: committed rows only."""
    with sqlite3.connect(path) as db:
        return db.execute("SELECT call, game FROM answers ORDER BY call").fetchall()


def test_claims_taken_in_one_transaction_answer_as_one_at_a_time_claims(tmp_path):
    path = tmp_path / "s.sqlite"
    with JudgmentStore(path) as other, JudgmentStore(path) as mine:
        other.record(_record("stored"))
        assert other.claim("held") == "claimed"
        answers = mine.claim_many(["new1", "stored", "held", "new2"])
        assert answers == ["claimed", "done", "busy", "claimed"]
        assert [mine.claim(k) for k in ("stored", "held")] == ["done", "busy"]  # the one-at-a-time answers
        with sqlite3.connect(path) as db:
            owners = dict(db.execute("SELECT key, owner FROM claims").fetchall())
    assert owners == {"held": other.owner, "new1": mine.owner, "new2": mine.owner}


def test_an_answer_journaled_in_an_event_loop_is_committed_on_the_next_turn(tmp_path):
    path = tmp_path / "s.sqlite"

    async def go():
        with JudgmentStore(path) as store:
            store.hold_answer("game1", "call1", ANSWER)
            before = _journal(path)
            await asyncio.sleep(0)  # the loop's next turn
            await asyncio.sleep(0)
            return before, _journal(path)
    before, after = asyncio.run(go())
    assert before == [] and after == [("call1", "game1")]


def test_a_held_answer_is_durable_before_the_next_call_and_superseded_by_its_games_row(tmp_path):
    path = tmp_path / "s.sqlite"

    async def go():
        with JudgmentStore(path) as store:
            store.hold_answer("game1", "call1", ANSWER)  # game1's first answer: no verdict, it will re-ask
            store.hold_answer("game2", "call2", ANSWER)  # game2's answer, recorded in the same step below
            assert store.held_answer("call-reask") is None  # run before game1's re-ask is sent: commits both
            sent = _journal(path)
            store.hold_answer("game3", "call3", ANSWER)
            store.record(_record("game3"))  # game3's row in the same step: its answer never needs a journal row
            store.record(_record("game2"))
            return sent, _journal(path), store.held_answer("call1")
    sent, after, reused = asyncio.run(go())
    assert sent == [("call1", "game1"), ("call2", "game2")]
    assert after == [("call1", "game1")]  # game2's row took its answer out; game3's never went in
    assert reused == ANSWER


def test_answers_still_held_are_committed_at_close(tmp_path):
    path = tmp_path / "s.sqlite"

    async def go():
        store = JudgmentStore(path)
        store.hold_answer("game1", "call1", ANSWER)
        store.close()
    asyncio.run(go())
    assert _journal(path) == [("call1", "game1")]


def test_a_run_checkpoints_the_wal_in_the_background_and_restores_automatic_checkpoints(tmp_path):
    path = tmp_path / "s.sqlite"
    with JudgmentStore(path) as store:
        with store.background_checkpoints(every_s=0.05):
            assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
            for i in range(20):
                store.record(_record(f"k{i}"))
            time.sleep(0.5)
            # the database file itself (read without its WAL) already holds the rows: the thread copied them
            with sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True) as db:
                in_file = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    assert in_file == 20


def test_a_run_at_high_concurrency_stores_every_game_once_with_no_claim_or_journal_left(tmp_path):
    comps = comparisons(150)
    with FaultServer(latency_s=0.01) as srv:
        result = run_judging(comps, llm_judge(srv.url), tmp_path / "s.sqlite", concurrency=64)
        successes = dict(srv.successes)
    assert result.judged == 300 and result.calls_made == 300 and set(successes.values()) == {1}
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        assert db.execute("SELECT COUNT(*), SUM(n_calls) FROM games").fetchone() == (300, 300)
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 0


def test_rows_finished_in_one_turn_are_committed_together_and_a_refused_row_alone_is_left_out(tmp_path):
    path = tmp_path / "s.sqlite"
    bad = _record("bad")
    bad.tokens_in = ["not", "a", "number"]  # a value SQLite cannot bind: this row alone is refused

    async def go():
        with JudgmentStore(path) as store:
            store.hold_answer("game1", "call1", ANSWER)  # game1's row below supersedes it
            store.hold_answer("other", "call2", ANSWER)  # a game still in play: journaled with the rows
            waits = [store.record_soon(_record(k)) for k in ("game1", "game2")] + [store.record_soon(bad)]
            with sqlite3.connect(path) as db:
                before = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            outcomes = await asyncio.gather(*waits, return_exceptions=True)
            with sqlite3.connect(path) as db:
                games = sorted(k for (k,) in db.execute("SELECT key FROM games"))
            return before, outcomes, games
    before, outcomes, games = asyncio.run(go())
    assert before == 0  # nothing committed before the end of the turn
    assert outcomes[:2] == [None, None] and isinstance(outcomes[2], sqlite3.ProgrammingError)
    assert games == ["game1", "game2"] and _journal(path) == [("call2", "other")]


def test_before_a_call_only_answers_whose_rows_are_not_waiting_to_be_committed_are_journaled(tmp_path):
    path = tmp_path / "s.sqlite"

    async def go():
        with JudgmentStore(path) as store:
            store.hold_answer("game1", "call1", ANSWER)  # game1 will re-ask: its answer must be durable first
            store.hold_answer("game2", "call2", ANSWER)
            waiting = store.record_soon(_record("game2"))  # game2's row supersedes its answer at the end of the turn
            assert store.held_answer("call-reask") is None  # before game1's re-ask is sent
            sent = _journal(path)
            await waiting
            return sent, _journal(path)
    sent, after = asyncio.run(go())
    assert sent == [("call1", "game1")] and after == [("call1", "game1")]


class _DiskFailsAfter(JudgmentStore):
    """A store whose commits fail (as a full or failing disk fails them) once ``ok`` rows are written."""

    ok = 40

    def _write_rows(self, recs: list) -> None:
        if self.count() + len(recs) > self.ok:
            raise sqlite3.OperationalError("disk I/O error")
        super()._write_rows(recs)


def test_a_commit_that_fails_stops_the_run_with_its_error_and_keeps_what_was_committed(tmp_path):
    path = tmp_path / "s.sqlite"
    with FaultServer(latency_s=0.01) as srv:
        store = _DiskFailsAfter(path)
        try:
            with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
                run_judging(comparisons(100), llm_judge(srv.url), store, concurrency=16)
        finally:
            store.close()
        answered = srv.total_successes()
    with sqlite3.connect(path) as db:
        stored = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    assert 0 < stored <= _DiskFailsAfter.ok
    assert answered < 200  # the workers stopped: not every game was asked


def test_the_wal_starts_again_at_its_head_once_past_its_bound_while_rows_keep_coming(tmp_path, monkeypatch):
    def biggest_wal(bound: int) -> int:
        monkeypatch.setattr(leases, "WAL_RESTART_BYTES", bound)
        path = tmp_path / f"s{bound}.sqlite"
        sizes = []

        async def go():
            with JudgmentStore(path) as store, store.background_checkpoints(every_s=0.01):
                for turn in range(400):
                    rows = [_record(f"k{turn}-{i}") for i in range(4)]
                    for rec in rows:
                        rec.raw = "x" * 3000
                    await asyncio.gather(*(store.record_soon(rec) for rec in rows))  # a commit a turn, as a run's
                    sizes.append(Path(f"{path}-wal").stat().st_size)
        asyncio.run(go())
        return max(sizes)
    unbounded, bounded = biggest_wal(1 << 40), biggest_wal(64 << 10)
    assert bounded < unbounded / 2, (bounded, unbounded)


def test_a_reader_holding_a_snapshot_never_holds_the_writer_back_through_the_wals_restart(tmp_path, monkeypatch):
    """The RESTART checkpoint cannot finish while a reader (another process, a run reading its rows back) holds an
    old snapshot; it must give up at once rather than wait for the reader while new writers are held back."""
    monkeypatch.setattr(leases, "WAL_RESTART_BYTES", 16 << 10)
    path = tmp_path / "s.sqlite"
    slowest = 0.0
    with JudgmentStore(path) as store:
        store.record(_record("first"))
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM games").fetchone()  # a snapshot held until ROLLBACK
        try:
            with store.background_checkpoints(every_s=0.3):
                deadline = time.monotonic() + 1.5
                i = 0
                while time.monotonic() < deadline:
                    rec = _record(f"k{i}")
                    rec.raw = "x" * 3000
                    t0 = time.monotonic()
                    store.record(rec)
                    slowest = max(slowest, time.monotonic() - t0)
                    i += 1
        finally:
            reader.execute("ROLLBACK")
            reader.close()
    assert slowest < 0.15, slowest
