"""Bad input of the late features that runs (exit 0) but must not drop anything silently: what is left out is said."""

from __future__ import annotations

import logging

import pandas as pd

from judgewise.analysis.study import pool_from_scores


def _scores(n: int = 6) -> pd.DataFrame:
    return pd.DataFrame([{"item_id": f"i{i}", "rater": r, "score": float((i * (k + 2)) % 5)}
                         for i in range(n) for k, r in enumerate(("judge1", "judge2"))])


def test_human_scores_on_items_outside_the_pool_are_counted_not_dropped_silently(caplog):
    human = pd.DataFrame({"item_id": [f"i{i}" for i in range(6)] + ["x1", "x2"], "score": [1.0] * 3 + [2.0] * 5})
    with caplog.at_level(logging.WARNING, logger="judgewise.analysis.study"):
        pool = pool_from_scores(_scores(), human, target="judge1", human_source="h.jsonl")
    assert len(pool.item_ids) == 6
    assert any("h.jsonl" in r.getMessage() and "2 human score(s)" in r.getMessage() for r in caplog.records)


def test_human_scores_all_in_the_pool_say_nothing(caplog):
    human = pd.DataFrame({"item_id": [f"i{i}" for i in range(6)], "score": [1.0, 2.0] * 3})
    with caplog.at_level(logging.WARNING, logger="judgewise.analysis.study"):
        pool_from_scores(_scores(), human, target="judge1")
    assert not [r for r in caplog.records if "left out" in r.getMessage()]


def test_evaluate_and_add_model_through_a_faulty_http_judge_print_no_traceback(tmp_path):
    """Round after round (one event loop each) through a real 127.0.0.1 server answering some calls with 500s
    and garbage: the HTTP clients are closed in their own loop, so no "Event loop is closed" traceback is printed
    (it was, once per round: the previous round's client closed itself on the next loop); failures are counted."""
    import yaml

    from tests.support import run_cli
    from tests.support.fault_server import FaultServer
    from tests.support.judging import write_config

    with FaultServer(rates={"500": 0.1, "garbage": 0.15}, seed=3) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=8, models=["m0", "m1", "m2", "new"],
                              limits={"max_attempts": 2})
        cfg = yaml.safe_load(config.read_text())
        cfg.pop("design")
        cfg["models"] = ["m0", "m1", "m2"]
        config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        env = {"OPENAI_API_KEY": "x"}
        first = run_cli("evaluate", "-c", config, "--bootstrap", "0", cwd=tmp_path, env=env, timeout=300)
        added = run_cli("evaluate", "-c", config, "--add-model", "new", "--bootstrap", "0", cwd=tmp_path, env=env,
                        timeout=300)
    for res in (first, added):
        assert res.returncode == 0, res.stderr[-2000:]
        assert "Traceback" not in res.stderr and "Event loop is closed" not in res.stderr, res.stderr[-2000:]
        assert "failed:" in res.stdout
    assert "rounds" in first.stdout and "added" in added.stdout


def test_anchors_several_with_an_anchor_whose_win_rates_all_tie_says_undefined_not_nan(tmp_path):
    import json

    from tests.support.bad_inputs.inputs import anchored, jsonl
    from tests.support import run_cli

    (tmp_path / "two.jsonl").write_text(jsonl(anchored(anchor="A1") + anchored(anchor="A2")))
    res = run_cli("anchors", tmp_path / "two.jsonl", "--anchor", "A1,m1")
    assert res.returncode == 0, res.stderr
    line = next(ln for ln in res.stdout.splitlines() if "Kendall τ-b of each anchor" in ln)
    assert "nan" not in line and "m1 — (undefined" in line
    out = json.loads(run_cli("anchors", tmp_path / "two.jsonl", "--anchor", "A1,m1", "--json").stdout)
    assert out["several"]["tau_vs_pooled"]["m1"] is None
