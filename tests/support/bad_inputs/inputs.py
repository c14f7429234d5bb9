"""Small valid inputs (judgments, scores, correctness, stores) and the Case type the corpus is made of."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

MODELS = ("alpha", "beta", "gamma")
OUTCOMES = (1.0, 0.0, 0.5, 1.0, 0.0, 1.0)


@dataclass(frozen=True)
class Case:
    """One bad input: ``build(root)`` writes it under ``root`` and returns the CLI arguments; the single error
    line must contain every string of ``names`` (the file, row, field or option at fault). ``owner``: the area
    whose files hold the fix, when it is not io/ratings/analysis (for the reader of a failure; it changes nothing).
    ``extra["env"]``: environment variables set for the command (e.g. a bad ``JUDGEWISE_*`` setting)."""

    name: str
    build: Callable[[Path], list]
    names: tuple[str, ...] = ()
    owner: str | None = None
    timeout: float = 60.0
    stdin: str | None = None
    extra: dict = field(default_factory=dict)


def judgments(n_prompts: int = 4, models=MODELS, judge: str = "j") -> list[dict]:
    """All pairs of ``models`` on ``n_prompts`` prompts, both directions, mixed outcomes (BT is finite)."""
    rows, k = [], 0
    for p in range(1, n_prompts + 1):
        for i, a in enumerate(models):
            for b in models[i + 1:]:
                rows.append({"prompt_id": f"p{p}", "model_a": a, "model_b": b, "judge": judge,
                             "outcome": OUTCOMES[k % len(OUTCOMES)]})
                k += 1
    return rows


def anchored(n_prompts: int = 6, anchor: str = "anchor", models=("m1", "m2", "m3")) -> list[dict]:
    """Every model against one anchor on every prompt (what winrate/anchors/power read)."""
    rows, k = [], 0
    for p in range(1, n_prompts + 1):
        for m in models:
            rows.append({"prompt_id": f"p{p}", "model_a": m, "model_b": anchor, "judge": "j",
                         "outcome": OUTCOMES[k % len(OUTCOMES)]})
            k += 1
    return rows


def scores(n_items: int = 12, raters=("judge1", "judge2", "human")) -> list[dict]:
    """Pointwise scores of every item by every rater (a human among them)."""
    return [{"item_id": f"i{i}", "rater": r, "score": float((i * (k + 2)) % 5)}
            for i in range(n_items) for k, r in enumerate(raters)]


def correctness(models=MODELS, n_prompts: int = 4) -> list[dict]:
    return [{"prompt_id": f"p{p}", "model": m, "correct": (p + k) % 2}
            for p in range(1, n_prompts + 1) for k, m in enumerate(models)]


def responses(models=MODELS, n_prompts: int = 4) -> list[dict]:
    return [{"prompt_id": f"p{p}", "model": m, "text": f"answer {p} of {m}", "instruction": f"question {p}"}
            for p in range(1, n_prompts + 1) for m in models]


def jsonl(rows) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def csv_text(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def with_row(rows: list[dict], index: int, **changes) -> list[dict]:
    """A copy of ``rows`` where row ``index`` (0-based) has ``changes`` (value DROP removes the field)."""
    out = [dict(r) for r in rows]
    out[index].update(changes)
    out[index] = {k: v for k, v in out[index].items() if v is not DROP}
    return out


DROP = object()


def write(root: Path, name: str, content: str | bytes) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def deep_json(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


def deep_object(depth: int = 100_000) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def foreign_sqlite(root: Path, name: str = "other.sqlite") -> Path:
    """An SQLite database that is not a judgewise store."""
    path = root / name
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes (text) VALUES ('keep me')")
    return path


def store(root: Path, rows: list[dict] | None = None, name: str = "s.sqlite", template: str = "t@1") -> Path:
    """A judgewise store holding ``rows`` (canonical judgments) as judged games."""
    from judgewise.store.judgments import GameRecord, JudgmentStore

    path = root / name
    with JudgmentStore(path) as st:
        for k, r in enumerate(rows if rows is not None else judgments()):
            st.record(GameRecord(key=f"k{k}", prompt_id=r["prompt_id"], model_a=r["model_a"], model_b=r["model_b"],
                                 first=r["model_a"], swapped=False, judge=r.get("judge", "j"), template=template,
                                 judge_identity="{}", status=r.get("status", "ok"), raw="[[A>B]]",
                                 verdict5=None if r.get("outcome") is None else 1, outcome=r.get("outcome"),
                                 error=r.get("error"), n_calls=1))
    return path
