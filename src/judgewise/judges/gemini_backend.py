"""Google's Gemini API (``generateContent``) as a judge backend (``judge: {backend: gemini}``).

Written from the Gemini API reference: ``POST /v1beta/models/{model}:generateContent`` with the key in the
``x-goog-api-key`` header (never in the URL, where logs and proxies would keep it); a body of ``contents`` (turns of
role ``user`` or ``model``, each a list of ``parts`` with ``text``), ``systemInstruction`` and ``generationConfig``
(``maxOutputTokens`` and the sampling ``params`` as the API names them: ``temperature``, ``topP``, ``seed``,
``thinkingConfig``...); an answer whose ``candidates[0].content.parts`` hold the text (parts marked ``thought``
left out) and whose ``usageMetadata`` counts ``promptTokenCount`` (the whole prompt, cached part included),
``cachedContentTokenCount`` (of it, read from the cache: Gemini 2.5 caches repeated prompt prefixes implicitly),
``candidatesTokenCount`` and ``thoughtsTokenCount`` (both billed as output).
"""

from __future__ import annotations

from urllib.parse import quote

from judgewise import __version__
from judgewise.judges.native_backend import NativeBackend, json_object, malformed
from judgewise.judges.openai_backend import ChatBody, _count

API = "a Gemini generateContent answer"
ROLES = {"assistant": "model"}  # chat roles → Gemini's (user stays user)


class GeminiBackend(NativeBackend):
    """Answers from the Gemini API (or a server speaking it at ``base_urls``, default ``GOOGLE_GEMINI_BASE_URL`` or
    ``https://generativelanguage.googleapis.com``). Options: :class:`NativeBackend`'s. No batches (yet)."""

    KIND = "gemini"
    DEFAULT_URL, URL_ENV = "https://generativelanguage.googleapis.com", "GOOGLE_GEMINI_BASE_URL"
    batch_client = None  # judge.batch is refused for this backend

    def headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self._secret or "", "Content-Type": "application/json",
                "Accept": "application/json", "User-Agent": f"judgewise/{__version__}"}

    def path(self) -> str:
        return f"/v1beta/models/{quote(self.model, safe='')}:generateContent"

    def request(self, system: str, turns: list[dict], max_tokens: int) -> dict:
        body = {"contents": [{"role": ROLES.get(m.get("role"), "user"), "parts": [{"text": m.get("content", "")}]}
                             for m in turns]}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        body["generationConfig"] = {"maxOutputTokens": max_tokens, **self.params}
        return body

    @staticmethod
    def parse(body: bytes) -> ChatBody:
        return parse_generate_body(body)


def parse_generate_body(body: bytes) -> ChatBody:
    """The text and usage of a ``generateContent`` answer, or :class:`MalformedResponseError` saying what is wrong.

    No candidate (a prompt blocked, ``promptFeedback``), no content or no parts give an empty text (the judge
    re-asks, then fails the game); missing or unusable usage counts 0 tokens."""
    data = json_object(body, API)
    if "candidates" not in data and "usageMetadata" not in data and "promptFeedback" not in data:
        raise malformed(API, "an object without 'candidates'", body)
    candidates = data.get("candidates") or []
    if not isinstance(candidates, list) or not all(isinstance(c, dict) for c in candidates):
        raise malformed(API, "'candidates' is not a list of objects", body)
    first = candidates[0] if candidates else {}
    content = first.get("content") if isinstance(first.get("content"), dict) else {}
    parts = content.get("parts") or []
    if not isinstance(parts, list):
        raise malformed(API, "'candidates[0].content.parts' is not a list", body)
    texts = []
    for part in parts:
        if isinstance(part, dict) and "text" in part and not part.get("thought"):
            if not isinstance(part["text"], str):
                raise malformed(API, "a part whose 'text' is not text", body)
            texts.append(part["text"])
    usage = data.get("usageMetadata") if isinstance(data.get("usageMetadata"), dict) else {}
    prompt = _count(usage, "promptTokenCount", "usageMetadata")
    out = _count(usage, "candidatesTokenCount", "usageMetadata") + _count(usage, "thoughtsTokenCount", "usageMetadata")
    finish, model = first.get("finishReason"), data.get("modelVersion")
    return ChatBody(text="".join(texts), tokens_in=prompt, tokens_out=out,
                    tokens_cached=min(_count(usage, "cachedContentTokenCount", "usageMetadata"), prompt),
                    finish_reason=finish if isinstance(finish, str) else None,
                    model=model if isinstance(model, str) else None)
