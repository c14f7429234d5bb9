"""The event loop of a judging run: uvloop's where installed, asyncio's when ``JUDGEWISE_EVENT_LOOP=asyncio`` asks for
it (a clear error for any other value), and a run judges the same games, stored the same way, on either."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from judgewise.errors import ConfigError
from judgewise.judges import eventloop
from judgewise.judges.runner import run_judging

from tests.support.fault_server import FaultServer
from tests.support.judging import comparisons, llm_judge

uvloop = pytest.importorskip("uvloop")


async def _loop_type() -> type:
    return type(asyncio.get_running_loop())


def test_a_run_is_on_uvloops_loop_unless_asyncios_is_asked_for(monkeypatch):
    monkeypatch.delenv("JUDGEWISE_EVENT_LOOP", raising=False)
    assert eventloop.run(_loop_type()) is uvloop.Loop
    monkeypatch.setenv("JUDGEWISE_EVENT_LOOP", "asyncio")
    assert not issubclass(eventloop.run(_loop_type()), uvloop.Loop)


def test_an_unknown_event_loop_is_a_config_error_naming_the_choices(monkeypatch):
    monkeypatch.setenv("JUDGEWISE_EVENT_LOOP", "trio")
    with pytest.raises(ConfigError, match=r"JUDGEWISE_EVENT_LOOP.*'uvloop', 'asyncio'.*'trio'"):
        eventloop.run(_loop_type())


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_both_loops_judge_and_store_every_game_once(tmp_path, monkeypatch, loop):
    monkeypatch.setenv("JUDGEWISE_EVENT_LOOP", loop)
    with FaultServer(latency_s=0.005) as srv:
        result = run_judging(comparisons(40), llm_judge(srv.url), tmp_path / "s.sqlite", concurrency=16)
        answered = dict(srv.successes)
    assert result.judged == 80 and result.calls_made == 80 and set(answered.values()) == {1}
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        assert db.execute("SELECT COUNT(*), SUM(n_calls) FROM games").fetchone() == (80, 80)
        assert db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
