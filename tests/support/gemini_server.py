"""A fake Gemini API (``generateContent``) on 127.0.0.1 with implicit caching, for the backend's tests.

Written from the Gemini API's public reference (no network): ``POST /v1beta/models/{model}:generateContent`` needs
the ``x-goog-api-key`` header (when the server is given a key: else 400 ``API_KEY_INVALID``, as Google answers) and
``contents``; it answers one candidate whose ``content.parts`` hold the text
(:func:`tests.support.fault_server.default_answer` of the system instruction and the turns, as chat messages) and
a ``usageMetadata`` counting tokens as 4 characters: ``promptTokenCount`` (all of the prompt),
``cachedContentTokenCount`` (a ``systemInstruction`` of at least ``cache_min_tokens`` tokens seen before: the
implicit cache), ``candidatesTokenCount`` and ``thoughtsTokenCount`` (``thoughts`` per call, billed as output).
With ``thought_part`` the answer starts with a part marked ``thought`` (a thinking summary, not the answer).
"""

from __future__ import annotations

import json
from urllib.parse import unquote

from tests.support.fault_server import default_answer
from tests.support.provider_server import ProviderServer


class GeminiServer(ProviderServer):
    routes = [("POST", r"/v1beta/models/([^/:]+):generateContent", "generate")]

    def __init__(self, *, api_key: str | None = None, answer=default_answer, cache_min_tokens: int = 1024,
                 thoughts: int = 0, thought_part: bool = False):
        super().__init__()
        self.api_key, self.answer, self.cache_min_tokens = api_key, answer, cache_min_tokens
        self.thoughts, self.thought_part = thoughts, thought_part
        self.cached: set[str] = set()
        self.usage: list[dict] = []
        self.models: list[str] = []

    def generate(self, match, headers: dict, body: bytes):
        if self.api_key is not None and headers.get("x-goog-api-key") != self.api_key:
            return 400, {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                   "status": "INVALID_ARGUMENT"}}, {}
        params = json.loads(body)
        if "contents" not in params:
            return 400, {"error": {"code": 400, "message": "contents is required", "status": "INVALID_ARGUMENT"}}, {}
        system = "".join(p.get("text", "") for p in (params.get("systemInstruction") or {}).get("parts", []))
        turns = [{"role": "assistant" if c.get("role") == "model" else "user",
                  "content": "".join(p.get("text", "") for p in c["parts"])} for c in params["contents"]]
        chat = ([{"role": "system", "content": system}] if system else []) + turns
        text = self.answer(chat)
        self.bill(chat)
        prompt = (len(system) + sum(len(t["content"]) for t in turns)) // 4
        cached = 0
        if len(system) // 4 >= self.cache_min_tokens:
            with self.lock:
                cached = len(system) // 4 if system in self.cached else 0
                self.cached.add(system)
        usage = {"promptTokenCount": prompt, "candidatesTokenCount": len(text) // 4 + 1,
                 "totalTokenCount": prompt + len(text) // 4 + 1 + self.thoughts}
        if cached:
            usage["cachedContentTokenCount"] = cached
        if self.thoughts:
            usage["thoughtsTokenCount"] = self.thoughts
        thought = [{"text": "Thinking about A and B...", "thought": True}] if self.thought_part else []
        parts = thought + [{"text": text}]
        with self.lock:
            self.live += 1
            self.usage.append(usage)
            self.models.append(unquote(match.group(1)))
        return 200, {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                                     "index": 0}], "usageMetadata": usage, "modelVersion": unquote(match.group(1))}, {}
