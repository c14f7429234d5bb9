"""``plan --tokens-in``: what a plan's calls cost in dollars, live, with the prompt cache and through a batch API."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from judgewise.errors import ConfigError
from judgewise.judges.base import games_per_comparison
from judgewise.judges.prices import resolve_prices
from judgewise.judges.prompt_cache import cached_tokens_in_order


@dataclass(frozen=True)
class PlanCost:
    """Dollars of ``calls`` judge calls of ``tokens_in`` prompt and ``tokens_out`` completion tokens each at
    ``model``'s prices: live, live with the share of prompt tokens OpenAI's cache rule serves, and by batch."""

    model: str
    calls: int
    tokens_in: int
    tokens_out: int
    cached_share: float
    live: float
    cached: float
    batch: float
    prices: str

    def as_dict(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    def line(self) -> str:
        return (f"cost ({self.model}, {self.calls:,} calls of ~{self.tokens_in:,} tokens in, {self.tokens_out:,} "
                f"out): ~${self.live:,.2f} live, ~${self.cached:,.2f} with the prompt cache ({self.cached_share:.0%} "
                f"of prompt tokens cached), ~${self.batch:,.2f} by batch [prices: {self.prices}]")


def cached_share(tokens_in: int, shared_tokens: int, calls_per_prompt: float) -> float:
    """The share of prompt tokens OpenAI's cache rule (:mod:`judgewise.judges.prompt_cache`) serves when each
    prompt's calls are sent together (judgewise's order) and share their first ``shared_tokens`` tokens (the judge's
    instructions and the question; the answers differ): the first call of a prompt pays in full, the others read
    the shared prefix's whole blocks once it reaches 1,024 tokens."""
    per_prompt = max(1, round(calls_per_prompt))
    own = max(0, tokens_in - shared_tokens)
    prompts = [[("shared", min(shared_tokens, tokens_in)), (("own", i), own)] for i in range(per_prompt)]
    return sum(cached_tokens_in_order(prompts)) / (per_prompt * tokens_in) if tokens_in else 0.0


def plan_cost(result, *, model: str, tokens_in: int, tokens_out: int, shared_tokens: int | None,
              orders: str = "both") -> PlanCost:
    """The cost of a :class:`~judgewise.analysis.planning.Plan` run in ``orders`` (its judge and pilot calls,
    each comparison once per order). ``shared_tokens``: the prompt tokens a prompt's calls share (default: none,
    so no cache savings are counted)."""
    for name, value in (("tokens_in", tokens_in), ("tokens_out", tokens_out), ("shared_tokens", shared_tokens or 0)):
        if value < 0:
            raise ConfigError(f"`{name}` must be 0 or more, got {value}")
    prices = resolve_prices(model)
    calls = int(result.judge_calls + result.pilot_calls) * games_per_comparison(orders)
    share = cached_share(tokens_in, shared_tokens or 0, calls / max(1, result.n_prompts))
    cached_in = round(tokens_in * share)  # a call's mean (prices take one call's counts)
    live, cached, batch = (calls * dollars for dollars in prices.three_ways(tokens_in, tokens_out, cached_in))
    return PlanCost(model=model, calls=calls, tokens_in=tokens_in, tokens_out=tokens_out, cached_share=share,
                    live=live, cached=cached, batch=batch, prices=prices.source or "")
