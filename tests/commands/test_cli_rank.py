"""``judgewise rank`` and ``judgewise agree`` in a real subprocess: acceptance 1 and 2, output file, agreement."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from tests.support import REPO, cli_json, run_cli

SLICE = REPO / "examples" / "alpacaeval"


def _slice_rows() -> int:
    return sum(len(json.loads(f.read_text())) for f in SLICE.glob("results/*/*/annotations.json"))


def _assert_matches_leaderboard(records: list[dict], leaderboard: pd.DataFrame) -> None:
    by_model = {r["model"]: r for r in records}
    for row in leaderboard.itertuples():
        got = by_model[row.model]
        assert got["score"] == pytest.approx(row.win_rate, abs=1e-6), row.model
        assert got["se"] == pytest.approx(row.standard_error, abs=1e-6), row.model


def test_rank_winrate_reproduces_the_alpacaeval_leaderboard_for_all_28_models(shared):
    """Acceptance 1: win_rate and standard_error of leaderboard.csv to 1e-6, from the raw results directory."""
    root = shared / "data" / "alpacaeval"
    records = cli_json("rank", root, "--method", "winrate", "--json")
    leaderboard = pd.read_csv(root / "leaderboard.csv")
    assert len(leaderboard) == 28
    _assert_matches_leaderboard(records, leaderboard)
    assert {"model", "score", "ci_low", "ci_high", "rank", "n", "se"} <= set(records[0])


def test_rank_bt_on_arenahard_battles_matches_fastchat_reference(shared, tmp_path):
    """Acceptance 2: FastChat's BT (Elo scale) within 0.01 for every model; then ``agree`` on the two files."""
    reference_file = shared / "reference" / "arenahard_battles_fastchat.json"
    reference = json.loads(reference_file.read_text())["bt_elo_scale"]
    out = tmp_path / "bt.json"
    records = cli_json("rank", shared / "data" / "arenahard" / "battles.jsonl", "--method", "bt", "--json",
                       "--output", out)
    got = {r["model"]: r["score"] for r in records}
    assert set(got) == set(reference)
    for model, rating in reference.items():
        assert got[model] == pytest.approx(rating, abs=0.01), model
    agreement = cli_json("agree", out, reference_file, "--json")  # finds the map nested under bt_elo_scale
    assert agreement["n_items"] == 5 and agreement["kendall_tau_b"] == pytest.approx(1.0)
    assert agreement["kendall_distance"] == 0.0


def test_rank_winrate_on_the_shipped_slice_matches_its_leaderboard_rows(tmp_path):
    out = tmp_path / "ranking.json"
    res = run_cli("rank", SLICE, "--method", "winrate", "--json", "--output", out)
    assert res.returncode == 0, res.stderr
    records = json.loads(res.stdout)
    assert json.loads(out.read_text()) == records  # --output writes exactly what --json prints
    _assert_matches_leaderboard(records, pd.read_csv(SLICE / "leaderboard.csv"))
    assert f"read {_slice_rows():,} rows" in res.stderr and "skipped 0" in res.stderr


def test_rank_table_labels_the_interval_level_and_reports_rows(tmp_path):
    res = run_cli("rank", SLICE, "--method", "bt", "--bootstrap", "50", "--ci-level", "0.9", "--seed", "3")
    assert res.returncode == 0, res.stderr
    assert "90% CI" in res.stdout and "50 rounds over prompts (seed 3)" in res.stdout
    assert f"used {_slice_rows():,}, skipped 0" in res.stdout
    assert all(name in res.stdout for name in ("NullModel", "alpaca-7b_verbose", "gpt4_1106_preview"))


def test_failed_rank_leaves_an_existing_output_file_untouched(tmp_path):
    out = tmp_path / "ranking.json"
    out.write_text("previous results\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt_id": "p", "model_a": "x", "model_b": "y", "judge": "j", "outcome": 2}\n')
    res = run_cli("rank", bad, "--json", "--output", out)
    assert res.returncode != 0
    assert out.read_text() == "previous results\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "ranking.json"]


def test_agree_matches_scipy_on_two_score_maps(tmp_path):
    a = {"m1": 3.0, "m2": 1.0, "m3": 2.0, "m4": 0.5, "only_a": 9.0}
    b = [{"model": "m1", "score": 10.0}, {"model": "m2", "score": 12.0}, {"model": "m3", "score": 5.0},
         {"model": "m4", "score": 1.0}]
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    got = cli_json("agree", tmp_path / "a.json", tmp_path / "b.json", "--json")
    x, y = [3.0, 1.0, 2.0, 0.5], [10.0, 12.0, 5.0, 1.0]
    assert got["n_items"] == 4 and got["only_in_a"] == ["only_a"] and got["only_in_b"] == []
    assert got["kendall_tau_b"] == pytest.approx(stats.kendalltau(x, y).statistic)
    assert got["spearman_rho"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert got["pearson_r"] == pytest.approx(stats.pearsonr(x, y).statistic)
    assert got["kendall_distance"] == pytest.approx((1 - stats.kendalltau(x, y).statistic) / 2)  # no ties


class _TimesOutOnFirstPrompt:
    """The simulated judge, except that every game of prompt p0 exhausts its retries (a failed game)."""

    def __init__(self, ratings: dict):
        from judgewise.judges.simulated import SimulatedJudge

        self.sim = SimulatedJudge(ratings)
        self.identity = self.sim.identity

    async def judge(self, game):
        from judgewise.judges.base import RetryableCallError

        if game.comparison.prompt_id == "p0":
            raise RetryableCallError("timed out after 3 tries")
        return await self.sim.judge(game)


def test_rank_reads_a_judging_store_and_counts_its_failed_games_as_skipped(tmp_path):
    from judgewise.judges.base import Comparison
    from judgewise.judges.runner import run_judging

    truth = {"m1": 900, "m2": 1000, "m3": 1100}
    comps = [Comparison(f"p{i}", f"question {i}", a, b, f"{a} says {i}", f"{b} says {i}")
             for i in range(20) for a, b in (("m1", "m2"), ("m1", "m3"), ("m2", "m3"))]
    store = tmp_path / "judgments.sqlite"
    result = run_judging(comps, _TimesOutOnFirstPrompt(truth), store)
    assert result.failed == 6 and result.judged == 114  # p0: 3 pairs × 2 orders
    before = store.read_bytes()
    res = run_cli("rank", store, "--json")
    assert res.returncode == 0, res.stderr
    assert store.read_bytes() == before  # read-only
    assert f"read 120 rows from {store} [store]: used 114, skipped 6" in res.stderr
    assert 'field "error": judge call failed ("timed out after 3 tries")' in res.stderr
    records = json.loads(res.stdout)
    assert [r["model"] for r in records] == sorted(truth, key=truth.get, reverse=True)
    exported = tmp_path / "judgments.jsonl"  # the same games through `store export` and the file reader
    assert run_cli("store", "export", store, "--output", exported).returncode == 0
    assert cli_json("rank", exported, "--json") == records


def test_rank_rates_judgebench_outputs_without_their_unparseable_games(tmp_path):
    """JudgeBench keeps an unparseable game (error set, no outcome) and counts it skipped; rank must not rate it."""
    verdicts = ["[[A>B]]", "[[B>A]]", "[[A>>B]]", "no verdict at all", "[[A=B]]", "[[B>>A]]"]
    records = [{"pair_id": f"p{k}", "label": "A>B", "judge_name": "arena_hard", "response_model": "m",
                "response_A": "a", "response_B": "b", "question": "q",
                "judgments": [{"judgment": {"judge_model": "j", "response": verdicts[2 * k + order]}}
                              for order in (0, 1)]} for k in range(3)]
    path = tmp_path / "response_model-m__judge_name-arena_hard__judge_model-j.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    res = run_cli("rank", path, "--method", "winrate", "--anchor", "B", "--json")
    assert res.returncode == 0, res.stderr
    assert "read 6 rows" in res.stderr and "used 5, skipped 1" in res.stderr and "row 2 swapped order" in res.stderr
    # response_A's results: p0 1 and 1 (swapped, shown B = response_A wins), p1 1 (its swapped game unparseable),
    # p2 0.5 and 1
    by_model = {r["model"]: r for r in json.loads(res.stdout)}
    assert by_model["A"]["n"] == 5 and by_model["A"]["score"] == pytest.approx(100 * 4.5 / 5)


def _all_pairs_table(path: Path, models: list[str], n_prompts: int) -> Path:
    rows = [{"prompt_id": f"p{p}", "model_a": a, "model_b": b, "judge": "j", "outcome": [1.0, 0.0, 0.5][p % 3]}
            for p in range(n_prompts) for i, a in enumerate(models) for b in models[i + 1:]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_rank_winrate_counts_rows_without_the_anchor_as_skipped_with_the_reason(tmp_path):
    """All pairs of 4 models on 30 prompts = 180 rows; win rate against m0 uses its 90 and skips the other 90."""
    path = _all_pairs_table(tmp_path / "pairs.jsonl", ["m0", "m1", "m2", "m3"], 30)
    res = run_cli("rank", path, "--method", "winrate", "--anchor", "m0", "--json")
    assert res.returncode == 0, res.stderr
    assert "read 180 rows" in res.stderr and "used 90, skipped 90" in res.stderr
    assert "90 rows do not compare a model with the anchor m0 (win rate uses only those)" in res.stderr
    assert all(r["n"] == 30 for r in json.loads(res.stdout) if r["model"] != "m0")


def test_rank_output_that_is_a_directory_is_one_error_line_and_nothing_is_written(tmp_path):
    path = _all_pairs_table(tmp_path / "pairs.jsonl", ["m0", "m1", "m2"], 6)
    target = tmp_path / "out"
    target.mkdir()
    res = run_cli("rank", path, "--output", target)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert res.stderr.strip() == f"error: {target}: is a directory: --output expects a file name (e.g. ranking.json)"
    assert res.stdout == "" and list(target.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "pairs.jsonl"]  # no temporary file left either


def _separated_jsonl(path: Path) -> Path:
    """top wins every game; mid and low split theirs: the BT MLE does not exist."""
    rows = [("top", "mid", 1.0), ("mid", "top", 0.0), ("top", "low", 1.0), ("mid", "low", 1.0), ("low", "mid", 1.0)]
    pd.DataFrame([{"prompt_id": f"p{i}", "model_a": a, "model_b": b, "judge": "j", "outcome": o}
                  for i, (a, b, o) in enumerate(rows * 3)]).to_json(path, orient="records", lines=True)
    return path


def test_rank_and_report_fit_separated_data_with_the_reported_weak_prior_and_l2_0_refuses(tmp_path):
    data = _separated_jsonl(tmp_path / "sep.jsonl")
    res = run_cli("rank", data, "--method", "bt")
    assert res.returncode == 0, res.stderr
    assert "BT: data separated" in res.stdout and "l2=0.01" in res.stdout and "--l2 0" in res.stdout
    records = cli_json("rank", data, "--json")
    assert records[0]["model"] == "top"
    refused = run_cli("rank", data, "--l2", "0")
    assert refused.returncode != 0 and "MLE is infinite" in refused.stderr + refused.stdout
    explicit = cli_json("rank", data, "--l2", "0.5", "--json")
    assert explicit[0]["score"] < records[0]["score"]  # a stronger ridge shrinks the separated model more
    report = run_cli("report", data, "-o", tmp_path / "r.html", "--bootstrap", "20")
    assert report.returncode == 0, report.stderr
    assert run_cli("report", data, "-o", tmp_path / "r2.html", "--l2", "0.5").returncode == 0
