"""Issue 10 item 1: a malformed HTTP 200 (HTML, truncated JSON, empty body, JSON array or scalar, an object
without choices, wrong types inside) is a failed attempt with its reason — retried, then a failed game — and
never a crash of the run. Real engine, real HTTP server on 127.0.0.1, real SQLite store."""

from __future__ import annotations

import pytest

from judgewise.judges.base import MalformedResponseError
from judgewise.judges.openai_backend import parse_chat_body
from judgewise.judges.runner import run_judging
from judgewise.judges.scheduler import RetryPolicy
from judgewise.store.judgments import JudgmentStore

from tests.support.fault_server import MALFORMED, FaultServer, request_key
from tests.support.judging import comparisons, llm_judge


def _fault_plan(kind: str):
    """Per request: always ``kind`` for about 1 in 8 requests (those games fail), ``kind`` once then a good
    answer for about half, a good answer at once for the rest."""
    def fault(messages, seen):
        h = int(request_key(messages)[:2], 16)
        if h < 32:
            return kind
        return kind if h < 160 and seen == 0 else None
    return fault


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_malformed_200_is_a_retried_attempt_then_a_failed_game_never_a_crash(tmp_path, kind):
    comps = comparisons(12)
    with FaultServer(latency_s=0.001, fault_fn=_fault_plan(kind)) as srv:
        result = run_judging(comps, llm_judge(srv.url), tmp_path / "s.sqlite", concurrency=4, timeout_s=10,
                             retry=RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.01))
        events, successes = dict(srv.events), dict(srv.successes)
    assert events.get(kind, 0) > 0  # the malformed body really was sent
    with JudgmentStore.open_readonly(tmp_path / "s.sqlite") as store:
        frame = store.frame()
    assert len(frame) == 24 and result.judged + result.failed == 24
    assert result.judged > 0 and result.retries > 0
    failed = frame[frame["status"] == "failed"]
    assert len(failed) > 0 and failed["error"].str.contains("malformed response").all(), failed["error"].tolist()
    assert failed["error"].str.contains("gave up after 3 attempts").all()
    # a malformed body is not an answer: every valid answer delivered was stored, none repeated
    assert set(successes.values()) <= {1}
    assert sum(successes.values()) == int(frame["n_calls"].sum())


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_parse_chat_body_names_what_is_wrong_with_each_malformed_body(kind):
    expected = "malformed response \\(a success status, but not a chat completion\\): "
    with pytest.raises(MalformedResponseError, match=expected):
        parse_chat_body(MALFORMED[kind][1])


@pytest.mark.parametrize("body, text", [
    (b'{"choices": []}', ""),                                              # no choices: empty answer, re-asked
    (b'{"choices": null}', ""),
    (b'{"choices": [{"message": null}]}', ""),                             # null message
    (b'{"choices": [{"message": {"content": null}}]}', ""),                # null content
    (b'{"choices": [{"message": {"content": "[[A>B]]"}}], "usage": "x"}', "[[A>B]]"),  # bad usage: 0 tokens
])
def test_bodies_that_already_worked_keep_working(body, text):
    parsed = parse_chat_body(body)
    assert parsed.text == text and parsed.tokens_in == 0 and parsed.tokens_out == 0


def test_a_body_nested_too_deep_is_malformed_not_a_recursion_error():
    with pytest.raises(MalformedResponseError):
        parse_chat_body(b"[" * 100_000 + b"]" * 100_000)
