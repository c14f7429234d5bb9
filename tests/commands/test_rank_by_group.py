"""``judgewise rank --by COLUMN``: one leaderboard per group plus the overall one, same method and intervals.

Oracles: a group's leaderboard equals ranking that group's rows alone (the bench rebuilt with only its prompts and
ranked by the CLI without --by); AlpacaEval's per-dataset win rates and MT-bench's per-category mean grades
recomputed with pandas from the raw files.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pandas as pd
import pytest

from tests.support import REPO, cli_json, run_cli

SLICE = REPO / "examples" / "alpacaeval"
# each model's log-odds of beating the baseline, by Arena-Hard v2.0 category
STRENGTH = {"mA": {"hard_prompt": 1.0, "creative_writing": -0.6}, "mB": {"hard_prompt": -0.4, "creative_writing": 0.9},
            "mC": {"hard_prompt": 0.2, "creative_writing": 0.1}}


def _game(win: bool, strong: bool, model_first: bool) -> str:
    """The 5-way label of one game from the judge's view (A shown first)."""
    a_wins = win == model_first
    return ("A>>B" if strong else "A>B") if a_wins else ("B>>A" if strong else "B>A")


def write_bench(folder: Path, questions: list[dict], seed: int = 0) -> Path:
    """An Arena-Hard v2.0 bench folder: the questions, and model_judgment/judge-x/<model>.jsonl with two games per
    question and model (uid records, as arena-hard-auto v2.0 writes them), drawn from STRENGTH."""
    rng = random.Random(seed)
    (folder / "model_judgment" / "judge-x").mkdir(parents=True)
    (folder / "question.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    for model, strength in STRENGTH.items():
        lines = []
        for q in questions:
            p = 1 / (1 + math.exp(-strength[q["category"]]))
            games = [{"score": "A=B" if rng.random() < 0.1 else _game(rng.random() < p, rng.random() < 0.3, k == 1)}
                     for k in range(2)]
            lines.append(json.dumps({"uid": q["uid"], "category": q["category"], "model": model, "judge": "judge-x",
                                     "games": games}))
        (folder / "model_judgment" / "judge-x" / f"{model}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def bench(shared, tmp_path_factory) -> dict:
    """30 real v2.0 questions per subcategory, judged by a synthetic judge; and one bench per category holding
    only that category's questions and records (the oracle's input)."""
    questions = [json.loads(line) for line in (shared / "data/arenahard/v2.0/question.jsonl").open()]
    picked = []
    for sub in ("coding", "math", "creative_writing"):
        picked += [q for q in questions if q["subcategory"] == sub][:30]
    base = tmp_path_factory.mktemp("ah")
    full = write_bench(base / "full", picked)
    alone = {}
    for category in ("hard_prompt", "creative_writing"):
        folder = base / category
        (folder / "model_judgment" / "judge-x").mkdir(parents=True)
        keep = {q["uid"] for q in picked if q["category"] == category}
        (folder / "question.jsonl").write_text("".join(json.dumps(q) + "\n" for q in picked if q["uid"] in keep))
        for file in (full / "model_judgment" / "judge-x").glob("*.jsonl"):
            lines = [line for line in file.read_text().splitlines() if json.loads(line)["uid"] in keep]
            (folder / "model_judgment" / "judge-x" / file.name).write_text("\n".join(lines) + "\n")
        alone[category] = folder
    return {"full": full, "alone": alone}


def test_rank_by_category_on_arena_hard_v2_prints_one_leaderboard_per_category_then_overall(bench):
    res = run_cli("rank", bench["full"], "--by", "category", "--bootstrap", "30")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    titles = [line for line in out.splitlines() if "judgewise rank · method bt" in line]
    assert [t.strip() for t in titles] == ["judgewise rank · method bt · category = creative_writing",
                                          "judgewise rank · method bt · category = hard_prompt",
                                          "judgewise rank · method bt"]
    assert out.index("category = hard_prompt") < out.index("overall (all category values)")
    assert out.count("95% CI") == 3 and "30 rounds over prompts" in out


def test_each_category_leaderboard_equals_ranking_that_category_alone(bench):
    grouped = cli_json("rank", bench["full"], "--by", "category", "--bootstrap", "30", "--seed", "4", "--json")
    assert grouped["by"] == "category" and grouped["skipped_groups"] == {}
    assert list(grouped["groups"]) == ["creative_writing", "hard_prompt"]
    for category, folder in bench["alone"].items():
        alone = cli_json("rank", folder, "--bootstrap", "30", "--seed", "4", "--json")
        assert grouped["groups"][category] == alone
    assert grouped["overall"] == cli_json("rank", bench["full"], "--bootstrap", "30", "--seed", "4", "--json")
    # the synthetic judge's truth shows: mA leads hard prompts, mB creative writing
    assert grouped["groups"]["hard_prompt"][0]["model"] == "mA"
    assert grouped["groups"]["creative_writing"][0]["model"] == "mB"


def test_rank_by_subcategory_reads_the_column_from_the_benchs_question_file(bench):
    from judgewise.commands.ranking import RankOptions, rank_path

    ranked = rank_path(bench["full"] / "model_judgment" / "judge-x", RankOptions(by="subcategory"))  # question.jsonl 2 levels up
    assert list(ranked.grouped.groups) == ["coding", "creative_writing", "math"]
    assert all(r.info["rows"] == 3 * 30 * 2 for r in ranked.grouped.groups.values())


def test_rank_by_an_unknown_column_names_the_columns_found(bench):
    res = run_cli("rank", bench["full"], "--by", "topic")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    line = " ".join(res.stderr.split())
    assert "--by topic: no such column" in line
    assert "model_a" in line and "subcategory" in line and "question.jsonl" in line and "--prompts FILE" in line


def test_alpacaeval_winrate_by_dataset_equals_pandas_per_dataset_means():
    grouped = cli_json("rank", SLICE, "--method", "winrate", "--by", "dataset", "--json")
    rows = []
    for file in SLICE.glob("results/*/*/annotations.json"):
        for r in json.loads(file.read_text()):
            rows.append({"model": file.parent.parent.name, "dataset": r["dataset"], "outcome": r["preference"] - 1})
    expected = pd.DataFrame(rows).groupby(["dataset", "model"])["outcome"].mean() * 100
    assert sorted(grouped["groups"]) == sorted(expected.index.get_level_values(0).unique())
    for dataset, records in grouped["groups"].items():
        got = {r["model"]: r["score"] for r in records if r["model"] in expected.loc[dataset].index}
        assert got == pytest.approx(expected.loc[dataset].to_dict(), abs=1e-9)


def _mtbench_grades(folder: Path, shared: Path) -> Path:
    """An MT-bench folder: the real question.jsonl and synthetic single grades of three models."""
    (folder / "model_judgment").mkdir(parents=True)
    (folder / "question.jsonl").write_text((shared / "data/mtbench/question.jsonl").read_text())
    rng = random.Random(1)
    ids = [json.loads(line)["question_id"] for line in (folder / "question.jsonl").open()]
    lines = [json.dumps({"question_id": q, "model": m, "judge": ["gpt-4", "single-v1"], "score": rng.randint(1, 10),
                         "turn": turn, "judgment": "Rating: [[5]]"})
             for q in ids for m in ("x", "y", "z") for turn in (1, 2)]
    path = folder / "model_judgment" / "gpt-4_single.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_mtbench_grades_by_category_equal_pandas_per_category_means(shared, tmp_path):
    grades = _mtbench_grades(tmp_path / "mt", shared)
    grouped = cli_json("rank", grades, "--by", "category", "--json")
    raw = pd.read_json(grades, lines=True)
    category = pd.read_json(tmp_path / "mt" / "question.jsonl", lines=True).set_index("question_id")["category"]
    expected = raw.assign(category=raw["question_id"].map(category)).groupby(["category", "model"])["score"].mean()
    assert list(grouped["groups"]) == sorted(category.unique())
    for cat, records in grouped["groups"].items():
        assert {r["model"]: r["score"] for r in records} == pytest.approx(expected.loc[cat].to_dict())
    assert {r["model"]: r["score"] for r in grouped["overall"]} == \
        pytest.approx(raw.groupby("model")["score"].mean().to_dict())


def _table(path: Path, rows: list[tuple]) -> Path:
    pd.DataFrame([{"prompt_id": p, "model_a": a, "model_b": b, "judge": "j", "outcome": o, "topic": t}
                  for p, a, b, o, t in rows]).to_json(path, orient="records", lines=True)
    return path


def test_groups_that_cannot_be_ranked_and_rows_without_a_value_are_reported_not_dropped(tmp_path):
    rows = [(f"p{i}", a, b, o, "wide") for i in range(6) for a, b, o in
            (("m0", "m1", 1.0), ("m1", "m2", 0.5), ("m0", "m2", 0.0), ("m2", "m3", 1.0))]
    rows += [(f"q{i}", a, b, 1.0 if i % 2 else 0.0, "split") for i in range(4) for a, b in (("m0", "m1"), ("m2", "m3"))]
    rows += [(f"r{i}", "m0", "m3", 0.5, None) for i in range(3)]
    path = _table(tmp_path / "t.jsonl", rows)
    res = run_cli("rank", path, "--by", "topic")
    assert res.returncode == 0, res.stderr
    text = " ".join(res.stdout.split())
    assert "topic = split (8 rows) not ranked: the comparison graph is disconnected" in text
    grouped = cli_json("rank", path, "--by", "topic", "--json")
    assert list(grouped["groups"]) == ["wide"]
    assert grouped["skipped_groups"]["split"]["rows"] == 8
    assert grouped["missing"]["rows"] == 3 and sum(r["n"] for r in grouped["missing"]["records"]) == 2 * 3
    frame = pd.read_json(path, lines=True)
    assert sum(r["n"] for r in grouped["overall"]) == 2 * len(frame)  # the overall keeps every row


def test_prompts_file_gives_a_column_and_one_sharing_no_prompt_is_an_error(tmp_path):
    rows = [(f"p{i}", a, b, float((i + len(a)) % 2), None) for i in range(8) for a, b in (("m0", "m1"), ("m1", "m2"))]
    path = _table(tmp_path / "t.jsonl", rows)
    prompts = tmp_path / "prompts.csv"
    pd.DataFrame({"prompt_id": [f"p{i}" for i in range(8)], "level": ["easy", "hard"] * 4}).to_csv(prompts, index=False)
    grouped = cli_json("rank", path, "--by", "level", "--prompts", prompts, "--json")
    frame = pd.read_json(path, lines=True)
    for level, parity in (("easy", 0), ("hard", 1)):
        rows_of = frame[frame["prompt_id"].str[1:].astype(int) % 2 == parity]
        assert sum(r["n"] for r in grouped["groups"][level]) == 2 * len(rows_of)
    other = tmp_path / "other.csv"
    pd.DataFrame({"prompt_id": ["zz"], "level": ["easy"]}).to_csv(other, index=False)
    res = run_cli("rank", path, "--by", "level", "--prompts", other)
    assert res.returncode == 2 and "none of the 8 prompts of the judgments is in this prompts table" in res.stderr
