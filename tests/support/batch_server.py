"""A fake OpenAI Files + Batches API (and live chat completions) on 127.0.0.1 with faults, for batch-judging tests.

Endpoints: ``POST /v1/files`` (multipart, purpose ``batch``), ``GET /v1/files/{id}/content``, ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``GET /v1/batches`` (newest first, ``limit``/``after``) and ``POST
/v1/chat/completions`` (answered at once). Answers are the fault server's (:func:`fault_server.default_answer`
unless ``answer`` says otherwise). A batch is ``in_progress`` for ``polls`` GETs of it, then ends: every line is
answered (and *billed*: counted in ``billed`` by the request's messages, as live calls are) except the faults
configured — ``expire_after=n`` (only the first n lines run, the batch ``expired``, the rest ``batch_expired`` in
the error file), ``fail_every=k`` (every k-th line a 500 in the error file, not billed), ``malformed_every=k`` (every
k-th line's output is not JSON: billed, unusable). ``hold_create`` makes ``POST /v1/batches`` wait (before creating:
"before", or after creating: "after") until :meth:`release`; ``hold_batches`` keeps batches in progress until
:meth:`release`. Hostile downloads: ``redirect_files`` (a base URL) answers a file's content with a 302 to
``<redirect_files>/files/<id>/content`` and ``redirect_live`` a chat completion with a 307 to
``<redirect_live>/v1/chat/completions`` (a :class:`tests.support.redirects.Recorder` there sees what follows);
``huge_output=n`` pads every output file to ``n`` bytes as it is sent (its real lines, then filler lines of 1 MiB
whose ``custom_id`` no call has: generated on the fly, never held whole); ``drip_s=s`` sends an output file one
byte every ``s`` seconds. ``list_omits`` names fields the batch list leaves out of its items (a proxy's list without
``metadata``, or without ``input_file_id`` too; ``GET /v1/batches/{id}`` keeps them). ``duplicate_lines`` answers
every line twice in the output file: "same" (the same answer) or "opposite" (the second answer the opposite
verdict, :func:`opposite`); each billed once. ``live_delay_s`` delays each live answer (a live run in progress).
All state is in the JSON file ``state_path``, written after every change, so a new server on the same file (and
port) continues where a stopped one left off (a restart mid-poll).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.support.fault_server import default_answer, request_key


class BatchServer:
    """Use as a context manager; ``url`` is the base URL (``.../v1``)."""

    def __init__(self, state_path: Path, *, port: int = 0, polls: int = 2, expire_after: int | None = None,
                 fail_every: int = 0, malformed_every: int = 0, hold_create: str | None = None,
                 hold_batches: bool = False, answer=default_answer, redirect_files: str | None = None,
                 redirect_live: str | None = None, huge_output: int = 0, drip_s: float = 0.0,
                 list_omits: tuple[str, ...] = (), duplicate_lines: str | None = None, live_delay_s: float = 0.0):
        self.state_path, self.polls, self.answer = Path(state_path), polls, answer
        self.redirect_files, self.redirect_live = redirect_files, redirect_live
        self.huge_output, self.drip_s = huge_output, drip_s
        self.expire_after, self.fail_every, self.malformed_every = expire_after, fail_every, malformed_every
        self.hold_create, self.hold_batches = hold_create, hold_batches
        self.list_omits, self.duplicate_lines, self.live_delay_s = tuple(list_omits), duplicate_lines, live_delay_s
        self.lock, self.released, self.create_waiting = threading.RLock(), threading.Event(), threading.Event()
        self.state = (json.loads(self.state_path.read_text()) if self.state_path.exists() else
                      {"files": {}, "batches": {}, "billed": {}, "live": 0, "next": 0})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "BatchServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def release(self) -> None:
        self.released.set()

    # -- what the tests read --------------------------------------------------------------------------
    @property
    def billed(self) -> Counter:
        """Calls billed (batch lines run and live calls answered), by the request's messages."""
        return Counter(self.state["billed"])

    @property
    def batches(self) -> list[dict]:
        return list(self.state["batches"].values())

    def uploads(self) -> int:
        """Batch input files uploaded (output and error files excluded)."""
        return sum(1 for text in self.state["files"].values() if '"method": "POST"' in text)

    def submitted(self) -> Counter:
        """How many created batches each custom_id was in."""
        return Counter(line["custom_id"] for b in self.batches for line in self._lines(b["input_file_id"]))

    # -- the API --------------------------------------------------------------------------------------
    def _save(self) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state))
        tmp.replace(self.state_path)

    def _new_id(self, prefix: str) -> str:
        self.state["next"] += 1
        return f"{prefix}-{self.state['next']}-{int(time.time() * 1000) % 100000}"

    def _bill(self, messages: list) -> None:
        key = request_key(messages)
        self.state["billed"][key] = self.state["billed"].get(key, 0) + 1

    def upload(self, content: str) -> dict:
        with self.lock:
            file_id = self._new_id("file")
            self.state["files"][file_id] = content
            self._save()
            return {"id": file_id, "object": "file", "purpose": "batch", "bytes": len(content)}

    def create(self, body: dict) -> dict | None:
        """Create a batch; None (no answer, no batch) when held "before" (the request never got through)."""
        if self.hold_create == "before":
            self.create_waiting.set()
            self.released.wait(60)
            self.hold_create = None
            return None
        with self.lock:
            batch_id = self._new_id("batch")
            batch = {"id": batch_id, "object": "batch", "endpoint": body["endpoint"], "status": "in_progress",
                     "input_file_id": body["input_file_id"], "metadata": body.get("metadata") or {},
                     "created_at": time.time(), "output_file_id": None, "error_file_id": None, "polls": 0,
                     "request_counts": {"total": len(self._lines(body["input_file_id"])), "completed": 0,
                                        "failed": 0}}
            self.state["batches"][batch_id] = batch
            self._save()
        if self.hold_create == "after":
            self.create_waiting.set()
            self.released.wait(60)
            self.hold_create = None
        return batch

    def get(self, batch_id: str) -> dict | None:
        with self.lock:
            batch = self.state["batches"].get(batch_id)
            if batch is None or batch["status"] != "in_progress":
                return batch
            batch["polls"] += 1
            if batch["polls"] > self.polls and (not self.hold_batches or self.released.is_set()):
                self._run(batch)
            self._save()
            return batch

    def listing(self, limit: int, after: str | None) -> dict:
        with self.lock:
            items = sorted(self.state["batches"].values(), key=lambda b: -int(b["id"].split("-")[1]))
            if after is not None:
                ids = [b["id"] for b in items]
                items = items[ids.index(after) + 1:] if after in ids else []
            shown = [{k: v for k, v in b.items() if k not in self.list_omits} for b in items[:limit]]
            return {"object": "list", "data": shown, "has_more": len(items) > limit}

    def _lines(self, file_id: str) -> list[dict]:
        return [json.loads(line) for line in self.state["files"][file_id].splitlines() if line.strip()]

    def _run(self, batch: dict) -> None:
        """End the batch: run its lines (with the faults configured), write its output and error files."""
        out, err = [], []
        for i, line in enumerate(self._lines(batch["input_file_id"]), start=1):
            messages = line["body"]["messages"]
            if self.expire_after is not None and i > self.expire_after:
                err.append({"id": f"req-{i}", "custom_id": line["custom_id"], "response": None,
                            "error": {"code": "batch_expired", "message": "This request could not be executed "
                                      "before the completion window expired."}})
            elif self.fail_every and i % self.fail_every == 0:
                err.append({"id": f"req-{i}", "custom_id": line["custom_id"], "error": None,
                            "response": {"status_code": 500, "body": {"error": {"message": "server error"}}}})
            else:
                self._bill(messages)
                if self.malformed_every and i % self.malformed_every == 0:
                    out.append(f'{{"id": "req-{i}", "custom_id": "{line["custom_id"]}", "response": {{"status_c')
                    continue
                text = self.answer(messages)
                out.append({"id": f"req-{i}", "custom_id": line["custom_id"], "error": None,
                            "response": {"status_code": 200, "body": completion(line["body"], text)}})
                if self.duplicate_lines:
                    again = opposite(text) if self.duplicate_lines == "opposite" else text
                    out.append({"id": f"req-{i}b", "custom_id": line["custom_id"], "error": None,
                                "response": {"status_code": 200, "body": completion(line["body"], again)}})
        for name, rows in (("output_file_id", out), ("error_file_id", err)):
            if rows:
                text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)
                file_id = self._new_id("file")
                self.state["files"][file_id] = text
                batch[name] = file_id
        batch["status"] = "expired" if self.expire_after is not None else "completed"
        batch["request_counts"].update(completed=len(out), failed=len(err))

    def file_bytes(self, file_id: str) -> bytes | None:
        """The stored content of a file (None: no such file)."""
        text = self.state["files"].get(file_id)
        return None if text is None else text.encode()

    def is_output(self, file_id: str) -> bool:
        return any(b.get("output_file_id") == file_id for b in self.batches)

    def live(self, body: dict) -> dict:
        time.sleep(self.live_delay_s)
        with self.lock:
            self._bill(body["messages"])
            self.state["live"] += 1
            self._save()
        return completion(body, self.answer(body["messages"]))


def opposite(text: str) -> str:
    """An answer with the opposite verdict (an Arena-Hard ``[[A>B]]`` becomes ``[[B>A]]``, ...)."""
    swaps = {"A>>B": "B>>A", "A>B": "B>A", "B>>A": "A>>B", "B>A": "A>B"}
    return re.sub(r"A>>B|A>B|B>>A|B>A", lambda m: swaps[m.group(0)], text)


def completion(body: dict, text: str) -> dict:
    """A chat completion answering ``body`` with ``text``."""
    n_in = sum(len(str(m.get("content", ""))) for m in body["messages"]) // 4
    return {"id": "cmpl-batch", "object": "chat.completion", "model": body.get("model", "judge-model"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": n_in, "completion_tokens": len(text) // 4 + 1,
                      "total_tokens": n_in + len(text) // 4 + 1}}


FILLER_LINE = 1 << 20


def padded(data: bytes, size: int):
    """``data`` then filler lines (JSON objects of :data:`FILLER_LINE` bytes whose ``custom_id`` no call has) up
    to ``size`` bytes in all, in blocks of at most 1 MiB: the bytes of a huge output file, never held whole."""
    yield data
    left, n = size - len(data), 0
    while left > 0:
        n += 1
        head = b'{"custom_id": "filler-%d", "pad": "' % n
        line = head + b"x" * max(0, min(left, FILLER_LINE) - len(head) - 3) + b'"}\n'
        line = line if len(line) <= left else b" " * (left - 1) + b"\n"
        left -= len(line)
        yield line


def _file_part(body: bytes, content_type: str) -> str:
    """The ``file`` part of a multipart/form-data body."""
    boundary = re.search(r"boundary=([^;]+)", content_type).group(1).encode()
    for part in body.split(b"--" + boundary):
        head, _, data = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            return data[:-2].decode() if data.endswith(b"\r\n") else data.decode()
    raise ValueError("no file part")


def _handler(server: BatchServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def _send(self, status: int, payload) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _redirect(self, code: int, location: str) -> None:
            self.send_response(code)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _content(self, file_id: str) -> None:
            """A file's content, or the hostile answer configured (redirect, padded to a huge size, dripped)."""
            data = server.file_bytes(file_id)
            if data is None:
                return self._send(404, {"error": {"message": "no such file"}})
            if server.redirect_files:
                return self._redirect(302, f"{server.redirect_files}/files/{file_id}/content")
            output = server.is_output(file_id)
            size = max(server.huge_output, len(data)) if output else len(data)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            try:
                if output and server.drip_s:
                    for i in range(len(data)):
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                        time.sleep(server.drip_s)
                    return None
                for block in padded(data, size):
                    self.wfile.write(block)
            except OSError:  # the client stopped reading (a cap, a deadline): nothing more to send
                self.close_connection = True

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def do_POST(self) -> None:
            body = self._body()
            if self.path == "/v1/files":
                return self._send(200, server.upload(_file_part(body, self.headers["Content-Type"])))
            if self.path == "/v1/batches":
                batch = server.create(json.loads(body))
                if batch is None:
                    self.close_connection = True
                    return None
                return self._send(200, batch)
            if self.path == "/v1/chat/completions" and server.redirect_live:
                return self._redirect(307, f"{server.redirect_live}/v1/chat/completions")
            if self.path == "/v1/chat/completions":
                return self._send(200, server.live(json.loads(body)))
            self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            args = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
            if m := re.fullmatch(r"/v1/files/([^/]+)/content", path):
                return self._content(m.group(1))
            if m := re.fullmatch(r"/v1/batches/([^/]+)", path):
                batch = server.get(m.group(1))
                return self._send(200, batch) if batch else self._send(404, {"error": {"message": "no batch"}})
            if path == "/v1/batches":
                return self._send(200, server.listing(int(args.get("limit", 20)), args.get("after")))
            self._send(404, {"error": {"message": f"no route {path}"}})
    return Handler
