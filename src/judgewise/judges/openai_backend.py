"""OpenAI-compatible chat backend (OpenAI, vLLM, SGLang, llama.cpp server, Ollama, LiteLLM) via ``openai``.

One :class:`openai.AsyncOpenAI` client per endpoint, its own retries disabled (``max_retries=0``) so the
scheduler's retry policy is the only one. The API key is read from the environment variable the config
names, held in memory only, never part of ``identity``, and scrubbed from every error message.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
import time
from dataclasses import dataclass

import openai
from openai.types.chat import ChatCompletion

from judgewise.errors import ConfigError
from judgewise.judges.base import Completion, FatalCallError, RetryableCallError
from judgewise.judges.llm_judge import PromptTooLongError

log = logging.getLogger(__name__)

NO_KEY = "sk-no-key-required"  # what local servers (vLLM, llama.cpp, Ollama) accept when none is configured
RETRYABLE_STATUS = {408, 409, 425, 429}
# A 400 for a prompt longer than the model's context (OpenAI, vLLM, llama.cpp server wordings): a failed game,
# not a reason to stop the run.
TOO_LONG = re.compile(r"context_length_exceeded|maximum context length|exceeds? the available context|"
                      r"context (?:size|window) (?:exceeded|is too small)", re.IGNORECASE)


@dataclass(frozen=True)
class Prices:
    """Dollars per million tokens, prompt and completion."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_mtok + tokens_out * self.output_per_mtok) / 1e6


def _retry_after(headers) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds form), if present."""
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


class OpenAIBackend:
    """Chat completions from one or several OpenAI-compatible endpoints serving the same model.

    ``spread`` chooses the endpoint per call: "round_robin" or "least_busy" (fewest calls in flight).
    ``params`` are sampling parameters passed to every call (temperature, top_p, seed, ...).
    The per-call timeout is the scheduler's (``limits.timeout_s``); ``timeout_s`` here is only the HTTP
    client's own, default the ``openai`` client's (600 s), so that it never cuts a call short first.
    """

    def __init__(self, model: str, *, base_urls: list[str] | str | None = None, api_key_env: str | None = None,
                 params: dict | None = None, logprobs: bool = False, top_logprobs: int = 5,
                 prices: Prices | None = None, spread: str = "round_robin", timeout_s: float | None = None,
                 name: str | None = None):
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls or [None])
        if spread not in SPREADS:
            raise ConfigError(f'judge.spread: expected one of {sorted(SPREADS)}, found "{spread}"')
        self.model, self.params, self.prices = model, dict(params or {}), prices or Prices()
        self.logprobs, self.top_logprobs, self.spread = logprobs, top_logprobs, spread
        self._secret = self._read_key(api_key_env)
        self._urls, self._timeout_s = urls, timeout_s
        self._clients: list[openai.AsyncOpenAI] = []
        self._loop = None
        self._in_flight = [0] * len(urls)
        self._cycle = itertools.cycle(range(len(urls)))
        self.identity = {"backend": "openai", "model": model, "params": dict(sorted(self.params.items())),
                         "logprobs": top_logprobs if logprobs else None}
        if name:
            self.identity["name"] = name

    @staticmethod
    def _read_key(env_name: str | None) -> str | None:
        if not env_name:
            return None
        value = os.environ.get(env_name)
        if not value:
            raise ConfigError(f'judge.api_key_env names the environment variable "{env_name}", which is not set; '
                              f"export it (the key is read from the environment only, never from a file)")
        return value

    def scrub(self, text: str) -> str:
        """``text`` with the API key (if any) removed."""
        return text.replace(self._secret, "[redacted]") if self._secret and text else text

    def _pick(self) -> int:
        return SPREADS[self.spread](self)

    def _client(self, i: int) -> openai.AsyncOpenAI:
        """Endpoint ``i``'s client, made for the running event loop (each ``asyncio.run`` has its own, and
        an HTTP connection pool cannot outlive its loop)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            timeout = {} if self._timeout_s is None else {"timeout": self._timeout_s}
            self._clients = [openai.AsyncOpenAI(base_url=u, api_key=self._secret or NO_KEY, max_retries=0,
                                                **timeout) for u in self._urls]
            self._loop = loop
        return self._clients[i]

    async def complete(self, messages: list[dict], *, max_tokens: int | None = None,
                       want_logprobs: bool = False, grammar: str | None = None) -> Completion:
        i = self._pick()
        kw = dict(self.params)
        if max_tokens is not None:
            kw["max_tokens"] = max_tokens
        if want_logprobs or self.logprobs:
            kw.update(logprobs=True, top_logprobs=self.top_logprobs)
        if grammar:  # GBNF, honoured by llama.cpp servers; sent only when the judge asks (use_grammar: true)
            kw["grammar"] = grammar
        self._in_flight[i] += 1
        start = time.perf_counter()
        try:
            # The client's own POST (errors, auth, pooling) without the per-call request transform, which costs
            # more CPU than the rest of a judgment at hundreds of calls per second.
            resp = await self._client(i).post("/chat/completions", body={"model": self.model, "messages": messages,
                                                                          **kw}, cast_to=ChatCompletion)
        except openai.APIError as exc:
            raise self._map_error(exc) from None
        finally:
            self._in_flight[i] -= 1
        return self._completion(resp, time.perf_counter() - start)

    def _completion(self, resp, latency: float) -> Completion:
        choice = resp.choices[0] if getattr(resp, "choices", None) else None
        text = (choice.message.content or "") if choice is not None and choice.message is not None else ""
        usage = getattr(resp, "usage", None)
        t_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        t_out = int(getattr(usage, "completion_tokens", 0) or 0)
        return Completion(text=text, tokens_in=t_in, tokens_out=t_out, latency_s=latency,
                          cost=self.prices.cost(t_in, t_out), top_logprobs=_top_logprobs(choice),
                          raw={"finish_reason": getattr(choice, "finish_reason", None), "model": resp.model})

    def _map_error(self, exc: openai.APIError) -> Exception:
        msg = self.scrub(str(exc))[:500]
        if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
            return RetryableCallError(f"{type(exc).__name__}: {msg}")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status in RETRYABLE_STATUS or status >= 500:
                return RetryableCallError(f"HTTP {status}: {msg}", status=status,
                                          retry_after=_retry_after(exc.response.headers))
            if status in (400, 413) and TOO_LONG.search(f"{getattr(exc, 'code', '')} {msg}"):
                return PromptTooLongError(f"HTTP {status}: {msg}")
            return FatalCallError(f"HTTP {status} from {self.model}: {msg}", status=status)
        return RetryableCallError(f"malformed response ({type(exc).__name__}): {msg}")

    async def aclose(self) -> None:
        for c in self._clients:
            await c.close()


def _top_logprobs(choice) -> list[dict[str, float]] | None:
    """Per output token, {token: logprob} over the returned candidates (the chosen token included)."""
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if not content:
        return None
    out = []
    for tok in content:
        cands = {t.token: t.logprob for t in (tok.top_logprobs or [])}
        cands.setdefault(tok.token, tok.logprob)
        out.append(cands)
    return out


def _round_robin(b: OpenAIBackend) -> int:
    return next(b._cycle)


def _least_busy(b: OpenAIBackend) -> int:
    start = next(b._cycle)  # rotate the tie-break so equal loads still spread
    n = len(b._in_flight)
    return min(((start + k) % n for k in range(n)), key=lambda i: b._in_flight[i])


SPREADS = {"round_robin": _round_robin, "least_busy": _least_busy}
