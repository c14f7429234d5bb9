"""plan --tokens-in: the plan's calls priced live, with the prompt cache (OpenAI's rule) and by batch."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.commands.plan_cost import cached_share
from judgewise.judges.prices import resolve_prices
from judgewise.judges.prompt_cache import CACHE_BLOCK_TOKENS, CACHE_MIN_TOKENS
from tests.support import cli_json, run_cli


def test_a_prompts_calls_after_the_first_read_the_shared_prefix_in_whole_blocks():
    blocks = 1100 // CACHE_BLOCK_TOKENS * CACHE_BLOCK_TOKENS  # 1,024: at the cache's minimum
    assert blocks >= CACHE_MIN_TOKENS
    assert cached_share(1500, 1100, 4) == pytest.approx(3 * blocks / (4 * 1500))
    assert cached_share(1500, 1000, 4) == 0.0  # a shared prefix under 1,024 tokens is never cached
    assert cached_share(1500, 1100, 1) == 0.0  # one call a prompt: nothing sent before it


def test_plan_prices_its_calls_in_both_orders_at_the_models_prices():
    args = ["plan", "--models", "8", "--natural-baseline", "base", "--effect", "0.1", "--tokens-in", "1500",
            "--tokens-out", "3", "--shared-tokens", "1100", "--judge-model", "gpt-4.1"]
    plan = cli_json(*args, "--json")
    cost, prices = plan["cost"], resolve_prices("gpt-4.1")
    calls = 2 * (plan["judge_calls"] + plan["pilot_calls"])
    share = cached_share(1500, 1100, calls / plan["n_prompts"])
    assert cost["calls"] == calls and cost["cached_share"] == pytest.approx(share, abs=1e-6)
    assert cost["live"] == pytest.approx(calls * prices.cost(1500, 3), rel=1e-6)
    per_call_cached = round(1500 * share)
    assert cost["cached"] == pytest.approx(calls * prices.cost(1500, 3, cached_in=per_call_cached), rel=1e-6)
    assert cost["batch"] == pytest.approx(calls * prices.cost(1500, 3, cached_in=per_call_cached, batch=True),
                                          rel=1e-6)
    assert 0 < cost["batch"] < cost["cached"] < cost["live"]
    text = run_cli(*args)
    assert text.returncode == 0 and f"{calls:,} calls" in text.stdout and "by batch" in text.stdout


def test_plan_without_tokens_prints_no_cost_and_refuses_a_negative_count():
    assert "cost" not in cli_json("plan", "--models", "5", "--json")
    bad = run_cli("plan", "--models", "5", "--tokens-in", "-1")
    assert bad.returncode != 0 and "--tokens-in" in bad.stderr and "Traceback" not in bad.stderr


def _cached_share_by_walking_blocks(tokens_in: int, shared_tokens: int, calls_per_prompt: float) -> float:
    """The rule applied call by call (prompt_cache.cached_tokens_in_order): the definition the closed form keeps."""
    from judgewise.judges.prompt_cache import cached_tokens_in_order

    per_prompt = max(1, round(calls_per_prompt))
    own = max(0, tokens_in - shared_tokens)
    prompts = [[("shared", min(shared_tokens, tokens_in)), (("own", i), own)] for i in range(per_prompt)]
    return sum(cached_tokens_in_order(prompts)) / (per_prompt * tokens_in) if tokens_in else 0.0


@given(tokens_in=st.integers(0, 6_000), shared=st.integers(0, 7_000), per_prompt=st.floats(0, 12))
@settings(max_examples=300, deadline=None)
def test_the_closed_form_cache_share_equals_the_rule_walked_block_by_block(tokens_in, shared, per_prompt):
    assert cached_share(tokens_in, shared, per_prompt) == _cached_share_by_walking_blocks(tokens_in, shared,
                                                                                         per_prompt)


def test_the_cache_share_of_a_billion_token_prompt_takes_no_time_or_memory():
    import time
    import tracemalloc

    tracemalloc.start()
    started = time.monotonic()
    share = cached_share(10**9, 9 * 10**8, 10**6)
    seconds, (_, peak) = time.monotonic() - started, tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert share == pytest.approx((10**6 - 1) / 10**6 * 0.9) and seconds < 0.1 and peak < 100_000


def test_plan_of_a_billion_token_prompt_answers_at_once():
    out = cli_json("plan", "--models", "8", "--tokens-in", str(10**9), "--shared-tokens", str(9 * 10**8),
                   "--judge-model", "gpt-4.1", "--json", timeout=60)
    assert 0 < out["cost"]["cached"] < out["cost"]["live"]
