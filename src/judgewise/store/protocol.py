"""The store interfaces: what the judging engine needs of a store, and what a judgment store offers its readers.

Five roles, each a :class:`typing.Protocol` that code using a store is typed with (never a concrete class):

- :class:`AnswerJournal`: answers received for rows not stored yet (the scheduler journals every answer in it).
- :class:`ResultStore`: what the judging engine (:func:`judgewise.judges.runner.arun_keyed`) needs: stored rows by
  key, claims (leases) on keys in flight, the answer journal. The judging stores and the generation store
  (:class:`~judgewise.store.generations.GenerationStore`) are ones.
- :class:`JudgmentStoreLike`: a store of judge games, what ``rank``, ``report``, ``store stats|export|copy`` and the
  runs read of it: the SQLite :class:`~judgewise.store.judgments.JudgmentStore` and the PostgreSQL
  :class:`~judgewise.store.postgres.PgJudgmentStore`.
- :class:`HumanLabelStore`: the append-only human labels of ``judgewise label`` (both judgment stores).
- :class:`SharedQueue`: worker mode's queue of a job's keys (the PostgreSQL store only).
- :class:`BatchLedger`: the provider batches a run submitted, recorded before submission (every store is one;
  :mod:`judgewise.store.batches`).

A SQLite store also has ``record_soon`` (rows committed with the others finished in the same turn of the event loop)
and a PostgreSQL store ``threadsafe = True`` (the engine calls it from worker threads); the engine looks for both.
Both stores are checked against these Protocols by tests/store/test_store_protocol.py (every member, with a compatible
signature, on real stores) and by mypy in ``make test`` (the assignments of :mod:`judgewise.store.conformance`).
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Iterable, Protocol, runtime_checkable

if TYPE_CHECKING:
    import pandas as pd

    from judgewise.store.judgments import GameRecord
    from judgewise.store.labels import HumanLabel


@runtime_checkable
class AnswerJournal(Protocol):
    """Durable record of answers received for rows not stored yet (every store is one)."""

    def held_answer(self, call_key: str) -> dict | None:
        """The answer received earlier for this call (its row not stored yet), or None."""

    def hold_answer(self, game_key: str, call_key: str, answer: dict) -> None:
        """Keep an answer just received until the row of ``game_key`` is stored."""

    def note_maybe_charged(self) -> None:
        """Count, durably, one call that timed out after being sent (the server may have billed it)."""


@runtime_checkable
class ResultStore(AnswerJournal, Protocol):
    """What the judging engine needs of a store: rows by key, claims on keys in flight, the answer journal."""

    @property
    def path(self) -> str | os.PathLike[str]:
        """Where the store is, as messages show it (a file path, or a URL with its password masked)."""

    @property
    def lease_s(self) -> float:
        """How long a claim lasts unless renewed (the engine renews every third of it)."""

    @property
    def readonly(self) -> bool:
        """True when opened for reading only."""

    def statuses(self, keys: Iterable[str]) -> dict[str, str]:
        """key → "ok"/"failed" for the keys already stored."""

    def frame(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The stored rows (all, or those with ``keys``) with the store's columns."""

    def count(self, status: str | None = None) -> int:
        """How many rows are stored (of ``status`` only, when given)."""

    def integrity_check(self) -> str:
        """"ok" when the store is readable whole."""

    def claim(self, key: str, *, retry_failed: bool = False) -> str:
        """Take ``key``: "claimed", "done" (stored) or "busy" (another live process holds it)."""

    def claim_many(self, keys: list[str], *, retry_failed: bool = False) -> list[str]:
        """:meth:`claim` for each of ``keys``, in order."""

    def renew_claims(self) -> int:
        """Extend the lease of every claim this store object holds; how many."""

    def release(self, key: str) -> None:
        """Give up a claim without storing a row."""

    def record(self, rec: Any) -> None:
        """Store one finished row (a store record dataclass), dropping its claim and journaled answers."""

    def background_checkpoints(self) -> AbstractContextManager[Any]:
        """A block during which the store keeps its files in shape off the caller's thread (or does nothing)."""

    def close(self) -> None:
        """Commit what is held back and let go of the store."""

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: Any) -> None: ...


@runtime_checkable
class JudgmentStoreLike(ResultStore, Protocol):
    """A store of judge games (and pointwise grades), one row per key: what runs, readers and ``store copy`` use."""

    def record(self, rec: GameRecord) -> None:
        """Store one finished game (an "ok" row already stored is never overwritten)."""

    def meta(self) -> dict[str, str]:
        """The store's run facts (schema version, design...) as name → value."""

    def note_meta(self, name: str, value: str) -> None:
        """Record a run fact; one recorded under ``name`` already stays."""

    def modes(self) -> dict:
        """How many stored rows there are of each ``mode`` (pairwise games, pointwise grades)."""

    def judge_history(self, identity_json: str) -> tuple[float, float, int] | None:
        """Mean (tokens_out, latency_s) per call of the judge's earlier successful games, and their number."""

    def maybe_charged_timeouts(self) -> int:
        """Calls that timed out after being sent, over every run on this store."""

    def stats(self) -> dict:
        """What ``judgewise store stats`` prints: counts overall, by judge, by model; claims in flight."""

    def answer_rows(self) -> list[tuple]:
        """The answer journal as (call, game, answer, created_at) rows."""

    def absorb(self, games: pd.DataFrame, meta: dict[str, str], answers: list[tuple]) -> None:
        """Add another store's games, run facts and journaled answers (``judgewise store copy``)."""


@runtime_checkable
class HumanLabelStore(Protocol):
    """A store that keeps human labels (``judgewise label``): an append-only table read whole."""

    def add_label(self, label: HumanLabel) -> None:
        """Append one label, committed before this returns."""

    def labels(self) -> pd.DataFrame:
        """Every label row (``judgewise.store.labels.LABEL_COLUMNS``) in commit order."""


@runtime_checkable
class SharedQueue(Protocol):
    """Worker mode: a job's keys in a queue that workers on any machine take batches from."""

    def enqueue(self, job: str, keys: list[str]) -> None:
        """Put a job's keys in the queue, in order (idempotent)."""

    def claim_batch(self, job: str, n: int, *, retry_failed: bool = False, exclude: Iterable[str] = ()) -> list[str]:
        """Claim up to ``n`` keys of the job's queue that no other live owner holds."""

    def queued(self, job: str) -> int:
        """Keys of the job not stored yet."""

    def expire_dead_claims(self) -> int:
        """End the claims of dead processes on this host; how many owners."""



@runtime_checkable
class BatchLedger(Protocol):
    """Provider batches (OpenAI's Batch API) a run submits: each recorded before it is sent, so a rerun polls the
    batches still open instead of paying for their calls again (:mod:`judgewise.store.batches`)."""

    def batch_intent(self, local_id: str, calls: dict[str, str]) -> None:
        """Record a batch about to be submitted: its ``calls`` (call key → game key), state ``intent``."""

    def batch_uploaded(self, local_id: str, file_id: str) -> None:
        """The batch's input file is uploaded as ``file_id`` (recorded before the batch is created)."""

    def batch_submitted(self, local_id: str, batch_id: str) -> None:
        """The provider created the batch ``batch_id``: state ``submitted``."""

    def batch_dropped(self, local_id: str, reason: str) -> None:
        """An ``intent`` the provider never created: state ``dropped``."""

    def batch_ended(self, local_id: str, outcome: str, counts: dict[str, int],
                    answers: list[tuple[str, str, dict]]) -> None:
        """The batch's ``answers`` (game key, call key, answer) journaled and the batch ``ended``, in one
        transaction."""

    def batches(self, states: tuple[str, ...] = ...) -> list[dict]:
        """The ledger's rows in ``states`` (default: all), oldest first."""

    def absorb_batches(self, rows: list[dict]) -> int:
        """Copy another store's ledger rows (``store copy``), never moving a batch back; how many written."""

    def take_writer(self, mode: str) -> tuple[str, str] | None:
        """Take the run's writer lease ("batch" or "live"), or the (key, owner) of the lease keeping it out."""

    def release_writer(self) -> None:
        """Give back the writer lease this instance holds."""
