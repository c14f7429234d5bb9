"""``judgewise rank --panel``: a jury's derived verdicts ranked, members' agreement and gaps reported."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgewise.analysis.panel import panel_verdicts
from judgewise.commands.options import RankOptions
from judgewise.commands.ranking import rank_path
from judgewise.errors import ConfigError
from judgewise.ratings import rank
from tests.support import REPO, run_cli

PANEL_FILE = REPO / "examples" / "panels" / "three-judges.jsonl"
MEMBERS = "position,length,hedger"


def test_rank_panel_ranks_exactly_the_panels_derived_verdicts():
    frame = pd.read_json(PANEL_FILE, lines=True)
    expected = rank(panel_verdicts(frame, MEMBERS.split(",")).judgments, "bt")
    res = run_cli("rank", PANEL_FILE, "--panel", MEMBERS, "--json")
    assert res.returncode == 0, res.stderr
    got = {r["model"]: r["score"] for r in json.loads(res.stdout)}
    assert got == pytest.approx(dict(zip(expected.models, expected.scores)))
    assert "panel (majority of labels) of 3 judges" in res.stderr
    assert "members' agreement: Fleiss' κ" in res.stderr


def test_rank_panel_mean_differs_from_majority_and_names_its_rule():
    majority = rank_path(PANEL_FILE, RankOptions(panel=MEMBERS))
    mean = rank_path(PANEL_FILE, RankOptions(panel=MEMBERS, panel_rule="mean"))
    assert mean.ranking.info["panel"]["rule"] == "mean"
    assert not np.allclose(sorted(majority.ranking.scores), sorted(mean.ranking.scores))


def _mixed(tmp_path):
    """Judges x, y, z and an outsider w on 4 prompts; z missed two of them."""
    rows = []
    rng = np.random.default_rng(5)
    for judge in "xyzw":
        for p in range(4):
            if judge == "z" and p >= 2:
                continue
            for a, b in (("m", "n"), ("m", "o"), ("n", "o")):
                rows.append({"prompt_id": f"p{p}", "model_a": a, "model_b": b, "judge": judge,
                             "outcome": float(rng.choice([0.0, 0.5, 1.0])), "cost": 0.01})
    path = tmp_path / "mixed.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_rank_panel_reports_comparisons_some_members_missed_and_rows_outside(tmp_path):
    res = run_cli("rank", _mixed(tmp_path), "--panel", "x,y,z")
    assert res.returncode == 0, res.stderr
    assert "12 comparisons, 6 judged by every member" in res.stdout
    assert "6 judged by some members only, decided by those (not judged by: z 6)" in res.stdout
    assert "12 rows of judges outside the panel (--panel)" in res.stdout
    assert "cost per member: x $0.1200, y $0.1200, z $0.0600" in res.stdout


def test_rank_panel_weighted_weighs_members_by_agreement_with_the_reference(tmp_path):
    ranked = rank_path(_mixed(tmp_path), RankOptions(panel="x,y", panel_rule="weighted", panel_reference="w"))
    panel = ranked.ranking.info["panel"]
    assert set(panel["weights"]) == {"x", "y"} and panel["reference"] == "w"
    assert all(0 <= a <= 1 for a in panel["accuracy"].values())


@pytest.mark.parametrize("options, message", [
    (RankOptions(panel="x,y", judge="x"), "excludes --judge"),
    (RankOptions(panel="x,y", panel_rule="weighted"), "--panel-reference"),
    (RankOptions(panel="x,y", panel_reference="w"), "--panel-reference"),
    (RankOptions(panel="x"), "two distinct"),
    (RankOptions(panel="x,y", panel_split="coin"), "split"),
])
def test_rank_panel_refuses_contradicting_options(tmp_path, options, message):
    with pytest.raises(ConfigError, match=message):
        rank_path(_mixed(tmp_path), options)


def test_rank_panel_bad_member_is_a_usage_error_naming_the_judges(tmp_path):
    res = run_cli("rank", _mixed(tmp_path), "--panel", "x,nobody")
    assert res.returncode == 2
    assert 'judge "nobody" is not in the judgments' in res.stderr
