"""``diagnose``, ``anchors`` and ``accuracy`` read a judging store (the SQLite file of ``judgewise judge``) through
the one reader ``rank`` uses: a real store made by the CLI with the simulated judge gives exactly what its
``store export`` (read by the file readers) gives, and a store holding two judges is refused until one is chosen."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import cli_json, run_cli
from tests.judge_support import simulated_store

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
    from judgewise.pipeline.diagnosis import accuracy_of_files

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


def _anchors(path: Path, **kw) -> dict:
    from judgewise.analysis.design_studies import anchor_reports_of_file
    from judgewise.pipeline.inputs import read_rated

    return anchor_reports_of_file(path, "m2", rated=read_rated(path, **kw)).as_dict()


def test_anchors_reads_a_store_as_it_reads_the_store_export(judged):
    from_store = cli_json("anchors", judged["store"], "--anchor", "m2", "--json")
    assert from_store["read"]["format"] == "store" and from_store["read"]["rows_used"] == N_PROMPTS * 12
    assert from_store["anchors"] == _anchors(judged["export"])["anchors"]
    assert _anchors(judged["store"], format="store")["anchors"] == from_store["anchors"]


def test_diagnose_reads_a_store_as_it_reads_the_store_export(judged):
    from judgewise.pipeline.diagnosis import diagnose_path

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
    from judgewise.pipeline.inputs import read_judgments_or_store

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
