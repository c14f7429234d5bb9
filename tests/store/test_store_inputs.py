"""``diagnose``, ``anchors`` and ``accuracy`` read a judging store (the SQLite file of ``judgewise judge``) through
the one reader ``rank`` uses: a real store made by the CLI with the simulated judge gives exactly what its
``store export`` (read by the file readers) gives, and a store holding two judges is refused until one is chosen."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.support import cli_json, run_cli
from tests.support.judging import simulated_store

RATINGS = {"m1": 900, "m2": 1000, "m3": 1100, "m4": 1250}
ACCURACY = {"m1": 0.3, "m2": 0.45, "m3": 0.6, "m4": 0.8}
N_PROMPTS = 24


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> dict:
    """One store of one simulated judge, its export, a correctness table; and a store of two judges."""
    base = tmp_path_factory.mktemp("stores")
    store = simulated_store(base / "one", RATINGS, n_prompts=N_PROMPTS, seed=1, p_judge=0.8)
    exported = base / "one" / "export.jsonl"
    assert run_cli("store", "export", store, "--output", exported).returncode == 0
    rng = np.random.default_rng(0)
    correct = pd.DataFrame([{"prompt_id": f"p{p}", "model": m, "correct": int(rng.random() < a)}
                            for p in range(N_PROMPTS) for m, a in ACCURACY.items()])
    correct.to_json(base / "correct.jsonl", orient="records", lines=True)
    two = simulated_store(base / "two", RATINGS, n_prompts=N_PROMPTS, seed=1, p_judge=0.8)
    simulated_store(base / "two", RATINGS, n_prompts=N_PROMPTS, seed=2, p_judge=0.6)
    return {"store": store, "export": exported, "correct": base / "correct.jsonl", "two": two}


def _without_source(obj: dict) -> dict:
    """A JSON output without the fields that name the input file or its format."""
    out = {k: v for k, v in obj.items() if k not in ("source", "read")}
    return json.loads(json.dumps(out).replace(str(obj.get("source", "\0")), "SRC"))


def _accuracy(path: Path, correct: Path, **kw) -> dict:
    from judgewise.commands.diagnosis import accuracy_of_files

    result, _ = accuracy_of_files(path, correct, methods=["bt", "winrate"], bootstrap=5, **kw)
    return json.loads(json.dumps(result.as_dict(), default=str))


def test_accuracy_reads_a_store_as_it_reads_the_store_export(judged):
    from_store = _accuracy(judged["store"], judged["correct"])
    assert from_store == _accuracy(judged["export"], judged["correct"])
    assert from_store["pair_counts"]["no_outcome"] == 0 and len(from_store["accuracy"]) == len(RATINGS)


def test_accuracy_text_output_ends_with_the_store_read_report(judged):
    res = run_cli("accuracy", judged["store"], "--correctness", judged["correct"], "--bootstrap", "0", "--methods", "bt")
    assert res.returncode == 0, res.stderr
    n = N_PROMPTS * 6 * 2  # all pairs of 4 models, both orders
    assert f"read {n} rows from {judged['store']} [store]: used {n}, skipped 0" in res.stdout


@pytest.mark.parametrize("methods", ["bogus", "bt,bogus"])
def test_accuracy_with_an_unknown_method_blames_the_option_not_the_correctness_file(judged, methods):
    res = run_cli("accuracy", judged["store"], "--correctness", judged["correct"], "--bootstrap", "0",
                  "--methods", methods)
    assert res.returncode == 2 and res.stdout == "" and "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --methods: unknown aggregator 'bogus'"), res.stderr
    assert "correct.jsonl" not in res.stderr and "bt, elo, trueskill, winrate" in res.stderr


def _anchors(path: Path, **kw) -> dict:
    from judgewise.commands.design_studies import anchor_reports_of_file
    from judgewise.store.reading import read_rated

    return anchor_reports_of_file(path, "m2", rated=read_rated(path, **kw)).as_dict()


def test_anchors_reads_a_store_as_it_reads_the_store_export(judged):
    from_store = cli_json("anchors", judged["store"], "--anchor", "m2", "--json")
    assert from_store["read"]["format"] == "store" and from_store["read"]["rows_used"] == N_PROMPTS * 12
    assert from_store["anchors"] == _anchors(judged["export"])["anchors"]
    assert _anchors(judged["store"], format="store")["anchors"] == from_store["anchors"]


def test_anchors_on_an_all_pairs_store_recommends_the_pilot_not_a_likely_anchor(judged):
    """4 models on all pairs: each takes part in exactly half of the rows, yet the store has no anchor; without
    --anchor the command runs the pilot (Anchor §5.3) over all the models."""
    out = cli_json("anchors", judged["store"], "--pilot-prompts", "5", "--json")
    assert out["anchors"] == [] and "several" not in out
    assert out["pilot"]["n_prompts"] == 5 and out["pilot"]["recommended"] in RATINGS
    assert sorted(c["anchor"] for c in out["pilot"]["candidates"]) == sorted(RATINGS)
    text = run_cli("anchors", judged["store"], "--pilot-prompts", "5")
    assert text.returncode == 0 and text.stdout.startswith("pilot on 5 prompts: recommended anchor ")


def test_diagnose_reads_a_store_as_it_reads_the_store_export(judged):
    from judgewise.commands.diagnosis import diagnose_path

    from_store, table = diagnose_path(judged["store"])
    from_file, _ = diagnose_path(judged["export"])
    assert table.report.format == "store"
    assert from_store.as_dict()["judges"] == from_file.as_dict()["judges"]
    assert from_store.warnings == from_file.warnings


@pytest.mark.parametrize("command", ["accuracy", "anchors", "rank"])
def test_a_store_of_two_judges_is_refused_until_one_is_chosen(judged, command):
    extra = ("--correctness", judged["correct"], "--bootstrap", "0") if command == "accuracy" else ()
    res = run_cli(command, judged["two"], *extra, "--json")
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "2 different judges" in res.stderr and "--judge NAME" in res.stderr


def _judge_labels(store: Path) -> list[str]:
    """The two judges' labels, as the refusal lists them."""
    from judgewise.io.provenance import judge_groups
    from judgewise.store.reading import read_judgments_or_store

    return [g.label for g in judge_groups(read_judgments_or_store(store).frame)[0]]


def test_judge_chooses_one_judge_of_a_store_for_accuracy_and_anchors(judged):
    labels = _judge_labels(judged["two"])
    assert len(labels) == 2
    # the store of one judge was judged with the first run's settings (seed 1): the same games as one of the two
    one = _anchors(judged["store"])["anchors"]
    picked = [_anchors(judged["two"], judge=label) for label in labels]
    assert sum(p["anchors"] == one for p in picked) == 1
    assert all(p["read"]["rows_skipped"] == N_PROMPTS * 12 for p in picked)  # the other judge's rows, counted
    acc_one = _accuracy(judged["store"], judged["correct"])["table"]
    assert sum(_accuracy(judged["two"], judged["correct"], judge=label)["table"] == acc_one for label in labels) == 1
    res = run_cli("anchors", judged["two"], "--anchor", "m2", "--judge", labels[0], "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["anchors"] == picked[0]["anchors"]


# --- several inputs: rank A B C ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def halves(tmp_path_factory) -> dict:
    """Two stores of the same simulated judge on disjoint prompts, a third of another judge, and their exports."""
    base = tmp_path_factory.mktemp("halves")
    a = simulated_store(base / "a", RATINGS, n_prompts=10, seed=1)
    b = simulated_store(base / "b", RATINGS, n_prompts=8, seed=1, first_prompt=10)
    other = simulated_store(base / "c", RATINGS, n_prompts=6, seed=5, p_judge=0.6, first_prompt=30)
    exports = {}
    for name, store in (("a", a), ("b", b), ("c", other)):
        exports[name] = base / f"{name}.jsonl"
        assert run_cli("store", "export", store, "--output", exports[name]).returncode == 0
    return {"a": a, "b": b, "c": other, "exports": exports, "base": base}


def test_rank_of_two_stores_equals_rank_of_their_concatenated_exports(halves):
    both = halves["base"] / "both.jsonl"
    frames = [pd.read_json(halves["exports"][k], lines=True, dtype=False) for k in ("a", "b")]
    pd.concat(frames, ignore_index=True).to_json(both, orient="records", lines=True)
    res = run_cli("rank", halves["a"], halves["b"], "--bootstrap", "20", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == cli_json("rank", both, "--bootstrap", "20", "--json")
    n_a, n_b = 10 * 12, 8 * 12
    assert f"read {n_a} rows from {halves['a']} [store]: used {n_a}, skipped 0" in res.stderr
    assert f"read {n_b} rows from {halves['b']} [store]: used {n_b}, skipped 0" in res.stderr
    assert f"read {n_a + n_b} rows from 2 inputs [store]: used {n_a + n_b}, skipped 0" in res.stderr


def test_a_store_and_a_file_of_one_judge_rank_together(halves):
    from judgewise.commands.ranking import RankOptions, rank_path

    mixed = rank_path([halves["a"], halves["exports"]["b"]], RankOptions(bootstrap=10))
    stores = rank_path([halves["a"], halves["b"]], RankOptions(bootstrap=10))
    assert mixed.ranking.to_records() == stores.ranking.to_records()
    assert mixed.report.format == "store+jsonl" and [r.format for r in mixed.table.extras["reports"]] == \
        ["store", "jsonl"]


def test_one_input_given_twice_is_refused(halves):
    res = run_cli("rank", halves["a"], halves["b"], halves["a"])
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert f"{halves['a']}: given twice as an input" in res.stderr


def test_the_same_judgments_in_two_inputs_are_refused(halves):
    res = run_cli("rank", halves["a"], halves["exports"]["a"])
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert f"is in {halves['a']} and in {halves['exports']['a']} (120 shared judgments): it would count twice" \
        in " ".join(res.stderr.split())


def test_inputs_of_different_judges_are_refused_naming_each_inputs_judge_until_chosen(halves):
    res = run_cli("rank", halves["a"], halves["c"])
    assert res.returncode == 2 and "Traceback" not in res.stderr
    line = " ".join(res.stderr.split())
    assert "the 2 inputs hold 2 different judges" in line
    assert f"{halves['a']}: \"simulated-" in line and f"{halves['c']}: \"simulated-" in line
    label = re.search(rf'{re.escape(str(halves["c"]))}: "([^"]+)"', line).group(1)
    chosen = run_cli("rank", halves["a"], halves["c"], "--judge", label, "--json")
    assert chosen.returncode == 0, chosen.stderr
    assert json.loads(chosen.stdout) == cli_json("rank", halves["c"], "--json")
    assert "used 72, skipped 120" in chosen.stderr
    assert run_cli("rank", halves["a"], halves["c"], "--pool-judges").returncode == 0


def test_grades_and_pairwise_judgments_together_are_refused(halves, tmp_path):
    grades = tmp_path / "grades.jsonl"
    pd.DataFrame([{"prompt_id": f"p{i}", "model": m, "judge": "g", "score": float(i % 10)}
                  for i in range(5) for m in RATINGS]).to_json(grades, orient="records", lines=True)
    res = run_cli("rank", halves["a"], grades)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert (f"the inputs hold different kinds of tables ({halves['a']}: pairwise judgments; {grades}: pointwise "
            "grades); rank one kind at a time") in " ".join(res.stderr.split())


def test_two_grades_files_rank_together_by_their_pooled_mean_scores(tmp_path):
    """Canonical grades files (no ``error`` column, which once crashed the reader) concatenated: mean_score of
    each model over both files, as pandas computes it."""
    rng = np.random.default_rng(3)
    paths = []
    for k in range(2):
        path = tmp_path / f"grades{k}.jsonl"
        pd.DataFrame([{"prompt_id": f"p{k}-{i}", "model": m, "judge": "g", "score": float(rng.integers(1, 11))}
                      for i in range(6) for m in ("x", "y", "z")]).to_json(path, orient="records", lines=True)
        paths.append(path)
    records = cli_json("rank", *paths, "--json")
    both = pd.concat([pd.read_json(p, lines=True) for p in paths])
    assert {r["model"]: r["score"] for r in records} == pytest.approx(both.groupby("model")["score"].mean().to_dict())


# --- soft outcomes from logprobs ----------------------------------------------------------------------------------

LOGPROB_CANDIDATES = {"a": {"a": 0.8, "b": 0.2}, "b": {"b": 0.65, "a": 0.35}}  # P(verdict token) when a / b is said


def _prefer_the_stronger(messages: list) -> str:
    """LLMBar's binary verdict for the response of the stronger model (RATINGS), flipped on a fifth of requests."""
    import hashlib

    text = json.dumps(messages)
    first, second = sorted((m for m in RATINGS if f"{m} replies" in text), key=lambda m: text.index(f"{m} replies"))
    first_better = (RATINGS[first] > RATINGS[second]) != (int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 5 == 0)
    return "Output (a)" if first_better else "Output (b)"


@pytest.fixture(scope="module")
def soft_store(tmp_path_factory) -> Path:
    """A store written by ``judgewise judge`` (a subprocess) through a real OpenAI-compatible server on 127.0.0.1
    that returns logprobs: every game keeps its soft preference."""
    from tests.support.fault_server import FaultServer
    from tests.support.judging import write_config

    folder = tmp_path_factory.mktemp("soft")
    with FaultServer(answer=_prefer_the_stronger, candidates=LOGPROB_CANDIDATES) as srv:
        write_config(folder, srv.url, n_prompts=10, models=list(RATINGS),
                     judge={"template": "llmbar_binary", "logprobs": True})
        res = run_cli("judge", "--config", "run.yaml", "--no-progress", cwd=folder)
    assert res.returncode == 0, res.stderr
    return folder / "store.sqlite"


def _stored_games(store: Path) -> pd.DataFrame:
    import sqlite3

    with sqlite3.connect(store) as db:
        return pd.read_sql("SELECT model_a, model_b, outcome, soft FROM games WHERE status = 'ok'", db)


def _winrate_against(games: pd.DataFrame, column: str, anchor: str) -> dict:
    """100 · mean result of each model against the anchor, in the model's view (the oracle)."""
    out = {}
    for model in RATINGS:
        if model == anchor:
            continue
        as_a = games.loc[(games.model_a == model) & (games.model_b == anchor), column]
        as_b = 1.0 - games.loc[(games.model_a == anchor) & (games.model_b == model), column]
        out[model] = 100 * pd.concat([as_a, as_b]).mean()
    return out


def test_soft_win_rate_is_the_mean_expected_outcome_from_the_stored_logprobs(soft_store):
    games = _stored_games(soft_store)
    assert len(games) == 10 * 12 and games["soft"].notna().all()
    assert set(games["soft"].round(6)) <= {0.8, 0.2, 0.35, 0.65}  # P(model_a better), in model_a's view
    soft = cli_json("rank", soft_store, "--method", "winrate", "--anchor", "m1", "--soft", "--json")
    hard = cli_json("rank", soft_store, "--method", "winrate", "--anchor", "m1", "--json")
    got_soft = {r["model"]: r["score"] for r in soft if r["model"] != "m1"}
    got_hard = {r["model"]: r["score"] for r in hard if r["model"] != "m1"}
    assert got_soft == pytest.approx(_winrate_against(games, "soft", "m1"))
    assert got_hard == pytest.approx(_winrate_against(games, "outcome", "m1"))
    assert got_soft != pytest.approx(got_hard)


def test_soft_bt_equals_bt_of_a_table_whose_outcomes_are_the_soft_preferences(soft_store, tmp_path):
    games = _stored_games(soft_store)
    table = tmp_path / "soft.jsonl"
    games.assign(prompt_id=[f"g{i}" for i in range(len(games))], judge="j", outcome=games["soft"]) \
        .drop(columns="soft").to_json(table, orient="records", lines=True)
    soft = cli_json("rank", soft_store, "--soft", "--bootstrap-unit", "battle", "--json")
    plain = cli_json("rank", table, "--bootstrap-unit", "battle", "--json")
    assert {r["model"]: r["score"] for r in soft} == pytest.approx({r["model"]: r["score"] for r in plain})


def test_rank_says_soft_preferences_exist_and_when_they_were_used(soft_store):
    hard = run_cli("rank", soft_store)
    assert hard.returncode == 0, hard.stderr
    assert "outcomes: hard verdicts; 120 of 120 judgments also carry a soft preference from logprobs " \
        "(--soft rates them as fractional wins)" in " ".join(hard.stdout.split())
    soft = run_cli("rank", soft_store, "--soft")
    assert "outcomes: soft — 120 of 120 judgments rated by the judge's expected outcome from logprobs" in \
        " ".join(soft.stdout.split())


def test_soft_without_any_soft_preference_is_a_clear_error(judged):
    res = run_cli("rank", judged["store"], "--soft")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "no judgment carries a soft preference: judge with judge.logprobs: true" in " ".join(res.stderr.split())


def test_a_store_ranks_by_a_column_of_the_responses_file_it_was_judged_from(tmp_path):
    """A store keeps no prompt metadata; ``--prompts`` the run's responses file (a row per prompt and model) gives
    its category. Oracle: each category's leaderboard equals ranking the export's rows of that category alone."""
    store = simulated_store(tmp_path / "run", RATINGS, n_prompts=12, seed=3,
                            columns={"category": lambda p: ["math", "code", "prose"][p % 3]})
    responses = tmp_path / "run" / "responses.jsonl"
    grouped = cli_json("rank", store, "--by", "category", "--prompts", responses, "--bootstrap", "10", "--json")
    assert list(grouped["groups"]) == ["code", "math", "prose"] and grouped["skipped_groups"] == {}
    export = tmp_path / "export.jsonl"
    assert run_cli("store", "export", store, "--output", export).returncode == 0
    rows = pd.read_json(export, lines=True, dtype=False)
    for k, category in enumerate(["math", "code", "prose"]):
        alone = tmp_path / f"{category}.jsonl"
        rows[rows["prompt_id"].str[1:].astype(int) % 3 == k].to_json(alone, orient="records", lines=True)
        assert grouped["groups"][category] == cli_json("rank", alone, "--bootstrap", "10", "--json")
    res = run_cli("rank", store, "--by", "category")
    assert res.returncode == 2 and "--by category: no such column" in res.stderr and "--prompts FILE" in res.stderr
