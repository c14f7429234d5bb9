"""What the native provider backends (Anthropic, Gemini) share: the OpenAI backend's transports, another API.

A native backend is an :class:`~judgewise.judges.openai_backend.OpenAIBackend` whose subclass says its kind, its
default base URL, the path and headers of a call, the request body made from chat messages and the parser of an
answer; the lean HTTP client (:mod:`judgewise.judges.http11`: no redirect followed, the key sent to the configured
endpoint only), the one error classification, the key handling and the spread over endpoints are the OpenAI
backend's. Through an HTTP proxy from the environment a call goes through ``httpx`` (redirects not followed either),
the transport the providers' own client libraries use; those libraries are not used: each would parse every answer
into its own objects, where judgewise reads the few fields it needs from the raw body.
"""

from __future__ import annotations

import json

from judgewise.judges.base import AnswerRefusedError, MalformedResponseError
from judgewise.judges.openai_backend import OpenAIBackend, _body_json, _error_text, _transport_error

DEFAULT_MAX_TOKENS = 4096  # a judge's answer when the template sets no max_tokens (Anthropic requires one)


class NativeBackend(OpenAIBackend):
    """The shared part of the native backends: a request body as plain JSON, posted through a proxy by ``httpx``.

    ``max_tokens`` caps each answer when the judge asks for no cap of its own. Logprobs and grammars are not sent
    (these APIs have none a judge can use)."""

    def __init__(self, model: str, *, max_tokens: int = DEFAULT_MAX_TOKENS, **options):
        super().__init__(model, **options)
        self.default_max_tokens = int(max_tokens)
        self._proxy_clients: dict[int, object] = {}
        self.identity = {"backend": self.KIND, "model": model, "params": dict(sorted(self.params.items()))}
        if options.get("name"):
            self.identity["name"] = options["name"]

    def batch_endpoint(self) -> tuple[str, dict[str, str]]:
        """(base URL, headers) of the first endpoint, for the provider's batch API."""
        return self._urls[0], {k: v for k, v in self.headers().items() if k != "Content-Type"}

    def _request_body(self, payload: dict, options: tuple) -> bytes:
        return _body_json(payload).encode()

    def _payload(self, messages: list[dict], max_tokens: int | None, want_logprobs: bool,
                 grammar: str | None) -> tuple[dict, tuple]:
        system = "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
        turns = [m for m in messages if m.get("role") != "system"]
        return self.request(system, turns, self.default_max_tokens if max_tokens is None else max_tokens), ()

    def request(self, system: str, turns: list[dict], max_tokens: int) -> dict:
        """The provider's request body for a system prompt (maybe empty) and the turns after it."""
        raise NotImplementedError

    async def _sdk_post(self, i: int, payload: dict) -> bytes:
        """The body of a 2xx answer through the proxy the environment names (``httpx``, which reads it)."""
        import httpx

        client = self._proxy_clients.get(i)
        if client is None:
            timeout = httpx.Timeout(self._timeout_s or 600.0, connect=self._timeout_s or 5.0)
            client = self._proxy_clients[i] = httpx.AsyncClient(base_url=self._urls[i], headers=self.headers(),
                                                                timeout=timeout, follow_redirects=False)
        try:
            response = await client.post(self.path(), content=_body_json(payload).encode())
        except httpx.TimeoutException as exc:
            raise _transport_error(exc, maybe_charged=True) from None
        except httpx.HTTPError as exc:
            raise _transport_error(exc, maybe_charged=False) from None
        if not 200 <= response.status_code < 300:
            message, code = _error_text(response.status_code, response.content, response.headers)
            raise self._status_error(response.status_code, message, code, response.headers)
        if len(response.content) > self.max_answer_bytes:
            raise AnswerRefusedError(f"answer refused: {len(response.content):,} bytes, more than the "
                                     f"{self.max_answer_bytes:,}-byte cap (max_answer_mb in the judge config raises "
                                     "the cap)")
        return response.content

    async def aclose(self) -> None:
        clients, self._proxy_clients = list(self._proxy_clients.values()), {}
        for c in clients:
            await c.aclose()
        await super().aclose()


def malformed(api: str, reason: str, body: bytes) -> MalformedResponseError:
    """A success whose body is not an answer of ``api``."""
    snippet = " ".join(body[:200].decode("utf-8", "replace").split())[:80]
    return MalformedResponseError(f"malformed response (a success status, but not {api}): {reason}; body starts "
                                  f"{snippet!r}")


def json_object(body: bytes, api: str) -> dict:
    """A success's body as a JSON object, or :class:`MalformedResponseError` saying what it is instead."""
    if not isinstance(body, (bytes, bytearray)) or not body.strip():
        raise malformed(api, "empty body", bytes(body or b""))
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise malformed(api, f"not JSON ({type(exc).__name__})", body) from None
    if not isinstance(data, dict):
        raise malformed(api, f"a JSON {type(data).__name__}, expected an object", body)
    return data
