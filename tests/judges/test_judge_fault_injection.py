"""Judgments through a faulty OpenAI-compatible server (every fault kind, malformed 200s included) all end
stored; the engine never re-sends a call whose answer it holds, and counts calls that timed out after
being sent as "maybe charged". Only what the engine guarantees whatever the machine's load is asserted here;
how fast it goes and how often a timeout hits an answered call are measured in benchmarks/fault_soak.py."""

from __future__ import annotations

import asyncio
from collections import Counter

from judgewise.judges.base import Completion
from judgewise.judges.llm_judge import LLMJudge
from judgewise.judges.openai_backend import OpenAIBackend
from judgewise.judges.runner import arun_judging, run_judging
from judgewise.judges.scheduler import RetryPolicy
from judgewise.store.judgments import JudgmentStore

from tests.support.fault_server import FAULTS, HOSTILE_HTTP, HOSTILE_VALUES, MALFORMED, FaultServer, request_key
from tests.support.judging import MODEL, comparisons, llm_judge

RATES = {"429": 0.04, "500": 0.04, "timeout": 0.02, "drop": 0.03, "empty": 0.03, "garbage": 0.03,
         **{kind: 0.01 for kind in MALFORMED}}


class SpyBackend:
    """The real backend, watched: which calls were sent, and which answers were handed back to the engine."""

    def __init__(self, inner: OpenAIBackend):
        self.inner, self.identity = inner, inner.identity
        self.answered: set[str] = set()
        self.resent_after_answer: list[str] = []
        self.answers = 0

    async def complete(self, messages: list[dict], **kw) -> Completion:
        key = request_key(messages)
        if key in self.answered:
            self.resent_after_answer.append(key)
        comp = await self.inner.complete(messages, **kw)
        self.answered.add(key)
        self.answers += 1
        return comp


def test_faulty_endpoint_every_game_stored_no_held_answer_resent_and_timeouts_counted(tmp_path):
    comps = comparisons(150)  # both orders: 300 games
    with FaultServer(latency_s=0.002, rates=RATES, seed=7, hang_s=2.5) as srv:
        spy = SpyBackend(OpenAIBackend(MODEL, base_urls=srv.url))
        result = run_judging(comps, LLMJudge(spy, "arena_hard_5way"), tmp_path / "store.sqlite", concurrency=16,
                             timeout_s=2.0, retry=RetryPolicy(max_attempts=8, base_delay_s=0.01, max_delay_s=0.1))
        successes, events = Counter(srv.successes), Counter(srv.events)

    assert all(events[k] > 0 for k in RATES), events  # every fault kind really happened
    with JudgmentStore.open_readonly(tmp_path / "store.sqlite") as store:
        frame = store.frame()
        assert store.maybe_charged_timeouts() == result.maybe_charged_timeouts
    assert len(frame) == 300 and result.n_games == 300 and result.judged + result.failed == 300
    assert set(frame["status"]) <= {"ok", "failed"}
    failed = frame[frame["status"] == "failed"]
    assert failed["error"].notna().all() and (failed["error"].str.len() > 0).all()
    assert frame.loc[frame["status"] == "ok", "outcome"].between(0, 1).all()
    # never re-send a call whose answer the engine holds
    assert spy.resent_after_answer == []
    # every answer received is stored with its game (re-asks included)
    assert spy.answers == int(frame["n_calls"].sum()) == result.calls_made
    assert (frame["n_calls"] == 2).sum() > 0 and result.retries > 0
    # the server delivered a valid answer more than once only for calls the client timed out on after sending
    assert result.maybe_charged_timeouts >= events["timeout"]
    assert sum(successes.values()) <= int(frame["n_calls"].sum()) + result.maybe_charged_timeouts
    assert sum(n - 1 for n in successes.values()) <= result.maybe_charged_timeouts


def test_every_call_that_times_out_after_sending_is_counted_as_maybe_charged(tmp_path):
    with FaultServer(latency_s=0.0, fault_fn=lambda messages, seen: "timeout", hang_s=1.0) as srv:
        result = run_judging(comparisons(3), llm_judge(srv.url), tmp_path / "s.sqlite", concurrency=6,
                             timeout_s=0.2, retry=RetryPolicy(max_attempts=2, base_delay_s=0.001))
    assert result.failed == 6 and result.maybe_charged_timeouts == 12  # 6 games x 2 attempts
    assert result.summary()["maybe_charged_timeouts"] == 12
    with JudgmentStore.open_readonly(tmp_path / "s.sqlite") as store:
        assert store.maybe_charged_timeouts() == 12 and store.stats()["maybe_charged_timeouts"] == 12


def test_an_answer_received_before_a_stop_is_used_by_the_rerun_not_paid_again(tmp_path):
    """First calls answer garbage (so the judge re-asks); re-asks hang; the run is cancelled while they hang.
    The rerun answers the re-asks and takes the first answers from the store's journal: none is re-sent."""
    hold = {"reask": "timeout"}

    def fault(messages, seen):
        return "garbage" if len(messages) <= 2 else hold["reask"]

    comps, path = comparisons(4), tmp_path / "s.sqlite"
    with FaultServer(latency_s=0.0, fault_fn=fault, hang_s=30.0) as srv:
        async def stopped_run():
            task = asyncio.ensure_future(arun_judging(comps, llm_judge(srv.url), path, concurrency=8, timeout_s=60))
            while srv.total_successes() < 8 or srv.events["timeout"] < 8:
                await asyncio.sleep(0.02)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

        asyncio.run(stopped_run())
        first = dict(srv.successes)
        hold["reask"] = None  # re-asks are answered from now on (the first calls would still get garbage)
        rerun = run_judging(comps, llm_judge(srv.url), path, concurrency=8, timeout_s=10)
        after = dict(srv.successes)

    assert len(first) == 8 and set(first.values()) == {1}  # 8 games' first calls answered once, before the stop
    assert all(after[k] == 1 for k in first)  # ... and never sent again
    assert rerun.reused_answers == 8 and rerun.judged == 8 and rerun.calls_made == 8  # the re-asks only
    assert (rerun.judgments["n_calls"] == 2).all()


def test_rerun_of_a_finished_job_makes_zero_calls(tmp_path):
    comps = comparisons(40)
    with FaultServer(latency_s=0.001, rates={"500": 0.1}, seed=1) as srv:
        first = run_judging(comps, llm_judge(srv.url), tmp_path / "s.sqlite", concurrency=8,
                            retry=RetryPolicy(base_delay_s=0.01))
        before = sum(srv.requests.values())
        again = run_judging(comps, llm_judge(srv.url), tmp_path / "s.sqlite", concurrency=8)
        after = sum(srv.requests.values())
    assert first.judged + first.failed == 80
    assert after == before and again.calls_made == 0 and again.cached == 80
    assert again.judgments["judgment_id"].tolist() == first.judgments["judgment_id"].tolist()


def test_new_fault_kinds_are_appended_so_seeded_draws_of_the_old_kinds_are_unchanged():
    assert FAULTS[:7] == ("429", "500", "timeout", "drop", "empty", "garbage", "too_long")
    assert FAULTS[7:7 + len(MALFORMED)] == tuple(MALFORMED)
    assert FAULTS[7 + len(MALFORMED):] == (*HOSTILE_VALUES, *HOSTILE_HTTP)  # issue 26: the malicious server's modes
