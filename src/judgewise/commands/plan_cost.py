"""``plan --tokens-in``: what a plan's calls cost in dollars, live, with the prompt cache and through a batch API."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from judgewise.errors import ConfigError
from judgewise.judges.base import games_per_comparison
from judgewise.judges.prices import MAX_TOKEN_COUNT, Prices, price_note, resolve_prices
from judgewise.judges.prompt_cache import CACHE_BLOCK_TOKENS, CACHE_MIN_TOKENS


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
    price_known: bool = True  # False: no price table names the model (the figures count it $0)

    def as_dict(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    def line(self) -> str:
        return (f"cost ({self.model}, {self.calls:,} calls of ~{self.tokens_in:,} tokens in, {self.tokens_out:,} "
                f"out): ~${self.live:,.2f} live, ~${self.cached:,.2f} with the prompt cache ({self.cached_share:.0%} "
                f"of prompt tokens cached), ~${self.batch:,.2f} by batch" + self.prices_note())

    def prices_note(self) -> str:
        """Where the prices come from, or that the shipped table names no such model."""
        if self.price_known:
            return f" [prices: {self.prices}]"
        return price_note(Prices(source=self.prices, known=False), "--judge-model takes a model the shipped price "
                          "table names (judgewise.judges.price_tables)")


def cached_share(tokens_in: int, shared_tokens: int, calls_per_prompt: float) -> float:
    """The share of prompt tokens OpenAI's cache rule (:mod:`judgewise.judges.prompt_cache`) serves when each
    prompt's calls are sent together (judgewise's order) and share their first ``shared_tokens`` tokens (the judge's
    instructions and the question; the answers differ): the first call of a prompt pays in full, the others read
    the shared prefix's whole 128-token blocks once they reach 1,024 tokens. Closed form (the rule applied to one
    prompt's calls): constant time and memory whatever the counts."""
    if tokens_in <= 0:
        return 0.0
    per_prompt = max(1, round(calls_per_prompt))
    whole_blocks = min(shared_tokens, tokens_in) // CACHE_BLOCK_TOKENS * CACHE_BLOCK_TOKENS
    cached = whole_blocks if whole_blocks >= CACHE_MIN_TOKENS else 0
    return (per_prompt - 1) * cached / (per_prompt * tokens_in)


def check_token_counts(**counts: int | None) -> None:
    """Each count of tokens of one call is a whole number in [0, MAX_TOKEN_COUNT] (beyond any context window), or
    a ConfigError naming the parameter (the CLI shows its flag)."""
    for name, value in counts.items():
        if value is not None and not 0 <= value <= MAX_TOKEN_COUNT:
            raise ConfigError(f"`{name}` must be 0 to {MAX_TOKEN_COUNT:,} tokens of one call (more than any context "
                              f"window), got {value:,}")


def plan_cost(result, *, model: str, tokens_in: int, tokens_out: int, shared_tokens: int | None,
              orders: str = "both") -> PlanCost:
    """The cost of a :class:`~judgewise.analysis.planning.Plan` run in ``orders`` (its judge and pilot calls,
    each comparison once per order). ``shared_tokens``: the prompt tokens a prompt's calls share (default: none,
    so no cache savings are counted)."""
    check_token_counts(tokens_in=tokens_in, tokens_out=tokens_out, shared_tokens=shared_tokens)
    prices = resolve_prices(model)
    calls = int(result.judge_calls + result.pilot_calls) * games_per_comparison(orders)
    share = cached_share(tokens_in, shared_tokens or 0, calls / max(1, result.n_prompts))
    cached_in = round(tokens_in * share)  # a call's mean (prices take one call's counts)
    live, cached, batch = (calls * dollars for dollars in prices.three_ways(tokens_in, tokens_out, cached_in))
    return PlanCost(model=model, calls=calls, tokens_in=tokens_in, tokens_out=tokens_out, cached_share=share,
                    live=live, cached=cached, batch=batch, prices=prices.source or "", price_known=prices.known)
