"""A run's rows read back in two parts: those already final in a thread while its last wave of games is in flight,
the rest after it."""

from __future__ import annotations

import logging
import sqlite3
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass

import pandas as pd

from judgewise.store.protocol import ResultStore
from judgewise.store.sqlite import concat_frames

log = logging.getLogger(__name__)


@dataclass
class RowsAhead:
    """A run's rows read back in two parts: those stored before its last wave (``before``: the keys stored before
    the run, then those it stored), in a thread while that wave is in flight (:meth:`start`, once), then the rest.
    The rows read first are final: a run stores each key once, and never over an "ok" row."""

    store: ResultStore
    before: list[str]
    ahead: Future | None = None

    def start(self, stored: list[str]) -> None:
        if self.ahead is None:
            self.ahead = self.store.frame_in_thread(self.before + stored)

    def frame(self, keys: list[str]) -> pd.DataFrame:
        """The stored rows of ``keys`` (:meth:`store.frame`): those read ahead and the others."""
        if self.ahead is None:
            return self.store.frame(keys)
        try:
            ahead = self.ahead.result()
        except sqlite3.Error as exc:  # that connection could not read (locked, say): the store's own reads them all
            log.debug("rows read ahead failed (%s); reading them all now", exc)
            return self.store.frame(keys)
        have = set(ahead["key"])
        return concat_frames([ahead, self.store.frame([k for k in keys if k not in have])], ahead.columns)


def rows_ahead(store: ResultStore, keyed: dict, todo: deque) -> RowsAhead | None:
    """A :class:`RowsAhead` for a store that reads in a thread (SQLite's ``frame_in_thread``), else None."""
    if not hasattr(store, "frame_in_thread"):
        return None
    judging = {k for k, _ in todo}
    return RowsAhead(store, [k for k in keyed if k not in judging])

