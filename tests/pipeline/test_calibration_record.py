"""Issue 31: the trust block quotes the stopping rule's measured record for runs like this one, and warns outside it."""

from __future__ import annotations

from judgewise.pipeline.calibration import measured_cells, nearest_cell
from judgewise.pipeline.targets import DEFAULT_MARGIN_ELO


def test_the_shipped_record_covers_the_issue_cells_and_each_met_its_promise():
    cells = measured_cells()
    assert {(c["models"], c["target"]) for c in cells} >= {(m, t) for m in (7, 12, 16) for t in (0.9, 0.95)}
    for cell in cells:
        assert cell["runs"] >= 20 and cell["margin_elo"] == DEFAULT_MARGIN_ELO
        assert cell["share_reaching"] >= 0.8 and cell["mean_tau"] >= cell["target"] - 0.01, cell


def test_a_run_like_the_measured_ones_gets_its_cell_and_no_warning():
    record = nearest_cell(12, 0.9, DEFAULT_MARGIN_ELO)
    assert record["cell"]["models"] == 12 and record["cell"]["target"] == 0.9 and record["warning"] is None
    assert "12 models, target 0.9" in record["measured"] and "runs reached it" in record["measured"]


def test_runs_outside_what_was_measured_are_warned_about():
    assert "outside the measured pools" in nearest_cell(40, 0.9, DEFAULT_MARGIN_ELO)["warning"]
    assert "outside the measured targets" in nearest_cell(12, 0.8, DEFAULT_MARGIN_ELO)["warning"]
    assert "no calibration was measured" in nearest_cell(12, 0.9, 5.0)["warning"]


def test_a_separated_target_quotes_its_own_cells_and_warns_beyond_seven_models():
    seven = nearest_cell(7, 0.9, DEFAULT_MARGIN_ELO, kind="separated")
    assert seven["warning"] is None and "7 models, separated target 0.9" in seven["measured"]
    assert seven["cell"]["target_kind"] == "separated"
    assert "outside the measured pools (7–7 models)" in nearest_cell(12, 0.9, DEFAULT_MARGIN_ELO,
                                                                      kind="separated")["warning"]
