"""One answer per run: the report and explorer of a store written by `evaluate` rank as that evaluate run did."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from judgewise.pipeline.evaluation import evaluate
from judgewise.report.context import ReportContext
from judgewise.report.options import ReportOptions
from judgewise.report.explorer_data import ExplorerData
from judgewise.report.inputs import load_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """`evaluate` of examples/evaluate-replay.yaml (replay judge on recorded AlpacaEval verdicts), a small
    bootstrap, its store in a temporary folder."""
    folder = tmp_path_factory.mktemp("replay")
    config = yaml.safe_load((EXAMPLES / "evaluate-replay.yaml").read_text())
    config.update(responses=str(EXAMPLES / config["responses"]), store=str(folder / "judgments.sqlite"),
                  target={"kendall_tau": 0.9}, seed=3)
    config["judge"]["judgments"] = str(EXAMPLES / config["judge"]["judgments"])
    return evaluate(config, bootstrap=40), folder / "judgments.sqlite"


def _table(ranking) -> list[tuple]:
    return [(r["model"], r["rank"], round(r["score"], 6), round(r["ci_low"], 6), round(r["ci_high"], 6))
            for r in ranking.to_records()]


def test_the_report_of_an_evaluate_store_prints_evaluates_ranking(replayed):
    result, store = replayed
    ctx = ReportContext(load_run(str(store)), ReportOptions())
    assert ctx.method == "bt" and ctx.bootstrap == 40 and ctx.seed == 3
    assert ctx.ranking.info["l2"] == result.l2 > 0
    assert _table(ctx.ranking) == _table(result.ranking)
    assert np.isfinite(result.ranking.ci_low).all()


def test_the_explorer_of_an_evaluate_store_shows_the_same_ranking(replayed):
    result, store = replayed
    assert _table(ExplorerData(load_run(str(store))).ctx.ranking) == _table(result.ranking)


def test_options_given_to_the_report_win_over_the_recorded_ones(replayed):
    _, store = replayed
    ctx = ReportContext(load_run(str(store)), ReportOptions(bootstrap=0, l2=0.5))
    assert ctx.bootstrap == 0 and ctx.ranking.info["l2"] == 0.5 and ctx.ranking.info["bootstrap"] is None
