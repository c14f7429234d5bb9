"""Anthropic's Messages API as a judge backend (``judge: {backend: anthropic}``), with its prompt caching.

Written from Anthropic's API reference: ``POST /v1/messages`` with the headers ``x-api-key`` and
``anthropic-version``; a body of ``model``, ``max_tokens`` (required), ``system`` and ``messages`` (user and
assistant turns); an answer whose ``content`` is a list of blocks (the ``text`` blocks joined are the judge's text)
and whose ``usage`` counts ``input_tokens`` (the prompt tokens after the last cache breakpoint),
``cache_creation_input_tokens`` (written to the cache, billed at the cache-write price) and
``cache_read_input_tokens`` (read from it, at the cache-hit price): a call's prompt is their sum. With
``prompt_cache`` (the default) the system prompt — a template's instructions, the same in every call — is one text
block marked ``cache_control: {type: ephemeral}`` (the 5-minute cache), so calls after the first read it from the
cache once it is long enough for the model's minimum (1,024 tokens for most models, 2,048 for the Haiku models).
"""

from __future__ import annotations

from judgewise import __version__
from judgewise.judges.native_backend import NativeBackend, json_object, malformed
from judgewise.judges.openai_backend import ChatBody, _count

API_VERSION = "2023-06-01"  # the anthropic-version header: the Messages API's only version
API = "an Anthropic message"


class AnthropicBackend(NativeBackend):
    """Messages from Anthropic's API (or a server speaking it at ``base_urls``, default ``ANTHROPIC_BASE_URL`` or
    ``https://api.anthropic.com``). ``prompt_cache`` marks the system prompt for the prompt cache. Other options:
    :class:`~judgewise.judges.openai_backend.OpenAIBackend`'s and :class:`NativeBackend`'s."""

    KIND = "anthropic"
    DEFAULT_URL, URL_ENV = "https://api.anthropic.com", "ANTHROPIC_BASE_URL"

    def __init__(self, model: str, *, prompt_cache: bool = True, **options):
        self.prompt_cache = bool(prompt_cache)
        super().__init__(model, **options)

    def headers(self) -> dict[str, str]:
        return {"x-api-key": self._secret or "", "anthropic-version": API_VERSION, "Content-Type": "application/json",
                "Accept": "application/json", "User-Agent": f"judgewise/{__version__}"}

    def path(self) -> str:
        return "/v1/messages"

    def request(self, system: str, turns: list[dict], max_tokens: int) -> dict:
        body = {"model": self.model, "max_tokens": max_tokens, **self.params}
        if system:
            block = {"type": "text", "text": system}
            if self.prompt_cache:
                block["cache_control"] = {"type": "ephemeral"}
            body["system"] = [block]
        body["messages"] = [{"role": m.get("role", "user"), "content": m.get("content", "")} for m in turns]
        return body

    @staticmethod
    def parse(body: bytes) -> ChatBody:
        return parse_message_body(body)

    def batch_client(self, **options):
        from judgewise.judges.anthropic_batch import MessageBatchClient

        return MessageBatchClient(*self.batch_endpoint(), **options)


def parse_message_body(body: bytes) -> ChatBody:
    """The text and usage of a Messages API answer, or :class:`MalformedResponseError` saying what is wrong.

    Lenient as :func:`~judgewise.judges.openai_backend.parse_chat_body` is where nothing is lost: an empty
    ``content`` gives an empty text (the judge re-asks), blocks other than text are skipped, missing or unusable
    usage counts 0 tokens."""
    data = json_object(body, API)
    if data.get("type") == "error" or "content" not in data:
        raise malformed(API, "an object without 'content'", body)
    content = data["content"]
    if content is None:
        content = []
    if not isinstance(content, list):
        raise malformed(API, f"'content' is a {type(content).__name__}, expected a list of blocks", body)
    texts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            if not isinstance(block.get("text"), str):
                raise malformed(API, "a text block whose 'text' is not text", body)
            texts.append(block["text"])
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    fresh, read = _count(usage, "input_tokens"), _count(usage, "cache_read_input_tokens")
    written = _count(usage, "cache_creation_input_tokens")
    stop, model = data.get("stop_reason"), data.get("model")
    return ChatBody(text="".join(texts), tokens_in=fresh + read + written, tokens_out=_count(usage, "output_tokens"),
                    tokens_cached=read, tokens_cache_write=written,
                    finish_reason=stop if isinstance(stop, str) else None,
                    model=model if isinstance(model, str) else None)
