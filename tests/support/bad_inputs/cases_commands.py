"""Bad options and inputs of the analysis commands: agree, power, plan, anchors, simulate, select, reliability,
study, diagnose, accuracy."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.bad_inputs.inputs import (Case, anchored, correctness, deep_json, judgments, jsonl, responses,
                                     scores, with_row, write)


def cmd(name: str, *args, names=(), owner=None) -> Case:
    """A command with options only (no input file)."""
    return Case(name, lambda root: list(args), tuple(names), owner)


def on(name: str, command: str, files: dict, *args, names=(), owner=None) -> Case:
    """``judgewise COMMAND ARGS`` where ``{name}`` in ARGS is replaced by the path of ``files[name]``."""
    def build(root: Path) -> list:
        paths = {key: write(root, key, content) for key, content in files.items()}
        return [command, *[paths.get(a, a) if isinstance(a, str) else a for a in args]]
    return Case(name, build, tuple(names), owner)


def _dir(name: str):
    def build(root: Path) -> Path:
        (root / name).mkdir()
        return root / name
    return build


def on_dir(name: str, command: str, files: dict, dirname: str, *args, names=()) -> Case:
    """Like :func:`on`; ``{dirname}`` in ARGS is an existing directory."""
    def build(root: Path) -> list:
        paths = {key: write(root, key, content) for key, content in files.items()}
        paths[dirname] = _dir(dirname)(root)
        return [command, *[paths.get(a, a) for a in args]]
    return Case(name, build, tuple(names) or (dirname,))


RANKING = json.dumps([{"model": m, "score": s} for m, s in [("a", 3.0), ("b", 2.0), ("c", 1.0)]])
ANCHORED = jsonl(anchored())
JUDGED = jsonl(judgments())
SCORES = jsonl(scores())
POWER_DIST = "-1:0.3,0:0.3,1:0.4"


def agree(name: str, content, names=("b.json",)) -> Case:
    return on(name, "agree", {"a.json": RANKING, "b.json": content}, "a.json", "b.json", names=names)


AGREE = [
    Case("agree_file_missing", lambda root: ["agree", write(root, "a.json", RANKING), root / "b.json"], ("b.json",)),
    agree("agree_nested_100k_deep", deep_json()),
    agree("agree_not_json", "model,score\na,1\n"),
    agree("agree_zero_bytes", ""),
    agree("agree_empty_list", "[]"),
    agree("agree_score_nan", '[{"model": "a", "score": NaN}, {"model": "b", "score": 1}]'),
    agree("agree_score_text", '[{"model": "a", "score": "high"}, {"model": "b", "score": 1}]'),
    agree("agree_duplicate_model", '[{"model": "a", "score": 1}, {"model": "a", "score": 2}]'),
    agree("agree_one_common_model", '{"a": 1.0, "z": 2.0}'),
    agree("agree_utf16", RANKING.encode("utf-16")),
    agree("agree_a_number", "3.5"),
    on_dir("agree_directory", "agree", {"a.json": RANKING}, "b", "a.json", "b"),
]

POWER = [
    cmd("power_wilcoxon_n_negative", "power", "wilcoxon", "--distribution", POWER_DIST, "--n", "-5", names=("--n",)),
    cmd("power_wilcoxon_n_zero", "power", "wilcoxon", "--distribution", POWER_DIST, "--n", "0", names=("--n",)),
    cmd("power_wilcoxon_n_huge", "power", "wilcoxon", "--distribution", POWER_DIST, "--n", "100000000",
        names=("--n",)),
    cmd("power_wilcoxon_n_text", "power", "wilcoxon", "--distribution", POWER_DIST, "--n", "abc", names=("--n",)),
    cmd("power_wilcoxon_n_fraction", "power", "wilcoxon", "--distribution", POWER_DIST, "--n", "10.5",
        names=("--n",)),
    cmd("power_wilcoxon_n_empty", "power", "wilcoxon", "--distribution", POWER_DIST, "--n", ",", names=("--n",)),
    cmd("power_wilcoxon_simulations_zero", "power", "wilcoxon", "--distribution", POWER_DIST, "--simulations", "0",
        names=("--simulations",)),
    cmd("power_wilcoxon_simulations_huge", "power", "wilcoxon", "--distribution", POWER_DIST, "--simulations",
        "1000000000", names=("--simulations",)),
    cmd("power_wilcoxon_alpha_zero", "power", "wilcoxon", "--distribution", POWER_DIST, "--alpha", "0",
        names=("alpha",)),
    cmd("power_wilcoxon_alpha_above_one", "power", "wilcoxon", "--distribution", POWER_DIST, "--alpha", "1.5",
        names=("alpha",)),
    cmd("power_wilcoxon_power_above_one", "power", "wilcoxon", "--distribution", POWER_DIST, "--power", "1.5",
        names=("power",)),
    cmd("power_wilcoxon_probabilities_negative", "power", "wilcoxon", "--distribution", "-1:-0.5,1:1.5",
        names=("--distribution",)),
    cmd("power_wilcoxon_probabilities_not_summing_to_one", "power", "wilcoxon", "--distribution", "-1:0.2,1:0.2",
        names=("--distribution",)),
    cmd("power_wilcoxon_distribution_syntax", "power", "wilcoxon", "--distribution", "1:0.5:2",
        names=("--distribution",)),
    cmd("power_wilcoxon_distribution_nan", "power", "wilcoxon", "--distribution", "nan:0.5,1:0.5",
        names=("--distribution",)),
    cmd("power_wilcoxon_no_input", "power", "wilcoxon", names=("--distribution",)),
    on("power_wilcoxon_width_negative", "power", {"j.jsonl": ANCHORED}, "wilcoxon", "j.jsonl", "--width", "-1",
       names=("--width",)),
    Case("power_wilcoxon_path_missing", lambda root: ["power", "wilcoxon", root / "nope.jsonl"], ("nope.jsonl",)),
    on("power_wilcoxon_effect_nan", "power", {"j.jsonl": ANCHORED}, "wilcoxon", "j.jsonl", "--effect", "nan",
       names=("--effect",)),
    on("power_wilcoxon_anchor_unknown", "power", {"j.jsonl": ANCHORED}, "wilcoxon", "j.jsonl", "--anchor", "nobody",
       names=("nobody",)),
    cmd("power_sign_win_rate_half", "power", "sign", "--win-rate", "0.5", names=("win",)),
    cmd("power_sign_win_rate_above_one", "power", "sign", "--win-rate", "1.5", names=("win",)),
    cmd("power_sign_win_rate_nan", "power", "sign", "--win-rate", "nan", names=("win",)),
    cmd("power_sign_win_rate_empty", "power", "sign", "--win-rate", ",", names=("--win-rate",)),
    cmd("power_sign_exact_tiny_edge", "power", "sign", "--win-rate", "0.5000001", "--exact", names=("win",)),
    cmd("power_sign_tie_rate_one", "power", "sign", "--win-rate", "0.6", "--tie-rate", "1", names=("tie",)),
    cmd("power_sign_tie_rate_negative", "power", "sign", "--win-rate", "0.6", "--tie-rate", "-0.1", names=("tie",)),
    cmd("power_sign_alpha_zero", "power", "sign", "--win-rate", "0.6", "--alpha", "0", names=("alpha",)),
    cmd("power_sign_alpha_one", "power", "sign", "--win-rate", "0.6", "--alpha", "1", names=("alpha",)),
    cmd("power_sign_power_zero", "power", "sign", "--win-rate", "0.6", "--power", "0", names=("power",)),
    cmd("power_sign_power_nan", "power", "sign", "--win-rate", "0.6", "--power", "nan", names=("power",)),
]

PLAN = [
    cmd("plan_models_zero", "plan", "--models", "0", names=("models",)),
    cmd("plan_models_negative", "plan", "--models", "-3", names=("models",)),
    cmd("plan_models_one", "plan", "--models", "1", names=("models",)),
    cmd("plan_models_huge", "plan", "--models", "1000000000", names=("models",)),
    cmd("plan_budget_negative", "plan", "--models", "5", "--budget", "-5", names=("budget",)),
    cmd("plan_effect_zero", "plan", "--models", "5", "--effect", "0", names=("effect",)),
    cmd("plan_effect_above_half", "plan", "--models", "5", "--effect", "0.6", names=("effect",)),
    cmd("plan_effect_nan", "plan", "--models", "5", "--effect", "nan", names=("effect",)),
    cmd("plan_alpha_two", "plan", "--models", "5", "--alpha", "2", names=("alpha",)),
    cmd("plan_power_zero", "plan", "--models", "5", "--power", "0", names=("power",)),
]

ANCHORS = [
    Case("anchors_path_missing", lambda root: ["anchors", root / "nope.jsonl"], ("nope.jsonl",)),
    on("anchors_pilot_prompts_negative", "anchors", {"j.jsonl": JUDGED}, "j.jsonl", "--pilot-prompts", "-1",
       names=("--pilot-prompts",)),
    on("anchors_pilot_prompts_zero", "anchors", {"j.jsonl": JUDGED}, "j.jsonl", "--pilot-prompts", "0",
       names=("--pilot-prompts",)),
    on("anchors_anchor_unknown", "anchors", {"j.jsonl": ANCHORED}, "j.jsonl", "--anchor", "nobody",
       names=("nobody",)),
    on("anchors_given_a_scores_table", "anchors", {"s.jsonl": SCORES}, "s.jsonl", names=("s.jsonl",)),
    on("anchors_nested_100k_deep", "anchors", {"j.json": deep_json()}, "j.json", names=("j.json",)),
    on("anchors_seed_negative", "anchors", {"j.jsonl": JUDGED}, "j.jsonl", "--seed", "-1", names=("seed",)),
]

SIMULATE = [
    cmd("simulate_one_model", "simulate", "--n-model", "1", "--executor", "serial", "--trials", "1",
        names=("--n-model",)),
    cmd("simulate_models_negative", "simulate", "--n-model", "-3", "--executor", "serial", names=("--n-model",)),
    cmd("simulate_models_huge", "simulate", "--n-model", "1000000", "--executor", "serial", "--trials", "1",
        names=("--n-model",)),
    cmd("simulate_prompts_zero", "simulate", "--prompts", "0", "--executor", "serial", names=("--prompts",)),
    cmd("simulate_prompts_huge", "simulate", "--prompts", "1000000000", "--executor", "serial", "--trials", "1",
        names=("--prompts",)),
    cmd("simulate_p_judge_above_one", "simulate", "--p-judge", "1.5", "--executor", "serial", names=("--p-judge",)),
    cmd("simulate_p_judge_nan", "simulate", "--p-judge", "nan", "--executor", "serial", names=("--p-judge",)),
    cmd("simulate_trials_zero", "simulate", "--trials", "0", "--executor", "serial", names=("--trials",)),
    cmd("simulate_trials_negative", "simulate", "--trials", "-2", "--executor", "serial", names=("--trials",)),
    cmd("simulate_executor_unknown", "simulate", "--executor", "gpu", names=("gpu",)),
    cmd("simulate_workers_zero", "simulate", "--executor", "process", "--workers", "0", "--trials", "1",
        names=("--workers",)),
    cmd("simulate_designs_empty", "simulate", "--designs", ",", "--executor", "serial", names=("design",)),
    cmd("simulate_design_unknown", "simulate", "--designs", "swiss", "--executor", "serial", names=("swiss",)),
    cmd("simulate_seed_negative", "simulate", "--seed", "-1", "--executor", "serial", "--trials", "1",
        names=("seed",)),
]


def select(name: str, *args, files=None, names=()) -> Case:
    return on(name, "select", files or {"s.jsonl": SCORES}, "s.jsonl", "--target", "judge1", *args, names=names)


SELECT = [
    Case("select_scores_missing", lambda root: ["select", root / "nope.jsonl", "--target", "judge1"],
         ("nope.jsonl",)),
    select("select_budget_zero", "--budget", "0", names=("budget",)),
    select("select_budget_negative", "--budget", "-4", names=("budget",)),
    select("select_budget_above_items", "--budget", "500", names=("budget",)),
    select("select_metric_unknown", "--budget", "4", "--metric", "vibes", names=("vibes",)),
    select("select_method_unknown", "--budget", "4", "--method", "psychic", names=("psychic",)),
    on("select_target_unknown", "select", {"s.jsonl": SCORES}, "s.jsonl", "--target", "nobody", "--budget", "4",
       names=("nobody",)),
    select("select_candidates_zero", "--budget", "4", "--candidates", "0", names=("candidates",)),
    select("select_score_nan", "--budget", "4", files={"s.jsonl": jsonl(with_row(scores(), 4, score=float("nan")))},
           names=("s.jsonl", "row 5", '"score"')),
    select("select_score_text", "--budget", "4", files={"s.jsonl": jsonl(with_row(scores(), 4, score="high"))},
           names=("s.jsonl", "row 5", '"score"')),
    select("select_single_rater", "--budget", "4", files={"s.jsonl": jsonl(scores(raters=("judge1",)))},
           names=("other judge",)),
    select("select_duplicate_item_and_rater", "--budget", "4",
           files={"s.jsonl": jsonl(scores() + [{"item_id": "i0", "rater": "judge1", "score": 4.0}])},
           names=("s.jsonl", "row 37")),
    select("select_given_judgments", "--budget", "4", files={"s.jsonl": JUDGED}, names=("s.jsonl",)),
    select("select_nested_100k_deep", "--budget", "4", files={"s.jsonl": "{\"a\":" * 100_000 + "1" + "}" * 100_000},
           names=("s.jsonl",)),
    on_dir("select_output_is_a_directory", "select", {"s.jsonl": SCORES}, "out", "s.jsonl", "--target", "judge1",
           "--budget", "4", "--output", "out"),
    select("select_seed_negative", "--budget", "4", "--method", "random", "--seed", "-1", names=("seed",)),
]


def reliability(name: str, *args, files=None, names=()) -> Case:
    files = {"s.jsonl": SCORES, **(files or {})}
    return on(name, "reliability", files, "s.jsonl", "--target", "judge1", *args, names=names)


RELIABILITY = [
    reliability("reliability_metric_unknown", "--metric", "vibes", names=("vibes",)),
    Case("reliability_items_missing", lambda root: ["reliability", write(root, "s.jsonl", SCORES), "--target",
                                                    "judge1", "--items", root / "nope.txt"], ("nope.txt",)),
    reliability("reliability_items_empty", "--items", "items.txt", files={"items.txt": ""}, names=("items.txt",)),
    reliability("reliability_items_nested_100k_deep", "--items", "items.json", files={"items.json": deep_json()},
                names=("items.json",)),
    reliability("reliability_items_unknown_ids", "--items", "items.txt", files={"items.txt": "x1\nx2\n"},
                names=("items.txt",)),
    reliability("reliability_items_an_object", "--items", "items.json", files={"items.json": '{"x": 1}'},
                names=("items.json",)),
    reliability("reliability_items_binary", "--items", "items.txt", files={"items.txt": b"\xff\xfe\x00i\x00"},
                names=("items.txt",)),
    Case("reliability_human_missing", lambda root: ["reliability", write(root, "s.jsonl", SCORES), "--target",
                                                    "judge1", "--human", root / "nope.jsonl"], ("nope.jsonl",)),
    reliability("reliability_human_several_raters", "--human", "h.jsonl", files={"h.jsonl": SCORES},
                names=("h.jsonl",)),
    on("reliability_target_unknown", "reliability", {"s.jsonl": SCORES}, "s.jsonl", "--target", "nobody",
       names=("nobody",)),
    on("reliability_no_human", "reliability", {"s.jsonl": jsonl(scores(raters=("judge1", "judge2")))}, "s.jsonl",
       "--target", "judge1", names=("human",)),
    Case("reliability_items_directory", lambda root: ["reliability", write(root, "s.jsonl", SCORES), "--target",
                                                      "judge1", "--items", _dir("items")(root)], ("items",)),
]


def study(name: str, *args, names=()) -> Case:
    return on(name, "study", {"s.jsonl": SCORES}, "s.jsonl", "--trials", "2", *args, names=names)


STUDY = [
    study("study_budgets_step_zero", "--budgets", "2:10:0", names=("--budgets",)),
    study("study_budgets_reversed", "--budgets", "10:5:1", names=("--budgets",)),
    study("study_budgets_negative", "--budgets", "-5,4", names=("budget",)),
    study("study_budgets_huge", "--budgets", "1000000000", names=("budget",)),
    study("study_budgets_text", "--budgets", "few", names=("--budgets",)),
    on("study_trials_zero", "study", {"s.jsonl": SCORES}, "s.jsonl", "--trials", "0", "--budgets", "4",
       names=("trials",)),
    on("study_trials_negative", "study", {"s.jsonl": SCORES}, "s.jsonl", "--trials", "-1", "--budgets", "4",
       names=("trials",)),
    study("study_methods_unknown", "--budgets", "4", "--methods", "psychic", names=("psychic",)),
    study("study_metrics_unknown", "--budgets", "4", "--metrics", "vibes", names=("vibes",)),
    study("study_candidates_zero", "--budgets", "4", "--candidates", "0", names=("candidates",)),
    study("study_target_unknown", "--budgets", "4", "--target", "nobody", names=("nobody",)),
    on_dir("study_output_is_a_directory", "study", {"s.jsonl": SCORES}, "out", "s.jsonl", "--trials", "2",
           "--budgets", "4", "--methods", "random,metric-match", "--metrics", "icc", "--output", "out"),
]


def diagnose(name: str, *args, files=None, names=()) -> Case:
    files = {"j.jsonl": JUDGED, **(files or {})}
    return on(name, "diagnose", files, "j.jsonl", "--no-style-control", *args, names=names)


DIAGNOSE = [
    diagnose("diagnose_family_malformed", "--family", "gpt", names=("--family",)),
    diagnose("diagnose_ci_level_two", "--ci-level", "2", names=("--ci-level",)),
    diagnose("diagnose_bootstrap_negative", "--bootstrap", "-1", names=("--bootstrap",)),
    diagnose("diagnose_bootstrap_huge", "--bootstrap", "1000000000", names=("bootstrap",)),
    Case("diagnose_responses_missing", lambda root: ["diagnose", write(root, "j.jsonl", JUDGED), "--responses",
                                                     root / "nope.jsonl"], ("nope.jsonl",)),
    diagnose("diagnose_responses_are_scores", "--responses", "r.jsonl", files={"r.jsonl": SCORES},
             names=("r.jsonl",)),
    diagnose("diagnose_responses_duplicated", "--responses", "r.jsonl",
             files={"r.jsonl": jsonl(responses() + responses()[:1])}, names=("r.jsonl", "row 13")),
    diagnose("diagnose_responses_text_not_string", "--responses", "r.jsonl",
             files={"r.jsonl": jsonl(with_row(responses(), 2, text=["a", "b"]))}, names=("r.jsonl", "row 3")),
    on("diagnose_given_scores", "diagnose", {"s.jsonl": SCORES}, "s.jsonl", names=("s.jsonl",)),
    Case("diagnose_path_missing", lambda root: ["diagnose", root / "nope.jsonl"], ("nope.jsonl",)),
    on("diagnose_nested_100k_deep", "diagnose", {"j.json": deep_json()}, "j.json", names=("j.json",)),
    diagnose("diagnose_seed_negative", "--bootstrap", "10", "--seed", "-1", names=("seed",)),
]


def accuracy(name: str, *args, files=None, names=()) -> Case:
    files = {"j.jsonl": JUDGED, "c.jsonl": jsonl(correctness()), **(files or {})}
    return on(name, "accuracy", files, "j.jsonl", "--bootstrap", "0", *args, names=names)


ACCURACY = [
    Case("accuracy_correctness_missing", lambda root: ["accuracy", write(root, "j.jsonl", JUDGED), "--correctness",
                                                       root / "nope.jsonl"], ("nope.jsonl",)),
    accuracy("accuracy_correctness_value", "--correctness", "c.jsonl",
             files={"c.jsonl": jsonl(with_row(correctness(), 3, correct="maybe"))},
             names=("c.jsonl", "row 4", '"correct"')),
    accuracy("accuracy_correctness_txt", "--correctness", "c.txt", files={"c.txt": "alpha 1\n"}, names=("c.txt",)),
    accuracy("accuracy_correctness_missing_column", "--correctness", "c.jsonl",
             files={"c.jsonl": jsonl([{"prompt_id": "p1", "model": "alpha"}])}, names=("c.jsonl", "correct")),
    accuracy("accuracy_correctness_nested_100k_deep", "--correctness", "c.json", files={"c.json": deep_json()},
             names=("c.json",)),
    accuracy("accuracy_correctness_empty", "--correctness", "c.csv", files={"c.csv": ""}, names=("c.csv",)),
    accuracy("accuracy_methods_unknown", "--correctness", "c.jsonl", "--methods", "vibes", names=("vibes",)),
    accuracy("accuracy_min_parse_rate_two", "--correctness", "c.jsonl", "--min-parse-rate", "2",
             names=("--min-parse-rate",)),
    accuracy("accuracy_baseline_nan", "--correctness", "c.jsonl", "--baseline", "nan", names=("--baseline",)),
    accuracy("accuracy_min_gap_negative", "--correctness", "c.jsonl", "--min-gap", "-1", names=("--min-gap",)),
    accuracy("accuracy_direct_label_unknown", "--correctness", "c.jsonl", "--direct", "d.jsonl",
             files={"d.jsonl": jsonl([{"prompt_id": "p1", "model": "alpha", "label": "kinda"}])},
             names=("d.jsonl", "row 1", '"label"')),
    accuracy("accuracy_bootstrap_negative", "--correctness", "c.jsonl", "--bootstrap", "-1", names=("--bootstrap",)),
    accuracy("accuracy_models_not_in_correctness", "--correctness", "c.jsonl",
             files={"c.jsonl": jsonl(correctness(models=("x", "y", "z")))}, names=("c.jsonl",)),
]

COMMAND_CASES = AGREE + POWER + PLAN + ANCHORS + SIMULATE + SELECT + RELIABILITY + STUDY + DIAGNOSE + ACCURACY
