"""Read a judging store (judges/store.py) without writing to it: the canonical export and its run facts."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pandas as pd

from judgewise.errors import InputError
from judgewise.io.tables import ReadReport


def _read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)


def load_store(path: Path):
    """RunData from a store file: ``store.export_frame`` judgments (failed games kept) and ``store_stats``."""
    from judgewise.judges.store import GAME_COLUMNS, READ_HINT, check_store_file, export_frame, store_stats
    from judgewise.report.inputs import RunData

    if check_store_file(path) is None:
        raise InputError(f"an empty SQLite database, not a judgewise store; {READ_HINT}", file=str(path))
    with closing(_read_only(path)) as db:  # sqlite3's own context manager commits but never closes
        try:
            games = pd.read_sql_query(f"SELECT {', '.join(GAME_COLUMNS)} FROM games ORDER BY created_at, key", db)
            meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
        except (sqlite3.DatabaseError, pd.errors.DatabaseError) as exc:
            reason = str(exc).rsplit(": ", 1)[-1][:200]  # pandas prefixes the whole SQL text
            raise InputError(f"cannot read this judgewise store ({reason}); {READ_HINT}", file=str(path)) from None
    judgments = export_frame(games)
    stats = store_stats(games, path=str(path))
    report = ReadReport(str(path), "store", rows_read=len(games), rows_used=len(games))
    return RunData(judgments=judgments, sources=[str(path)], read_reports=[report],
                   store_summary=_summary(stats, games, meta), store_path=path)


def _summary(stats: dict, games: pd.DataFrame, meta: dict) -> dict:
    """The run-summary facts (label → value): calls, games, tokens, cost, judge and wall time, failure reasons."""
    labels = {"calls": "Calls", "games": "Games", "ok": "Judged", "failed": "Failed", "tokens_in": "Tokens in",
              "tokens_out": "Tokens out", "cost": "Cost"}
    out = {label: stats[key] for key, label in labels.items()}
    if len(games):
        out["Judge time (s, summed call latency)"] = round(float(games["latency_s"].sum()), 3)
        out["Wall time (s, first to last stored call)"] = round(float(games["created_at"].max()
                                                                      - games["created_at"].min()), 3)
        out["Templates"] = ", ".join(sorted(games["template"].dropna().astype(str).unique())) or "—"
    if stats.get("failure_reasons"):
        out["Failure reasons"] = "; ".join(f"{k or '(no message)'} ×{v}" for k, v in stats["failure_reasons"].items())
    if meta.get("design"):
        out["design"] = meta["design"]
    return out
