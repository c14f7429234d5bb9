"""Load what a report or the explorer shows: judgments (+ responses, prompts, run facts) from files or a store.

A run is read once into a :class:`RunData`; the report sections and the explorer only read from it.
Sources: anything ``judgewise.io.read_any`` reads (canonical JSONL/CSV/Parquet, AlpacaEval results
directories, Arena-Hard battles, JudgeBench outputs), a judging store (SQLite file written by
``judgewise judge``), or an in-memory DataFrame / ``Table``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from judgewise.errors import InputError
from judgewise.io import read_any, read_responses
from judgewise.io.streams import recording_reads
from judgewise.io.schema import JUDGMENTS_REQUIRED, require_columns, require_matching_responses, usable_mask
from judgewise.io.tables import ReadReport, Table
from judgewise.store.judgments import export_frame, store_stats
from judgewise.store.opening import is_store_url, open_store_readonly, store_label, store_location
from judgewise.store.reading import is_store  # one definition, shared with the CLI
from judgewise.store.run_settings import recorded_ranking_settings

log = logging.getLogger(__name__)


@dataclass
class RunData:
    """Everything shown about one run. ``responses`` has ``prompt_id, model, text``; ``prompts`` maps
    prompt_id → prompt text; ``store_summary`` holds the judging store's run facts (None for files)."""

    judgments: pd.DataFrame
    sources: list[str]
    read_reports: list[ReadReport] = field(default_factory=list)
    responses: pd.DataFrame | None = None
    prompts: dict[str, str] = field(default_factory=dict)
    store_summary: dict | None = None
    store_path: Path | None = None
    rating_hints: dict = field(default_factory=dict)  # what the input says about rating it (RATING_HINTS)
    human_labels: pd.DataFrame | None = None  # a store's human_labels rows (``judgewise label``), None for files
    files_read: list[Path] = field(default_factory=list)  # the files the readers read (a folder's: not all of it)
    panel: dict | None = None  # a panel's summary (Panel.as_dict) when `judgments` are its derived verdicts (--panel)


RATING_HINTS = ("weighting", "anchor", "pin_anchor")
"""Table extras that change how ``rank`` rates an input (Arena-Hard games: strong verdicts weigh 3, the baseline is
pinned); the report and explorer rate with them too, so their leaderboard is ``rank``'s. A store adds
``recorded``: the ``rank`` settings of the run that wrote it (``store.run_settings``), so its report and explorer
show the ranking that run printed."""


def load_run(sources, *, format: str | None = None) -> RunData:
    """Read one or more sources (paths, a DataFrame or a ``Table``) into a :class:`RunData`."""
    items = sources if isinstance(sources, (list, tuple)) else [sources]
    if not items:
        raise InputError("nothing to report on: give a judgments file, a results directory or a store")
    with recording_reads() as files_read:
        parts = [_load_one(item, format) for item in items]
    judgments = pd.concat([p.judgments for p in parts], ignore_index=True)
    responses = [p.responses for p in parts if p.responses is not None]
    run = RunData(judgments=judgments, sources=[s for p in parts for s in p.sources],
                  read_reports=[r for p in parts for r in p.read_reports],
                  responses=pd.concat(responses, ignore_index=True) if responses else None,
                  rating_hints=parts[0].rating_hints if all(p.rating_hints == parts[0].rating_hints for p in parts)
                  else {}, files_read=list(dict.fromkeys(files_read)))
    for p in parts:
        run.prompts.update(p.prompts)
        run.store_summary = run.store_summary or p.store_summary
        run.store_path = run.store_path or p.store_path
        run.human_labels = run.human_labels if run.human_labels is not None else p.human_labels
    if run.responses is not None:
        run.responses = run.responses.drop_duplicates(subset=["prompt_id", "model"], keep="first")
    _check_not_empty(run)
    _fill_prompts(run)
    return run


def _check_not_empty(run: RunData) -> None:
    """A run with no judgment, or none with a verdict, has nothing to show: InputError naming the source."""
    where = ", ".join(run.sources)
    if run.judgments.empty:
        raise InputError("holds no judgments: nothing to report (judge first, or give the judgments file)",
                         file=where)
    if not usable_mask(run.judgments).any():
        raise InputError(f"none of its {len(run.judgments):,} judgments has a verdict (all failed): nothing to rank; "
                         "`judgewise store stats` shows why they failed", file=where)


def _load_one(item, format: str | None) -> RunData:
    if isinstance(item, Table):
        return _from_table(item)
    if isinstance(item, pd.DataFrame):
        return _from_table(read_any(item, kind="judgments"))
    if format in (None, "store") and is_store_url(item):
        return _from_store(store_location(item))
    path = Path(item)
    if not path.exists():
        raise InputError("no such file or directory", file=str(path))
    if format in (None, "store") and is_store(path):
        return _from_store(path)
    return _from_table(read_any(path, format=format, kind="judgments"))


def _from_table(table: Table) -> RunData:
    if table.kind != "judgments":
        raise InputError(f"expected a judgments table, found a {table.kind} table", file=table.report.source)
    require_columns(table.frame, JUDGMENTS_REQUIRED, file=table.report.source, what="judgments table")
    responses = table.extras.get("responses")
    if isinstance(responses, Table):
        responses = responses.frame
    return RunData(judgments=table.frame.reset_index(drop=True), sources=[table.report.source],
                   read_reports=[table.report], responses=responses,
                   rating_hints={k: table.extras[k] for k in RATING_HINTS if table.extras.get(k) is not None})


def _from_store(path: Path | str) -> RunData:
    """RunData from a judging store (a SQLite file or a PostgreSQL URL) read through
    :func:`~judgewise.store.opening.open_store_readonly` (never written, no -wal/-shm left): the store's export
    (failed games kept) and its run facts."""
    with open_store_readonly(path) as store:
        games, meta, labels = store.frame(), store.meta(), store.labels()
    label = store_label(path)  # a URL's password never reaches a report
    report = ReadReport(label, "store", rows_read=len(games), rows_used=len(games))
    recorded = recorded_ranking_settings(meta)  # the settings the run that wrote it ranked with (evaluate)
    return RunData(judgments=export_frame(games), sources=[label], read_reports=[report],
                   rating_hints={"recorded": recorded} if recorded else {},
                   store_summary=_store_summary(store_stats(games, path=label), games, meta),
                   store_path=path if isinstance(path, Path) else None, human_labels=labels if len(labels) else None)


def _store_summary(stats: dict, games: pd.DataFrame, meta: dict) -> dict:
    """The run-summary facts (label → value): calls, games, tokens, cost, judge and wall time, failure reasons."""
    labels = {"calls": "Calls", "games": "Games", "ok": "Judged", "failed": "Failed", "tokens_in": "Tokens in",
              "tokens_out": "Tokens out", "cost": "Cost"}
    out = {label: stats[key] for key, label in labels.items()}
    if stats.get("tokens_cached"):
        out["Tokens in read from the prompt cache (as billed)"] = stats["tokens_cached"]
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


def _fill_prompts(run: RunData) -> None:
    """Prompt texts from a ``prompt``/``instruction`` column of the responses or judgments, when present."""
    for frame in (run.responses, run.judgments):
        if frame is None:
            continue
        for col in ("prompt", "instruction", "question"):
            if col in frame.columns:
                firsts = frame.drop_duplicates("prompt_id").set_index("prompt_id")[col].dropna()
                for pid, text in firsts.items():
                    run.prompts.setdefault(str(pid), str(text))
                break


def add_responses(run: RunData, source, *, format: str | None = None) -> None:
    """Attach model outputs (a responses table: ``prompt_id, model, text``) to a run, e.g. for a store."""
    frame = read_responses(source if isinstance(source, pd.DataFrame) else Path(source), format=format).frame
    require_matching_responses(run.judgments, frame, file="<DataFrame>" if isinstance(source, pd.DataFrame)
                               else str(source))
    frames = [f for f in (run.responses, frame) if f is not None]
    run.responses = pd.concat(frames, ignore_index=True).drop_duplicates(subset=["prompt_id", "model"])
    _fill_prompts(run)


GOLD_SCORE_COLUMNS = ("score", "rating", "elo", "win_rate", "length_controlled_winrate")


def read_gold(path) -> dict[str, float]:
    """A gold ranking as model → score (higher is better): the JSON of ``judgewise rank --json`` (a list of
    ``{model, score}``), a JSON object model → score, or a CSV with a ``model`` column and one of
    ``score, rating, elo, win_rate, length_controlled_winrate``."""
    import json

    path = Path(path)
    try:
        if path.suffix.lower() == ".csv":
            frame = pd.read_csv(path)
        else:
            data = json.loads(path.read_text(encoding="utf-8"))
            frame = pd.DataFrame(data if isinstance(data, list) else
                                 [{"model": k, "score": v} for k, v in dict(data).items()])
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        raise InputError(f"cannot read the gold ranking ({type(exc).__name__}: {exc})", file=str(path)) from None
    column = next((c for c in GOLD_SCORE_COLUMNS if c in frame.columns), None)
    if "model" not in frame.columns or column is None:
        raise InputError(f"expected a model column and one of {list(GOLD_SCORE_COLUMNS)}, found columns "
                         f"{list(frame.columns)[:10]}", file=str(path), field="model" if "model" not in frame else None)
    scores = pd.to_numeric(frame[column], errors="coerce")
    bad = scores.isna().to_numpy().nonzero()[0]
    if len(bad):
        raise InputError(f"is not a number: {frame[column].iloc[bad[0]]!r}", file=str(path), row=int(bad[0]) + 1,
                         field=column)
    return dict(zip(frame["model"].astype(str), scores.astype(float)))
