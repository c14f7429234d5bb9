"""OpenAI-compatible chat backend (OpenAI, vLLM, SGLang, llama.cpp server, Ollama, LiteLLM).

Calls go through :mod:`judgewise.judges.http11`, a lean keep-alive HTTP/1.1 client (one pool of connections per
endpoint, as many as calls in flight); an endpoint reached through an HTTP proxy from the environment
(``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, minus ``NO_PROXY``) goes through the ``openai`` client instead, which
speaks to proxies. Neither retries on its own: the scheduler's retry policy is the only one. The API key is read
from the environment variable the config names, held in memory only, never part of ``identity``, and scrubbed
(``redaction.scrub``) from every error message and every stored text.

Errors are classified once (:meth:`OpenAIBackend._status_error` for an HTTP status, ``_transport_error`` for no
answer): 408/409/425/429 and 5xx are retried (honouring ``Retry-After``), a timeout after sending is retried and
counted as maybe charged, a failed connection or one dropped before a whole answer is retried, a 400/413 saying
the prompt exceeds the context is a failed game, and any other status (401, 404, a redirect...) stops the run.
Neither transport follows a redirect: the key goes to the configured endpoint and nowhere else.
A success's body is validated here by :func:`parse_chat_body`: anything an endpoint sends that is not a chat
completion — HTML, invalid or truncated JSON, an empty body, a JSON array or scalar, an object without
``choices``, wrong types inside — is a :class:`MalformedResponseError`: a failed attempt with its reason, retried
by the scheduler's one policy, never a crash. An answer larger than ``max_answer_bytes`` (the judge config's
``max_answer_mb``) is refused while it is read (:class:`AnswerRefusedError`): a failed game at once, not asked again.
Token counts beyond :data:`MAX_TOKEN_COUNT` are refused (counted 0, with a warning), logprobs that are not finite
numbers dropped.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import math
import os
import re
import time
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from judgewise import __version__
from judgewise.errors import ConfigError
from judgewise.judges.base import (AnswerRefusedError, Completion, FatalCallError, MalformedResponseError, MessagesJson, RetryableCallError)
from judgewise.redaction import register_secret, scrub
from judgewise.judges.http11 import MAX_ANSWER_MB, AnswerTooLarge, Endpoint, HTTPError, ReadTimeout
from judgewise.judges.llm_judge import PromptTooLongError
from judgewise.judges.openai_batch import BatchClient
from judgewise.judges.prices import MAX_TOKEN_COUNT, Prices, resolve_prices  # Prices: also importable from here

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"  # as the openai client: unless OPENAI_BASE_URL says otherwise
CONNECT_TIMEOUT_S, READ_TIMEOUT_S = 5.0, 600.0  # the openai client's defaults, when timeout_s is not given
NO_KEY = "sk-no-key-required"  # what local servers (vLLM, llama.cpp, Ollama) accept when none is configured
RETRYABLE_STATUS = {408, 409, 425, 429}
# A 400 for a prompt longer than the model's context (OpenAI, vLLM, llama.cpp server wordings): a failed game,
# not a reason to stop the run.
# Anthropic's ("prompt is too long") and Gemini's ("The input token count (n) exceeds the maximum") too.
TOO_LONG = re.compile(r"context_length_exceeded|maximum context length|exceeds? the available context|"
                      r"context (?:size|window) (?:exceeded|is too small)|prompt is too long|"
                      r"input token count.{0,40}exceeds the maximum", re.IGNORECASE)


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
    client's own (connect and answer; default 5 s and 600 s as the ``openai`` client's), so that it never cuts a
    call short first. ``prices`` default to the shipped price table's for ``model`` (:mod:`judgewise.judges.prices`;
    zero for a model it does not name). ``base_urls`` default to ``OPENAI_BASE_URL`` or OpenAI's own.
    ``max_answer_mb`` caps each answer's body (as sent and as decoded; default 8 MB): a larger one is refused while
    it is read.

    Another provider's native API is a subclass (:mod:`judgewise.judges.native_backend`) that says its
    :attr:`KIND`, default URL, path, headers, request and parser; the transports, the error classification and the
    key handling stay these.
    """

    KIND = "openai"
    DEFAULT_URL, URL_ENV = DEFAULT_BASE_URL, "OPENAI_BASE_URL"  # the base URL when the config gives none

    def __init__(self, model: str, *, base_urls: list[str] | str | None = None, api_key_env: str | None = None,
                 params: dict | None = None, logprobs: bool = False, top_logprobs: int = 5,
                 prices: Prices | None = None, spread: str = "round_robin", timeout_s: float | None = None,
                 name: str | None = None, api_key: str | None = None, max_answer_mb: float = MAX_ANSWER_MB):
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls or [None])
        if spread not in SPREADS:
            raise ConfigError(f'judge.spread: expected one of {sorted(SPREADS)}, found "{spread}"')
        self.model, self.params, self.prices = model, dict(params or {}), prices or resolve_prices(model)
        self.logprobs, self.top_logprobs, self.spread = logprobs, top_logprobs, spread
        register_secret(api_key)  # a key given directly (Python API) is scrubbed like one from the environment
        self._secret = (api_key or self._read_key(api_key_env) or "").strip() or None  # as a header carries it
        self.max_answer_bytes = int(max_answer_mb * (1 << 20))
        self._urls = [u or os.environ.get(self.URL_ENV) or self.DEFAULT_URL for u in urls]
        self._timeout_s = timeout_s
        self._endpoints = [self._endpoint(u) for u in self._urls]  # None: through a proxy, by the openai client
        self._sdk_clients: dict[int, object] = {}
        self._loop = None
        self._in_flight = [0] * len(urls)
        self._cycle = itertools.cycle(range(len(urls)))
        self._body_parts: dict[tuple, tuple[str, str]] = {}  # per-call options → the request body around its messages
        self._messages_json = MessagesJson(_body_json)  # the messages in the request body, the system prompt's kept
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
        """``text`` with the API key (and any other registered secret) removed: :func:`redaction.scrub`."""
        return scrub(text)

    def _pick(self) -> int:
        return SPREADS[self.spread](self)

    def _endpoint(self, url: str) -> Endpoint | None:
        """The lean client's pool for ``url``, or None when a proxy from the environment applies to it."""
        if _proxied(url):
            return None
        try:
            return Endpoint(url, headers=self.headers(), ssl_context=_ssl_context,  # made at the first https connection
                            connect_timeout_s=self._timeout_s or CONNECT_TIMEOUT_S,
                            read_timeout_s=self._timeout_s or READ_TIMEOUT_S, max_answer_bytes=self.max_answer_bytes)
        except ValueError as exc:
            raise ConfigError(f"judge.base_url: {exc}; expected e.g. http://localhost:8000/v1") from None

    def headers(self) -> dict[str, str]:
        """The headers of every call (the key among them)."""
        return {"Authorization": f"Bearer {self._secret or NO_KEY}", "Content-Type": "application/json",
                "Accept": "application/json", "User-Agent": f"judgewise/{__version__}"}

    def path(self) -> str:
        """Where a call is POSTed, below the base URL."""
        return "/chat/completions"

    @staticmethod
    def parse(body: bytes) -> "ChatBody":
        """The validated parts of a success's body (:func:`parse_chat_body`)."""
        return parse_chat_body(body)

    async def open_ahead(self, calls: int) -> None:
        """Open the connections of ``calls`` calls about to be sent at once, shared evenly among the endpoints
        (:meth:`Endpoint.open_ahead`; through a proxy the openai client opens its own)."""
        lean = [e for e in self._endpoints if e is not None]
        await asyncio.gather(*(endpoint.open_ahead(calls // len(lean) + (k < calls % len(lean)))
                               for k, endpoint in enumerate(lean)))

    async def complete(self, messages: list[dict], *, max_tokens: int | None = None,
                       want_logprobs: bool = False, grammar: str | None = None) -> Completion:
        i = self._pick()
        payload, options = self._payload(messages, max_tokens, want_logprobs, grammar)
        self._in_flight[i] += 1
        start = time.perf_counter()
        try:
            body = await self._post(i, payload, options)
        finally:
            self._in_flight[i] -= 1
        return self._completion(self.parse(body), time.perf_counter() - start)

    def _payload(self, messages: list[dict], max_tokens: int | None, want_logprobs: bool,
                 grammar: str | None) -> tuple[dict, tuple]:
        """The request of a chat-completions call, and the per-call options it was made from."""
        kw = dict(self.params)
        if max_tokens is not None:
            kw["max_tokens"] = max_tokens
        if want_logprobs or self.logprobs:
            kw.update(logprobs=True, top_logprobs=self.top_logprobs)
        if grammar:  # GBNF, honoured by llama.cpp servers; sent only when the judge asks (use_grammar: true)
            kw["grammar"] = grammar
        return {"model": self.model, "messages": messages, **kw}, (type(max_tokens), max_tokens,
                                                                  bool(want_logprobs), grammar)

    def request_body(self, messages: list[dict], *, max_tokens: int | None = None, want_logprobs: bool = False,
                     grammar: str | None = None) -> bytes:
        """The exact body :meth:`complete` POSTs for this call (what a batch input line carries)."""
        return self._request_body(*self._payload(messages, max_tokens, want_logprobs, grammar))

    def batch_completion(self, body: bytes) -> Completion:
        """A completion from a batch output line's response body (:func:`parse_chat_body`), priced as a batch
        call (``Prices.cost(..., batch=True)``)."""
        return self._completion(self.parse(body), 0.0, batch=True)

    def batch_endpoint(self) -> tuple[str, dict[str, str]]:
        """(base URL, headers) of the first endpoint, for the Files and Batches API (:mod:`judges.openai_batch`)."""
        return self._urls[0], {"Authorization": f"Bearer {self._secret or NO_KEY}",
                               "User-Agent": f"judgewise/{__version__}"}

    def batch_client(self, **options) -> BatchClient:
        """The client of this provider's batch API (``options``: :class:`BatchClient`'s download limits)."""
        return BatchClient(*self.batch_endpoint(), **options)

    async def _post(self, i: int, payload: dict, options: tuple) -> bytes:
        """The body of a 2xx answer to the chat-completions POST at endpoint ``i``; any other outcome raised as
        the error the scheduler acts on. ``options``: the per-call options ``payload`` was made from."""
        endpoint = self._endpoints[i]
        if endpoint is None:
            return await self._sdk_post(i, payload)
        try:
            response = await endpoint.post(self.path(), self._request_body(payload, options))
        except AnswerTooLarge as exc:
            raise AnswerRefusedError(f"answer refused: {exc}") from None
        except HTTPError as exc:
            raise _transport_error(exc, maybe_charged=isinstance(exc, ReadTimeout)) from None
        if 200 <= response.status < 300:
            return response.body
        message, code = _error_text(response.status, response.body, response.headers)
        raise self._status_error(response.status, message, code, response.headers)

    def _request_body(self, payload: dict, options: tuple) -> bytes:
        """``json.dumps(payload, ensure_ascii=False)``, encoded: the text around the messages (model, sampling
        parameters: the same for every call with these ``options``) encoded once, only the messages each call."""
        parts = self._body_parts.get(options)
        if parts is None:
            text = _body_json({**payload, "messages": 0})  # "model" first: the marker is ours
            head, tail = text.split(', "messages": 0', 1)
            parts = self._body_parts[options] = (head + ', "messages": ', tail)
        return f"{parts[0]}{self._messages_json(payload['messages'])}{parts[1]}".encode()

    def _status_error(self, status: int, message: str, code, headers) -> Exception:
        """The one classification of an HTTP error status (both transports)."""
        msg = scrub(message)[:500]
        if status in RETRYABLE_STATUS or status >= 500:
            return RetryableCallError(f"HTTP {status}: {msg}", status=status, retry_after=_retry_after(headers))
        if status in (400, 413) and TOO_LONG.search(f"{code} {msg}"):
            return PromptTooLongError(f"HTTP {status}: {msg}")
        return FatalCallError(f"HTTP {status} from {self.model}: {msg}", status=status)

    def _completion(self, body: "ChatBody", latency: float, batch: bool = False) -> Completion:
        return Completion(text=body.text, tokens_in=body.tokens_in, tokens_out=body.tokens_out, latency_s=latency,
                          tokens_cached=body.tokens_cached, top_logprobs=body.top_logprobs,
                          cost=self.prices.cost(body.tokens_in, body.tokens_out, cached_in=body.tokens_cached,
                                                cache_write_in=body.tokens_cache_write, batch=batch),
                          raw={"finish_reason": body.finish_reason, "model": body.model})

    # -- through a proxy: the openai client --------------------------------------------------------------------------
    async def _sdk_post(self, i: int, payload: dict) -> bytes:
        import openai

        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # an HTTP connection pool cannot outlive its loop (each asyncio.run has its own)
            self._sdk_clients, self._loop = {}, loop
        if i not in self._sdk_clients:
            timeout = {} if self._timeout_s is None else {"timeout": self._timeout_s}
            self._sdk_clients[i] = openai.AsyncOpenAI(base_url=self._urls[i], api_key=self._secret or NO_KEY,
                                                      max_retries=0, **timeout)
        try:  # the body as bytes: none of the client's parsing (parse_chat_body validates it)
            body = await self._sdk_clients[i].post("/chat/completions", body=payload, cast_to=bytes,
                                                   options={"follow_redirects": False})  # a 3xx stops, as below
        except openai.APIStatusError as exc:
            raise self._status_error(exc.status_code, str(exc), getattr(exc, "code", ""), exc.response.headers) \
                from None
        except openai.APITimeoutError as exc:  # sent, then no answer in time: the server may have billed it
            raise _transport_error(exc, maybe_charged=True) from None
        except openai.APIConnectionError as exc:
            raise _transport_error(exc, maybe_charged=False) from None
        except openai.APIError as exc:
            raise MalformedResponseError(f"malformed response ({type(exc).__name__}): {scrub(str(exc))[:500]}") \
                from None
        if len(body) > self.max_answer_bytes:  # read whole by the client (no cap while reading through a proxy)
            raise AnswerRefusedError(f"answer refused: {len(body):,} bytes, more than the {self.max_answer_bytes:,}-"
                                     "byte cap (max_answer_mb in the judge config raises the cap)")
        return body

    async def aclose(self) -> None:
        """Close the connections of the running loop; the next call opens new ones."""
        clients, self._sdk_clients, self._loop = list(self._sdk_clients.values()), {}, None
        for c in clients:
            await c.close()
        for endpoint in self._endpoints:
            if endpoint is not None:
                await endpoint.aclose()


def _transport_error(exc: Exception, maybe_charged: bool) -> RetryableCallError:
    """No whole answer (either transport): retried; ``maybe_charged`` when the request was sent and the wait timed
    out (the server may have billed it)."""
    return RetryableCallError(f"{type(exc).__name__}: {scrub(str(exc))[:500]}", maybe_charged=maybe_charged)


def _error_text(status: int, body: bytes, headers: dict) -> tuple[str, str | None]:
    """(message, error code) of an error answer, worded as the openai client words it: ``Error code: 429 - <the
    body's error.message>``; the start of the body when it is not such JSON, the target of a redirect."""
    text = body.decode("utf-8", "replace").strip()
    message, code = f"Error code: {status}", None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    error = data.get("error", data) if isinstance(data, dict) else None
    if isinstance(error, dict):
        code = error.get("code")
        if isinstance(error.get("message"), str) and error["message"]:
            return f"{message} - {error['message']}", code
    if 300 <= status < 400:
        return f"{message} - redirected to {headers.get('location', '?')}: set base_url to the address it names", code
    return (f"{message} - {' '.join(text.split())[:200]}" if text else message), code


def _proxied(url: str) -> bool:
    """Whether a proxy from the environment applies to ``url`` (as ``httpx`` reads it: ``<scheme>_proxy`` or
    ``all_proxy``, unless ``no_proxy`` names the host)."""
    proxies = urllib.request.getproxies()
    parts = urlsplit(url)
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.netloc)


def _ssl_context():
    """How ``https`` servers are verified: as ``httpx`` does (certifi's roots, or ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR``)."""
    import httpx

    return httpx.create_ssl_context()


@dataclass(frozen=True)
class ChatBody:
    """The parts of a chat-completion body judgewise uses, validated."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0  # of tokens_in, read from the server's prompt cache (usage.prompt_tokens_details)
    tokens_cache_write: int = 0  # of tokens_in, written to the prompt cache (Anthropic's, billed above the input)
    finish_reason: str | None = None
    model: str | None = None
    top_logprobs: list[dict[str, float]] | None = None


def _body_json(value) -> str:
    """The JSON of a request body (or a part of it)."""
    return json.dumps(value, ensure_ascii=False)


def _malformed(reason: str, body: bytes | str) -> MalformedResponseError:
    snippet = body if isinstance(body, str) else body[:200].decode("utf-8", "replace")
    snippet = " ".join(snippet.split())[:80]
    return MalformedResponseError(f"malformed response (a success status, but not a chat completion): {reason}; "
                                  f"body starts {snippet!r}")


def parse_chat_body(body: bytes) -> ChatBody:
    """A chat completion from a 200's raw body, or :class:`MalformedResponseError` saying what is wrong.

    Kept lenient where today's servers differ and nothing is lost: ``choices`` empty or null, a null message
    or null content give an empty text (the judge then re-asks); missing or non-integer ``usage`` counts
    0 tokens (``usage.prompt_tokens_details.cached_tokens`` likewise, and at most the prompt's count); unusable
    ``logprobs`` are dropped. Everything else that is not a chat completion is malformed.
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
    tokens_in = _count(usage, "prompt_tokens")
    details = usage.get("prompt_tokens_details")
    cached = _count(details, "cached_tokens", "usage.prompt_tokens_details") if isinstance(details, dict) else 0
    return ChatBody(text=text or "", tokens_in=tokens_in, tokens_out=_count(usage, "completion_tokens"),
                    tokens_cached=min(cached, tokens_in),
                    finish_reason=finish if isinstance(finish, str) else None,
                    model=model if isinstance(model, str) else None, top_logprobs=_top_logprobs(choice))


def _kind(value) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number" if isinstance(value, (int, float)) else type(value).__name__)


def _count(usage: dict, name: str, where: str = "usage") -> int:
    """The token count ``usage[name]``, or 0 when the server sent none or something that is not a non-negative
    integer; a count above :data:`MAX_TOKEN_COUNT` (a 400-digit number, 2**63) is refused: 0, with a warning."""
    value = usage.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return 0
    if value > MAX_TOKEN_COUNT:
        digits = f"{value.bit_length()}-bit number" if value.bit_length() > 64 else str(value)
        log.warning("%s.%s = %s is beyond any call (more than %d tokens): refused, counted as 0", where, name, digits,
                    MAX_TOKEN_COUNT)
        return 0
    return value


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
            out.append({t: lp for t, lp in cands.items() if math.isfinite(lp)})  # NaN, ±inf: no probability
    except (AttributeError, KeyError, TypeError, ValueError, OverflowError):  # float(10**400): OverflowError
        return None
    return out


def _round_robin(b: OpenAIBackend) -> int:
    return next(b._cycle)


def _least_busy(b: OpenAIBackend) -> int:
    start = next(b._cycle)  # rotate the tie-break so equal loads still spread
    n = len(b._in_flight)
    return min(((start + k) % n for k in range(n)), key=lambda i: b._in_flight[i])


SPREADS = {"round_robin": _round_robin, "least_busy": _least_busy}
