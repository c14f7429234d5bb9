"""OpenAI-compatible chat backend (OpenAI, vLLM, SGLang, llama.cpp server, Ollama, LiteLLM) via ``openai``.

One :class:`openai.AsyncOpenAI` client per endpoint, its own retries disabled (``max_retries=0``) so the
scheduler's retry policy is the only one. The API key is read from the environment variable the config
names, held in memory only, never part of ``identity``, and scrubbed (``base.scrub``) from every error
message and every stored text.

Responses are taken as raw bytes from the client (``cast_to=bytes``: its transport, auth, pooling and HTTP
error mapping, none of its parsing) and validated here by :func:`parse_chat_body`. Anything an endpoint
sends that is not a chat completion — HTML, invalid or truncated JSON, an empty body, a JSON array or
scalar, an object without ``choices``, wrong types inside — is a :class:`MalformedResponseError`: a failed
attempt with its reason, retried by the scheduler's one policy, never a crash. (Catching the SDK's own
parse errors instead would not do: for a non-JSON content type it returns the body as a ``str``.)
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
import json
import time
from dataclasses import dataclass

import openai

from judgewise.errors import ConfigError
from judgewise.judges.base import (Completion, FatalCallError, MalformedResponseError, RetryableCallError,
                                   register_secret, scrub)
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
    The key comes from the environment variable ``api_key_env`` names, or ``api_key`` (Python only).
    The per-call timeout is the scheduler's (``limits.timeout_s``); ``timeout_s`` here is only the HTTP
    client's own, default the ``openai`` client's (600 s), so that it never cuts a call short first.
    """

    def __init__(self, model: str, *, base_urls: list[str] | str | None = None, api_key_env: str | None = None,
                 params: dict | None = None, logprobs: bool = False, top_logprobs: int = 5,
                 prices: Prices | None = None, spread: str = "round_robin", timeout_s: float | None = None,
                 name: str | None = None, api_key: str | None = None):
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls or [None])
        if spread not in SPREADS:
            raise ConfigError(f'judge.spread: expected one of {sorted(SPREADS)}, found "{spread}"')
        self.model, self.params, self.prices = model, dict(params or {}), prices or Prices()
        self.logprobs, self.top_logprobs, self.spread = logprobs, top_logprobs, spread
        register_secret(api_key)  # a key given directly (Python API) is scrubbed like one from the environment
        self._secret = api_key or self._read_key(api_key_env)
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
        register_secret(value)
        return value

    @staticmethod
    def scrub(text: str) -> str:
        """``text`` with the API key (and any other registered secret) removed: :func:`base.scrub`."""
        return scrub(text)

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
            # more CPU than the rest of a judgment at hundreds of calls per second; the body comes back as bytes.
            body = await self._client(i).post("/chat/completions", body={"model": self.model, "messages": messages,
                                                                          **kw}, cast_to=bytes)
        except openai.APIError as exc:
            raise self._map_error(exc) from None
        finally:
            self._in_flight[i] -= 1
        return self._completion(parse_chat_body(body), time.perf_counter() - start)

    def _completion(self, body: "ChatBody", latency: float) -> Completion:
        return Completion(text=body.text, tokens_in=body.tokens_in, tokens_out=body.tokens_out, latency_s=latency,
                          cost=self.prices.cost(body.tokens_in, body.tokens_out), top_logprobs=body.top_logprobs,
                          raw={"finish_reason": body.finish_reason, "model": body.model})

    def _map_error(self, exc: openai.APIError) -> Exception:
        msg = scrub(str(exc))[:500]
        if isinstance(exc, openai.APITimeoutError):  # sent, then no answer in time: the server may have billed it
            return RetryableCallError(f"{type(exc).__name__}: {msg}", maybe_charged=True)
        if isinstance(exc, openai.APIConnectionError):
            return RetryableCallError(f"{type(exc).__name__}: {msg}")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status in RETRYABLE_STATUS or status >= 500:
                return RetryableCallError(f"HTTP {status}: {msg}", status=status,
                                          retry_after=_retry_after(exc.response.headers))
            if status in (400, 413) and TOO_LONG.search(f"{getattr(exc, 'code', '')} {msg}"):
                return PromptTooLongError(f"HTTP {status}: {msg}")
            return FatalCallError(f"HTTP {status} from {self.model}: {msg}", status=status)
        return MalformedResponseError(f"malformed response ({type(exc).__name__}): {msg}")

    async def aclose(self) -> None:
        """Close the clients of the running loop; the next call makes new ones."""
        clients, self._clients, self._loop = self._clients, [], None
        for c in clients:
            await c.close()


@dataclass(frozen=True)
class ChatBody:
    """The parts of a chat-completion body judgewise uses, validated."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    finish_reason: str | None = None
    model: str | None = None
    top_logprobs: list[dict[str, float]] | None = None


def _malformed(reason: str, body: bytes | str) -> MalformedResponseError:
    snippet = body if isinstance(body, str) else body[:200].decode("utf-8", "replace")
    snippet = " ".join(snippet.split())[:80]
    return MalformedResponseError(f"malformed response (a success status, but not a chat completion): {reason}; "
                                  f"body starts {snippet!r}")


def parse_chat_body(body: bytes) -> ChatBody:
    """A chat completion from a 200's raw body, or :class:`MalformedResponseError` saying what is wrong.

    Kept lenient where today's servers differ and nothing is lost: ``choices`` empty or null, a null message
    or null content give an empty text (the judge then re-asks); missing or non-integer ``usage`` counts
    0 tokens; unusable ``logprobs`` are dropped. Everything else that is not a chat completion is malformed.
    """
    if not isinstance(body, (bytes, bytearray)):
        raise _malformed(f"expected a body of bytes, found {type(body).__name__}", str(body))
    if not body.strip():
        raise _malformed("empty body", body)
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise _malformed(f"not JSON ({type(exc).__name__}: {str(exc)[:60]})", body) from None
    if not isinstance(data, dict):
        raise _malformed(f"a JSON {_kind(data)}, expected an object", body)
    if "choices" not in data:
        raise _malformed("an object without 'choices'", body)
    choices = data["choices"]
    if choices is None or choices == []:
        choice = {}
    elif isinstance(choices, list) and isinstance(choices[0], dict):
        choice = choices[0]
    else:
        raise _malformed(f"'choices' is {_kind(choices)}, expected a list of objects", body)
    message = choice.get("message")
    if message is not None and not isinstance(message, dict):
        raise _malformed(f"'choices[0].message' is {_kind(message)}, expected an object", body)
    text = (message or {}).get("content")
    if text is not None and not isinstance(text, str):
        raise _malformed(f"'choices[0].message.content' is {_kind(text)}, expected text", body)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    finish, model = choice.get("finish_reason"), data.get("model")
    return ChatBody(text=text or "", tokens_in=_count(usage.get("prompt_tokens")),
                    tokens_out=_count(usage.get("completion_tokens")),
                    finish_reason=finish if isinstance(finish, str) else None,
                    model=model if isinstance(model, str) else None, top_logprobs=_top_logprobs(choice))


def _kind(value) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number" if isinstance(value, (int, float)) else type(value).__name__)


def _count(value) -> int:
    """A token count, or 0 when the server sent none or something that is not a non-negative integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _top_logprobs(choice: dict) -> list[dict[str, float]] | None:
    """Per output token, {token: logprob} over the returned candidates (the chosen token included); None when
    the server sent none or they are not in the OpenAI shape."""
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content or not isinstance(content, list):
        return None
    try:
        out = []
        for tok in content:
            cands = {str(t["token"]): float(t["logprob"]) for t in (tok.get("top_logprobs") or [])}
            cands.setdefault(str(tok["token"]), float(tok["logprob"]))
            out.append(cands)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return out


def _round_robin(b: OpenAIBackend) -> int:
    return next(b._cycle)


def _least_busy(b: OpenAIBackend) -> int:
    start = next(b._cycle)  # rotate the tie-break so equal loads still spread
    n = len(b._in_flight)
    return min(((start + k) % n for k in range(n)), key=lambda i: b._in_flight[i])


SPREADS = {"round_robin": _round_robin, "least_busy": _least_busy}
