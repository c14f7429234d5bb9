"""Issue 12: ``judgewise evaluate --add-model NEW`` / ``judgewise.add_model`` places a new model into the leaderboard a
previous evaluate stored — Arena-lite Alg. 2 binary search or the A.6.2 anchored insertion — judging only NEW's
games through the same store and engine (reruns pay nothing, a SIGKILLed run resumes), whatever ``models:`` says."""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import judgewise
from judgewise.errors import ConfigError
from tests.support import cli_json, run_cli

BOARD = [f"m{i}" for i in range(6)]
GAP = 300.0  # Elo between neighbours on the board; NEW sits half a gap from both of its neighbours
RATINGS = {**{m: 1000.0 + GAP * i for i, m in enumerate(BOARD)}, "new": 1000.0 + GAP * 2.5}
N_PROMPTS = 60
TRUE_ORDER = sorted(BOARD, key=RATINGS.get, reverse=True)  # best first
STRONGER = {m for m in BOARD if RATINGS[m] > RATINGS["new"]}  # where NEW's simulated strength puts it: below these


def _write(folder: Path, models: list[str] | None, responders: list[str], **extra) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"prompt_id": f"p{p:03d}", "model": m, "text": f"answer of {m} to {p}", "instruction": f"question {p}"}
            for p in range(N_PROMPTS) for m in responders]
    pd.DataFrame(rows).to_json(folder / "responses.jsonl", orient="records", lines=True)
    cfg = {"responses": "responses.jsonl", "store": "store.sqlite", "orders": "one",
           "judge": {"backend": "simulated", "ratings": RATINGS, "p_judge": 1.0}, "target": {"kendall_tau": 0.95},
           **({"models": models} if models else {}), **extra}
    (folder / "run.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return folder / "run.yaml"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory) -> Path:
    """A folder whose store holds one evaluate of the board (NEW has responses but is not in ``models:``)."""
    folder = tmp_path_factory.mktemp("evaluated")
    result = judgewise.evaluate(_write(folder, BOARD, BOARD + ["new"]), bootstrap=0)
    assert result.stopped == "target" and "new" not in result.ranking.models
    return folder


def _copy(evaluated: Path, to: Path, models: list[str] | None = BOARD) -> Path:
    """A copy of the evaluated folder (store included), with ``models:`` rewritten."""
    shutil.copytree(evaluated, to)
    cfg = yaml.safe_load((to / "run.yaml").read_text())
    cfg.pop("models")
    if models:
        cfg["models"] = models
    (to / "run.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return to / "run.yaml"


def _games(store: Path) -> pd.DataFrame:
    with sqlite3.connect(store) as db:
        return pd.read_sql_query("SELECT key, prompt_id, model_a, model_b, outcome, n_calls FROM games", db)


def test_binary_insertion_places_the_newcomer_where_its_strength_says_judging_only_its_games(evaluated, tmp_path):
    config = _copy(evaluated, tmp_path / "w")
    before = _games(tmp_path / "w" / "store.sqlite")
    result = judgewise.add_model(config, "new", bootstrap=50)
    p = result.placement
    assert p["leaderboard_before"] == TRUE_ORDER  # the stored leaderboard is right, so the check below means something
    assert p["complete"] and result.stopped == "placed" and result.design == "insert-binary"
    assert set(p["leaderboard_before"][:p["position"]]) == STRONGER and p["rank"] == len(STRONGER) + 1
    matches = N_PROMPTS // math.floor(math.log2(len(BOARD)))  # Alg. 2 lines 1-2
    assert 1 <= len(p["probes"]) <= math.floor(math.log2(len(BOARD))) + 1
    assert all(probe["matches"] == matches for probe in p["probes"])
    added = _games(tmp_path / "w" / "store.sqlite").query("key not in @before.key")
    assert len(added) == p["games"] == p["calls"] == result.paid_calls == len(p["probes"]) * matches
    assert ((added.model_a == "new") | (added.model_b == "new")).all()  # only games involving NEW were judged
    assert {probe["against"] for probe in p["probes"]} == (set(added.model_a) | set(added.model_b)) - {"new"}
    assert sorted(result.ranking.models) == sorted(BOARD + ["new"]) and p["bt_rank"] == p["rank"]


def test_anchor_insertion_places_by_the_leaderboards_win_rates_against_the_anchor(evaluated, tmp_path):
    config = _copy(evaluated, tmp_path / "w")
    board = judgewise.evaluate(config, bootstrap=0)  # a rerun: the stored leaderboard's Elo, no call
    assert board.paid_calls == 0
    result = judgewise.add_model(config, "new", insertion="anchor", anchor="m3", bootstrap=0)
    p = result.placement
    elo = dict(zip(board.ranking.models, board.ranking.scores))
    expected = {m: 1 / (1 + 10 ** ((elo["m3"] - elo[m]) / 400)) for m in BOARD}  # A.6.2: P(i > anchor)
    assert p["anchor"] == "m3" and p["probed"] == [{"against": "m3", "prompts": N_PROMPTS, "games": N_PROMPTS,
                                                     "score": pytest.approx(p["win_rate"])}]
    assert p["position"] == sum(expected[m] > p["win_rate"] for m in BOARD)
    assert set(p["leaderboard_before"][:p["position"]]) == STRONGER  # and that is where its strength says


def test_a_rerun_makes_zero_calls_and_places_the_same(evaluated, tmp_path):
    config = _copy(evaluated, tmp_path / "w")
    first = judgewise.add_model(config, "new", bootstrap=50)
    again = judgewise.add_model(config, "new", bootstrap=50)
    assert first.paid_calls > 0 and again.paid_calls == 0 and again.placement["calls"] == 0
    assert {**again.placement, "calls": None} == {**first.placement, "calls": None}
    assert again.ranking.to_records() == first.ranking.to_records()


def test_models_in_any_order_with_or_without_new_give_the_same_placement_and_games(evaluated, tmp_path):
    shuffled = ["m3", "m0", "m5", "m1", "m4", "m2"]
    runs = []
    for name, models in (("given", BOARD), ("shuffled", shuffled), ("with_new", shuffled[:2] + ["new"] + shuffled[2:]),
                         ("absent", None)):  # absent: every model with responses, NEW among them
        config = _copy(evaluated, tmp_path / name, models)
        result = judgewise.add_model(config, "new", bootstrap=0)
        runs.append((result.placement, set(_games(tmp_path / name / "store.sqlite").key)))
    assert all(run == runs[0] for run in runs[1:])


def test_the_stored_leaderboard_is_the_configs_judges_not_another_judges_in_the_same_store(evaluated, tmp_path):
    config = _copy(evaluated, tmp_path / "w")
    other = yaml.safe_load(config.read_text())
    upside_down = {m: RATINGS[BOARD[-1 - i]] for i, m in enumerate(BOARD)}
    other["judge"] = {**other["judge"], "p_judge": 0.9, "ratings": {**upside_down, "new": RATINGS["new"]}}
    (tmp_path / "w" / "other.yaml").write_text(yaml.safe_dump(other), encoding="utf-8")
    flipped = judgewise.evaluate(tmp_path / "w" / "other.yaml", bootstrap=0)  # another judge, the board upside down
    assert flipped.paid_calls > 0 and flipped.ranking.models[int(np.argmax(flipped.ranking.scores))] == "m0"
    result = judgewise.add_model(config, "new", bootstrap=0)
    assert result.placement["leaderboard_before"] == TRUE_ORDER
    assert set(result.judgments["judge"]) == {result.judgments["judge"].iloc[0]}  # one judge's games ranked


def test_a_newcomer_that_answered_some_prompts_is_probed_on_those_against_the_whole_stored_leaderboard(evaluated,
                                                                                                          tmp_path):
    config = _copy(evaluated, tmp_path / "w")
    responses = pd.read_json(tmp_path / "w" / "responses.jsonl", lines=True, dtype={"prompt_id": str})
    answered = {f"p{p:03d}" for p in range(0, N_PROMPTS, 2)}
    responses = responses[(responses.model != "new") | responses.prompt_id.isin(answered)]
    responses.to_json(tmp_path / "w" / "responses.jsonl", orient="records", lines=True)
    board = judgewise.evaluate(config, bootstrap=0)  # a rerun: the stored leaderboard's games, no call
    result = judgewise.add_model(config, "new", bootstrap=0)
    p = result.placement
    assert board.paid_calls == 0 and set(p["prompts"]) <= answered
    assert all(probe["matches"] == len(answered) // math.floor(math.log2(len(BOARD))) for probe in p["probes"])
    assert len(result.judgments) == len(board.judgments) + p["games"]  # every stored game of the board, NEW's too


def test_the_budget_bounds_an_insertion_and_a_rerun_with_more_pays_only_the_rest(evaluated, tmp_path):
    config = _copy(evaluated, tmp_path / "w")
    cfg = judgewise.load_config(config)
    cfg.budget["max_calls"] = 40
    cut = judgewise.add_model(cfg, "new", bootstrap=0)
    assert cut.stopped == "budget" and not cut.placement["complete"] and cut.placement["rank"] is None
    assert cut.placement["games"] == cut.paid_calls == 40
    done = judgewise.add_model(config, "new", bootstrap=0)
    assert done.placement["complete"] and done.paid_calls == done.placement["games"] - 40


def test_add_model_through_the_cli_prints_the_placement_and_the_new_leaderboard(evaluated, tmp_path):
    config = _copy(evaluated, tmp_path / "w")
    res = run_cli("evaluate", "-c", config, "--add-model", "new", "--bootstrap", "100", cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    rank = len(STRONGER) + 1
    for words in (f"placement: new enters the leaderboard at rank {rank} of {len(BOARD) + 1}", "probe 1: new vs",
                  "leaderboard before (BT of this judge's stored games): " + " > ".join(TRUE_ORDER),
                  "new  ← added", "95% CI", "design insert-binary:"):
        assert words in res.stdout, res.stdout
    out = cli_json("evaluate", "-c", config, "--add-model", "new", "--json", "--bootstrap", "100", cwd=tmp_path,
                   timeout=300)
    assert set(out) == {"ranking", "calls", "stopped", "design", "trust", "placement"}
    assert out["placement"]["rank"] == rank and out["placement"]["calls"] == 0 and out["trust"]["paid_calls_this_run"] == 0
    assert out["placement"]["games"] == out["calls"] > 0 and len(out["ranking"]) == len(BOARD) + 1
    assert all(r["ci_low"] <= r["score"] <= r["ci_high"] for r in out["ranking"])


def _ranked_new(tmp_path: Path) -> Path:
    """A store where an evaluate ranked NEW with the board (``models:`` named it)."""
    config = _write(tmp_path / "ranked", BOARD + ["new"], BOARD + ["new"], target={"kendall_tau": 0.8})
    judgewise.evaluate(config, bootstrap=0)
    return config


@pytest.mark.parametrize("case, words", [
    ("no_store", "no stored leaderboard to add 'new' to"),
    ("other_models", "holds no leaderboard of the models"),
    ("no_responses", "cannot add model 'nobody': it has no responses"),
    ("unknown_insertion", "unknown insertion 'bisect'; known: ['anchor', 'binary']"),
])
def test_what_cannot_be_added_is_a_clear_error(evaluated, tmp_path, case, words):
    if case == "no_store":
        config = _write(tmp_path / "empty", BOARD, BOARD + ["new"])
    elif case == "other_models":  # the store ranks m0..m5; the config's leaderboard has a model it never judged
        config = _copy(evaluated, tmp_path / "w", BOARD + ["extra"])
        pd.concat([pd.read_json(tmp_path / "w" / "responses.jsonl", lines=True),
                   pd.DataFrame([{"prompt_id": "p000", "model": "extra", "text": "x", "instruction": "question 0"}])]
                  ).to_json(tmp_path / "w" / "responses.jsonl", orient="records", lines=True)
        cfg = yaml.safe_load(config.read_text())  # the simulated judge rates it (else build_job refuses first)
        cfg["judge"]["ratings"]["extra"] = 1000.0
        config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    else:
        config = _copy(evaluated, tmp_path / "w")
    new = "nobody" if case == "no_responses" else "new"
    insertion = "bisect" if case == "unknown_insertion" else None
    with pytest.raises(ConfigError, match=None) as caught:
        judgewise.add_model(config, new, insertion=insertion, bootstrap=0)
    assert words in str(caught.value)
    if case == "other_models":
        assert "'extra'" in str(caught.value) or "['extra']" in str(caught.value)


def test_a_model_an_evaluate_already_ranked_is_refused_and_nothing_is_judged(tmp_path):
    config = _ranked_new(tmp_path)
    before = _games(tmp_path / "ranked" / "store.sqlite")
    with pytest.raises(ConfigError, match="already ranks 'new'"):
        judgewise.add_model(config, "new", bootstrap=0)
    assert len(_games(tmp_path / "ranked" / "store.sqlite")) == len(before)


@pytest.mark.parametrize("args, words", [
    (["--add-model", "nobody"], "cannot add model 'nobody'"),
    (["--add-model", "new", "--insertion", "bisect"], "unknown insertion 'bisect'"),
    (["--insertion", "anchor"], "give --add-model"),
])
def test_cli_errors_are_one_line_and_exit_non_zero(evaluated, tmp_path, args, words):
    config = _copy(evaluated, tmp_path / "w")
    res = run_cli("evaluate", "-c", config, *args, "--json", cwd=tmp_path, timeout=120)
    assert res.returncode != 0 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], res.stderr


def test_the_cli_refuses_a_model_already_ranked_and_a_missing_leaderboard(tmp_path):
    config = _ranked_new(tmp_path)
    res = run_cli("evaluate", "-c", config, "--add-model", "new", cwd=tmp_path, timeout=120)
    assert res.returncode != 0 and "already ranks 'new'" in res.stderr and res.stdout == ""
    empty = _write(tmp_path / "empty", BOARD, BOARD + ["new"])
    res = run_cli("evaluate", "-c", empty, "--add-model", "new", cwd=tmp_path, timeout=120)
    assert res.returncode != 0 and "run `judgewise evaluate --config" in res.stderr
    assert not (tmp_path / "empty" / "store.sqlite").exists()  # refusing wrote nothing


def test_the_package_top_gives_the_functions_even_after_their_modules_were_imported():
    code = ("import judgewise.pipeline.evaluation, judgewise.pipeline.add_model, judgewise; "
            "print(callable(judgewise.evaluate), callable(judgewise.add_model))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True"]


@pytest.mark.slow
def test_a_sigkilled_add_model_resumes_without_paying_any_call_twice(tmp_path):
    from tests.support.fault_server import FaultServer
    from tests.support.judging import sigkill_mid_run, write_config

    board = ["m1", "m2", "m3", "m4"]
    with FaultServer(latency_s=0.02, seed=5) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=20, models=board + ["new"], limits={"concurrency": 4})
        cfg = yaml.safe_load(config.read_text())
        config.write_text(yaml.safe_dump({**cfg, "models": board}), encoding="utf-8")
        cli_json("evaluate", "-c", config, "--json", "--bootstrap", "0", cwd=tmp_path, timeout=300)
        board_calls = srv.total_successes()
        args = ["evaluate", "-c", str(config), "--add-model", "new", "--json", "--bootstrap", "50"]
        sigkill_mid_run(srv, args, tmp_path, tmp_path / "store.sqlite", after_successes=board_calls + 15,
                        timeout_s=120)
        paid_before = srv.total_successes() - board_calls
        srv.thaw()
        resumed = cli_json(*args, cwd=tmp_path, timeout=300)
        again = cli_json(*args, cwd=tmp_path, timeout=300)
        successes = dict(srv.successes)
    assert set(successes.values()) == {1}  # no successful call repeated across the kill and the reruns
    assert 0 < paid_before < resumed["placement"]["games"]
    assert resumed["placement"]["calls"] == resumed["placement"]["games"] - paid_before
    assert again["placement"]["calls"] == 0 and again["placement"]["rank"] == resumed["placement"]["rank"]
    assert again["ranking"] == resumed["ranking"]
