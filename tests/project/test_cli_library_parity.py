"""The CLI prints what the library computes: each command's figures equal its library function's, and those equal
the one definition underneath (rating, failed-game rule, reliability metric, sign-test size), so a second copy of a
computation in the CLI, or a library wrapper that drifts from the definition, fails here."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from judgewise.cli.app import main
from judgewise.commands.tables import fmt_num
from judgewise.commands.text import json_text
from tests.support.bad_inputs.inputs import judgments, jsonl, store, write
from tests.support import REPO


def json_here(capsys, *args):
    """Run the CLI entry point in this process; its stdout parsed as JSON (exit code 0 asserted)."""
    capsys.readouterr()
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        assert not exc.code, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _same(a, b) -> bool:
    """Equal JSON values, floats to 1e-12 (recursively)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def _close(a, b) -> None:
    """Records equal as JSON, floats to 1e-12."""
    a, b = json.loads(json_text(a)), json.loads(json_text(b))
    assert _same(a, b), (a, b)


def _with_failed(rows: list[dict]) -> list[dict]:
    """``rows`` plus two failed games (no outcome, an error), which no ranking may use."""
    failed = [{**rows[0], "outcome": None, "error": "HTTP 500", "status": "failed"},
              {**rows[1], "outcome": None, "error": "unparseable verdict", "status": "failed"}]
    return rows + failed


@pytest.mark.parametrize("method", ["bt", "winrate", "elo"])
def test_rank_cli_prints_the_ranking_of_the_library_on_the_rows_it_reads(tmp_path, capsys, method):
    from judgewise.commands.ranking import RankOptions, rank_path
    from judgewise.ratings import rank

    rows = judgments(6)
    path = write(tmp_path, "j.jsonl", jsonl(rows))
    anchor = ["--anchor", "alpha"] if method == "winrate" else []
    printed = json_here(capsys, "rank", path, "--method", method, "--bootstrap", "20", "--seed", "3", "--json",
                        *anchor)
    ranked = rank_path(path, RankOptions(method=method, bootstrap=20, seed=3,
                                   anchor="alpha" if method == "winrate" else None))
    direct = rank(pd.DataFrame(rows), method, bootstrap=20, seed=3, anchor="alpha" if method == "winrate" else None)
    _close(printed, ranked.ranking.to_records())
    _close(printed, direct.to_records())


def test_ranking_a_store_leaves_failed_games_out_and_counts_them_as_skipped(tmp_path, capsys):
    from judgewise.commands.ranking import RankOptions, rank_path
    from judgewise.ratings import rank

    rows = judgments(5)
    path = store(tmp_path, _with_failed(rows))
    printed = json_here(capsys, "rank", path, "--json")
    ranked = rank_path(path)
    expected = rank(pd.DataFrame(rows).assign(judge="j"), "bt").to_records()
    _close(printed, expected)
    _close(ranked.ranking.to_records(), expected)
    assert (ranked.report.rows_read, ranked.report.rows_skipped) == (len(rows) + 2, 2)


def test_a_file_and_the_store_holding_the_same_games_rank_the_same(tmp_path, capsys):
    rows = judgments(5)
    from_store = json_here(capsys, "rank", store(tmp_path, _with_failed(rows)), "--json")
    from_file = json_here(capsys, "rank", write(tmp_path, "j.jsonl", jsonl(_with_failed(rows))), "--json")
    _close(from_store, from_file)


def test_usable_judgments_is_the_rule_rank_applies(tmp_path):
    from judgewise.store.reading import read_rated, usable_judgments

    rows = _with_failed(judgments(3))
    frame = pd.DataFrame(rows)
    kept = usable_judgments(frame)
    assert len(kept) == len(rows) - 2 and kept["outcome"].notna().all()
    rated, _ = read_rated(write(tmp_path, "j.jsonl", jsonl(rows)))
    assert len(rated) == len(kept)


def test_agree_cli_prints_agreement_of_files(tmp_path, capsys):
    from judgewise.commands.ranking import agreement_of_files
    from judgewise.ratings.agreement import agreement

    a = write(tmp_path, "a.json", json.dumps({"x": 3.0, "y": 2.0, "z": 1.0, "only_a": 0.0}))
    b = write(tmp_path, "b.json", json.dumps({"x": 2.5, "y": 2.9, "z": 0.1}))
    printed = json_here(capsys, "agree", a, b, "--json")
    assert printed == agreement_of_files(a, b)
    assert printed["kendall_tau_b"] == pytest.approx(agreement([3.0, 2.0, 1.0], [2.5, 2.9, 0.1]).as_dict()
                                                     ["kendall_tau_b"])
    assert printed["only_in_a"] == ["only_a"]


def test_diagnose_cli_prints_the_diagnosis_of_the_library(tmp_path, capsys):
    from judgewise.analysis.diagnostics import diagnose
    from judgewise.io.provenance import label_judges
    from judgewise.commands.diagnosis import diagnose_path

    rows = [{**r, "first": r["model_a"] if k % 3 else r["model_b"]} for k, r in enumerate(judgments(6))]
    path = write(tmp_path, "j.jsonl", jsonl(rows))
    printed = json_here(capsys, "diagnose", path, "--json", "--no-style-control")
    result, table = diagnose_path(path, style_control=False)
    direct = diagnose(label_judges(pd.DataFrame(rows)), style_control=False)
    printed.pop("read")
    for other in (result, direct):
        assert json.loads(json.dumps(other.as_dict(), default=str)) == printed


@pytest.fixture
def scores_csv(tmp_path):
    """Three judges and a human on 40 items (canonical scores table)."""
    rng = np.random.default_rng(1)
    z = rng.normal(size=40)
    raters = {"human": z, **{f"judge-{j}": z + rng.normal(scale=0.4 + 0.3 * j, size=40) for j in range(3)}}
    frame = pd.DataFrame([{"item_id": f"q{i:02d}", "rater": r, "score": float(v[i])}
                          for r, v in raters.items() for i in range(40)])
    path = tmp_path / "scores.csv"
    frame.to_csv(path, index=False)
    return path, raters


def test_select_and_reliability_cli_print_the_library_figures(tmp_path, capsys, scores_csv):
    from judgewise.commands.human_validation import reliability_of_files, select_items
    from judgewise.analysis.reliability import get_metric

    path, raters = scores_csv
    chosen = json_here(capsys, "select", path, "--target", "judge-0", "--budget", "12", "--seed", "5", "--json")
    assert chosen == json.loads(json_text(select_items(path, "judge-0", 12, seed=5)))
    items = write(tmp_path, "items.json", json.dumps(chosen))
    printed = json_here(capsys, "reliability", path, "--target", "judge-0", "--metric", "icc,tau", "--items", items,
                        "--json")
    assert printed == json.loads(json_text(reliability_of_files(path, "judge-0", ["icc", "tau"], items=items)))
    idx = [int(i[1:]) for i in chosen["items"]]
    for name in ("icc", "tau"):
        direct = get_metric(name)(raters["judge-0"][idx], raters["human"][idx])
        assert printed["values"][name] == pytest.approx(direct, rel=1e-12)
    assert printed["scope"] == "selected" and printed["n_items"] == 12


def test_power_sign_cli_prints_the_library_sample_size(capsys):
    from judgewise.commands.design_studies import sign_test_table
    from judgewise.analysis.power import sign_test_sample_size

    printed = json_here(capsys, "power", "sign", "--win-rate", "0.6", "--tie-rate", "0.2", "--json")
    assert printed == json.loads(json_text(sign_test_table([0.6], [0.2]).as_dict()))
    direct = sign_test_sample_size(0.6, 0.2, 0.05, 0.8, "normal")
    assert (printed["n_informative"], printed["n_total"]) == (direct.n_informative, direct.n_total)


def test_power_wilcoxon_cli_prints_the_power_of_the_library_pools(capsys):
    from judgewise.commands.design_studies import wilcoxon_pools
    from judgewise.analysis.power import wilcoxon_power

    spec = "-1:0.2,0:0.5,1:0.3"
    printed = json_here(capsys, "power", "wilcoxon", "--distribution", spec, "--n", "20,40", "--simulations", "60",
                        "--seed", "2", "--json")
    pools = wilcoxon_pools(distribution=spec)
    direct = wilcoxon_power(pools, [20.0, 40.0], 0.05, 0.8, 60, np.random.default_rng(2))
    _close(printed, direct.as_dict())


def test_anchors_cli_prints_the_library_reports(tmp_path, capsys):
    from judgewise.analysis.anchor_selection import report_from_judgments
    from judgewise.commands.design_studies import anchor_reports_of_file
    from tests.support.bad_inputs.inputs import anchored

    rows = anchored(8)
    path = write(tmp_path, "a.jsonl", jsonl(rows))
    printed = json_here(capsys, "anchors", path, "--anchor", "anchor", "--json")
    assert printed == json.loads(json_text(anchor_reports_of_file(path, "anchor").as_dict()))
    direct = report_from_judgments(pd.DataFrame(rows), "anchor").as_dict()
    assert printed["anchors"][0] == json.loads(json_text(direct))


@pytest.mark.parametrize("value, digits, grouping, text", [
    (None, 3, False, "—"), (math.nan, 3, False, "—"), (0.12345, 3, False, "0.123"), (1544.456, 1, False, "1544.5"),
    (1544.456, 2, True, "1,544.46"), (1000.0, 2, True, "1,000.00"), (676, 0, True, "676"), (12.0, 0, True, "12"),
    (np.float64(0.5), 4, False, "0.5000"), (None, 2, True, "—")])
def test_fmt_num_is_the_one_cli_number_format(value, digits, grouping, text):
    assert fmt_num(value, digits, grouping=grouping) == text


def test_cli_has_no_private_number_formatter_or_store_reader():
    """One definition: the CLI modules call commands.tables.fmt_num and store.reading, and never read stores themselves."""
    for path in sorted((REPO / "src" / "judgewise" / "cli").glob("*.py")):
        text = path.read_text()
        assert "def _fmt" not in text, path
        assert "store_adapter" not in text and "load_store" not in text, path
        assert "from judgewise.cli.judge_cmd import _" not in text, path
