"""Judge provenance: ``rank``, ``report``, ``diagnose`` and ``ratings.rank`` never pool different judges silently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.support import REPO, cli_json, run_cli

SLICE = REPO / "examples" / "alpacaeval"
MAIN = "weighted_alpaca_eval_gpt4_turbo"


def _one_error_line(res) -> str:
    assert res.returncode != 0, res.stdout
    assert "Traceback" not in res.stderr, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


@pytest.fixture
def two_annotators(tmp_path) -> Path:
    """AlpacaEval results of claude-2 and alpaca-7b; claude-2 also judged by a second annotator who reverses
    every preference (the issue's reproduction: its win rate jumped from 17.19 to 50+ with no word)."""
    root = tmp_path / "ae"
    for model in ("claude-2", "alpaca-7b"):
        shutil.copytree(SLICE / "results" / model, root / "results" / model)
    other = root / "results" / "claude-2" / "reversed_judge"
    shutil.copytree(root / "results" / "claude-2" / MAIN, other)
    records = json.loads((other / "annotations.json").read_text())
    for rec in records:
        if rec.get("preference") is not None:
            rec["preference"] = 3 - rec["preference"]
    (other / "annotations.json").write_text(json.dumps(records))
    return root


def test_rank_refuses_two_alpacaeval_annotators_and_lists_them_with_row_counts(two_annotators):
    line = _one_error_line(run_cli("rank", two_annotators, "--method", "winrate"))
    assert '"reversed_judge" (805 rows)' in line and f'"{MAIN}" (1,610 rows)' in line
    assert "--judge NAME" in line and "--pool-judges" in line


def test_rank_judge_keeps_one_annotator_and_counts_the_others_rows_as_skipped(two_annotators):
    res = run_cli("rank", two_annotators, "--method", "winrate", "--judge", MAIN, "--json")
    assert res.returncode == 0, res.stderr
    by_model = {r["model"]: r for r in json.loads(res.stdout)}
    leaderboard = pd.read_csv(SLICE / "leaderboard.csv").set_index("model")
    assert by_model["claude-2"]["score"] == pytest.approx(leaderboard.loc["claude-2", "win_rate"], abs=1e-6)
    assert by_model["claude-2"]["n"] == 805
    assert "read 2,415 rows" in res.stderr and "used 1,610, skipped 805" in res.stderr
    assert 'rows of judges other than "weighted_alpaca_eval_gpt4_turbo" (--judge)' in res.stderr


def test_rank_pool_judges_pools_on_request_and_says_so(two_annotators):
    res = run_cli("rank", two_annotators, "--method", "winrate", "--pool-judges")
    assert res.returncode == 0, res.stderr
    assert f'judges pooled (--pool-judges): "reversed_judge" (805 rows), "{MAIN}" (1,610 rows)' in res.stdout
    assert "used 2,415, skipped 0" in res.stdout


def test_rank_judge_and_pool_judges_together_is_an_error(two_annotators):
    line = _one_error_line(run_cli("rank", two_annotators, "--judge", MAIN, "--pool-judges"))
    assert "exclude each other" in line


def test_rank_unknown_judge_lists_the_judges_found(two_annotators):
    line = _one_error_line(run_cli("rank", two_annotators, "--method", "winrate", "--judge", "gpt-5"))
    assert 'judge "gpt-5" is not in the judgments' in line and '"reversed_judge" (805 rows)' in line


def _canonical(path: Path, judges: dict[str, float]) -> Path:
    """A canonical JSONL table: every judge judges m1 vs m2 on 10 prompts; m1 wins with each judge's rate."""
    rows = [{"prompt_id": f"p{i}", "model_a": "m1", "model_b": "m2", "judge": judge,
             "outcome": 1.0 if i < 10 * rate else 0.0} for judge, rate in judges.items() for i in range(10)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_rank_refuses_a_canonical_table_with_two_judge_values(tmp_path):
    path = _canonical(tmp_path / "j.jsonl", {"judge-a": 0.8, "judge-b": 0.2})
    line = _one_error_line(run_cli("rank", path))
    assert '"judge-a" (10 rows), "judge-b" (10 rows)' in line
    records = cli_json("rank", path, "--judge", "judge-b", "--method", "winrate", "--anchor", "m2", "--json")
    assert {r["model"]: r["score"] for r in records}["m1"] == pytest.approx(20.0)


def test_rank_of_one_judge_is_unchanged(tmp_path):
    path = _canonical(tmp_path / "j.jsonl", {"judge-a": 0.8})
    res = run_cli("rank", path, "--method", "winrate", "--anchor", "m2", "--json")
    assert res.returncode == 0, res.stderr
    assert "used 10, skipped 0" in res.stderr and "pooled" not in res.stderr


class _Versioned:
    """The simulated judge under one judge name with a given template version and template text hash."""

    def __init__(self, truth: dict, version: str, sha: str):
        from judgewise.judges.simulated import SimulatedJudge

        self.sim = SimulatedJudge(truth)
        self.identity = {**self.sim.identity, "name": "house-judge", "template": "pairwise",
                         "template_version": version, "template_sha": sha}

    async def judge(self, game):
        return await self.sim.judge(game)


def _store(tmp_path: Path, versions: list[tuple[str, str]]) -> Path:
    from judgewise.judges.base import Comparison
    from judgewise.judges.runner import run_judging

    truth = {"m1": 900, "m2": 1000, "m3": 1100}
    comps = [Comparison(f"p{i}", f"question {i}", a, b, f"{a} says {i}", f"{b} says {i}")
             for i in range(10) for a, b in (("m1", "m2"), ("m1", "m3"), ("m2", "m3"))]
    store = tmp_path / "judgments.sqlite"
    for version, sha in versions:
        run_judging(comps, _Versioned(truth, version, sha), store)
    return store


def test_rank_refuses_a_store_holding_two_template_versions_of_one_judge_name(tmp_path):
    store = _store(tmp_path, [("1", "a" * 16), ("2", "b" * 16)])
    line = _one_error_line(run_cli("rank", store))
    assert "2 different judges" in line and "template pairwise@1" in line and "template pairwise@2" in line
    assert '"house-judge#aaaaaaaa" (60 rows' in line and '"house-judge#bbbbbbbb" (60 rows' in line
    ambiguous = _one_error_line(run_cli("rank", store, "--judge", "house-judge"))
    assert 'judge "house-judge" ran with 2 different identities' in ambiguous
    res = run_cli("rank", store, "--judge", "house-judge#bbbbbbbb", "--json")
    assert res.returncode == 0, res.stderr
    assert "read 120 rows" in res.stderr and "used 60, skipped 60" in res.stderr


def test_rank_refuses_a_store_whose_template_text_changed_without_a_new_version(tmp_path):
    store = _store(tmp_path, [("1", "c" * 16), ("1", "d" * 16)])
    line = _one_error_line(run_cli("rank", store))
    assert "template sha cccccccc" in line and "template sha dddddddd" in line


def test_library_rank_refuses_mixed_judges_unless_one_is_chosen_or_pooling_is_asked():
    from judgewise.errors import ConfigError
    from judgewise.ratings import rank

    frame = pd.DataFrame({"prompt_id": [f"p{i}" for i in range(8)], "model_a": "m1", "model_b": "m2",
                          "judge": ["a"] * 4 + ["b"] * 4, "outcome": [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]})
    with pytest.raises(ConfigError, match=r'"a" \(4 rows\), "b" \(4 rows\)'):
        rank(frame, "winrate", anchor="m2")
    one = rank(frame, "winrate", anchor="m2", judge="a")
    assert one.scores[one.models.index("m1")] == pytest.approx(75.0)
    assert one.info["judge_rows_dropped"] == 4
    pooled = rank(frame, "winrate", anchor="m2", pool_judges=True)
    assert pooled.scores[pooled.models.index("m1")] == pytest.approx(50.0)


def test_report_refuses_mixed_judges_without_writing_and_reports_the_chosen_judge(two_annotators, tmp_path):
    out = tmp_path / "report.html"
    line = _one_error_line(run_cli("report", two_annotators, "-o", out, "--bootstrap", "0"))
    assert '"reversed_judge" (805 rows)' in line and not out.exists()
    res = run_cli("report", two_annotators, "-o", out, "--bootstrap", "0", "--judge", MAIN)
    assert res.returncode == 0, res.stderr
    html = out.read_text()
    assert "skipped 805" in html and "reversed_judge" not in html.split("Leaderboard", 1)[-1][:5000]


def test_diagnose_keeps_two_templates_under_one_judge_name_apart(tmp_path):
    store = _store(tmp_path, [("1", "a" * 16), ("2", "b" * 16)])
    out = cli_json("diagnose", store, "--json", "--no-style-control")
    assert sorted(j["judge"] for j in out["judges"]) == ["house-judge#aaaaaaaa", "house-judge#bbbbbbbb"]
    assert all(j["n_judgments"] == 60 for j in out["judges"])
    one = cli_json("diagnose", store, "--json", "--no-style-control", "--judge", "house-judge#aaaaaaaa")
    assert [j["judge"] for j in one["judges"]] == ["house-judge"]  # one identity left: its plain name
    assert one["read"]["rows_skipped"] == 60
