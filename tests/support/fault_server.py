"""A small OpenAI-compatible chat server on 127.0.0.1 that injects faults, for tests and benchmarks.

At configured rates it answers 429 (with ``Retry-After``), 500, hangs past the client's timeout, drops
the connection, returns empty or garbage content, or a malformed HTTP 200 (``MALFORMED``: an HTML page,
truncated JSON, an empty body, a JSON array or scalar, an object without ``choices``, wrong types inside;
these are not answers and are not counted as successes); otherwise it returns an Arena-Hard style verdict
chosen from a hash of the request. It counts *successful* calls (a 200 actually written to a client that
was still connected) per request key, the hash of the request's messages, so tests can check that no
successful call was ever repeated. ``freeze()`` holds every new request (a request whose client goes away
while held is not answered and not counted), which lets a test kill a client with no answer in flight.

Run as a script to serve from a separate process: ``python tests/support/fault_server.py --latency 0.2`` prints
``URL <base_url>`` and serves until killed, from an asyncio server (:meth:`FaultServer.serve`: the same answers and
faults, one thread, a fraction of the CPU per request, on the loop a judging run uses,
:mod:`judgewise.judges.eventloop`) so that a benchmark measures its client, not this server.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import random
import re
import select
import socket
import struct
import sys
import threading
import time
import zlib
from collections import Counter
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from judgewise.judges import eventloop

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
# A malicious server: chat completions valid as JSON whose values are hostile (a success, counted when delivered)...
HOSTILE_VALUES = ("lone_surrogate", "nul_char", "usage_400_digits", "usage_2_63", "logprobs_800", "logprobs_minus_1000")
# ...and answers whose HTTP is hostile (never a success): written as a stream of bytes by ``hostile_http``
HOSTILE_HTTP = ("gzip_bomb", "deflate_bomb", "chunked_flood", "tiny_chunk_flood", "close_flood", "huge_json",
                "bad_length", "huge_chunk_size", "interim_flood", "bad_chunk_size", "endless_trailers", "bad_status")
FAULTS = ("429", "500", "timeout", "drop", "empty", "garbage", "too_long",  # too_long: 400, context exceeded
          *MALFORMED, *HOSTILE_VALUES, *HOSTILE_HTTP)
VERDICTS = ("A>>B", "A>B", "A=B", "B>A", "B>>A")
COMPLETIONS = (None, "empty", "garbage", *HOSTILE_VALUES)  # answered with a chat completion: counted when delivered
FLOOD_BYTES = 1 << 30  # what the flooding answers send at most (1 GiB), unless the client stops reading first


def request_key(messages: list) -> str:
    """The per-call key the server counts by: a hash of the request's messages."""
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def default_answer(messages: list, key: str | None = None) -> str:
    """A deterministic Arena-Hard verdict for these messages (``key``: their :func:`request_key`, when known)."""
    return f"Both are fine. My final verdict is [[{VERDICTS[int((key or request_key(messages))[:8], 16) % 5]}]]."


class FaultServer:
    """Threaded server; use as a context manager. ``url`` is the OpenAI base URL (``.../v1``)."""

    def __init__(self, *, latency_s: float = 0.0, rates: dict | None = None, seed: int = 0,
                 retry_after_s: float = 0.05, hang_s: float = 5.0, model: str = "judge-model",
                 api_key: str | None = None, reflect_auth: bool = False, answer=default_answer, fault_fn=None,
                 candidates=None, reflect_auth_in_answer: bool = False, threaded: bool = True,
                 flood_bytes: int = FLOOD_BYTES, prompt_cache: bool = False):
        unknown = set(rates or {}) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown fault kinds {unknown}; known: {FAULTS}")
        self.latency_s, self.rates, self.retry_after_s, self.hang_s = latency_s, dict(rates or {}), retry_after_s, hang_s
        self.model, self.api_key, self.reflect_auth, self.answer = model, api_key, reflect_auth, answer
        self.reflect_auth_in_answer = reflect_auth_in_answer  # echo the Authorization header in every answer
        self.flood_bytes = flood_bytes  # decoded size of the bombs, size of the floods and of huge_json
        # prompt_cache: report usage.prompt_tokens_details.cached_tokens by OpenAI's documented rule (a prompt of
        # 1,024 tokens or more; its prefix cached in blocks of 128 tokens once a request sent it); a token here is
        # 4 characters of the messages' contents, as prompt_tokens counts them
        self.prompt_cache, self._cached_blocks = prompt_cache, set()
        self.success_times: list[tuple[float, str]] = []  # (time.time(), request key) of each 200 delivered
        self.fault_fn = fault_fn  # optional (messages, times this request was seen before) -> fault kind | None
        self.requests: Counter[str] = Counter()  # request key -> requests received (any outcome)
        # with logprobs requested: token -> {candidate: probability} at that position (default: the token, p=1)
        self.candidates = candidates or {}
        self.successes: Counter[str] = Counter()  # request key -> 200s delivered
        self.events: Counter[str] = Counter()     # fault kind / "ok" / "abandoned" -> count
        self.auth_seen: Counter[str] = Counter()  # Authorization header values received
        self.in_service = 0  # requests let through the hold (``freeze``) and not finished yet
        self.held = 0  # requests waiting for ``thaw``
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._open = threading.Event()
        self._open.set()
        self.port = 0  # set once serving
        if threaded:
            self._httpd = _Server(("127.0.0.1", 0), _make_handler(self))
            self._httpd.daemon_threads = True
            self.port = self._httpd.server_address[1]
            self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "FaultServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._open.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    async def serve(self) -> None:
        """Serve from an asyncio server in this thread until cancelled (a server made with ``threaded=False``; the
        script's way): one thread instead of one per connection, a fraction of the threaded server's CPU per
        request, so that a benchmark measures its client rather than this server. Every fault works as in the
        threaded server; ``freeze`` does not (nothing outside the process can call it)."""
        server = await asyncio.start_server(self._serve_connection, "127.0.0.1", 0, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        print(f"URL {self.url}", flush=True)
        async with server:
            await server.serve_forever()

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:  # HTTP/1.1 keep-alive: requests one after another
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                fields = {name.strip().lower(): value.strip()
                          for name, _, value in (line.partition(":") for line in head[1:] if line)}
                body = json.loads(await reader.readexactly(int(fields.get("content-length", 0))) or b"{}")
                if not await self._serve_request(head[0].split(" ")[1], fields.get("authorization"), body,
                                                 reader, writer):
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, IndexError, ValueError):
            pass
        finally:
            writer.close()

    async def _serve_request(self, path: str, auth: str | None, body: dict, reader, writer) -> bool:
        """One request, served as the threaded handler serves it; False when the connection is to close."""
        self.auth_seen[auth or ""] += 1
        refused = self.refusal(path, auth, body)
        if refused:
            writer.write(_http_answer(*refused))
            return True
        messages = body.get("messages", [])
        key = request_key(messages)
        fault = self.draw_fault(messages, key)
        await asyncio.sleep(self.latency_s)
        if reader.at_eof():  # the client went away meanwhile
            self.note("abandoned")
            return False
        if fault:
            self.note(fault)
        if fault in ("timeout", "drop"):
            if fault == "timeout":
                await asyncio.sleep(self.hang_s)
            return False
        if fault in HOSTILE_HTTP:
            for piece in hostile_http(fault, self.answer_text(messages, key), self.flood_bytes):
                writer.write(piece)
                await writer.drain()
            return False
        if fault in COMPLETIONS:  # counted before it is written: a client holding its answer finds it counted
            self.note("ok", key)
        writer.write(_http_answer(*self.answer_for(fault, body, messages, auth, key)))
        return True

    def freeze(self) -> None:
        """Hold new requests unanswered until :meth:`thaw`. A request let through before (its answer being written)
        still finishes: :meth:`quiet` says when none is left."""
        with self._lock:  # a request is let through (``admit``) under the same lock: before the freeze or held
            self._open.clear()

    def thaw(self) -> None:
        self._open.set()

    def admit(self) -> bool:
        """Let a request past the hold (True; it counts as in service until :meth:`done`), unless frozen (False)."""
        with self._lock:
            if not self._open.is_set():
                return False
            self.in_service += 1
            return True

    def done(self) -> None:
        with self._lock:
            self.in_service -= 1

    def quiet(self) -> bool:
        """Frozen, and every request let through has finished: each answer the server writes before :meth:`thaw` is
        written and counted (a test waiting for the client to store them can then compare counts that no longer
        move on the server's side). Threaded server only."""
        with self._lock:
            return not self._open.is_set() and self.in_service == 0

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

    def refusal(self, path: str, auth: str | None, body: dict) -> tuple | None:
        """The answer (see :meth:`answer_for`) to a request refused before any fault: an unknown route, a wrong
        key, an unknown model; None for a request to serve."""
        if not path.endswith("/chat/completions"):
            return self.error(404, f"no route {path}", auth)
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            return self.error(401, "invalid api key", auth)
        if body.get("model") != self.model:
            return self.error(404, f"model {body.get('model')!r} not found", auth)
        return None

    def error(self, status: int, message: str, auth: str | None, headers: dict | None = None) -> tuple:
        if self.reflect_auth:  # a leaky proxy echoing the credentials it received
            message += f" (received Authorization: {auth})"
        data = json.dumps({"error": {"message": message, "type": "fault", "code": status}}).encode()
        return status, "application/json", data, headers or {}

    def answer_text(self, messages: list, key: str | None = None) -> str:
        """The answer's text for these messages (``key``: their :func:`request_key`, when known)."""
        return default_answer(messages, key) if self.answer is default_answer else self.answer(messages)

    def answer_for(self, fault: str | None, body: dict, messages: list, auth: str | None,
                   key: str | None = None) -> tuple:
        """(status, content type, body bytes, headers) to send for ``fault`` (None: a good answer); not for the
        "timeout" and "drop" faults, which send nothing. ``key``: the request's :func:`request_key`, when known."""
        if fault == "429":
            ms = int(self.retry_after_s * 1000)
            return self.error(429, "rate limited", auth, {"retry-after-ms": str(ms),
                                                           "Retry-After": str(max(1, round(ms / 1000)))})
        if fault == "500":
            return self.error(500, "internal error", auth)
        if fault == "too_long":  # worded as OpenAI and vLLM word it
            return self.error(400, "This model's maximum context length is 8192 tokens. However, your messages "
                                   "resulted in 9000 tokens. Please reduce the length of the messages.", auth)
        if fault in MALFORMED:
            return 200, *MALFORMED[fault], {}
        text = ({"empty": "", "garbage": "%$# lorem ipsum, no verdict at all"}.get(fault)
                or self.answer_text(messages, key))
        if self.reflect_auth_in_answer:  # a leaky endpoint quoting the credentials back in its completion
            text = f"(you sent Authorization: {auth}) {text}"
        data = json.dumps(_completion(self, body, messages, text))
        return 200, "application/json", hostile_values(fault, data, text).encode(), {}

    def note(self, event: str, key: str | None = None) -> None:
        with self._lock:
            self.events[event] += 1
            if key is not None:
                self.successes[key] += 1
                self.success_times.append((time.time(), key))

    def unnote_ok(self, key: str) -> None:
        """Take back the ``ok`` :meth:`note` counted for an answer that could not be sent."""
        with self._lock:
            self.events["ok"] -= 1
            self.successes[key] -= 1
            if not self.successes[key]:
                del self.successes[key]
            at = max(i for i, (_, k) in enumerate(self.success_times) if k == key)
            del self.success_times[at]


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

        def _admitted(self, seconds: float) -> bool:
            """Sleep ``seconds`` (the latency), then, while frozen, wait (counted in ``server.held``); then enter
            service (``server.admit``: under the lock ``freeze`` takes, so a request is either in service before a
            freeze or held by it). False, and not in service, if the client went away first."""
            end = time.monotonic() + seconds
            if server._open.is_set() and seconds <= 0.5:
                time.sleep(seconds)  # one sleep: polling would cost latency under load
            held = False
            try:
                while True:
                    late = time.monotonic() >= end
                    if late and server.admit():
                        if _peer_closed(self.connection):
                            server.done()
                            return False
                        return True
                    if late and not held:
                        held = True
                        with server._lock:
                            server.held += 1
                    if _peer_closed(self.connection):
                        return False
                    time.sleep(min(0.05, max(0.001, end - time.monotonic())))
            finally:
                if held:
                    with server._lock:
                        server.held -= 1

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            auth = self.headers.get("Authorization")
            server.auth_seen[auth or ""] += 1
            refused = server.refusal(self.path, auth, body)
            if refused:
                return self._send_raw(*refused)
            messages = body.get("messages", [])
            key = request_key(messages)  # once per request: at 1,000+ requests/s its JSON and hash add up
            fault = server.draw_fault(messages, key)
            if not self._admitted(server.latency_s):
                return server.note("abandoned")
            try:
                self._serve(body, messages, key, fault, auth)
            finally:
                server.done()

        def _serve(self, body: dict, messages: list, key: str, fault: str | None, auth: str | None) -> None:
            """Answer a request let through the hold: its fault, or a completion (counted once written)."""
            if fault:
                server.note(fault)
            if fault in ("timeout", "drop"):
                if fault == "timeout":
                    self._wait(server.hang_s)
                self.close_connection = True
                return None
            if fault in HOSTILE_HTTP:
                self.close_connection = True
                try:
                    for piece in hostile_http(fault, server.answer_text(messages, key), server.flood_bytes):
                        self.wfile.write(piece)
                except OSError:  # the client stopped reading (what a bounded client does)
                    pass
                return None
            answer = server.answer_for(fault, body, messages, auth, key)
            if fault not in COMPLETIONS:
                return self._send_raw(*answer)
            if _peer_closed(self.connection):
                return server.note("abandoned")
            server.note("ok", key)  # counted before it is sent: a client holding its answer finds it counted
            if not self._send_raw(*answer):
                server.unnote_ok(key)  # it never got there

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

    return Handler


def _http_answer(status: int, content_type: str, data: bytes, headers: dict) -> bytes:
    head = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", f"Content-Type: {content_type}",
            f"Content-Length: {len(data)}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data


def hostile_values(fault: str | None, data: str, text: str) -> str:
    """The JSON text ``data`` of a chat completion (whose content is ``text``) with ``fault``'s hostile values:
    content holding a lone surrogate escape or a NUL, usage counts of 400 digits or 2**63, logprobs of 800 or -1000
    (each verdict token's candidates, as JSON numbers no probability has)."""
    if fault == "lone_surrogate":
        return data.replace(json.dumps(text)[1:-1], json.dumps(text)[1:-1] + "\\ud800 and \\udfff alone", 1)
    if fault == "nul_char":
        return data.replace(json.dumps(text)[1:-1], json.dumps(text)[1:-1] + " \\u0000 after a NUL", 1)
    if fault in ("usage_400_digits", "usage_2_63"):
        big = "9" * 400 if fault == "usage_400_digits" else str(2**63)
        return re.sub(r'"(prompt_tokens|completion_tokens|total_tokens|cached_tokens)": \d+', rf'"\1": {big}', data)
    if fault in ("logprobs_800", "logprobs_minus_1000"):
        value = "800" if fault == "logprobs_800" else "-1000"
        return re.sub(r'"logprob": -?[0-9.e+-]+', f'"logprob": {value}', data)
    return data


def hostile_http(fault: str, text: str, size: int):
    """The bytes (head, then body in pieces, lazily) of an answer whose HTTP is hostile: a gzip or deflate bomb (a
    valid chat completion of ``size`` bytes, a thousandth of it on the wire), a chunked or an HTTP/1.0
    connection-framed stream of ``size`` bytes, a valid chat completion of ``size`` bytes in one-byte chunks
    (tiny_chunk_flood, six bytes on the wire per byte), a valid chat completion of ``size`` bytes (huge_json), or
    heads that are not HTTP as a client may read them (a Content-Length of "²", chunk sizes of 30 hex digits or "1_0",
    trailers that never end, a status code in other digits, ten thousand interim 100 Continue answers)."""
    if fault in ("gzip_bomb", "deflate_bomb"):
        data = bomb(fault, size)
        yield (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: %s\r\nContent-Length: "
               b"%d\r\n\r\n" % (b"gzip" if fault == "gzip_bomb" else b"deflate", len(data))) + data
    elif fault == "chunked_flood":
        yield b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        piece = b"%x\r\n%s\r\n" % (1 << 16, b" " * (1 << 16))
        yield from (piece for _ in range(size >> 16))
        yield b"0\r\n\r\n"
    elif fault == "tiny_chunk_flood":  # a valid chat completion of ``size`` bytes, one byte per chunk (6 on the wire)
        yield b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        head, tail = _padded_completion(text)
        yield b"".join(b"1\r\n%c\r\n" % byte for byte in head)
        pad = size - len(head) - len(tail)
        yield from (b"1\r\n \r\n" * min(1 << 16, pad - i) for i in range(0, pad, 1 << 16))
        yield b"".join(b"1\r\n%c\r\n" % byte for byte in tail) + b"0\r\n\r\n"
    elif fault == "close_flood":
        yield b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n"
        yield from (b" " * (1 << 16) for _ in range(size >> 16))
    elif fault == "huge_json":
        head, tail = _padded_completion(text)
        yield b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % size + head
        pad = size - len(head) - len(tail)
        yield from (b" " * min(1 << 16, pad - i) for i in range(0, pad, 1 << 16))
        yield tail
    else:
        yield {"bad_length": "HTTP/1.1 200 OK\r\nContent-Length: ²\r\n\r\n{}",
               "huge_chunk_size": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + "f" * 30 + "\r\n",
               "bad_chunk_size": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1_0\r\n" + "x" * 16,
               "endless_trailers": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n"
                                   + "X-Trailer: " + "y" * 200_000,
               "bad_status": "HTTP/1.1 ２００ OK\r\nContent-Length: 2\r\n\r\n{}",
               "interim_flood": "HTTP/1.1 100 Continue\r\n\r\n" * 10_000}[fault].encode("utf-8")


def _padded_completion(text: str) -> tuple[bytes, bytes]:
    """The JSON of a chat completion answering ``text``, split where spaces (valid JSON whitespace) can pad it."""
    data = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                       "model": "judge-model", "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()
    return data[:-1], data[-1:]


_BOMBS: dict[tuple[str, int], bytes] = {}


def bomb(kind: str, size: int) -> bytes:
    """A gzip ("gzip_bomb") or zlib ("deflate_bomb") stream of a valid chat completion padded to ``size`` bytes with
    JSON whitespace: about a thousandth of ``size`` compressed. Made fast (a 1 GiB bomb in about a second): one
    megabyte of spaces is deflated once, as a block that needs no history, and repeated; the checksum is computed
    over the repeats (made once per kind and size)."""
    if (kind, size) in _BOMBS:
        return _BOMBS[kind, size]
    head, tail = _padded_completion(default_answer([]))
    block = b" " * (1 << 20)
    n, rest = divmod(size - len(head) - len(tail), len(block))

    def deflated(data: bytes, last: bool) -> bytes:  # raw deflate blocks, byte-aligned, needing no earlier data
        z = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        return z.compress(data) + z.flush(zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH)

    body = b"".join([deflated(head, False), deflated(block, False) * n, deflated(block[:rest] + tail, True)])
    gzip_kind = kind == "gzip_bomb"
    check = zlib.crc32(head) if gzip_kind else zlib.adler32(head)
    for _ in range(n):
        check = zlib.crc32(block, check) if gzip_kind else zlib.adler32(block, check)
    last = block[:rest] + tail
    check = zlib.crc32(last, check) if gzip_kind else zlib.adler32(last, check)
    if gzip_kind:
        out = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + body + struct.pack("<II", check, size & 0xFFFFFFFF)
    else:
        out = b"\x78\xda" + body + struct.pack(">I", check)
    _BOMBS[kind, size] = out
    return out


CACHE_MIN_TOKENS, CACHE_BLOCK_TOKENS = 1024, 128  # OpenAI's prompt caching rule (platform docs, "Prompt caching")


def cached_tokens(server: FaultServer, prompt: str) -> int:
    """Prompt tokens (4 characters each) read from the simulated prompt cache: the longest run of 128-token blocks
    from the start that an earlier request sent, when it is 1,024 tokens or more (else 0); this request's blocks are
    cached for the next ones."""
    n_blocks = len(prompt) // 4 // CACHE_BLOCK_TOKENS
    if not server.prompt_cache or len(prompt) // 4 < CACHE_MIN_TOKENS:
        return 0
    prefixes = [hash(prompt[:(k + 1) * CACHE_BLOCK_TOKENS * 4]) for k in range(n_blocks)]
    with server._lock:
        hit = next((k for k, h in enumerate(prefixes) if h not in server._cached_blocks), n_blocks)
        server._cached_blocks.update(prefixes)
    return hit * CACHE_BLOCK_TOKENS if hit * CACHE_BLOCK_TOKENS >= CACHE_MIN_TOKENS else 0


def _completion(server: FaultServer, body: dict, messages: list, text: str) -> dict:
    prompt = "".join(str(m.get("content", "")) for m in messages)
    n_in = len(prompt) // 4
    resp = {"id": "cmpl-fault", "object": "chat.completion", "created": int(time.time()), "model": server.model,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": n_in, "completion_tokens": len(text) // 4 + 1,
                      "total_tokens": n_in + len(text) // 4 + 1,
                      "prompt_tokens_details": {"cached_tokens": cached_tokens(server, prompt)}}}
    if body.get("logprobs"):
        resp["choices"][0]["logprobs"] = {"content": _logprobs(text, server.candidates)}
    return resp


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
    ap.add_argument("--flood-bytes", type=int, default=FLOOD_BYTES, help="size of the bombs, floods and huge_json")
    for kind in FAULTS:
        ap.add_argument(f"--rate-{kind}", type=float, default=0.0)
    args = ap.parse_args(argv)
    rates = {k: getattr(args, f"rate_{k}") for k in FAULTS}
    try:  # on the loop a judging run uses (uvloop's where installed): the server's own CPU kept out of the way
        eventloop.run(FaultServer(latency_s=args.latency, rates=rates, model=args.model, threaded=False,
                                  flood_bytes=args.flood_bytes).serve())
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
