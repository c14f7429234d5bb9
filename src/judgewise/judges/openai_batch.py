"""A small client of OpenAI's Files and Batches API: upload a JSONL input file, create, find, poll, read results.

Blocking calls (``urllib``; the batch runner calls them in a worker thread), each one request: the batch runner
(:mod:`judgewise.judges.batch`) owns waiting and retrying. A status worth asking again (408/409/425/429, 5xx) or no
answer at all is a :class:`RetryableCallError`; any other status a :class:`FatalCallError` naming the endpoint, the
API key scrubbed from every message.

Every read is bounded. A redirect is followed (at most :data:`MAX_REDIRECTS`), but a header holding a credential
(``Authorization``, or any value holding the API key: :func:`judgewise.redaction.holds_credential`) goes only to the
origin (scheme, host and port) it was configured for, never to another one (blob storage, or an attacker's host).
An answer is read in chunks against a total deadline (``download_s``: a server sending one byte a second holds no run
past it) and a size cap (``max_file_bytes`` for a file's content, :data:`MAX_JSON_BYTES` for a JSON answer); a file
is read line by line as it arrives (:meth:`BatchClient.lines`), so memory does not grow with its size.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from urllib.parse import quote, urlencode, urlsplit

from judgewise.judges.base import FatalCallError, RetryableCallError
from judgewise.redaction import holds_credential, scrub

TERMINAL = ("completed", "expired", "failed", "cancelled")  # a batch in one of these states changes no more
LIST_PAGES = 20  # pages of 100 batches searched for one batch's metadata (the newest first)
TIMEOUT_S = 60.0  # connecting, and each read (never more than the download deadline)
DOWNLOAD_S = 1800.0  # default total deadline of one answer or file, from the request to its last byte
MAX_FILE_MB = 2048  # default cap on a batch's output or error file
MAX_JSON_BYTES = 16 << 20  # cap on a JSON answer (a batch object, a page of the batch list)
MAX_REDIRECTS = 5
CHUNK = 1 << 16  # bytes read at a time


class BatchClient:
    """The Files and Batches endpoints under ``base_url`` (e.g. ``https://api.openai.com/v1``)."""

    def __init__(self, base_url: str, headers: dict[str, str], *, timeout_s: float = TIMEOUT_S,
                 download_s: float = DOWNLOAD_S, max_file_bytes: int = MAX_FILE_MB << 20):
        self.base_url, self.headers, self.timeout_s = base_url.rstrip("/"), dict(headers), timeout_s
        self.download_s, self.max_file_bytes = download_s, int(max_file_bytes)

    def upload(self, jsonl: bytes, filename: str) -> str:
        """Upload a batch input file (purpose ``batch``); its file id."""
        boundary = f"judgewise-{uuid.uuid4().hex}"
        parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'.encode(),
                 (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
                  "Content-Type: application/jsonl\r\n\r\n").encode(), jsonl, f"\r\n--{boundary}--\r\n".encode()]
        answer = self._json("POST", "/files", b"".join(parts), f"multipart/form-data; boundary={boundary}")
        return _field(answer, "id", "/files")

    def create(self, file_id: str, metadata: dict[str, str]) -> dict:
        """Create a batch of the chat-completions lines of ``file_id``, within 24 h; the batch object."""
        body = {"input_file_id": file_id, "endpoint": "/v1/chat/completions", "completion_window": "24h",
                "metadata": metadata}
        return self._json("POST", "/batches", json.dumps(body).encode(), "application/json")

    def get(self, batch_id: str) -> dict:
        """The batch object (``status``, ``output_file_id``, ``error_file_id``, ``request_counts``...)."""
        return self.batch(self._json("GET", f"/batches/{batch_id}"))

    def batch(self, item: dict) -> dict:
        """A batch object of the provider in OpenAI's shape (another provider's client translates it)."""
        return item

    def list_path(self, after: str | None) -> str:
        """The path of the page of the batch list after the batch ``after`` (None: the first page)."""
        return f"/batches?{urlencode({'limit': 100, **({'after': after} if after else {})})}"

    def listed_since(self, since: float) -> tuple[list[dict], bool]:
        """The batches of the provider's list created at ``since`` or later (or with no ``created_at``), newest
        first, from the newest :data:`LIST_PAGES` pages of 100; and whether the walk reached a batch created
        before ``since`` or the list's end (False: there may be more, unseen)."""
        found, after = [], None
        for _ in range(LIST_PAGES):
            page = self._json("GET", self.list_path(after))
            items = [self.batch(i) for i in (page.get("data") if isinstance(page.get("data"), list) else [])
                     if isinstance(i, dict)]
            for item in items:
                created = item.get("created_at")
                if isinstance(created, (int, float)) and not isinstance(created, bool) and created < since:
                    return found, True
                found.append(item)
            if not page.get("has_more") or not items:
                return found, True
            after = items[-1].get("id")
        return found, False

    def lines(self, file_id: str, *, max_line: int) -> Iterator[bytes | None]:
        """The lines of a file (a batch's output or error file) as they arrive, without their line ends; None for a
        line longer than ``max_line`` bytes (its bytes dropped as they come). The file is read within the
        download deadline and size cap: past either, :class:`FatalCallError` naming the file and the limit."""
        start = time.monotonic()
        with self._open("GET", f"/files/{quote(file_id, safe='')}/content") as response:
            chunks = _chunks(response, f"file {file_id}", self.max_file_bytes, start, self.download_s,
                             "batch_max_output_mb")
            yield from split_lines(chunks, max_line)

    def _json(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None) -> dict:
        start = time.monotonic()
        with self._open(method, path, body, content_type) as response:
            data = b"".join(_chunks(response, f"the answer to {method} {path}", MAX_JSON_BYTES, start,
                                    self.download_s))
        try:
            answer = json.loads(data)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise RetryableCallError(f"{method} {path}: the answer is not a JSON object: {data[:80]!r}")
        return answer

    @contextmanager
    def _open(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None):
        """The answer to one request (redirects followed without credentials to another origin), its status
        classified: a status worth asking again, or no answer, RetryableCallError; any other error status
        FatalCallError."""
        headers = {**self.headers, **({"Content-Type": content_type} if content_type else {})}
        request = urllib.request.Request(self.base_url + path, data=body, headers=headers, method=method)
        try:
            response = _OPENER.open(request, timeout=min(self.timeout_s, self.download_s))
        except urllib.error.HTTPError as exc:
            text = scrub(exc.read(300).decode("utf-8", "replace"))  # the start of its body: bounded
            status = exc.code
            if status in (408, 409, 425, 429) or status >= 500:
                raise RetryableCallError(f"{method} {path}: HTTP {status}: {text}", status=status) from None
            raise FatalCallError(f"{method} {self.base_url}{path}: HTTP {status}: {text}", status=status) from None
        except (OSError, http.client.HTTPException) as exc:  # refused, reset, timed out: maybe restarting
            raise RetryableCallError(f"{method} {path}: {type(exc).__name__}: {scrub(str(exc))[:200]}") from None
        with response:
            yield response


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL, the port made explicit: what a credential is bound to."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(parts.scheme)


class _CredentialsStayHome(urllib.request.HTTPRedirectHandler):
    """urllib's redirects (at most :data:`MAX_REDIRECTS`), minus every header holding a credential when the
    redirect leaves the request's origin (urllib copies them all, ``Authorization`` included)."""

    max_redirections = MAX_REDIRECTS

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and origin(new.full_url) != origin(req.full_url):
            for name in [n for n, value in new.headers.items() if holds_credential(n, value)]:
                del new.headers[name]
        return new


_OPENER = urllib.request.build_opener(_CredentialsStayHome)


def _chunks(response, what: str, cap: int, start: float, deadline_s: float,
            setting: str | None = None) -> Iterator[bytes]:
    """The body of ``response`` in chunks as they arrive, within ``cap`` bytes and ``deadline_s`` seconds from
    ``start`` (monotonic): past either, FatalCallError naming ``what`` and the limit (and the ``setting`` that
    raises it); the connection ending early, RetryableCallError."""
    raises = f" ({setting} raises it)" if setting else ""
    length = response.headers.get("Content-Length", "")
    if length.isascii() and length.isdigit() and int(length) > cap:
        raise FatalCallError(f"{what} is {int(length):,} bytes, more than the {cap:,}-byte cap{raises}; refused")
    total = 0
    while True:
        try:
            chunk = response.read1(CHUNK)
        except (OSError, http.client.HTTPException) as exc:
            if time.monotonic() - start < deadline_s:
                raise RetryableCallError(f"reading {what}: {type(exc).__name__}: {scrub(str(exc))[:200]}") from None
            chunk = None
        if time.monotonic() - start > deadline_s:
            raise FatalCallError(f"{what} was not whole {deadline_s:g}s after it was asked for ({total:,} bytes "
                                 "read): stopped at the download deadline (batch_download_s raises it)")
        if not chunk:
            return
        total += len(chunk)
        if total > cap:
            raise FatalCallError(f"{what} passes the {cap:,}-byte cap{raises}: refused after {total:,} bytes")
        yield chunk


def split_lines(chunks: Iterable[bytes], max_line: int) -> Iterator[bytes | None]:
    """The lines in a stream of chunks (line ends removed; a last line without one included), holding at most
    ``max_line`` bytes of a line: a longer line is None, its bytes dropped as they come."""
    pending, dropping = bytearray(), False
    for chunk in chunks:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if not dropping:
                pending += chunk[start:end]
            yield None if dropping or len(pending) > max_line else bytes(pending)
            pending.clear()
            dropping, start = False, end + 1
        if not dropping:
            pending += chunk[start:]
            if len(pending) > max_line:
                pending.clear()
                dropping = True
    if pending or dropping:
        yield None if dropping else bytes(pending)


def _field(answer: dict, name: str, where: str) -> str:
    value = answer.get(name)
    if not isinstance(value, str) or not value:
        raise RetryableCallError(f"{where}: the answer has no {name!r}: {json.dumps(answer)[:120]}")
    return value
