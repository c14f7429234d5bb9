"""Rate limits (requests and tokens per minute, as token buckets) and budget caps for judge calls."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from judgewise.errors import BudgetExceeded, ConfigError
from judgewise.judges.config_schema import check_values


class TokenBucket:
    """A token bucket refilled at ``per_minute / 60`` per second, holding at most one second's worth.

    ``acquire(n)`` waits until ``n`` units are available (a request larger than the bucket waits for a
    full bucket, then drives the level negative so later requests pay it back). Waiters are served in order.
    """

    def __init__(self, per_minute: float, *, clock=time.monotonic):
        if per_minute <= 0:
            raise ConfigError(f"rate limit must be > 0 per minute, found {per_minute}")
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self.level = self.capacity
        self._clock = clock
        self._stamp = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def acquire(self, n: float = 1.0) -> None:
        async with self._lock:
            need = min(n, self.capacity)
            self._refill()
            while self.level < need:
                await asyncio.sleep((need - self.level) / self.rate)
                self._refill()
            self.level -= n

    def adjust(self, delta: float) -> None:
        """Charge ``delta`` more units (negative: refund) once the true size of a request is known."""
        self._refill()
        self.level = min(self.capacity, self.level - delta)


@dataclass
class RateLimits:
    """Requests-per-minute and tokens-per-minute caps (``None`` = unlimited)."""

    rpm: float | None = None
    tpm: float | None = None

    def __post_init__(self) -> None:
        check_values("limits", {"rpm": self.rpm, "tpm": self.tpm})  # > 0 per minute, or None

    def buckets(self) -> tuple[TokenBucket | None, TokenBucket | None]:
        return (TokenBucket(self.rpm) if self.rpm else None, TokenBucket(self.tpm) if self.tpm else None)


@dataclass
class Budget:
    """Caps on judge calls and money for one run (``None`` = no cap).

    Checked before each *game* starts, counting games already in flight at their estimated cost, so a
    started game always finishes and is stored (its re-ask may pass the cap by one call). Paid work is
    never thrown away to honour a cap. ``stored_cost_counts``: the cap covers the games asked for, those stored
    by an earlier run included at their stored cost — an evaluate round's share of a run-wide cap, so that a
    rerun of a run the cap stopped stops at the same place, paying nothing (``judge`` leaves it off: its cap is
    on what the run pays).
    """

    max_calls: int | None = None
    max_cost: float | None = None
    stored_cost_counts: bool = False  # the games of the call stored earlier count at their stored cost (evaluate)

    def __post_init__(self) -> None:
        check_values("budget", {"max_calls": self.max_calls, "max_cost": self.max_cost})  # >= 0, or None

    def reached(self, *, calls: int, cost: float, in_flight: int, est_cost_per_game: float) -> BudgetExceeded | None:
        """The cap that starting one more game could pass (a :class:`BudgetExceeded` saying which), or None."""
        if self.max_calls is not None and calls + in_flight + 1 > self.max_calls:
            return BudgetExceeded(f"call budget reached: {calls} calls made (+{in_flight} in flight), "
                                  f"max_calls = {self.max_calls}")
        if self.max_cost is not None and cost + (in_flight + 1) * est_cost_per_game > self.max_cost:
            return BudgetExceeded(f"cost budget reached: ${cost:.4f} spent (+{in_flight} games in flight at "
                                  f"~${est_cost_per_game:.4f} each), max_cost = ${self.max_cost:.4f}")
        return None
