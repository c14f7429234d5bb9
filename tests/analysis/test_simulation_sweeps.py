"""Arena-lite §4.2 sweeps: seeded, the same on every executor, and runnable on a local Ray instance."""

import importlib.util

import numpy as np
import pytest

from judgewise.analysis.simulation import TrialSpec, run_trial
from judgewise.analysis.sweeps import (SweepPoint, first_crossing, run_sweep, smooth_crossing, summarize,
                                      trajectory_curve)
from tests.support import cli_json

POINTS = [SweepPoint("tournament", "tournament", 8, 30, 0.8),
          SweepPoint("anchor", "anchor", 8, 30, 0.8, {"anchors": ["m4"]}),
          SweepPoint("adaptive", "adaptive", 8, 100, 0.8, {"budget": 210})]


def test_sweep_is_seeded_and_identical_serially_and_on_a_process_pool():
    serial = run_sweep(POINTS, trials=4, seed=7, executor="serial")
    pooled = run_sweep(POINTS, trials=4, seed=7, executor="process", workers=2)
    assert serial[["label", "trial", "calls", "kendall"]].equals(pooled[["label", "trial", "calls", "kendall"]])
    table = summarize(serial)
    assert set(table.label) == {"tournament", "anchor", "adaptive"}
    assert table.set_index("label").loc["tournament", "calls"] == 7 * 30
    curve = trajectory_curve(serial[serial.design == "adaptive"], [50, 100, 210])
    assert curve.kendall.notna().all()


def test_more_prompts_give_better_rankings_on_the_simulated_judge():
    elo = np.linspace(1300, 1000, 10)
    taus = {x: np.mean([run_trial(TrialSpec(elo, x, 0.8, "tournament"), np.random.default_rng(s))["kendall"]
                        for s in range(8)]) for x in (5, 200)}
    assert taus[200] > taus[5] + 0.2


def test_first_crossing_interpolates_between_grid_points():
    assert first_crossing([100, 200, 300], [0.8, 0.88, 0.92], 0.9) == pytest.approx(250)
    assert np.isnan(first_crossing([100, 200], [0.5, 0.6], 0.9))


def test_smooth_crossing_recovers_a_log_linear_curve_despite_noise():
    calls = np.arange(200, 4001, 100)
    curve = 0.6 + 0.1 * np.log(calls / 100) + np.random.default_rng(0).normal(0, 0.01, len(calls))
    exact = 100 * np.exp(3.0)  # 0.6 + 0.1·3 = 0.9
    assert smooth_crossing(calls, curve, 0.9) == pytest.approx(exact, rel=0.1)
    assert np.isnan(smooth_crossing([100, 200], [0.2, 0.3], 0.9))


def test_cli_simulate_prints_one_row_per_design():
    rows = cli_json("simulate", "--designs", "tournament,anchor", "--n-model", "6", "--prompts", "20",
                    "--trials", "3", "--executor", "serial", "--json")
    assert {r["label"] for r in rows} == {"tournament", "anchor"}
    assert all(-1 <= r["spearman"] <= 1 for r in rows)


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray not installed (pip install 'judgewise[ray]')")
def test_sweep_on_a_local_ray_instance_matches_the_serial_run():
    serial = run_sweep(POINTS[:2], trials=2, seed=3, executor="serial")
    on_ray = run_sweep(POINTS[:2], trials=2, seed=3, executor="ray", workers=2)
    assert serial[["label", "trial", "kendall"]].equals(on_ray[["label", "trial", "kendall"]])

