"""The explorer's in-memory indexes over one run: prompts (searchable, paged), matches by prompt and by pair.

Built once at start-up from a :class:`RunData`; every page then costs a dictionary lookup plus the rows it
shows, so runs with 10k+ prompts stay responsive.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from judgewise.report.context import ReportContext
from judgewise.report.head_to_head import tournament_rounds
from judgewise.report.inputs import RunData
from judgewise.report.options import ReportOptions

MATCH_COLUMNS = ("prompt_id", "model_a", "model_b", "judge", "outcome", "verdict", "label", "first", "raw",
                 "error", "round", "soft")


@dataclass
class Page:
    """One page of a list: ``items`` (a list, or DataFrame rows) plus where it sits (1-based ``number``)."""

    items: object
    number: int
    pages: int
    total: int
    size: int


def paginate(seq, page: int, size: int) -> Page:
    """Slice ``seq`` (anything with len and slicing) to 1-based ``page`` of ``size`` items (clamped)."""
    total = len(seq)
    pages = max(1, -(-total // size))
    number = min(max(1, page), pages)
    start = (number - 1) * size
    items = seq.iloc[start:start + size] if hasattr(seq, "iloc") else list(seq[start:start + size])
    return Page(items, number, pages, total, size)


class ExplorerData:
    """Read-only indexes over a run. Texts stay untrusted strings; templates escape them."""

    def __init__(self, run: RunData, options: ReportOptions | None = None):
        self.run = run
        self.ctx = ReportContext(run, options or ReportOptions())
        df = run.judgments.reset_index(drop=True)
        for col in ("prompt_id", "model_a", "model_b"):
            df[col] = df[col].astype(str)
        self.matches = df
        self.by_prompt: dict[str, np.ndarray] = {str(k): v for k, v in df.groupby("prompt_id", sort=False).indices.items()}
        lo = np.where(df["model_a"] <= df["model_b"], df["model_a"], df["model_b"])
        hi = np.where(df["model_a"] <= df["model_b"], df["model_b"], df["model_a"])
        self.by_pair = {(str(a), str(b)): v for (a, b), v in
                        pd.DataFrame({"lo": lo, "hi": hi}).groupby(["lo", "hi"], sort=False).indices.items()}
        self.prompt_ids = np.array(list(self.by_prompt), dtype=object)
        texts = [run.prompts.get(p, "") for p in self.prompt_ids]
        self._haystack = pd.Series([f"{p}\n{t}".lower() for p, t in zip(self.prompt_ids, texts)], dtype=object)
        self.responses: dict[str, list[tuple[str, str]]] = {}
        if run.responses is not None:
            r = run.responses
            for pid, model, text in zip(r["prompt_id"].astype(str), r["model"].astype(str), r["text"]):
                self.responses.setdefault(pid, []).append((model, "" if text is None else str(text)))

    @cached_property
    def rounds(self) -> np.ndarray | None:
        """Bracket round of every game (see :func:`judgewise.report.head_to_head.tournament_rounds`)."""
        return tournament_rounds(self.matches, self.by_prompt)

    @property
    def models(self) -> list[str]:
        return self.ctx.order

    def prompt_text(self, pid: str) -> str:
        return self.run.prompts.get(pid, "")

    def search_prompts(self, query: str) -> np.ndarray:
        """Prompt ids whose id or text contains ``query`` (case-insensitive, literal), in run order."""
        q = query.strip().lower()
        if not q:
            return self.prompt_ids
        hits = self._haystack.str.contains(q, regex=False).to_numpy()
        return self.prompt_ids[hits]

    def prompt_rows(self, pid: str) -> pd.DataFrame:
        """The games on one prompt, in play order, with their bracket ``round`` when the run is a tournament."""
        idx = self.by_prompt.get(pid)
        rows = self.matches.iloc[idx] if idx is not None else self.matches.iloc[0:0]
        if self.rounds is not None and idx is not None:
            rows = rows.assign(round=self.rounds[idx])
        return rows

    def pair_rows(self, a: str, b: str) -> pd.DataFrame:
        idx = self.by_pair.get((min(a, b), max(a, b)))
        return self.matches.iloc[idx] if idx is not None else self.matches.iloc[0:0]

    @cached_property
    def prompt_counts(self) -> dict[str, int]:
        return {p: len(v) for p, v in self.by_prompt.items()}


def match_view(row: pd.Series, viewer: str | None = None) -> dict:
    """One game as the templates show it: who was shown first, the literal and parsed verdict, the outcome."""
    get = lambda c: row[c] if c in row.index and _present(row[c]) else None  # noqa: E731
    outcome = get("outcome")
    winner = None
    if outcome is not None:
        winner = row["model_a"] if outcome > 0.5 else row["model_b"] if outcome < 0.5 else "tie"
    view = {c: get(c) for c in MATCH_COLUMNS}
    if view["verdict"] is not None:
        view["verdict"] = f"{int(view['verdict']):+d}"
    view.update(winner=winner, failed=outcome is None or bool(get("error")))
    if viewer and outcome is not None:
        view["viewer_outcome"] = outcome if row["model_a"] == viewer else 1.0 - outcome
    return view


def _present(v) -> bool:
    if v is None or v is pd.NA:
        return False
    try:
        return not (isinstance(v, float) and np.isnan(v))
    except TypeError:
        return True


def group_comparisons(rows: pd.DataFrame) -> list[dict]:
    """Games on one prompt grouped per model pair (both answer orders together), in first-seen order."""
    groups: dict[tuple, dict] = {}
    for _, row in rows.iterrows():
        a, b = row["model_a"], row["model_b"]
        key = (row.get("judge"), min(a, b), max(a, b))
        g = groups.setdefault(key, {"lo": key[1], "hi": key[2], "judge": key[0], "games": [],
                                    "round": row["round"] if "round" in row.index else None})
        g["games"].append(match_view(row, viewer=key[1]))
    for g in groups.values():
        outs = [x["viewer_outcome"] for x in g["games"] if "viewer_outcome" in x]
        g["mean_outcome"] = float(np.mean(outs)) if outs else None
    return list(groups.values())


def bracket(comparisons: list[dict]) -> list[tuple[object, list[dict]]]:
    """Tournament view: comparisons grouped by their round (a ``round`` column, or the inferred bracket
    round), rounds in order; empty when the run is not a tournament."""
    rounds: dict = {}
    for c in comparisons:
        if c["round"] is not None and _present(c["round"]):
            rounds.setdefault(int(c["round"]), []).append(c)
    return sorted(rounds.items(), key=lambda kv: kv[0])
