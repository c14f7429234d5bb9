"""Dry run: how many calls a job will make, and its estimated tokens, cost and time, before anything is paid.

Prompt tokens come from rendering the judge's template for every new game (≈ 4 characters a token) when
the judge has one; output tokens and latency from this judge's earlier rows in the store when there are
some, otherwise from the config's ``expected_latency_s`` / ``expected_tokens_out``, else the backend's own
``expected_latency_s`` (the embedded judge's is measured), else :data:`DEFAULT_LATENCY_S`. Time is the slowest of
concurrency (capped by the backend's ``max_concurrency``: the embedded judge answers one call at a time),
requests/min and tokens/min.

Cost comes from the backend's prices (:mod:`judgewise.judges.prices`: the shipped table, a user file,
``judge.prices``): live, live with the prompt cache (the tokens OpenAI's cache rule,
:mod:`judgewise.judges.prompt_cache`, serves for the new games in the order the run sends them), and through a batch
API (the batch discount, with the same cache share).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from judgewise.judges.base import Comparison, Game, Judge
from judgewise.judges.limits import RateLimits
from judgewise.judges.prices import Prices, price_note
from judgewise.judges.prompt_cache import cached_tokens_in_order, text_segments
from judgewise.judges.game_keys import canonical_json, keyed_games, plan_games
from judgewise.judges.scheduler import estimate_tokens
from judgewise.store.protocol import JudgmentStoreLike


DEFAULT_LATENCY_S = 3.0  # seconds per call of an HTTP endpoint when neither the store nor the config says


def plan_label(dry_run: bool) -> str:
    """How a plan's one line starts: ``dry run:`` when nothing will be called, ``plan:`` before a real run."""
    return "dry run:" if dry_run else "plan:"


@dataclass
class Estimate:
    """What a run will do. ``calls`` counts one call per new game (a re-ask adds one more)."""

    comparisons: int
    games: int
    cached: int
    calls: int
    tokens_in: int
    tokens_out: int
    cost: float
    seconds: float
    basis: str  # where output tokens and latency came from
    tokens_cached: int = 0  # of tokens_in, expected from the prompt cache (OpenAI's rule, in the run's order)
    cost_cached: float = 0.0  # live, with those tokens at the cached-input price
    cost_batch: float = 0.0  # through a batch API, with the same cached tokens
    prices: str = ""  # where the prices come from
    price_known: bool = True  # False: no table or setting prices the model (the costs count it $0)

    def as_dict(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    def line(self, dry_run: bool = True) -> str:
        return (f"{plan_label(dry_run)} {self.calls} calls for {self.games} games ({self.cached} already stored) from "
                f"{self.comparisons} comparisons; ~{self.tokens_in:,} tokens in, ~{self.tokens_out:,} out; "
                f"~${self.cost:.4f}{self.cost_note()}; ~{self.seconds:.0f}s ({self.basis})")

    def cost_note(self) -> str:
        """Live with the prompt cache and by batch, and the prices' source, when there is a price; "no price
        known" when the model has none."""
        if not self.price_known:
            return price_note(Prices(source=self.prices, known=False))
        if self.cost <= 0:
            return ""
        share = self.tokens_cached / self.tokens_in if self.tokens_in else 0.0
        return (f" live, ~${self.cost_cached:.4f} with the prompt cache ({share:.0%} of prompt tokens cached), "
                f"~${self.cost_batch:.4f} by batch [prices: {self.prices}]")


def _prompt_tokens(judge: Judge, game: Game) -> int:
    template = getattr(judge, "template", None)
    c = game.comparison
    if template is not None and hasattr(template, "pairwise_messages"):
        first, second = game.shown
        turns = {"turns": game.shown_turns()} if c.turns else {}
        return estimate_tokens(template.pairwise_messages(c.prompt, first, second, c.reference, **turns))
    return (len(c.prompt) + len(c.response_a) + len(c.response_b)) // 4 + 300


def _history(store: JudgmentStoreLike, identity: dict) -> tuple[float, float, int] | None:
    """Mean (tokens_out, latency_s) per call of this judge's earlier successful games, and their number."""
    return store.judge_history(canonical_json(identity))


def estimate_run(comparisons: list[Comparison], judge: Judge, store: JudgmentStoreLike, *, orders: str = "both",
                 seed: int = 0, concurrency: int = 8, limits: RateLimits | None = None,
                 expected_tokens_out: int | None = None, expected_latency_s: float | None = None,
                 retry_failed: bool = False) -> Estimate:
    """Estimate the job without calling the judge (see module docstring); with ``retry_failed`` games stored
    as failed count as new, as the run will judge them again."""
    games = plan_games(comparisons, orders=orders, seed=seed)
    keyed = keyed_games(dict(judge.identity), games, judge)
    done = store.statuses(keyed)
    new = [g for k, g in keyed.items() if k not in done or (retry_failed and done[k] == "failed")]
    calls_model = getattr(judge, "backend", None) is not None
    tokens_in = sum(_prompt_tokens(judge, g) for g in new) if calls_model else 0
    share = cache_share(judge, new) if calls_model else 0.0
    return costed_estimate(judge, store, len(comparisons), len(keyed), len(keyed) - len(new), len(new), tokens_in,
                           concurrency, limits, expected_tokens_out, expected_latency_s, cached_share=share)


def cache_share(judge: Judge, games: list[Game]) -> float:
    """The share of the prompt tokens of ``games``, sent in this order, that OpenAI's prompt cache rule serves
    (:mod:`judgewise.judges.prompt_cache`); 0 for a judge without a pairwise template."""
    template = getattr(judge, "template", None)
    if template is None or not hasattr(template, "pairwise_messages") or not games:
        return 0.0
    prompts = []
    for g in games:
        c, (first, second) = g.comparison, g.shown
        turns = {"turns": g.shown_turns()} if c.turns else {}
        prompts.append(text_segments(template.pairwise_messages(c.prompt, first, second, c.reference, **turns)))
    total = sum(n for segments in prompts for _, n in segments)
    return sum(cached_tokens_in_order(prompts)) / total if total else 0.0


def costed_estimate(judge: Judge, store: JudgmentStoreLike, comparisons: int, games: int, cached: int, calls: int,
            tokens_in: int, concurrency: int, limits: RateLimits | None, expected_tokens_out: int | None,
            expected_latency_s: float | None, *, cached_share: float = 0.0) -> Estimate:
    """The estimate of ``calls`` calls reading ``tokens_in`` prompt tokens (``cached_share`` of them expected from
    the prompt cache): output tokens, cost (live, cached, batch) and time. A judge with no model behind it (the
    simulated judge) makes its calls, as the run counts them, in no time and tokens."""
    backend = getattr(judge, "backend", None)
    if backend is None:
        return Estimate(comparisons=comparisons, games=games, cached=cached, calls=calls, tokens_in=0, tokens_out=0,
                        cost=0.0, seconds=0.0, basis="no model behind this judge: no tokens, no cost, no wait")
    history = _history(store, dict(judge.identity))
    cap = getattr(judge, "max_tokens", None) or 512
    if expected_latency_s is None:
        expected_latency_s = getattr(backend, "expected_latency_s", None) or DEFAULT_LATENCY_S
    out_per_call, latency, n_hist = history or (expected_tokens_out or min(cap, 512), expected_latency_s, 0)
    tokens_out = int(out_per_call * calls)
    prices = getattr(backend, "prices", None)
    tokens_cached = int(tokens_in * cached_share)
    costs = prices.three_ways(tokens_in, tokens_out, tokens_cached) if prices is not None else (0.0, 0.0, 0.0)
    limits = limits or RateLimits()
    in_flight = max(1, min(concurrency, getattr(backend, "max_concurrency", None) or concurrency))
    seconds = max([calls * latency / in_flight]
                  + ([calls / limits.rpm * 60] if limits.rpm else [])
                  + ([(tokens_in + tokens_out) / limits.tpm * 60] if limits.tpm else []))
    basis = (f"output tokens and latency from {n_hist} stored games of this judge" if history else
             f"assuming {out_per_call} output tokens and {latency:g}s per call")
    if in_flight < concurrency:
        basis += f", {in_flight} call at a time" if in_flight == 1 else f", {in_flight} calls at a time"
    return Estimate(comparisons=comparisons, games=games, cached=cached, calls=calls, tokens_in=tokens_in,
                    tokens_out=tokens_out, cost=costs[0], seconds=seconds, basis=basis, tokens_cached=tokens_cached,
                    cost_cached=costs[1], cost_batch=costs[2], prices=getattr(prices, "source", "") or "",
                    price_known=getattr(prices, "known", True))


def estimate_upper_bound(sample: list[Comparison], comparisons: int, games: int, judge: Judge,
                         store: JudgmentStoreLike, *, concurrency: int = 8, limits: RateLimits | None = None,
                         expected_tokens_out: int | None = None, expected_latency_s: float | None = None) -> Estimate:
    """Upper bound for a multi-round design that asks at most ``comparisons`` comparisons (``games`` games): every
    game counted as a new call (games already stored are not subtracted: the rounds are not known before the
    answers), prompt tokens per game the mean over ``sample`` (representative comparisons of the pool)."""
    played = plan_games(sample, orders="one")
    per_game = sum(_prompt_tokens(judge, g) for g in played) / max(1, len(played))
    return costed_estimate(judge, store, comparisons, games, 0, games, int(per_game * games), concurrency, limits,
                           expected_tokens_out, expected_latency_s, cached_share=cache_share(judge, played))
