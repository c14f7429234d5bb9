"""``judgewise diagnose --panel``: the bias figures of a panel's derived verdicts, with the panel's lines."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judgewise.analysis.diagnostics import diagnose
from judgewise.analysis.panel import panel_verdicts
from judgewise.commands.diagnosis import diagnose_with_options
from judgewise.commands.options import DiagnoseOptions
from judgewise.errors import ConfigError
from tests.support import REPO, run_cli

PANEL_FILE = REPO / "examples" / "panels" / "three-judges.jsonl"
MEMBERS = "position,length,hedger"


def test_diagnose_panel_gives_the_figures_of_the_panels_derived_verdicts():
    panel = panel_verdicts(pd.read_json(PANEL_FILE, lines=True), MEMBERS.split(","))
    expected = diagnose(panel.judgments, None, style_control=False).judges[0].figures()
    res = run_cli("diagnose", PANEL_FILE, "--panel", MEMBERS, "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert [j["judge"] for j in out["judges"]] == ["panel(majority: position, length, hedger)"]
    got = out["judges"][0]["figures"]
    assert set(got) == set(expected)
    assert {k: v["estimate"] for k, v in got.items()} == pytest.approx({k: p.estimate for k, p in expected.items()})
    assert out["panel"]["members"] == MEMBERS.split(",") and out["panel"]["n_complete"] == panel.n_complete


def test_diagnose_panel_prints_the_panel_lines_as_rank_does():
    res = run_cli("diagnose", PANEL_FILE, "--panel", MEMBERS, "--panel-rule", "mean")
    assert res.returncode == 0, res.stderr
    assert "panel(mean: position, length, hedger)" in res.stdout
    assert "panel (mean outcome) of 3 judges: position (168 verdicts)" in res.stdout
    assert "members' agreement: Fleiss' κ" in res.stdout


def test_diagnose_without_panel_gives_figures_per_judge():
    out = json.loads(run_cli("diagnose", PANEL_FILE, "--json").stdout)
    assert sorted(j["judge"] for j in out["judges"]) == ["hedger", "length", "position"] and "panel" not in out


@pytest.mark.parametrize("options, message", [
    (DiagnoseOptions(panel=MEMBERS, judge="position"), "excludes --judge"),
    (DiagnoseOptions(panel=MEMBERS, panel_rule="weighted"), "--panel-reference"),
    (DiagnoseOptions(panel="position"), "two distinct"),
])
def test_diagnose_panel_refuses_contradicting_options(options, message):
    with pytest.raises(ConfigError, match=message):
        diagnose_with_options(PANEL_FILE, options)
