"""Worker mode's feed (judges.worker_feed) on a real PostgreSQL store: two workers of one job, each with its own
connection and live loop, claim every game of the job's queue exactly once between them, and the job's id is the
same for every worker of the same games."""

from __future__ import annotations

import asyncio
from collections import deque

import pytest

from judgewise.errors import ConfigError
from judgewise.judges import eventloop
from judgewise.judges.batch import BatchSettings
from judgewise.judges.engine import LiveRun, Progress
from judgewise.judges.game_keys import keyed_games, plan_games
from judgewise.judges.limits import Budget
from judgewise.judges.run_result import RunSettings
from judgewise.judges.runner import game_recorder
from judgewise.judges.worker_feed import check_worker_mode, job_id, play_shared
from judgewise.store.judgments import JudgmentStore
from judgewise.store.postgres import PgJudgmentStore

from tests.support.fault_server import FaultServer
from tests.support.judging import comparisons, llm_judge
from tests.support.pg_server import pg_server, pg_url  # noqa: F401 (fixtures)


def test_every_worker_of_the_same_games_names_the_same_job():
    keys = [f"k{i}" for i in range(5)]
    assert job_id(keys, False) == job_id(reversed(keys), False)
    assert job_id(keys, False) != job_id(keys, True) and job_id(keys, False) != job_id(keys[:4], False)


def test_worker_mode_is_refused_with_batches_and_on_a_sqlite_store(tmp_path):
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        with pytest.raises(ConfigError, match="shared PostgreSQL store"):
            check_worker_mode(store, RunSettings(worker=True))
        with pytest.raises(ConfigError, match="do not go together"):
            check_worker_mode(store, RunSettings(worker=True, batch=BatchSettings()))
        check_worker_mode(store, RunSettings())  # not a worker: nothing to refuse


@pytest.mark.postgres
def test_two_feeds_on_one_store_claim_each_game_of_the_job_once(pg_url):
    pytest.importorskip("psycopg", reason="psycopg not installed: pip install 'judgewise[postgres]'")
    settings = RunSettings(worker=True, concurrency=4, poll_s=0.05)
    with FaultServer(latency_s=0.01) as srv, PgJudgmentStore(pg_url) as one, PgJudgmentStore(pg_url) as two:
        runs = []
        for store in (one, two):
            judge = llm_judge(srv.url)
            identity = dict(judge.identity)
            keyed = keyed_games(identity, plan_games(comparisons(8)), judge)
            runs.append((LiveRun(judge, store, identity, Budget(), False, None, 0.0, game_recorder(identity),
                                 state=Progress(total=len(keyed))), keyed))

        async def both():
            try:
                await asyncio.gather(*(play_shared(run, keyed, deque(keyed.items()), settings) for run, keyed in runs))
            finally:
                for run, _ in runs:
                    await run.judge.backend.aclose()
        eventloop.run(both())
        stored = one.frame()
        assert srv.total_successes() == 16 and one.queued(job_id(runs[0][1], False)) == 0
    by_one, by_two = (set(run.stored_keys) for run, _ in runs)
    assert not by_one & by_two and by_one | by_two == set(runs[0][1]) == set(stored["key"])
    assert len(by_one) + len(by_two) == 16 and len(stored) == 16
