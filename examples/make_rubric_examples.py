"""Write examples/rubrics/grades.jsonl and human.jsonl: rubric grades from a real run against a scripted judge.

``judgewise judge`` grades 3 models' (synthetic) answers to 4 MT-bench questions, both turns, with the shipped
``helpfulness`` rubric, through the whole engine and store, against the loopback OpenAI-compatible server of
``tests/judges/test_rubric_grading.py``: the judge answers the grade planted in each answer, and a rating off the
rubric's 1-5 scale for two of them (stored as failed grades). The grades table keeps the columns prompt_id, model,
judge, score, turn, error. ``human.jsonl`` is invented for the reliability example: the judge's grade on three
answers of four, 6 minus it on the second of every four.

Run from the repo root (it needs the test helpers): ``python examples/make_rubric_examples.py``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "examples" / "rubrics"
KEEP = ("prompt_id", "model", "judge", "score", "turn", "error")


def graded_rows(folder: Path) -> list[dict]:
    """The grades of one run of the scripted judge in ``folder`` (sorted by model, question, turn)."""
    sys.path.insert(0, str(ROOT))
    from tests.judges import test_rubric_grading as run

    run._write_inputs(folder)
    result = run._run(folder, {"rubric": "helpfulness", "name": "scripted-judge"}, [])
    if result["first"].returncode not in (0, 4):
        raise SystemExit(result["first"].stderr)
    rows = [json.loads(line) for line in (folder / "grades.jsonl").read_text().splitlines()]
    return sorted(rows, key=lambda g: (g["model"], int(g["prompt_id"]), g["turn"]))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = graded_rows(Path(tmp))
    OUT.mkdir(exist_ok=True)
    (OUT / "grades.jsonl").write_text("".join(json.dumps({k: g[k] for k in KEEP}) + "\n" for g in rows))
    human = [{"item_id": f"{g['prompt_id']}/{g['model']}/turn {g['turn']}", "rater": "human",
              "score": 6 - g["score"] if i % 4 == 1 else g["score"]} for i, g in enumerate(rows) if g["score"] is not None]
    (OUT / "human.jsonl").write_text("".join(json.dumps(h) + "\n" for h in human))


if __name__ == "__main__":
    main()
