"""The rating settings a run ranked its store with, kept in the store's ``meta`` so that a report of it ranks the same way."""

from __future__ import annotations

import json
import time

PREFIX = "ranking_settings."
"""Meta names ``ranking_settings.<ns since the epoch, 20 digits>``: a fact once recorded stays (``note_meta``), so
each change of settings is a new name and the latest name is the run's last word."""


def recorded_ranking_settings(meta: dict[str, str]) -> dict | None:
    """The keyword arguments of ``ratings.rank`` the latest run recorded in a store's ``meta``, or None."""
    names = sorted(name for name in meta if name.startswith(PREFIX))
    return json.loads(meta[names[-1]]) if names else None


def note_ranking_settings(store, settings: dict) -> None:
    """Record ``settings`` (``Ranking.settings()``: JSON-ready) in the store's ``meta``, unless they are what
    the store's latest record says already."""
    if recorded_ranking_settings(store.meta()) != settings:
        store.note_meta(f"{PREFIX}{time.time_ns():020d}", json.dumps(settings, sort_keys=True))
