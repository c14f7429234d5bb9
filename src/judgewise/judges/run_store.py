"""The store of a run: opened once at the caller's edge when given as a path or URL (the engine only ever gets an
open store), and the claims a run holds on it renewed while it runs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
from typing import Iterator

from judgewise.errors import StoreUnavailable
from judgewise.judges.scheduler import off_loop
from judgewise.store.opening import Location, open_store
from judgewise.store.protocol import ResultStore

log = logging.getLogger(__name__)


@contextlib.contextmanager
def opened_store(store: ResultStore | Location) -> Iterator[ResultStore]:
    """``store`` open for the block: a path or ``postgresql://`` URL opened (:func:`open_store`) and closed after
    it; a store object passed through as it is, left open (its owner closes it)."""
    if not isinstance(store, (str, os.PathLike)):
        yield store
        return
    with open_store(store) as opened:
        yield opened


async def renew_claims(store: ResultStore, every_s: float, failure: str) -> None:
    """Renew the claims (game claims, the writer lease) this process holds on ``store`` every ``every_s`` seconds
    until cancelled; a failed renewal is logged (``failure`` % the error) and tried again at the next tick: it must
    not end renewals."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await off_loop(store, "renew_claims")
        except (sqlite3.OperationalError, StoreUnavailable) as exc:
            log.warning(failure, exc)
