"""Write examples/chatbot-arena/: GPT-4's verdicts on 3,000 Chatbot Arena battles and the crowd's votes on 600 of them.

The source is ../shared/data/chatbot-arena-ppr (26,919 battles of April–June 2023 with the crowd user's vote and
GPT-4-0125-preview's verdict on the same battle; from the prediction-powered ranking paper's data, MIT licence):
``gpt-4.jsonl`` holds GPT-4's verdicts on the first 3,000 battles, ``human-votes.jsonl`` the human votes on 600 of
those battles drawn at random (seed 0) — the "few human labels" of ``judgewise rank --human`` (docs/human-validation.md).
Fields: ``question_id, model_a, model_b, winner`` (Chatbot Arena battles, which judgewise reads as they are).

Run from the repo root with ../shared beside it: ``python examples/make_human_anchored.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent.parent / "shared" / "data" / "chatbot-arena-ppr"
OUT = HERE / "chatbot-arena"
N_BATTLES, N_LABELS, SEED = 3000, 600, 0
FIELDS = ("question_id", "model_a", "model_b", "winner")


def battles(path: Path, count: int) -> list[dict]:
    """The first ``count`` battles of a jsonl file, each cut to FIELDS."""
    with open(path, encoding="utf-8") as fh:
        return [{k: json.loads(line)[k] for k in FIELDS} for _, line in zip(range(count), fh)]


def slice_rows(source: Path = SOURCE) -> tuple[list[dict], list[dict]]:
    """(GPT-4's verdicts on the first N_BATTLES battles, the human votes on N_LABELS of them, in battle order)."""
    judge = battles(source / "gpt-4-0125-preview.jsonl", N_BATTLES)
    human = battles(source / "human.jsonl", N_BATTLES)
    picked = np.sort(np.random.default_rng(SEED).choice(N_BATTLES, N_LABELS, replace=False))
    return judge, [human[i] for i in picked]


def jsonl_text(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def main() -> None:
    judge, human = slice_rows()
    OUT.mkdir(exist_ok=True)
    (OUT / "gpt-4.jsonl").write_text(jsonl_text(judge), encoding="utf-8")
    (OUT / "human-votes.jsonl").write_text(jsonl_text(human), encoding="utf-8")
    print(f"wrote {OUT}/gpt-4.jsonl ({len(judge):,} verdicts) and human-votes.jsonl ({len(human):,} votes)")


if __name__ == "__main__":
    main()
