"""Helpers for the `judgewise generate` tests: a deterministic answering server, questions files and configs."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import yaml

from tests.support import SHARED
from tests.support.fault_server import FaultServer, request_key

MODEL = "gen-model"
MTBENCH_QUESTIONS = SHARED / "data" / "mtbench" / "question.jsonl"


def answer(messages: list) -> str:
    """The server's answer: names the turn it answers and a hash of the whole request (so every answer differs)."""
    turn = sum(m["role"] == "user" for m in messages)
    return f"Answer to turn {turn} [{request_key(messages)[:10]}]: about {messages[-1]['content'][:24]!r}."


def server(**kw) -> FaultServer:
    return FaultServer(model=MODEL, answer=answer, retry_after_s=0.01, **kw)


def write_questions(folder: Path, n: int, turns: int = 2) -> Path:
    """An MT-bench style question.jsonl of ``n`` questions with ``turns`` user turns each."""
    path = folder / "question.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for q in range(n):
            fh.write(json.dumps({"question_id": 100 + q, "category": "writing",
                                 "turns": [f"Question {q}, turn {t + 1}: say something about {q * 7 + t}."
                                           for t in range(turns)]}) + "\n")
    return path


def write_gen_config(folder: Path, url: str, *, models=("alpha", "beta"), prompts: str = "question.jsonl",
                     name: str = "gen.yaml", **extra) -> Path:
    """A gen.yaml: each model a different system prompt (so the server sees different requests), fast retries."""
    options = extra.pop("model_options", {})  # every model's (popped inside the list, only the first had them)
    cfg = {"prompts": prompts,
           "models": [{"name": m, "model": MODEL, "base_url": url, "system": f"You are {m}.", "max_tokens": 64,
                       **options} for m in models],
           "store": "gens.sqlite", "output": "answers.jsonl",
           "limits": {"concurrency": 4, "timeout_s": 5, "base_delay_s": 0.01, "max_delay_s": 0.1,
                      **extra.pop("limits", {})}, **extra}
    path = folder / name
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def stored_answers(store: Path) -> int:
    """Calls the generation store says were paid (sum of n_calls)."""
    with sqlite3.connect(store, timeout=30) as db:
        return db.execute("SELECT COALESCE(SUM(n_calls), 0) FROM generations").fetchone()[0]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
