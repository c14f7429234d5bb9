"""``judgewise report --panel``: the leaderboard and sections on a panel's derived verdicts, the panel's lines shown."""

from __future__ import annotations

import pandas as pd
import pytest

from judgewise.analysis.panel import panel_verdicts
from judgewise.errors import ConfigError
from judgewise.ratings import rank
from judgewise.report import ReportOptions, build_report
from tests.support import REPO, run_cli

PANEL_FILE = REPO / "examples" / "panels" / "three-judges.jsonl"
MEMBERS = "position,length,hedger"


def test_report_panel_writes_one_html_file_that_says_it_is_a_panel(tmp_path):
    res = run_cli("report", PANEL_FILE, "--panel", MEMBERS, "--bootstrap", "0", "-o", tmp_path / "r.html")
    assert res.returncode == 0, res.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "panel (majority of labels) of 3 judges: position (168 verdicts)" in html
    assert "members&#39; agreement: Fleiss&#39; κ" in html or "members' agreement: Fleiss' κ" in html
    assert "panel(majority: position, length, hedger)" in html


def test_report_panel_leaderboard_is_the_panels_ranking():
    panel = panel_verdicts(pd.read_json(PANEL_FILE, lines=True), MEMBERS.split(","), "mean")
    expected = rank(panel.judgments, "bt", bootstrap=0)
    sections = build_report(PANEL_FILE, options=ReportOptions(panel=MEMBERS, panel_rule="mean", bootstrap=0))
    board = next(s for s in sections if s.key == "leaderboard").tables[0]
    assert [row[1] for row in board.rows] == [expected.models[i] for i in expected.order()]
    summary = next(s for s in sections if s.key == "summary")
    assert any(p.startswith("panel (mean outcome) of 3 judges") for p in summary.paragraphs)
    assert ("Judge", "panel(mean: position, length, hedger)") in summary.facts


def test_report_without_panel_still_refuses_several_judges(tmp_path):
    res = run_cli("report", PANEL_FILE, "-o", tmp_path / "r.html")
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert res.returncode != 0 and len(errors) == 1 and "3 different judges" in errors[0]
    assert not (tmp_path / "r.html").exists()


def test_report_panel_excludes_pooling_judges():
    with pytest.raises(ConfigError, match="excludes --judge and --pool-judges"):
        build_report(PANEL_FILE, options=ReportOptions(panel=MEMBERS, pool_judges=True))
