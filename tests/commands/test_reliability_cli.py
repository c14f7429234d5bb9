"""`judgewise select`, `reliability` and `study` in a real subprocess, on canonical tables and real JudgeBench."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgewise.analysis.reliability import get_metric
from judgewise.cli.app import main
from tests.support import cli_json, run_cli


def run_here(capsys, *args) -> tuple[int, str, str]:
    """Run the CLI entry point in this process (same code path as the console script); (exit code, out, err)."""
    capsys.readouterr()
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def json_here(capsys, *args):
    code, out, err = run_here(capsys, *args)
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def tables(tmp_path):
    """A canonical scores CSV (3 judges) and a separate human CSV on 60 items."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=60)
    items = [f"q{i:02d}" for i in range(60)]
    judges = {f"judge-{j}": z + rng.normal(scale=0.5 + 0.2 * j, size=60) for j in range(3)}
    human = z + rng.normal(scale=0.4, size=60)
    rows = [{"item_id": i, "rater": r, "score": float(s)} for r, v in judges.items() for i, s in zip(items, v)]
    scores = tmp_path / "scores.csv"
    pd.DataFrame(rows).to_csv(scores, index=False)
    human_path = tmp_path / "human.csv"
    pd.DataFrame({"item_id": items, "rater": "ann", "score": human}).to_csv(human_path, index=False)
    return scores, human_path, judges, human, items


def test_select_prints_budget_distinct_ids_and_is_seeded(tables):
    scores, _, _, _, items = tables
    res = run_cli("select", scores, "--target", "judge-0", "--budget", "12", "--metric", "rho", "--seed", "3")
    assert res.returncode == 0, res.stderr
    ids = res.stdout.split()
    assert len(ids) == 12 == len(set(ids)) and set(ids) <= set(items)
    again = cli_json("select", scores, "--target", "judge-0", "--budget", "12", "--metric", "rho", "--seed", "3",
                     "--json")
    assert again["items"] == ids and again["method"] == "metric-match" and again["n_pool"] == 60


def test_reliability_on_selected_items_equals_the_metric_on_those_items(tables, tmp_path, capsys):
    scores, human, judges, human_scores, items = tables
    selected = json_here(capsys, "select", scores, "--target", "judge-1", "--budget", "20", "--metric", "tau", "--json")
    picked = tmp_path / "picked.json"
    picked.write_text(json.dumps(selected))
    got = json_here(capsys, "reliability", scores, "--human", human, "--target", "judge-1", "--metric", "tau,icc",
                   "--items", picked, "--json")
    pos = [items.index(i) for i in selected["items"]]
    assert got["n_items"] == 20 and got["scope"] == "selected"
    assert got["values"]["tau"] == pytest.approx(get_metric("tau")(judges["judge-1"][pos], human_scores[pos]))
    population = json_here(capsys, "reliability", scores, "--human", human, "--target", "judge-1", "--json")
    assert population["scope"] == "population" and population["n_items"] == 60
    assert population["values"]["icc"] == pytest.approx(get_metric("icc")(judges["judge-1"], human_scores))


def test_study_json_has_the_tables_the_report_reads(tables, capsys):
    scores, human, _, _, _ = tables
    out = json_here(capsys, "study", scores, "--human", human, "--budgets", "5:15:5", "--trials", "6", "--metrics",
                   "rho,alpha", "--methods", "metric-match", "--json")
    assert out["settings"]["targets"] == ["judge-0", "judge-1", "judge-2"]
    assert {e["budget"] for e in out["errors"]} == {5, 10, 15}
    assert {"improvement", "macro", "macro_lo", "micro", "savings"} <= set(out["headline"])
    assert len(out["per_target"]) == 3 * 2


@pytest.mark.parametrize("args, message", [
    (["--target", "judge-9"], "'judge-9' is not a judge in these scores"),
    (["--target", "judge-0", "--budget", "61"], "budget 61 is larger than the pool of 60 items"),
    (["--target", "judge-0", "--metric", "kripp"], "unknown reliability metric 'kripp'"),
])
def test_select_bad_inputs_are_one_line_errors(tables, args, message, capsys):
    code, _, err = run_here(capsys, "select", tables[0], *args)
    assert code == 2 and message in " ".join(err.split())


def test_bad_input_in_a_real_process_is_one_line_without_traceback(tables):
    res = run_cli("reliability", tables[0], "--target", "judge-0")
    assert res.returncode == 2 and "--human" in res.stderr and "Traceback" not in res.stderr


def test_study_with_a_rater_missing_items_is_a_clear_error(tables, tmp_path, capsys):
    scores, human, *_ = tables
    frame = pd.read_csv(scores)
    frame = frame[~((frame["rater"] == "judge-2") & (frame["item_id"] == "q07"))]
    holey = tmp_path / "holey.csv"
    frame.to_csv(holey, index=False)
    code, _, err = run_here(capsys, "study", holey, "--human", human, "--target", "judge-0", "--budgets", "5",
                            "--trials", "2")
    assert code == 2 and "rater 'judge-2' has no score for 1 of 60 items" in " ".join(err.split())


def test_judgebench_study_runs_in_one_command_with_the_label_as_human(shared, capsys):
    out = json_here(capsys, "study", shared / "data/judgebench", "--target", "o1-mini", "--target", "internlm2-20b",
                   "--budgets", "10,30", "--trials", "5", "--metrics", "rho", "--json")
    assert out["settings"]["targets"] == ["o1-mini-2024-09-12", "internlm/internlm2-20b-reward"]
    assert out["settings"]["n_items"]["o1-mini-2024-09-12"] == 350
    population = {p["target"]: p["population"] for p in out["population"]}
    assert 0 < population["internlm/internlm2-20b-reward"] < population["o1-mini-2024-09-12"] < 1


def _icc3k(x, y) -> float:
    """ICC(3,k) of two raters from the two-way ANOVA mean squares (Shrout & Fleiss; Metric Match App. A)."""
    m = np.column_stack([x, y]).astype(float)
    n, k = m.shape
    grand = m.mean()
    ss_rows = k * ((m.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((m.mean(axis=0) - grand) ** 2).sum()
    ss_err = ((m - grand) ** 2).sum() - ss_rows - ss_cols
    ms_rows, ms_err = ss_rows / (n - 1), ss_err / ((n - 1) * (k - 1))
    return (ms_rows - ms_err) / ms_rows


def test_reliability_on_items_selected_for_bias_correction_applies_the_bias_correction(tables, tmp_path):
    # Metric Match §3.3: rho = rho_IM(all items) + rho_S - rho_IM(S), the inter-model term the mean ICC of the
    # target with each other judge. Before, `reliability --items` reported the plain rho_S whatever select chose.
    scores, human_path, judges, human, items = tables
    sel = tmp_path / "sel.json"
    res = run_cli("select", scores, "--target", "judge-0", "--budget", "15", "--method", "bias-correction",
                  "--seed", "2", "--json", "--output", sel)
    assert res.returncode == 0, res.stderr
    chosen = [items.index(i) for i in json.loads(sel.read_text())["items"]]
    t, others = judges["judge-0"], [judges["judge-1"], judges["judge-2"]]
    plain = _icc3k(t[chosen], human[chosen])
    corrected = (np.mean([_icc3k(t, o) for o in others]) + plain
                 - np.mean([_icc3k(t[chosen], o[chosen]) for o in others]))
    out = cli_json("reliability", scores, "--human", human_path, "--target", "judge-0", "--items", sel, "--json")
    assert out["estimator"] == "bias-correction" and "bias-correction" in out["estimator_source"]
    assert out["values"]["icc"] == pytest.approx(corrected, abs=1e-12)
    assert out["plain_values"]["icc"] == pytest.approx(plain, abs=1e-12)
    override = cli_json("reliability", scores, "--human", human_path, "--target", "judge-0", "--items", sel,
                        "--estimator", "plain", "--json")
    assert override["values"]["icc"] == pytest.approx(plain, abs=1e-12) and override["estimator"] == "plain"
