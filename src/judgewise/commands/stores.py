"""``judgewise store export|stats|copy`` as functions: a store path or URL in, the counts to print out."""

from __future__ import annotations

from judgewise.store.opening import copy_store, open_store_readonly
from judgewise.store.reading import export_labels, export_store

__all__ = ["copy_store", "export_labels", "export_store", "store_stats"]


def store_stats(store: str) -> dict:
    """The counts of a store (ok/failed, calls, tokens and cost, by judge and by model), opened read-only: what is
    not a store is refused and never written to."""
    with open_store_readonly(store) as st:
        return st.stats()
