"""The report of a judging store with human labels shows the prediction-powered rank-sets ``rank --human`` gives."""

from __future__ import annotations

import json

import pandas as pd

from judgewise.analysis.human_anchored import rank_set_text
from judgewise.io.battles import winner_outcome
from judgewise.report import build_report
from judgewise.report.document import OK
from judgewise.store.judgments import GameRecord, JudgmentStore
from judgewise.store.labels import HumanLabel
from judgewise.store.opening import open_store
from tests.support import cli_json

N_GAMES, N_LABELS = 1500, 400
VERDICT5 = {1.0: 1, 0.5: 0, 0.0: -1}


def _battles(path, count):
    with open(path) as fh:
        return [json.loads(line) for _, line in zip(range(count), fh)]


def test_the_report_shows_the_rank_sets_rank_human_prints(shared, tmp_path):
    folder = shared / "data" / "chatbot-arena-ppr"
    judge, human = (_battles(folder / name, N_GAMES) for name in ("gpt-4-0125-preview.jsonl", "human.jsonl"))
    path = tmp_path / "store.sqlite"
    with JudgmentStore(path) as store:
        for k, r in enumerate(judge):
            outcome = winner_outcome(r["winner"])
            store.record(GameRecord(key=f"k{k}", prompt_id=r["question_id"], model_a=r["model_a"],
                                    model_b=r["model_b"], first=r["model_a"], swapped=False, judge="gpt-4",
                                    template="t@1", judge_identity="{}", status="ok", raw=r["winner"],
                                    verdict5=VERDICT5[outcome], outcome=outcome, n_calls=1))
    assert "human_anchored" not in {s.key for s in build_report(path)}  # no labels: no section
    counts = pd.Series([r["question_id"] for r in judge]).value_counts()
    labelled = [r for r in human if counts[r["question_id"]] == 1][:N_LABELS]
    with open_store(path) as store:
        for r in labelled:
            vote = winner_outcome(r["winner"])
            value = vote if r["model_a"] == min(r["model_a"], r["model_b"]) else 1.0 - vote
            store.add_label(HumanLabel("s", "ann", r["question_id"], value, shown="AB"))
    section = {s.key: s for s in build_report(path)}["human_anchored"]
    assert section.status == OK
    facts = dict(section.facts)
    assert facts["Human labels used"].startswith(f"{N_LABELS} of {N_LABELS} labelled items (0 on no judged pair)")
    cli = cli_json("rank", path, "--human", path, "--json")["human_anchored"]
    expected = {m["model"]: [rank_set_text(*m["rank_set"]), rank_set_text(*m["human_only_rank_set"])]
                for m in cli["models"]}
    shown = {row[0]: row[1:3] for row in section.tables[0].rows}
    assert shown == expected
    assert facts["Comparisons judged only"] == f"{cli['n_judge']:,}"
