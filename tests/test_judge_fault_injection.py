"""Issue 3 acceptance 1: 2,000 judgments through a faulty OpenAI-compatible server all end stored, once paid."""

from __future__ import annotations

from collections import Counter

from judgewise.judges.runner import run_judging
from judgewise.judges.scheduler import RetryPolicy
from judgewise.judges.store import JudgmentStore

from tests.fault_server import FaultServer
from tests.judge_support import comparisons, llm_judge

RATES = {"429": 0.05, "500": 0.05, "timeout": 0.02, "drop": 0.03, "empty": 0.03, "garbage": 0.03}


def test_2000_judgments_survive_faults_and_no_successful_call_is_repeated(tmp_path):
    comps = comparisons(1000)  # both orders: 2,000 games
    with FaultServer(latency_s=0.005, rates=RATES, seed=7, hang_s=3.0) as srv:
        judge = llm_judge(srv.url)
        result = run_judging(comps, judge, tmp_path / "store.sqlite", concurrency=32, timeout_s=1.0,
                             retry=RetryPolicy(max_attempts=8, base_delay_s=0.01, max_delay_s=0.2))
        successes = Counter(srv.successes)
        events = Counter(srv.events)

    # every fault kind really happened
    assert all(events[k] > 0 for k in RATES), events
    # every game is stored, as judged or as failed with a reason
    with JudgmentStore(tmp_path / "store.sqlite") as store:
        frame = store.frame()
    assert len(frame) == 2000 and result.n_games == 2000
    assert set(frame["status"]) <= {"ok", "failed"}
    failed = frame[frame["status"] == "failed"]
    assert failed["error"].notna().all() and (failed["error"].str.len() > 0).all()
    assert frame.loc[frame["status"] == "ok", "outcome"].between(0, 1).all()
    assert result.judged + result.failed == 2000
    # no successful call was ever repeated, and every one of them is accounted for by a stored game
    assert max(successes.values()) == 1
    assert sum(successes.values()) == int(frame["n_calls"].sum()) == result.calls_made
    # garbage/empty answers caused re-asks (games with two calls)
    assert (frame["n_calls"] == 2).sum() > 0
    assert result.retries > 0


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
