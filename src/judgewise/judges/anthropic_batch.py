"""A client of Anthropic's Message Batches API in the shape of the OpenAI batch client the batch runner drives.

Written from Anthropic's API reference: ``POST /v1/messages/batches`` with ``requests: [{custom_id, params}]``
(``params`` a Messages API body, up to 100,000 requests or 256 MB a batch), ``GET /v1/messages/batches/{id}``
(``processing_status`` ``in_progress``, ``canceling`` or ``ended``; ``request_counts`` of ``processing``,
``succeeded``, ``errored``, ``canceled``, ``expired``; ``created_at`` an RFC 3339 time; ``results_url`` once
ended), ``GET /v1/messages/batches`` (newest first, ``limit`` and ``after_id``; ``has_more``, ``last_id``) and
``GET /v1/messages/batches/{id}/results``: JSONL lines ``{custom_id, result: {type: succeeded, message} | {type:
errored, error} | {type: expired} | {type: canceled}}``, one per request, in any order.

The batch runner (:mod:`judgewise.judges.batch`) keeps its one flow — ledger intent, input recorded, create, poll,
results journaled — and its rules (never pay twice, a batch found again after a kill, expired lines retried): this
client translates. There is no file to upload: :meth:`upload` keeps the input lines in memory under a local id (the
ledger records it before the create is sent; nothing is billed before), :meth:`create` sends them. Anthropic's
batches carry no metadata, so a batch whose id a killed run did not record is found by the runner's other rule
(created after the ledger row, with as many requests, and its results naming the row's calls). A batch object is
given in OpenAI's shape (``status`` ``completed`` once ended, ``output_file_id`` the batch id, ``created_at`` in
epoch seconds, ``request_counts.total``) and each results line as an OpenAI output line (a succeeded message as a
200 response body, an expired request as the error ``batch_expired``, an errored or canceled one as an error).
"""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import Iterator
from urllib.parse import quote, urlencode

from judgewise.judges.base import FatalCallError
from judgewise.judges.openai_batch import BatchClient, _chunks, split_lines

STATUS = {"in_progress": "in_progress", "canceling": "cancelling", "ended": "completed"}  # → OpenAI's names
COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")


class MessageBatchClient(BatchClient):
    """The Message Batches endpoints under ``base_url`` (e.g. ``https://api.anthropic.com``)."""

    def __init__(self, base_url: str, headers: dict[str, str], **options):
        super().__init__(base_url, headers, **options)
        self._inputs: dict[str, bytes] = {}  # local input id → the JSONL lines the runner made

    def upload(self, jsonl: bytes, filename: str) -> str:
        """Keep the batch's input lines (nothing is sent); a local id standing for the input."""
        local = f"local-input-{uuid.uuid4().hex}"
        self._inputs[local] = jsonl
        return local

    def create(self, file_id: str, metadata: dict[str, str]) -> dict:
        """Create the batch of the lines :meth:`upload` kept under ``file_id`` (Anthropic keeps no metadata)."""
        lines = self._inputs.get(file_id)
        if lines is None:
            raise FatalCallError(f"no input kept under {file_id}: a Message Batch is created by the run that made it")
        requests = [{"custom_id": line["custom_id"], "params": line["body"]}
                    for line in map(json.loads, lines.splitlines()) if line]
        body = json.dumps({"requests": requests}, ensure_ascii=False).encode()
        return self.batch(self._json("POST", "/v1/messages/batches", body, "application/json"))

    def get(self, batch_id: str) -> dict:
        return self.batch(self._json("GET", f"/v1/messages/batches/{quote(batch_id, safe='')}"))

    def list_path(self, after: str | None) -> str:
        return f"/v1/messages/batches?{urlencode({'limit': 100, **({'after_id': after} if after else {})})}"

    def batch(self, item: dict) -> dict:
        """A Message Batch in OpenAI's shape (module docstring)."""
        counts = item.get("request_counts") if isinstance(item.get("request_counts"), dict) else {}
        numbers = [counts.get(name) for name in COUNTS]
        total = sum(n for n in numbers if isinstance(n, int) and not isinstance(n, bool))
        status = STATUS.get(item.get("processing_status"), item.get("processing_status"))
        ended = status == "completed"
        return {"id": item.get("id"), "status": status, "created_at": _epoch(item.get("created_at")),
                "request_counts": {"total": total} if total else {},
                "output_file_id": item.get("id") if ended else None,
                "error_file_id": None}

    def lines(self, file_id: str, *, max_line: int) -> Iterator[bytes | None]:
        """The batch's results as OpenAI output lines, read as they arrive within the download limits."""
        start = time.monotonic()
        with self._open("GET", f"/v1/messages/batches/{quote(file_id, safe='')}/results") as response:
            chunks = _chunks(response, f"the results of batch {file_id}", self.max_file_bytes, start,
                             self.download_s, "batch_max_output_mb")
            for raw in split_lines(chunks, max_line):
                yield None if raw is None else openai_line(raw)


def openai_line(raw: bytes) -> bytes:
    """A results line as an OpenAI batch output line (the line unchanged when it is not a result)."""
    try:
        line = json.loads(raw)
    except ValueError:
        return raw
    result = line.get("result") if isinstance(line, dict) else None
    if not isinstance(result, dict):
        return raw
    kind, call = result.get("type"), line.get("custom_id")
    if kind == "succeeded":
        out = {"custom_id": call, "response": {"status_code": 200, "body": result.get("message")}, "error": None}
    elif kind == "expired":
        out = {"custom_id": call, "response": None, "error": {"code": "batch_expired", "message": "expired"}}
    else:
        error = result.get("error") if isinstance(result.get("error"), dict) else {}
        out = {"custom_id": call, "response": None, "error": {"code": str(kind), "message": json.dumps(error)[:500]}}
    return json.dumps(out, ensure_ascii=False).encode()


def _epoch(value) -> float | None:
    """Epoch seconds of an RFC 3339 time (None when it is not one)."""
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
