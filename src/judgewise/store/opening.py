"""Open a judgment store by where it is: a SQLite file (the embedded default) or a ``postgresql://`` URL (shared).

Every command and library call that takes a store takes either; this is the one place that tells them apart.
A URL that went through :class:`pathlib.Path` on its way here (``postgresql:/user@host/db``, one slash eaten)
is recognised and repaired. ``copy_store`` moves a store's rows from one kind to the other.
"""

from __future__ import annotations

import os
from pathlib import Path

from judgewise.errors import ConfigError
from judgewise.store.judgments import JudgmentStore
from judgewise.store.labels import HumanLabel
from judgewise.store.postgres import PgJudgmentStore
from judgewise.store.urls import is_url, masked
from judgewise.store.protocol import JudgmentStoreLike

Location = str | os.PathLike


def store_location(location: Location) -> str | Path:
    """A PostgreSQL URL as a string (repaired if a Path ate a slash of ``scheme://``), anything else as a Path."""
    text = os.fspath(location) if isinstance(location, os.PathLike) else str(location)
    if not is_url(text):
        return Path(text)
    scheme, _, rest = text.partition(":")
    return _well_formed(f"{scheme}://{rest.lstrip('/')}" if not rest.startswith("//") else text)


def _well_formed(url: str) -> str:
    """``url``, or a ConfigError when it cannot be split into its parts (``[::1`` unclosed, a bracketed host that is
    no IPv6 address); a bad port is libpq's to name. The message does not repeat the URL: it may hold a password."""
    from urllib.parse import urlsplit

    try:
        urlsplit(url)
    except ValueError as exc:
        raise ConfigError(f"the store URL {url.partition(':')[0]}://... is malformed ({exc}); expected e.g. "
                          "postgresql://user@host:5432/db or postgresql://user@[::1]:5432/db") from None
    return url


def is_store_url(location: Location) -> bool:
    """True when ``location`` names a PostgreSQL store (a ``postgresql://`` URL, possibly Path-mangled)."""
    return isinstance(store_location(location), str)


def store_label(location: Location) -> str:
    """How messages show a store: the file path, or the URL with its password masked."""
    where = store_location(location)
    return masked(where) if isinstance(where, str) else str(where)


def open_store(location: Location, **options) -> JudgmentStoreLike:
    """The store at ``location`` for judging (made when missing): :class:`JudgmentStore` for a file,
    :class:`PgJudgmentStore` for a URL. ``options``: ``lease_s`` and the kind's own keywords."""
    where = store_location(location)
    return PgJudgmentStore(where, **options) if isinstance(where, str) else JudgmentStore(where, **options)


def open_store_readonly(location: Location) -> JudgmentStoreLike:
    """An existing store opened for reading only (export, stats, rank, report); never written."""
    where = store_location(location)
    return PgJudgmentStore.open_readonly(where) if isinstance(where, str) else JudgmentStore.open_readonly(where)


def open_store_for_planning(location: Location) -> JudgmentStoreLike:
    """What a dry run reads: the store read-only, or an empty one in memory where there is none yet."""
    where = store_location(location)
    if isinstance(where, str):
        return PgJudgmentStore.open_for_planning(where)
    return JudgmentStore.open_for_planning(where)


def _same_store(a: Location, b: Location) -> bool:
    """Whether two locations name one store: the same file however spelled (a link, ./, an absolute path: compared
    by device and inode), or the same URL."""
    a, b = store_location(a), store_location(b)
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    try:
        one, two = os.stat(a), os.stat(b)
    except OSError:  # the target does not exist yet: compare where it would be
        return os.path.realpath(a) == os.path.realpath(b)
    return (one.st_dev, one.st_ino) == (two.st_dev, two.st_ino)


def copy_store(source: Location, target: Location) -> dict:
    """Copy every game, run fact and journaled answer of the store at ``source`` into the store at ``target``
    (made when missing; SQLite ↔ PostgreSQL either way), and its human labels (those not there yet). Games already
    judged ok in ``target`` are kept as they are; claims (leases of live processes) and worker queues are not
    copied. The batch ledger is copied too (a batch still open goes on in the copy: a run on it polls that batch
    instead of submitting its calls again). Returns the counts."""
    if _same_store(source, target):
        raise ConfigError(f"store copy: source and target are the same store ({store_label(source)} and "
                          f"{store_label(target)})")
    with open_store_readonly(source) as src:
        games, meta, answers, labels = src.frame(), src.meta(), src.answer_rows(), src.labels()
        batches = src.batches()
    with open_store(target) as dst:
        before = dst.count()
        dst.absorb(games, meta, answers)
        n_batches = dst.absorb_batches(batches)
        after, ok = dst.count(), dst.count("ok")
        n_labels = _copy_labels(labels, dst)
    return {"source": store_label(source), "target": store_label(target), "games": len(games),
            "answers": len(answers), "target_games_before": before, "target_games": after, "target_ok": ok,
            "labels": n_labels, "batches": n_batches,
            "open_batches": sum(r["state"] in ("intent", "submitted") for r in batches)}


def _copy_labels(rows, dst) -> int:
    """Append the human label rows ``dst`` does not hold yet (same session, labeller, item and time), in their
    order; how many."""
    if rows.empty:
        return 0
    same = ["session", "labeller", "item_id", "created_at"]
    have = set(dst.labels()[same].itertuples(index=False, name=None))
    new = [r for r in rows.itertuples(index=False) if (r.session, r.labeller, r.item_id, r.created_at) not in have]
    for r in new:
        dst.add_label(HumanLabel(r.session, r.labeller, r.item_id, None if r.value != r.value else float(r.value),
                                 shown=r.shown, target=r.target, created_at=float(r.created_at)))
    return len(new)
