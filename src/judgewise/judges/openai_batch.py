"""A small client of OpenAI's Files and Batches API: upload a JSONL input file, create, find, poll, read results.

Blocking calls (``urllib``; the batch runner calls them in a worker thread), each one request: the batch runner
(:mod:`judgewise.judges.batch`) owns waiting and retrying. A status worth asking again (408/409/425/429, 5xx) or no
answer at all is a :class:`RetryableCallError`; any other status a :class:`FatalCallError` naming the endpoint, the
API key scrubbed from every message.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from urllib.parse import urlencode

from judgewise.judges.base import FatalCallError, RetryableCallError
from judgewise.redaction import scrub

TERMINAL = ("completed", "expired", "failed", "cancelled")  # a batch in one of these states changes no more
LIST_PAGES = 20  # pages of 100 batches searched for one batch (the newest first)
TIMEOUT_S = 60.0


class BatchClient:
    """The Files and Batches endpoints under ``base_url`` (e.g. ``https://api.openai.com/v1``)."""

    def __init__(self, base_url: str, headers: dict[str, str], *, timeout_s: float = TIMEOUT_S):
        self.base_url, self.headers, self.timeout_s = base_url.rstrip("/"), dict(headers), timeout_s

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
        return self._json("GET", f"/batches/{batch_id}")

    def listed_since(self, since: float) -> tuple[list[dict], bool]:
        """The batches of the provider's list created at ``since`` or later (or with no ``created_at``), newest
        first, from the newest :data:`LIST_PAGES` pages of 100; and whether the walk reached a batch created
        before ``since`` or the list's end (False: there may be more, unseen)."""
        found, after = [], None
        for _ in range(LIST_PAGES):
            query = {"limit": 100, **({"after": after} if after else {})}
            page = self._json("GET", f"/batches?{urlencode(query)}")
            items = [i for i in (page.get("data") if isinstance(page.get("data"), list) else []) if isinstance(i, dict)]
            for item in items:
                created = item.get("created_at")
                if isinstance(created, (int, float)) and not isinstance(created, bool) and created < since:
                    return found, True
                found.append(item)
            if not page.get("has_more") or not items:
                return found, True
            after = items[-1].get("id")
        return found, False

    def content(self, file_id: str) -> bytes:
        """The bytes of a file (a batch's output or error file)."""
        return self._request("GET", f"/files/{file_id}/content")

    def _json(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None) -> dict:
        data = self._request(method, path, body, content_type)
        try:
            answer = json.loads(data)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise RetryableCallError(f"{method} {path}: the answer is not a JSON object: {data[:80]!r}")
        return answer

    def _request(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None) -> bytes:
        headers = {**self.headers, **({"Content-Type": content_type} if content_type else {})}
        request = urllib.request.Request(self.base_url + path, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            text = scrub(exc.read()[:300].decode("utf-8", "replace"))
            status = exc.code
            if status in (408, 409, 425, 429) or status >= 500:
                raise RetryableCallError(f"{method} {path}: HTTP {status}: {text}", status=status) from None
            raise FatalCallError(f"{method} {self.base_url}{path}: HTTP {status}: {text}", status=status) from None
        except (OSError, urllib.error.URLError) as exc:  # refused, reset, timed out: the server may be restarting
            raise RetryableCallError(f"{method} {path}: {type(exc).__name__}: {scrub(str(exc))[:200]}") from None


def _field(answer: dict, name: str, where: str) -> str:
    value = answer.get(name)
    if not isinstance(value, str) or not value:
        raise RetryableCallError(f"{where}: the answer has no {name!r}: {json.dumps(answer)[:120]}")
    return value
