"""A fake Anthropic API on 127.0.0.1 — Messages with prompt caching, and Message Batches — for the backend's tests.

Written from Anthropic's public API reference (no network): ``POST /v1/messages`` needs the ``x-api-key`` (when
the server is given one: else 401 ``authentication_error``) and ``anthropic-version`` headers and a body with
``model``, ``max_tokens`` and ``messages`` (else 400 ``invalid_request_error``); it answers a ``message`` whose
``content`` is one text block (:func:`tests.support.fault_server.default_answer` of the system prompt and the turns
unless ``answer`` says otherwise) and whose ``usage`` counts tokens as 4 characters. Prompt caching: a system
prompt sent as a text block with ``cache_control`` and at least ``cache_min_tokens`` tokens is written to the
cache the first time (``cache_creation_input_tokens``) and read from it after (``cache_read_input_tokens``);
``input_tokens`` counts the rest of the prompt. ``prompt_too_long`` answers every call 400 "prompt is too long".

Message Batches: ``POST /v1/messages/batches`` (``requests: [{custom_id, params}]``), ``GET
/v1/messages/batches/{id}`` (``in_progress`` for ``polls`` GETs, then ``ended``; held while ``hold_batches`` until
:meth:`release`), ``GET /v1/messages/batches`` (newest first, ``limit``, ``after_id``) and ``GET
/v1/messages/batches/{id}/results`` (JSONL, one line per request: ``succeeded`` with the message, billed;
``expired`` past the first ``expire_after`` requests; ``errored`` every ``errored_every``-th). ``hold_create="after"``
creates a batch, then holds the answer until :meth:`release` (a client killed there never learns its id).
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections import Counter

from tests.support.fault_server import default_answer
from tests.support.provider_server import ProviderServer


def _error(status: int, kind: str, message: str) -> tuple[int, dict, dict]:
    return status, {"type": "error", "error": {"type": kind, "message": message}}, {}


class AnthropicServer(ProviderServer):
    routes = [("POST", r"/v1/messages", "messages"), ("POST", r"/v1/messages/batches", "create"),
              ("GET", r"/v1/messages/batches/([^/?]+)", "get"), ("GET", r"/v1/messages/batches(\?.*)?", "listing"),
              ("GET", r"/v1/messages/batches/([^/?]+)/results", "results")]

    def __init__(self, *, api_key: str | None = None, answer=default_answer, cache_min_tokens: int = 1024,
                 prompt_too_long: bool = False, polls: int = 1, expire_after: int | None = None,
                 errored_every: int = 0, hold_batches: bool = False, hold_create: str | None = None):
        super().__init__()
        self.api_key, self.answer, self.cache_min_tokens = api_key, answer, cache_min_tokens
        self.prompt_too_long, self.polls, self.expire_after, self.errored_every = (prompt_too_long, polls,
                                                                                    expire_after, errored_every)
        self.hold_batches, self.hold_create = hold_batches, hold_create
        self.released, self.create_waiting = threading.Event(), threading.Event()
        self.cached: set[str] = set()
        self.batches: dict[str, dict] = {}
        self.usage: list[dict] = []  # the usage of every live answer, in order

    def release(self) -> None:
        self.released.set()

    def submitted(self) -> Counter:
        """How many created batches each custom_id was in."""
        return Counter(r["custom_id"] for b in self.batches.values() for r in b["requests"])

    # -- Messages ----------------------------------------------------------------------------------------
    def messages(self, match, headers: dict, body: bytes):
        if self.api_key is not None and headers.get("x-api-key") != self.api_key:
            return _error(401, "authentication_error", "invalid x-api-key")
        if not headers.get("anthropic-version"):
            return _error(400, "invalid_request_error", "anthropic-version: header is required")
        params = json.loads(body)
        answered = self.answer_params(params)
        if isinstance(answered, tuple):
            return answered
        with self.lock:
            self.live += 1
            self.usage.append(answered["usage"])
        return 200, answered, {}

    def answer_params(self, params: dict):
        """The message answering a Messages body (billed), or an error answer."""
        missing = [k for k in ("model", "max_tokens", "messages") if k not in params]
        if missing:
            return _error(400, "invalid_request_error", f"{missing[0]}: Field required")
        if self.prompt_too_long:
            return _error(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")
        system = params.get("system") or []
        blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system
        system_text = "".join(b["text"] for b in blocks)
        chat = ([{"role": "system", "content": system_text}] if system_text else []) + params["messages"]
        text = self.answer(chat)
        self.bill(chat)
        return {"id": "msg_fake", "type": "message", "role": "assistant", "model": params["model"],
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": self._usage(blocks, params["messages"], text)}

    def _usage(self, blocks: list[dict], turns: list[dict], text: str) -> dict:
        system_tokens = sum(len(b["text"]) for b in blocks) // 4
        rest = sum(len(str(m.get("content", ""))) for m in turns) // 4
        write = read = 0
        if blocks and "cache_control" in blocks[-1] and system_tokens >= self.cache_min_tokens:
            key = "".join(b["text"] for b in blocks)
            with self.lock:
                hit = key in self.cached
                self.cached.add(key)
            read, write = (system_tokens, 0) if hit else (0, system_tokens)
        else:
            rest += system_tokens
        return {"input_tokens": rest, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
                "output_tokens": len(text) // 4 + 1}

    # -- Message Batches ---------------------------------------------------------------------------------
    def create(self, match, headers: dict, body: bytes):
        requests = json.loads(body)["requests"]
        with self.lock:
            batch_id = f"msgbatch_{len(self.batches) + 1:04d}"
            self.batches[batch_id] = {"id": batch_id, "requests": requests, "polls": 0, "results": None,
                                      "created": time.time()}
        if self.hold_create == "after":
            self.create_waiting.set()
            self.released.wait(60)
            self.hold_create = None
        return 200, self._object(self.batches[batch_id]), {}

    def get(self, match, headers: dict, body: bytes):
        with self.lock:
            batch = self.batches.get(match.group(1))
            if batch is None:
                return _error(404, "not_found_error", "no such batch")
            batch["polls"] += 1
            if batch["results"] is None and batch["polls"] > self.polls and (not self.hold_batches
                                                                            or self.released.is_set()):
                self._run(batch)
            return 200, self._object(batch), {}

    def listing(self, match, headers: dict, body: bytes):
        query = dict(p.split("=", 1) for p in (match.group(1) or "?")[1:].split("&") if "=" in p)
        with self.lock:
            items = sorted(self.batches.values(), key=lambda b: b["id"], reverse=True)
            ids = [b["id"] for b in items]
            if "after_id" in query:
                items = items[ids.index(query["after_id"]) + 1:] if query["after_id"] in ids else []
            limit = int(query.get("limit", 20))
            page = [self._object(b) for b in items[:limit]]
        return 200, {"data": page, "has_more": len(items) > limit, "first_id": page[0]["id"] if page else None,
                     "last_id": page[-1]["id"] if page else None}, {}

    def results(self, match, headers: dict, body: bytes):
        batch = self.batches.get(match.group(1))
        if batch is None or batch["results"] is None:
            return _error(404, "not_found_error", "results not available")
        return 200, "".join(json.dumps(r) + "\n" for r in batch["results"]).encode(), \
            {"Content-Type": "application/binary"}

    def _run(self, batch: dict) -> None:
        out = []
        for i, request in enumerate(batch["requests"], start=1):
            if self.expire_after is not None and i > self.expire_after:
                result = {"type": "expired"}
            elif self.errored_every and i % self.errored_every == 0:
                result = {"type": "errored", "error": {"type": "error", "error": {"type": "api_error",
                                                                                   "message": "internal error"}}}
            else:
                result = {"type": "succeeded", "message": self.answer_params(request["params"])}
            out.append({"custom_id": request["custom_id"], "result": result})
        batch["results"] = list(reversed(out))  # results may come in any order

    def _object(self, batch: dict) -> dict:
        counts = Counter(r["result"]["type"] for r in batch["results"] or [])
        ended = batch["results"] is not None
        created = dt.datetime.fromtimestamp(batch["created"], dt.timezone.utc).isoformat().replace("+00:00", "Z")
        return {"id": batch["id"], "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
                "request_counts": {"processing": 0 if ended else len(batch["requests"]),
                                   **{k: counts.get(k, 0) for k in ("succeeded", "errored", "canceled", "expired")}},
                "created_at": created, "ended_at": created if ended else None, "expires_at": created,
                "archived_at": None, "cancel_initiated_at": None,
                "results_url": f"{self.url}/v1/messages/batches/{batch['id']}/results" if ended else None}
