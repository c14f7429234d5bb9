"""The scheduler: one retry policy per call (Retry-After, backoff cap, timeouts), fatal errors stop the run,
rate limits space calls out, budget caps stop before paying more, and load spreads over endpoints."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.errors import BudgetExceeded, ConfigError, JudgeError
from judgewise.judges.limits import Budget, TokenBucket
from judgewise.judges.runner import run_judging
from judgewise.judges.scheduler import RetryPolicy, call_json, call_key

from tests.support.fault_server import FaultServer
from tests.support.judging import comparisons, llm_judge

FAST = RetryPolicy(max_attempts=4, base_delay_s=0.005, max_delay_s=0.05)


def test_retry_policy_honours_retry_after_and_caps_exponential_backoff():
    policy, rng = RetryPolicy(base_delay_s=0.5, max_delay_s=4.0, max_retry_after_s=60.0), random.Random(0)
    assert policy.delay(1, 7.0, rng) == 7.0
    assert policy.delay(1, 600.0, rng) == 60.0
    for attempt in range(1, 12):
        bound = min(4.0, 0.5 * 2 ** (attempt - 1))
        assert all(0.0 <= policy.delay(attempt, None, rng) <= bound for _ in range(200))


@pytest.mark.parametrize("bad", [{"max_attempts": 0}, {"max_attempts": 2.5}, {"base_delay_s": -1.0},
                                 {"max_delay_s": float("nan")}])
def test_retry_policy_rejects_settings_that_cannot_make_a_call(bad):
    field = next(iter(bad))
    with pytest.raises(ConfigError, match=f"limits.{field}"):
        RetryPolicy(**bad)


def test_rpm_bucket_never_lets_more_than_the_rate_through():
    async def burst(n: int) -> float:
        bucket = TokenBucket(per_minute=1200)  # 20/s, a burst of at most one second's worth
        t0 = time.monotonic()
        for _ in range(n):
            await bucket.acquire()
        return time.monotonic() - t0

    assert asyncio.run(burst(30)) >= (30 - 20) / 20  # the 10 beyond the burst wait for refills


def test_a_retry_after_429_waits_at_least_what_the_server_asked(tmp_path):
    rate_limited_once = lambda messages, seen: "429" if seen == 0 else None  # noqa: E731
    with FaultServer(fault_fn=rate_limited_once, retry_after_s=0.3) as srv:
        t0 = time.monotonic()
        result = run_judging(comparisons(1), llm_judge(srv.url), tmp_path / "s.sqlite", orders="one", retry=FAST)
        elapsed = time.monotonic() - t0
    assert result.judged == 1 and result.retries == 1 and elapsed >= 0.3


def test_non_retryable_error_stops_the_run_with_a_clear_message(tmp_path):
    with FaultServer(model="another-model") as srv:  # our model name is unknown there: HTTP 404
        with pytest.raises(JudgeError, match=r"HTTP 404.*judge-model.*not found") as info:
            run_judging(comparisons(50), llm_judge(srv.url), tmp_path / "s.sqlite", concurrency=4, retry=FAST)
        n_requests = sum(srv.requests.values()) + srv.events["abandoned"]
    assert n_requests <= 4 + 1  # stopped instead of looping: at most the calls already in flight
    result = info.value.result
    assert result.judged == 0 and len(result.judgments) == 0  # nothing stored, no claim left behind


def test_a_transient_failure_of_the_reask_never_repeats_the_first_call(tmp_path):
    def script(messages, seen):
        if len(messages) <= 2:  # first call of a game (system + user): answer without a verdict
            return "garbage"
        return "500" if seen == 0 else None  # the re-ask fails once, then succeeds

    with FaultServer(fault_fn=script) as srv:
        result = run_judging(comparisons(10), llm_judge(srv.url), tmp_path / "s.sqlite", retry=FAST)
        successes, requests = dict(srv.successes), dict(srv.requests)
    assert result.judged == 20 and (result.judgments["n_calls"] == 2).all()
    assert set(successes.values()) == {1} and len(successes) == 40  # 20 first calls + 20 re-asks, each once
    assert sorted(requests.values()).count(2) == 20  # only the re-asks were sent twice


def test_a_reask_that_exhausts_its_retries_still_counts_the_paid_first_call(tmp_path):
    def script(messages, seen):
        return "garbage" if len(messages) <= 2 else "500"  # first call unparsable, every re-ask fails

    with FaultServer(fault_fn=script) as srv:
        result = run_judging(comparisons(3), llm_judge(srv.url), tmp_path / "s.sqlite", retry=FAST)
    rows = result.judgments
    assert result.failed == 6 and (rows["status"] == "failed").all()
    assert (rows["n_calls"] == 1).all() and (rows["tokens_in"] > 0).all() and result.calls_made == 6
    assert rows["raw"].str.contains("no verdict at all").all()
    assert rows["error"].str.contains("re-ask").all() and rows["error"].str.contains("HTTP 500").all()


def test_a_prompt_too_long_for_the_server_fails_its_game_and_the_run_goes_on(tmp_path):
    too_long_once = lambda messages, seen: "too_long" if "number 1?" in str(messages) else None  # noqa: E731
    with FaultServer(fault_fn=too_long_once) as srv:
        result = run_judging(comparisons(4), llm_judge(srv.url), tmp_path / "s.sqlite", retry=FAST)
        requests = sum(srv.requests.values())
    failed = result.judgments[result.judgments["status"] == "failed"]
    assert result.judged == 6 and result.stopped is None and requests == 8  # no retry of the too-long prompt
    assert set(failed["prompt_id"]) == {"p1"} and failed["error"].str.contains("prompt too long").all()


def test_calls_that_time_out_are_retried_and_succeed(tmp_path):
    hang_first = lambda messages, seen: "timeout" if seen == 0 else None  # noqa: E731
    with FaultServer(fault_fn=hang_first, hang_s=5.0) as srv:
        result = run_judging(comparisons(4), llm_judge(srv.url), tmp_path / "s.sqlite", timeout_s=0.3, retry=FAST)
        successes = dict(srv.successes)
    assert result.judged == 8 and result.retries == 8
    assert set(successes.values()) == {1}


def test_exhausted_retries_store_the_game_as_failed_with_the_reason(tmp_path):
    always_500 = lambda messages, seen: "500"  # noqa: E731
    with FaultServer(fault_fn=always_500) as srv:
        result = run_judging(comparisons(3), llm_judge(srv.url), tmp_path / "s.sqlite", retry=FAST)
        requests = dict(srv.requests)
    assert result.failed == 6 and result.judged == 0
    assert result.judgments["error"].str.contains("gave up after 4 attempts; last error: HTTP 500").all()
    assert set(requests.values()) == {4}


def test_call_budget_stops_before_the_cap_and_a_rerun_continues(tmp_path):
    comps = comparisons(20)
    with FaultServer(latency_s=0.005) as srv:
        with pytest.raises(BudgetExceeded, match="max_calls = 10") as info:
            run_judging(comps, llm_judge(srv.url), tmp_path / "s.sqlite", concurrency=4,
                        budget=Budget(max_calls=10))
        paid = sum(srv.successes.values())
        stopped = info.value.result
        rest = run_judging(comps, llm_judge(srv.url), tmp_path / "s.sqlite", concurrency=4)
    assert paid <= 10 and stopped.calls_made == paid and stopped.judged == paid
    assert rest.cached == paid and rest.judged == 40 - paid
    assert set(srv.successes.values()) == {1}


def test_calls_spread_over_several_endpoints(tmp_path):
    with FaultServer() as one, FaultServer() as two:
        for spread in ("round_robin", "least_busy"):
            run_judging(comparisons(20), llm_judge([one.url, two.url], spread=spread), tmp_path / f"{spread}.sqlite")
        counts = [sum(one.successes.values()), sum(two.successes.values())]
    assert sum(counts) == 80 and min(counts) >= 20


def test_a_one_call_at_a_time_backend_gets_one_call_in_flight_so_queued_calls_never_time_out():
    """The embedded judge answers one call at a time (max_concurrency = 1); with --concurrency 8 the other calls
    waited inside the per-call timeout, timed out and were retried while the model worked (5 of 12 in a docs run)."""
    from judgewise.judges.base import Completion
    from judgewise.judges.scheduler import ScheduledBackend

    class OneAtATime:
        identity = {"backend": "one-at-a-time"}
        max_concurrency = 1

        def __init__(self):
            self.lock, self.running, self.most = asyncio.Lock(), 0, 0

        async def complete(self, messages, **kw):
            async with self.lock:  # as LocalBackend: calls queue for the one model
                self.running += 1
                self.most = max(self.most, self.running)
                await asyncio.sleep(0.2)
                self.running -= 1
                return Completion(text="A", tokens_in=1, tokens_out=1)

    async def run(backend):
        scheduled = ScheduledBackend(backend, concurrency=8, timeout_s=1.0, policy=RetryPolicy(max_attempts=1))
        await asyncio.gather(*(scheduled.complete([{"role": "user", "content": str(i)}]) for i in range(8)))
        return scheduled.stats

    backend = OneAtATime()
    stats = asyncio.run(run(backend))  # 8 calls of 0.2 s in a row: the last ends at 1.6 s, past a queued timeout
    assert stats.calls_ok == 8 and backend.most == 1


@settings(max_examples=60, deadline=None)
@given(identity=st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.booleans(), st.integers(), st.text())),
       texts=st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",))), max_size=3),
       max_tokens=st.one_of(st.none(), st.integers(0, 4096)), grammar=st.one_of(st.none(), st.text()))
def test_a_call_key_is_the_hash_of_the_calls_json_whether_or_not_the_identity_comes_encoded(identity, texts,
                                                                                            max_tokens, grammar):
    """Keys journaled by earlier runs must still be found: the key is the hash of json.dumps([identity, messages,
    options]) (sorted keys), however it is put together."""
    messages = [{"role": "user", "content": t} for t in texts]
    kw = {"max_tokens": max_tokens, "want_logprobs": False, "grammar": grammar}
    whole = json.dumps([identity, messages, kw], sort_keys=True, ensure_ascii=False, default=str)
    expected = hashlib.sha256(whole.encode("utf-8")).hexdigest()
    assert call_key(identity, messages, **kw) == expected == call_key(call_json(identity), messages, **kw)
