"""Batch judging: a run's calls sent through OpenAI's Batch API at the batch price, their answers into the journal.

:func:`run_batches` runs before the live engine (:func:`judgewise.judges.runner.arun_keyed`) of a run with
``judge: {batch: true}``. Each round: every game not stored is played against a *collector* backend that answers
the calls whose answers the store's journal holds and captures the first call that has none (the call a live run
would send next: a game's first call, or its re-ask once the first answer is in). The captured calls become one
JSONL input file (``custom_id`` = the call key, ``body`` = exactly the body a live call POSTs), recorded in the
store's batch ledger (state ``intent``) *before* it is uploaded and submitted with ``metadata.judgewise_batch`` =
the ledger row's id; then it is polled with backoff until it ends and its output and error files are read: each
answer parsed by the live parser (``parse_chat_body``), priced at the batch discount, and journaled with the batch
marked ``ended`` in one transaction. The live engine then stores every game through the same judge, parser and
store, taking the answers from the journal (never paying twice) and sending live only what no batch answered.

Kill points: the input file's id is recorded in the ledger before the batch is created. Killed before that, the
rerun drops the ``intent`` (no create was ever sent; an uploaded file alone is not billed); killed after, the rerun
looks for the batch in the provider's list (:func:`_locate`): by its metadata, by its input file id, else among the
batches that name neither (a proxy's list may leave them out) by creation time, request count and the custom_ids of
their output — and drops the ``intent`` only when the list proves no batch of it exists; when it cannot tell, the
run stops rather than pay twice. Found, or its id recorded, the batch is polled; after its results are read, the
journal holds them. Calls a batch did not answer (failed lines, expired lines, a malformed output line) go live
(``retry="live"``) or into the next batch (``retry="batch"``) until they have been in ``max_rounds`` batches. An
output file answering one call twice keeps the first answer and counts the others (``duplicates``; ``conflicting``
those whose answer differs).

One payer per call: the run (:func:`judgewise.judges.runner.arun_keyed`) holds the store's batch writer lease while
it runs, so a second batch run, or a live run, on the same store is refused while it runs; a live run is refused too
while the ledger holds an open batch of its games (:func:`open_batch_conflict`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from judgewise.errors import ConfigError, JudgeError, StoreBusy
from judgewise.judges.base import Completion, FatalCallError, MalformedResponseError, RetryableCallError
from judgewise.judges.http11 import MAX_ANSWER_BYTES
from judgewise.judges.openai_batch import DOWNLOAD_S, LIST_PAGES, MAX_FILE_MB, TERMINAL, BatchClient
from judgewise.judges.scheduler import ScheduledBackend, call_key, off_loop
from judgewise.store.batches import BATCH_WRITER, OPEN_STATES
from judgewise.store.protocol import BatchLedger

log = logging.getLogger(__name__)

METADATA_KEY = "judgewise_batch"  # the batch's metadata entry naming its ledger row
CLOCK_SLACK_S = 600.0  # how far the provider's clock may lag ours when a batch's creation time is compared
MAX_LINES, MAX_BYTES = 50_000, 190 << 20  # a batch's limits at OpenAI: 50,000 requests, an input file of 200 MB
RETRIES = ("live", "batch")
LINE_ENVELOPE = 1 << 16  # bytes of an output line around its answer's body (custom_id, status, ids...)


@dataclass(frozen=True)
class BatchSettings:
    """How a run uses batches: ``poll_s`` the first wait between polls (growing ×1.5 to 16× it), ``retry`` where
    calls a batch did not answer go ("live" or "batch"), ``max_rounds`` the batches one call may be put in with
    ``retry="batch"``, ``max_errors`` the API errors in a row (while polling, uploading...) before the run stops,
    ``download_s`` the total deadline of one download (an output file, a batch object), ``max_output_mb`` the cap
    on an output or error file."""

    poll_s: float = 30.0
    retry: str = "live"
    max_rounds: int = 3
    max_errors: int = 30
    download_s: float = DOWNLOAD_S
    max_output_mb: float = MAX_FILE_MB

    def __post_init__(self) -> None:
        if self.retry not in RETRIES:
            raise ConfigError(f'batch_retry: expected one of {list(RETRIES)}, found "{self.retry}"')
        if not self.poll_s > 0 or self.max_rounds < 1:
            raise ConfigError(f"batch_poll_s must be > 0 and batch_max_rounds >= 1 (found {self.poll_s!r}, "
                              f"{self.max_rounds!r})")
        if not (self.download_s > 0 and self.max_output_mb > 0):  # NaN fails too
            raise ConfigError(f"batch_download_s and batch_max_output_mb must be > 0 (found {self.download_s!r}, "
                              f"{self.max_output_mb!r})")


def batch_settings(section: dict) -> BatchSettings | None:
    """The batch settings of a ``judge:`` section (or a generate ``models:`` entry) with ``batch: true``, else
    None: its keys ``batch_poll_s``, ``batch_retry``, ``batch_max_rounds``, ``batch_download_s``,
    ``batch_max_output_mb``."""
    if not section.get("batch"):
        return None
    names = {"batch_poll_s": "poll_s", "batch_retry": "retry", "batch_max_rounds": "max_rounds",
             "batch_download_s": "download_s", "batch_max_output_mb": "max_output_mb"}
    return BatchSettings(**{field: section[key] for key, field in names.items() if section.get(key) is not None})


@dataclass
class BatchCounts:
    """What the batches of a run did (lines are calls)."""

    batches: int = 0  # batches submitted by this run
    resumed: int = 0  # open batches of an earlier (stopped or killed) run polled to their end
    lines: int = 0  # lines submitted by this run
    answered: int = 0  # lines answered (of batches submitted or resumed)
    failed: int = 0  # lines failed: an error, a non-200 status, a malformed answer or no line at all
    expired: int = 0  # lines not run before the batch expired
    unreadable: int = 0  # output lines that are not a result (maybe billed, then sent again: counted in failed)
    duplicates: int = 0  # output lines answering a call already answered in the same batch (the first kept)
    conflicting: int = 0  # of those, lines whose answer differs from the first

    def add(self, other: dict) -> None:
        for name in ("answered", "failed", "expired", "unreadable", "duplicates", "conflicting"):
            setattr(self, name, getattr(self, name) + int(other.get(name, 0)))


class _Deferred(BaseException):
    """Raised by the collector instead of sending a call (a BaseException: no judge takes it for a call error)."""


class _Collector:
    """A backend that answers from the journal and captures, instead of sending, the first call it has no answer
    for: call key → (game key, request body)."""

    def __init__(self, inner, store, skip: set[str], room: int | None = None):
        self.inner, self.identity, self.store, self.skip, self.room = inner, inner.identity, store, skip, room
        self.game: str | None = None
        self.calls: dict[str, tuple[str, bytes]] = {}

    async def complete(self, messages: list[dict], *, max_tokens: int | None = None, want_logprobs: bool = False,
                       grammar: str | None = None) -> Completion:
        kw = dict(max_tokens=max_tokens, want_logprobs=want_logprobs, grammar=grammar)
        key = call_key(self.identity, messages, **kw)  # the key ScheduledBackend journals the live call under
        held = await off_loop(self.store, "held_answer", key)
        if held is not None:
            return Completion(**held)
        full = self.room is not None and len(self.calls) >= self.room
        if key not in self.skip and key not in self.calls and not full:
            self.calls[key] = (self.game, self.inner.request_body(messages, **kw))
        raise _Deferred()


def batch_backend(judge):
    """The judge's backend when it can send batches (an OpenAI or Anthropic backend), else ConfigError."""
    backend = getattr(judge, "backend", None)
    backend = backend.inner if isinstance(backend, ScheduledBackend) else backend
    if not (all(hasattr(backend, name) for name in ("request_body", "batch_completion"))
            and callable(getattr(backend, "batch_client", None))):
        raise ConfigError("judge.batch: true needs the openai backend (OpenAI's Batch API) or the anthropic backend "
                          "(Anthropic's Message Batches API); this judge has "
                          f"{type(backend).__name__ if backend is not None else 'no backend'}")
    return backend


async def run_batches(keyed: dict, judge, store, settings: BatchSettings, *, retry_failed: bool = False,
                      max_lines: int | None = None, client: BatchClient | None = None) -> BatchCounts:
    """Play the games of ``keyed`` (store key → game) not stored yet through batches until none is left to batch
    (module docstring), submitting at most ``max_lines`` calls (the run's call budget); their answers end in the
    store's journal for the live run that follows."""
    backend = batch_backend(judge)
    if not isinstance(store, BatchLedger):
        raise ConfigError(f"judge.batch: the store {store.path} does not record batches")
    client = client or backend.batch_client(download_s=settings.download_s,
                                            max_file_bytes=int(settings.max_output_mb * (1 << 20)))
    counts = BatchCounts()
    for row in await off_loop(store, "batches", OPEN_STATES):
        if await _resume(client, store, row, settings):
            counts.resumed += 1
            await _finish(client, store, backend, row, settings, counts)
    rounds = settings.max_rounds if settings.retry == "batch" else 1
    while True:
        tries = Counter(c for row in await off_loop(store, "batches", ("ended",))
                        for c, game in row["calls"].items() if game in keyed)  # this run's games' tries only
        skip = {c for c, n in tries.items() if n >= rounds}
        room = None if max_lines is None else max_lines - counts.lines
        calls = await _collect(keyed, judge, backend, store, retry_failed, skip, room) if room != 0 else {}
        if not calls:
            return counts
        rows = []
        for part in chunks(calls):
            rows.append(await _submit(client, store, part, settings))
            counts.batches += 1
            counts.lines += len(part)
        for row in rows:
            await _finish(client, store, backend, row, settings, counts)


def hold_store(store, keyed: dict, batch: bool) -> None:
    """Take the store's writer lease for a run over ``keyed`` (a batch run's or a live run's), or StoreBusy naming
    what keeps it out: a batch run of another live process (it may be about to pay for any call), a live run beside
    a batch run, or, for a live run, an open batch in the ledger holding calls of its games (looked for before the
    lease is taken, so that a refused run writes nothing, and again after). A store that keeps no writer leases (a
    store object of a caller's own) is taken as it is."""
    if not hasattr(store, "take_writer"):
        return
    if not batch:
        _refuse_open_batch(store, keyed)
    conflict = store.take_writer("batch" if batch else "live")
    if conflict is not None:
        key, owner = conflict
        doing = "running batches on it" if key == BATCH_WRITER else "judging it live"
        raise StoreBusy(f"store {store.path}: another judgewise process ({owner}) is {doing}{_open_note(store)}; "
                        f"a {'batch' if batch else 'live'} run beside it could pay for the same calls twice: wait "
                        "until that process ends, then rerun this command (batch mode resumes its open batches)")
    if not batch:
        try:
            _refuse_open_batch(store, keyed)  # one written between the look and the lease
        except StoreBusy:
            store.release_writer()
            raise


def _refuse_open_batch(store, keyed: dict) -> None:
    row = open_batch_conflict(store, keyed)
    if row is not None:
        name = row["batch_id"] or f"{row['local_id']} (its provider id not recorded yet)"
        raise StoreBusy(f"store {store.path}: batch {name} is open ({row['state']}, {len(row['calls'])} calls) and "
                        "holds calls of this run; sent live now they would be paid twice. If the batch run that "
                        "submitted it still runs, wait until it ends; else resume it: rerun with judge.batch: true "
                        "(batch: true in a generate models: entry), which polls the batch and stores its answers "
                        "(what it did not answer then goes live)")


def open_batch_conflict(store, keyed: dict) -> dict | None:
    """The first open batch of the store's ledger holding a call of a game of ``keyed``, or None."""
    for row in store.batches(OPEN_STATES):
        if any(game in keyed for game in row["calls"].values()):
            return row
    return None


def _open_note(store) -> str:
    rows = store.batches(OPEN_STATES)
    return f" (open batch {', '.join(r['batch_id'] or r['local_id'] for r in rows[:3])})" if rows else ""


def chunks(calls: dict, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> list[dict]:
    """``calls`` (call key → (game key, body)) in parts within a batch's limits of lines and input bytes."""
    parts, part, size = [], {}, 0
    for key, (game, body) in calls.items():
        line = len(body) + len(key) + 100  # the line around the body
        if part and (len(part) >= max_lines or size + line > max_bytes):
            parts.append(part)
            part, size = {}, 0
        part[key] = (game, body)
        size += line
    return parts + [part] if part else parts


async def _collect(keyed: dict, judge, backend, store, retry_failed: bool, skip: set[str],
                   room: int | None) -> dict:
    """The next call of every game not stored (those in ``skip`` left out, at most ``room``): call key → (game
    key, body)."""
    done = await off_loop(store, "statuses", keyed)
    collector = _Collector(backend, store, skip, room)
    before, judge.backend = judge.backend, collector
    try:
        for key, game in keyed.items():
            if key in done and not (retry_failed and done[key] == "failed"):
                continue
            collector.game = key
            try:
                await judge.judge(game)
            except _Deferred:
                pass
    finally:
        judge.backend = before
    return collector.calls


async def _resume(client: BatchClient, store, row: dict, settings: BatchSettings) -> bool:
    """An open batch of an earlier run: True when the provider has it (its id recorded now if it was not), False
    when it was never created (the ledger row dropped: its calls were never sent)."""
    if row["state"] == "submitted":
        return True
    found = await _locate(client, row, settings) if row.get("input_file_id") else None
    if found is None:
        why = "never created" if row.get("input_file_id") else "never created (its input file was not uploaded)"
        log.info("batch %s was %s; its calls go in a new one", row["local_id"], why)
        await off_loop(store, "batch_dropped", row["local_id"], why)
        return False
    await off_loop(store, "batch_submitted", row["local_id"], found["id"])
    row["batch_id"] = found["id"]
    return True


async def _submit(client: BatchClient, store, calls: dict, settings: BatchSettings) -> dict:
    """Record the batch (``intent``), upload its input file and record its id, create the batch (unless a retry
    finds it created), record the batch's id; the ledger row."""
    row = {"local_id": uuid.uuid4().hex, "calls": {c: g for c, (g, _) in calls.items()}, "input_file_id": None}
    local = row["local_id"]
    row["created_at"] = time.time()
    await off_loop(store, "batch_intent", local, row["calls"])
    lines = b"".join(b'{"custom_id": "%s", "method": "POST", "url": "/v1/chat/completions", "body": %s}\n'
                     % (c.encode(), body) for c, (_, body) in calls.items())
    row["input_file_id"] = await _api(client.upload, settings, lines, f"judgewise-{local}.jsonl")
    await off_loop(store, "batch_uploaded", local, row["input_file_id"])  # before create: a rerun finds it by it
    batch = await _create(client, row, settings)
    if not batch or not isinstance(batch.get("id"), str):
        raise JudgeError(f"the batch API did not create batch {local}: {json.dumps(batch)[:200]}; rerun to retry")
    await off_loop(store, "batch_submitted", local, batch["id"])
    log.info("batch %s submitted: %d calls", batch["id"], len(calls))
    return {**row, "batch_id": batch["id"]}


async def _create(client: BatchClient, row: dict, settings: BatchSettings) -> dict | None:
    """Create the batch of the ledger ``row`` (its input file uploaded); after an error worth retrying, look for
    it (:func:`_locate`: it may exist all the same) before creating it again."""
    local = row["local_id"]
    for attempt in range(settings.max_errors):
        batch = await _locate(client, row, settings) if attempt else None
        if batch is not None:
            return batch
        try:
            return await asyncio.to_thread(client.create, row["input_file_id"], {METADATA_KEY: local})
        except FatalCallError as exc:
            raise JudgeError(f"the batch API refused to create batch {local}: {exc}") from None
        except RetryableCallError as exc:
            log.warning("creating batch %s: %s; looking for it, then trying again", local, exc)
            await asyncio.sleep(settings.poll_s)
    return None


async def _locate(client: BatchClient, row: dict, settings: BatchSettings) -> dict | None:
    """The provider's batch of the ledger ``row`` (its create may have reached the provider), or None when the
    provider's list proves there is none: found by its metadata or its input file id; else, among the batches
    created since the row that name neither (:func:`_names`), the only one, or the one whose output answers the
    row's calls. JudgeError when the list cannot prove it either way (no second batch without that proof)."""
    items, complete = await _api(client.listed_since, settings, row["created_at"] - CLOCK_SLACK_S)
    verdicts = [(item, _names(item, row)) for item in items]
    ours = [item for item, named in verdicts if named and isinstance(item.get("id"), str)]
    if ours:
        return ours[0]
    unknown = [item for item, named in verdicts if named is None and isinstance(item.get("id"), str)]
    if complete and len(unknown) <= 1:
        if unknown:
            log.warning("batch %s: taking the provider's batch %s as it (its list names no metadata nor input file;"
                        " created after it, with as many requests)", row["local_id"], unknown[0]["id"])
        return unknown[0] if unknown else None
    undecided = []
    for item in unknown if complete else []:
        answers = await _answers_calls(client, item["id"], row, settings)
        if answers:
            return item
        if answers is None:
            undecided.append(item["id"])
    if complete and not undecided:
        return None
    where = (f"the provider's batches {', '.join(undecided[:5])} may be it and have not ended" if complete else
             f"the provider's list goes past {LIST_PAGES} pages without reaching its creation time")
    raise JudgeError(f"batch {row['local_id']} of the store may have been created at the provider and cannot be "
                     f"told apart ({where}); judgewise will not submit its calls again without knowing: rerun once "
                     "those batches have ended")


def _names(item: dict, row: dict) -> bool | None:
    """Whether the provider's batch ``item`` is the ledger ``row``'s batch: True (its metadata or input file say
    so), False (they, or its request count, name another), None (it carries none of them)."""
    meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    file_id = item.get("input_file_id")
    if meta.get(METADATA_KEY) == row["local_id"] or (file_id and file_id == row.get("input_file_id")):
        return True
    counts = item.get("request_counts") if isinstance(item.get("request_counts"), dict) else {}
    total = counts.get("total")
    other_count = isinstance(total, int) and not isinstance(total, bool) and 0 < total != len(row["calls"])
    if isinstance(meta.get(METADATA_KEY), str) or (isinstance(file_id, str) and file_id) or other_count:
        return False
    return None


async def _answers_calls(client: BatchClient, batch_id: str, row: dict, settings: BatchSettings) -> bool | None:
    """Whether the ended batch ``batch_id``'s output or error file answers any call of ``row`` (None: it has not
    ended, so it cannot tell yet)."""
    batch = await _api(client.get, settings, batch_id)
    if batch.get("status") not in TERMINAL:
        return None
    ours = set(row["calls"])
    for name in ("output_file_id", "error_file_id"):
        file_id = batch.get(name)
        if isinstance(file_id, str) and await _api(_names_any, settings, client, file_id, ours):
            return True
    return False


def _names_any(client: BatchClient, file_id: str, calls: set[str]) -> bool:
    """Whether a results file (streamed, line by line) has a line for any of ``calls`` (custom_ids)."""
    for raw in client.lines(file_id, max_line=MAX_ANSWER_BYTES + LINE_ENVELOPE):
        line = _json_object(raw) if raw is not None else None
        if line and line.get("custom_id") in calls:
            return True
    return False


async def _finish(client: BatchClient, store, backend, row: dict, settings: BatchSettings,
                  counts: BatchCounts) -> None:
    """Poll the batch until it ends, read its output and error files, journal its answers and end it."""
    batch = await _poll(client, row["batch_id"], settings)
    answers, lines = await _api(_read_files, settings, client, backend, row["calls"], batch)
    await off_loop(store, "batch_ended", row["local_id"], str(batch.get("status")), lines, answers)
    counts.add(lines)
    log.info("batch %s %s: %s", row["batch_id"], batch.get("status"), lines)


def _read_files(client: BatchClient, backend, calls: dict[str, str], batch: dict):
    """:func:`read_results` of the batch's output and error files, each line parsed as it arrives (memory does not
    grow with a file's size; a line longer than an answer may be is unreadable)."""
    max_line = getattr(backend, "max_answer_bytes", MAX_ANSWER_BYTES) + LINE_ENVELOPE
    files = [client.lines(batch[name], max_line=max_line) if isinstance(batch.get(name), str) else ()
             for name in ("output_file_id", "error_file_id")]
    return read_results(backend, calls, *files, expired=batch.get("status") == "expired")


async def _poll(client: BatchClient, batch_id: str, settings: BatchSettings) -> dict:
    """The batch once its status is terminal, asked again after ``poll_s``, growing ×1.5 to 16× it."""
    delay = settings.poll_s
    while True:
        batch = await _api(client.get, settings, batch_id)
        if batch.get("status") in TERMINAL:
            return batch
        log.debug("batch %s: %s %s", batch_id, batch.get("status"), batch.get("request_counts"))
        await asyncio.sleep(delay)
        delay = min(delay * 1.5, settings.poll_s * 16)


async def _api(fn, settings: BatchSettings, *args):
    """``fn(*args)`` in a thread, asked again with backoff after an error worth retrying (a server restarting,
    429, 5xx) up to ``max_errors`` times in a row; then, or at a refusal (401, 404...), JudgeError (everything
    recorded stays: rerun)."""
    delay = settings.poll_s
    for attempt in range(1, settings.max_errors + 1):
        try:
            return await asyncio.to_thread(fn, *args)
        except FatalCallError as exc:
            raise JudgeError(f"the batch API refused a request: {exc}; every batch is recorded in the store: fix "
                             "the cause and rerun") from None
        except RetryableCallError as exc:
            if attempt == settings.max_errors:
                raise JudgeError(f"the batch API failed {attempt} times in a row ({exc}); every batch is "
                                 "recorded in the store: rerun to go on where this run stopped") from None
            log.warning("batch API: %s; asking again in %.1fs", exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, settings.poll_s * 16)


def read_results(backend, calls: dict[str, str], output: bytes | Iterable[bytes | None],
                 errors: bytes | Iterable[bytes | None], *,
                 expired: bool) -> tuple[list[tuple[str, str, dict]], dict[str, int]]:
    """The answers of a batch's output file as (game key, call key, completion fields), and its line counts:
    ``answered``; ``expired`` (lines the error file says expired, and with ``expired`` the lines in neither
    file); ``failed`` (the rest: errors, non-200 statuses, answers that are not chat completions, lines missing or
    unreadable, which count ``unreadable`` too); ``duplicates`` (lines of a call already read: the first line of a
    call is the one used) and of those ``conflicting`` (their result differs from the first's). A file is its bytes
    or its lines (None: a line too long to read), read once, in order."""
    answers, expired_ids, unreadable, seen = [], set(), 0, set()
    first: dict[str, str] = {}  # call key → its first line's result (:func:`_result_of`)
    duplicates = conflicting = 0
    for raw in itertools.chain(_lines(output), _lines(errors)):
        if raw is not None and not raw.strip():
            continue
        line = _json_object(raw) if raw is not None else None
        call = line.get("custom_id") if line else None
        if not isinstance(call, str) or call not in calls:
            unreadable += 1
            continue
        seen.add(call)
        if call in first:
            duplicates += 1
            conflicting += first[call] != _result_of(line)
            continue
        first[call] = _result_of(line)
        response = line.get("response") if isinstance(line.get("response"), dict) else {}
        error = line.get("error") if isinstance(line.get("error"), dict) else {}
        if error.get("code") == "batch_expired":
            expired_ids.add(call)
        elif response.get("status_code") == 200 and not error:
            try:
                comp = backend.batch_completion(json.dumps(response.get("body"), ensure_ascii=False).encode())
            except MalformedResponseError as exc:
                log.warning("batch line %s: %s", call[:12], exc)
                continue
            answers.append((calls[call], call, dict(vars(comp))))
    if duplicates:
        log.warning("the batch's results answer %d call(s) more than once (%d with a different answer): the first "
                    "line of each call is used", duplicates, conflicting)
    answered = {call for _, call, _ in answers}
    if expired:
        expired_ids |= set(calls) - answered - seen
    expired_ids -= answered
    return answers, {"lines": len(calls), "answered": len(answered), "expired": len(expired_ids),
                     "failed": len(calls) - len(answered) - len(expired_ids), "unreadable": unreadable,
                     "duplicates": duplicates, "conflicting": conflicting}


def _result_of(line: dict) -> str:
    """What a results line says about its call (its error, or its status and the messages answered), without the
    fields that differ between two runs of one answer (ids, usage)."""
    response = line.get("response") if isinstance(line.get("response"), dict) else {}
    body = response.get("body") if isinstance(response.get("body"), dict) else {}
    choices = body.get("choices") if isinstance(body.get("choices"), list) else body
    said = [c.get("message") if isinstance(c, dict) else c for c in choices] if isinstance(choices, list) else choices
    return json.dumps([line.get("error"), response.get("status_code"), said], sort_keys=True, default=str)


def _json_object(raw: bytes) -> dict | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _lines(data: bytes | Iterable[bytes | None]) -> Iterable[bytes | None]:
    """A results file's lines: split when given whole as bytes."""
    return data.splitlines() if isinstance(data, (bytes, bytearray)) else data
