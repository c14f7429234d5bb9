"""The one retry policy and the scheduled backend: concurrency, rate limits, timeout and retries per call.

:class:`ScheduledBackend` wraps any :class:`~judgewise.judges.base.Backend` and is itself a Backend, so
a judge that calls its backend twice (a re-ask after an unparsable verdict) retries each call on its
own: a transient failure of the re-ask never repeats the first, successful call. Retries cover
:class:`RetryableCallError` (429, 5xx, timeouts, dropped connections) with exponential backoff and full
jitter, honouring ``Retry-After``; :class:`FatalCallError` (400, 401, 404) passes straight through so
the run stops with its message.

Never paying twice: with an :class:`AnswerJournal` (the runner gives it the store), every answer received is
handed to the journal *before anything else happens* (before parsing, a re-ask, or the game's own row); the SQLite
store commits it with the game's row when that is stored in the same step, else before the game's next call is
sent, and at the latest on the event loop's next turn (``sqlite_leases``). A call whose answer the journal holds is
answered from it instead of being sent again — across retries, stops and ``kill -9`` restarts. Attempts that time
out after the request went out are counted as ``maybe_charged_timeouts``: the server may have answered (and billed)
a call whose answer never arrived.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import random
import time
from dataclasses import dataclass, field

from judgewise.errors import ConfigError
from judgewise.judges.base import AnswerRefusedError, Backend, Completion, MessagesJson, RetryableCallError
from judgewise.judges.limits import RateLimits
from judgewise.store.protocol import AnswerJournal

log = logging.getLogger(__name__)

# The store key of the game whose calls the current task is making (set by the runner per game): answers
# are journaled under it, and dropped from the journal once the game's row is stored.
GAME_KEY: contextvars.ContextVar[str | None] = contextvars.ContextVar("judgewise_game_key", default=None)


async def off_loop(store, method: str, *args, **kw):
    """``store.method(*args, **kw)``, in a worker thread when the store is ``threadsafe`` (PostgreSQL: the event loop
    keeps reading answers while a commit crosses the network), else directly (SQLite: fast, one connection)."""
    fn = getattr(store, method)
    if getattr(store, "threadsafe", False):
        return await asyncio.to_thread(fn, *args, **kw)
    return fn(*args, **kw)


def call_key(identity: dict | str, messages: list[dict], **kw) -> str:
    """Content hash of one call: the backend identity, the messages and the per-call options. ``identity`` may be
    given as its :func:`call_json` already (a backend's, encoded once)."""
    identity = identity if isinstance(identity, str) else call_json(identity)
    return _key_of(identity, call_json(messages), call_json(kw))


def _key_of(identity_json: str, messages_json: str, options_json: str) -> str:
    """The call key from the :func:`call_json` of its three parts."""
    payload = f"[{identity_json}, {messages_json}, {options_json}]"  # json.dumps of the list, in three parts
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def call_json(value) -> str:
    """The JSON a call key hashes (sorted keys, JSON's default separators)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt k waits U(0, min(max_delay, base·2^(k-1))), or the
    server's ``Retry-After`` when it says so (capped at ``max_retry_after``)."""

    max_attempts: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0

    def __post_init__(self) -> None:
        if not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ConfigError(f"limits.max_attempts: expected an integer >= 1 (1 = no retry), "
                              f"found {self.max_attempts!r}")
        for name in ("base_delay_s", "max_delay_s", "max_retry_after_s"):
            if not getattr(self, name) >= 0:
                raise ConfigError(f"limits.{name}: expected seconds >= 0, found {getattr(self, name)!r}")

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after_s)
        return rng.uniform(0.0, min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))


@dataclass
class CallStats:
    """What the scheduled backend did: attempts, successes, retries by reason, tokens and cost."""

    attempts: int = 0
    calls_ok: int = 0
    retries: int = 0
    gave_up: int = 0
    maybe_charged_timeouts: int = 0  # attempts that timed out after sending: the server may have billed them
    reused_answers: int = 0  # calls answered from the journal (received earlier, not sent again)
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    retry_reasons: dict[str, int] = field(default_factory=dict)

    def note_retry(self, err: RetryableCallError) -> None:
        self.retries += 1
        reason = f"HTTP {err.status}" if err.status else type(err).__name__ if not str(err) else str(err)[:40]
        self.retry_reasons[reason] = self.retry_reasons.get(reason, 0) + 1


def estimate_tokens(messages: list[dict]) -> int:
    """Rough prompt size in tokens (≈ 4 characters per token) for rate limiting and dry runs."""
    return sum(len(str(m.get("content", ""))) for m in messages) // 4 + 4 * len(messages)


class ScheduledBackend:
    """A Backend that runs another backend's calls under one concurrency limit, RPM/TPM buckets, a
    per-call timeout and the retry policy. ``identity`` is the wrapped backend's (scheduling never
    changes a verdict, so it never changes a store key)."""

    def __init__(self, backend: Backend, *, concurrency: int = 8, limits: RateLimits | None = None,
                 timeout_s: float = 120.0, policy: RetryPolicy | None = None, seed: int = 0,
                 default_max_tokens: int = 1024):
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.inner = backend
        self.identity = backend.identity
        self._identity_json = call_json(self.identity)  # hashed into every call key
        self._options_json: dict[tuple, str] = {}  # call_json of each set of per-call options met, made once
        self._messages_json = MessagesJson(call_json)  # call_json of the messages, the system prompt's made once
        self.policy = policy or RetryPolicy()
        self.timeout_s = timeout_s
        self.stats = CallStats()
        self.default_max_tokens = default_max_tokens
        # a backend that answers one call at a time (the embedded judge) gets no more in flight: a call queued
        # behind it would spend its timeout waiting and be retried while the model works (wasted calls)
        self._sem = asyncio.Semaphore(min(concurrency, getattr(backend, "max_concurrency", None) or concurrency))
        self._rpm, self._tpm = (limits or RateLimits()).buckets()
        self._rng = random.Random(seed)
        self.journal: AnswerJournal | None = None  # set by the runner for a run (the store)

    def __getattr__(self, name):  # expose the wrapped backend's extras (price, model, ...)
        if name in ("inner", "journal", "_identity_json", "_options_json", "_messages_json"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def complete(self, messages: list[dict], *, max_tokens: int | None = None,
                       want_logprobs: bool = False, grammar: str | None = None) -> Completion:
        kw = dict(max_tokens=max_tokens, want_logprobs=want_logprobs, grammar=grammar)
        game, journal = GAME_KEY.get(), self.journal
        key = self._call_key(messages, kw) if journal is not None and game is not None else None
        held = await off_loop(journal, "held_answer", key) if key is not None else None
        if held is not None:
            self.stats.reused_answers += 1
            return Completion(**held)
        comp = await self._with_retries(messages, kw)
        if key is not None:  # durable before anything else happens (parse, re-ask, the game's row)
            await off_loop(journal, "hold_answer", game, key, dict(vars(comp)))  # its fields (asdict: 10x the CPU)
        return comp

    def _call_key(self, messages: list[dict], kw: dict) -> str:
        """:func:`call_key` of this call, with the JSON of the identity and of the options made once."""
        max_tokens, logprobs = kw["max_tokens"], kw["want_logprobs"]  # with their types: 1 == 1.0 == True, not in JSON
        options = (type(max_tokens), max_tokens, type(logprobs), logprobs, kw["grammar"])
        if options not in self._options_json:
            self._options_json[options] = call_json(kw)
        return _key_of(self._identity_json, self._messages_json(messages), self._options_json[options])

    async def _with_retries(self, messages: list[dict], kw: dict) -> Completion:
        est = estimate_tokens(messages) + (kw["max_tokens"] or self.default_max_tokens)
        for attempt in range(1, self.policy.max_attempts + 1):
            try:
                return await self._attempt(messages, est, **kw)
            except AnswerRefusedError:  # an answer came and cannot be used: asking again would pay for it again
                self.stats.gave_up += 1
                raise
            except RetryableCallError as err:
                if err.maybe_charged:
                    self._note_maybe_charged()
                if attempt == self.policy.max_attempts:
                    self.stats.gave_up += 1
                    raise RetryableCallError(f"gave up after {attempt} attempts; last error: {err}",
                                             status=err.status) from err
                self.stats.note_retry(err)
                wait = self.policy.delay(attempt, err.retry_after, self._rng)
                log.debug("retrying call (attempt %d) in %.2fs after: %s", attempt + 1, wait, err)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    def _note_maybe_charged(self) -> None:
        self.stats.maybe_charged_timeouts += 1
        if self.journal is not None:
            self.journal.note_maybe_charged()

    async def _attempt(self, messages, est: int, **kw) -> Completion:
        if self._rpm:
            await self._rpm.acquire(1)
        if self._tpm:
            await self._tpm.acquire(est)
        async with self._sem:
            self.stats.attempts += 1
            start = time.perf_counter()
            try:
                async with asyncio.timeout(self.timeout_s):  # not wait_for: no extra task per call
                    comp = await self.inner.complete(messages, **kw)
            except TimeoutError:
                raise RetryableCallError(f"call timed out after {self.timeout_s:g}s", maybe_charged=True) from None
        comp.latency_s = comp.latency_s or (time.perf_counter() - start)
        if self._tpm:
            self._tpm.adjust(comp.tokens_in + comp.tokens_out - est)
        s = self.stats
        s.calls_ok += 1
        s.tokens_in += comp.tokens_in
        s.tokens_out += comp.tokens_out
        s.cost += comp.cost
        return comp
