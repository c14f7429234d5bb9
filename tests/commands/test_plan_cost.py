"""plan --tokens-in: the plan's calls priced live, with the prompt cache (OpenAI's rule) and by batch."""

import pytest

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
