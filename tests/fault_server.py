"""A small OpenAI-compatible chat server on 127.0.0.1 that injects faults, for tests and benchmarks.

At configured rates it answers 429 (with ``Retry-After``), 500, hangs past the client's timeout, drops
the connection, returns empty or garbage content, or a malformed HTTP 200 (``MALFORMED``: an HTML page,
truncated JSON, an empty body, a JSON array or scalar, an object without ``choices``, wrong types inside;
these are not answers and are not counted as successes); otherwise it returns an Arena-Hard style verdict
chosen from a hash of the request. It counts *successful* calls (a 200 actually written to a client that
was still connected) per request key, the hash of the request's messages, so tests can check that no
successful call was ever repeated. ``freeze()`` holds every new request (a request whose client goes away
while held is not answered and not counted), which lets a test kill a client with no answer in flight.

Run as a script to serve from a separate process: ``python tests/fault_server.py --latency 0.2`` prints
``URL <base_url>`` and serves until killed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import select
import socket
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# New kinds are appended, so that a seed's draws of the earlier kinds stay what they were.
MALFORMED = {  # fault kind -> (content type, body) of an HTTP 200 that is not a chat completion
    "html": ("text/html", b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"),
    "truncated_json": ("application/json", b'{"id": "cmpl-1", "object": "chat.completion", "choices": [{"ind'),
    "empty_body": ("application/json", b""),
    "json_array": ("application/json", b'[{"message": {"content": "[[A>B]]"}}]'),
    "json_scalar": ("application/json", b'"[[A>B]]"'),
    "no_choices": ("application/json", b'{"id": "cmpl-1", "object": "chat.completion", "model": "judge-model"}'),
    "wrong_types": ("application/json", b'{"choices": [{"message": {"content": 42}}], "model": 7, "usage": "x"}'),
}
FAULTS = ("429", "500", "timeout", "drop", "empty", "garbage", "too_long",  # too_long: 400, context exceeded
          *MALFORMED)
VERDICTS = ("A>>B", "A>B", "A=B", "B>A", "B>>A")


def request_key(messages: list) -> str:
    """The per-call key the server counts by: a hash of the request's messages."""
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def default_answer(messages: list) -> str:
    """A deterministic Arena-Hard verdict for these messages."""
    return f"Both are fine. My final verdict is [[{VERDICTS[int(request_key(messages)[:8], 16) % 5]}]]."


class FaultServer:
    """Threaded server; use as a context manager. ``url`` is the OpenAI base URL (``.../v1``)."""

    def __init__(self, *, latency_s: float = 0.0, rates: dict | None = None, seed: int = 0,
                 retry_after_s: float = 0.05, hang_s: float = 5.0, model: str = "judge-model",
                 api_key: str | None = None, reflect_auth: bool = False, answer=default_answer, fault_fn=None,
                 candidates=None, reflect_auth_in_answer: bool = False):
        unknown = set(rates or {}) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown fault kinds {unknown}; known: {FAULTS}")
        self.latency_s, self.rates, self.retry_after_s, self.hang_s = latency_s, dict(rates or {}), retry_after_s, hang_s
        self.model, self.api_key, self.reflect_auth, self.answer = model, api_key, reflect_auth, answer
        self.reflect_auth_in_answer = reflect_auth_in_answer  # echo the Authorization header in every answer
        self.success_times: list[tuple[float, str]] = []  # (time.time(), request key) of each 200 delivered
        self.fault_fn = fault_fn  # optional (messages, times this request was seen before) -> fault kind | None
        self.requests: Counter[str] = Counter()  # request key -> requests received (any outcome)
        # with logprobs requested: token -> {candidate: probability} at that position (default: the token, p=1)
        self.candidates = candidates or {}
        self.successes: Counter[str] = Counter()  # request key -> 200s delivered
        self.events: Counter[str] = Counter()     # fault kind / "ok" / "abandoned" -> count
        self.auth_seen: Counter[str] = Counter()  # Authorization header values received
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._open = threading.Event()
        self._open.set()
        self._httpd = _Server(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> "FaultServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._open.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def freeze(self) -> None:
        """Hold new requests unanswered until :meth:`thaw`."""
        self._open.clear()

    def thaw(self) -> None:
        self._open.set()

    def total_successes(self) -> int:
        with self._lock:
            return sum(self.successes.values())

    def draw_fault(self, messages: list, key: str | None = None) -> str | None:
        key = key or request_key(messages)
        with self._lock:
            seen = self.requests[key]
            self.requests[key] += 1
            u = self._rng.random()
        if self.fault_fn is not None:
            return self.fault_fn(messages, seen)
        for kind in FAULTS:
            u -= self.rates.get(kind, 0.0)
            if u < 0:
                return kind
        return None

    def note(self, event: str, key: str | None = None) -> None:
        with self._lock:
            self.events[event] += 1
            if key is not None:
                self.successes[key] += 1
                self.success_times.append((time.time(), key))


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default backlog of 5 drops connections when many clients open at once
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """A client that went away (killed, timed out) is part of the game: no traceback on stderr for it."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _peer_closed(sock: socket.socket) -> bool:
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _make_handler(server: FaultServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: Nagle + delayed ACK would add ~40 ms

        def log_message(self, *args) -> None:  # quiet
            pass

        def _wait(self, seconds: float) -> bool:
            """Sleep ``seconds``, then while frozen; False if the client went away meanwhile."""
            end = time.monotonic() + seconds
            if server._open.is_set() and seconds <= 0.5:
                time.sleep(seconds)  # one sleep: polling would cost latency under load
            while time.monotonic() < end or not server._open.is_set():
                if _peer_closed(self.connection):
                    return False
                time.sleep(min(0.05, max(0.001, end - time.monotonic())))
            return not _peer_closed(self.connection)

        def _send(self, status: int, body: dict, headers: dict | None = None) -> bool:
            return self._send_raw(status, "application/json", json.dumps(body).encode(), headers)

        def _error(self, status: int, message: str, headers: dict | None = None) -> None:
            if server.reflect_auth:  # a leaky proxy echoing the credentials it received
                message += f" (received Authorization: {self.headers.get('Authorization')})"
            self._send(status, {"error": {"message": message, "type": "fault", "code": status}}, headers)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            server.auth_seen[self.headers.get("Authorization", "")] += 1
            messages = body.get("messages", [])
            if not self.path.endswith("/chat/completions"):
                return self._error(404, f"no route {self.path}")
            if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                return self._error(401, "invalid api key")
            if body.get("model") != server.model:
                return self._error(404, f"model {body.get('model')!r} not found")
            key = request_key(messages)  # once per request: at 1,000+ requests/s its JSON and hash add up
            fault = server.draw_fault(messages, key)
            if not self._wait(server.latency_s):
                return server.note("abandoned")
            if fault:
                server.note(fault)
            if fault == "429":
                ms = int(server.retry_after_s * 1000)
                return self._error(429, "rate limited", {"retry-after-ms": str(ms),
                                                         "Retry-After": str(max(1, round(ms / 1000)))})
            if fault == "500":
                return self._error(500, "internal error")
            if fault == "too_long":  # worded as OpenAI and vLLM word it
                return self._error(400, "This model's maximum context length is 8192 tokens. However, your "
                                        "messages resulted in 9000 tokens. Please reduce the length of the messages.")
            if fault == "timeout":
                self._wait(server.hang_s)
                self.close_connection = True
                return None
            if fault == "drop":
                self.close_connection = True
                return None
            if fault in MALFORMED:
                return self._send_raw(200, *MALFORMED[fault])
            text = {"empty": "", "garbage": "%$# lorem ipsum, no verdict at all"}.get(fault) or server.answer(messages)
            if server.reflect_auth_in_answer:  # a leaky endpoint quoting the credentials back in its completion
                text = f"(you sent Authorization: {self.headers.get('Authorization')}) {text}"
            self._reply(body, messages, text, key)

        def _send_raw(self, status: int, content_type: str, data: bytes, headers: dict | None = None) -> bool:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
                return True
            except OSError:
                return False

        def _reply(self, body: dict, messages: list, text: str, key: str) -> None:
            n_in = sum(len(str(m.get("content", ""))) for m in messages) // 4
            resp = {"id": "cmpl-fault", "object": "chat.completion", "created": int(time.time()),
                    "model": server.model,
                    "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": n_in, "completion_tokens": len(text) // 4 + 1,
                              "total_tokens": n_in + len(text) // 4 + 1}}
            if body.get("logprobs"):
                resp["choices"][0]["logprobs"] = {"content": _logprobs(text, server.candidates)}
            if _peer_closed(self.connection):
                return server.note("abandoned")
            if self._send(200, resp):
                server.note("ok", key)

    return Handler


def _logprobs(text: str, candidates: dict) -> list[dict]:
    """OpenAI-style per-token logprobs for ``text`` split into word and punctuation pieces."""
    out = []
    for token in re.findall(r"\s*(?:\w+|[^\w\s])", text):
        cands = candidates.get(token.strip(), {token: 1.0})
        top = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in cands.items()]
        chosen = max(top, key=lambda c: c["logprob"])
        out.append({"token": chosen["token"], "logprob": chosen["logprob"], "bytes": None, "top_logprobs": top})
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--model", default="judge-model")
    for kind in FAULTS:
        ap.add_argument(f"--rate-{kind}", type=float, default=0.0)
    args = ap.parse_args(argv)
    sys.setswitchinterval(0.0005)  # many threads mostly sleeping: hand the GIL over quickly
    rates = {k: getattr(args, f"rate_{k}") for k in FAULTS}
    with FaultServer(latency_s=args.latency, rates=rates, model=args.model) as srv:
        print(f"URL {srv.url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    sys.exit(0)


if __name__ == "__main__":
    main()
