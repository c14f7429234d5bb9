"""Bad options and inputs of the features landed late: rank's Arena-Hard and AlpacaEval options, winshare,
accuracy's paper settings, several anchors, echo-test, study's cost model, simulate's baseline/insertion designs,
reliability's estimator."""

from __future__ import annotations

import json

from tests.support.bad_inputs.cases_commands import ANCHORED, JUDGED, SCORES, _dir, cmd, on, on_dir
from tests.support.bad_inputs.inputs import Case, correctness, jsonl, write

def rank(name: str, *args, files=None, names=()) -> Case:
    files = {"j.jsonl": JUDGED, **(files or {})}
    return on(name, "rank", files, "j.jsonl", *args, names=names)


RANK = [
    rank("rank_weighting_unknown", "--weighting", "heavy", names=("heavy",)),
    rank("rank_weighting_arena_hard_without_verdicts", "--weighting", "arena-hard", names=("--weighting", "j.jsonl")),
    rank("rank_style_definition_unknown", "--style-definition", "fancy", names=("fancy",)),
    rank("rank_style_definition_without_style_control", "--style-definition", "arena-hard",
         names=("--style-control",)),
    rank("rank_arena_hard_config_missing", "--arena-hard-config", "nope.yaml", names=("nope.yaml",)),
    rank("rank_arena_hard_config_binary", "--arena-hard-config", "c.yaml", files={"c.yaml": b"\xff\xfe\x00\x01"},
         names=("c.yaml",)),
    rank("rank_arena_hard_config_a_list", "--arena-hard-config", "c.yaml", files={"c.yaml": "- 1\n- 2\n"},
         names=("c.yaml",)),
    rank("rank_arena_hard_config_bad_yaml", "--arena-hard-config", "c.yaml", files={"c.yaml": "a: [1, 2\n"},
         names=("c.yaml",)),
    rank("rank_arena_hard_config_baseline_number", "--arena-hard-config", "c.yaml",
         files={"c.yaml": "baseline: 5\n"}, names=("c.yaml",)),
    rank("rank_arena_hard_config_empty", "--arena-hard-config", "c.yaml", files={"c.yaml": ""}, names=("c.yaml",)),
    Case("rank_arena_hard_config_directory", lambda root: ["rank", write(root, "j.jsonl", JUDGED),
                                                           "--arena-hard-config", _dir("cfg")(root)], ("cfg",)),
    rank("rank_baseline_on_canonical_judgments", "--baseline", "nobody", names=("--baseline",)),
    rank("rank_arena_hard_config_on_canonical_judgments", "--arena-hard-config", "c.yaml",
         files={"c.yaml": "judge_model: gpt-4.1\nbench_name: arena-hard-v2.0\n"}, names=("--arena-hard-config",)),
    rank("rank_winshare_anchor_unknown", "--method", "winshare", "--anchor", "nobody", names=("nobody",)),
    rank("rank_elo_anchor_unknown", "--method", "elo", "--anchor", "nobody", names=("nobody",)),
    rank("rank_winshare_ci_level_two", "--method", "winshare", "--bootstrap", "10", "--ci-level", "2",
         names=("--ci-level",)),
    rank("rank_winshare_bootstrap_negative", "--method", "winshare", "--bootstrap", "-3", names=("--bootstrap",)),
    rank("rank_l2_negative", "--l2", "-1", names=("--l2",)),
    rank("rank_l2_nan", "--l2", "nan", names=("--l2",)),
    rank("rank_output_missing_folder", "--output", "no/such/dir/out.json", names=("no/such/dir",)),
    on_dir("rank_output_directory", "rank", {"j.jsonl": JUDGED}, "out", "j.jsonl", "--output", "out"),
]


def accuracy(name: str, *args, files=None, names=()) -> Case:
    files = {"j.jsonl": JUDGED, "c.jsonl": jsonl(correctness()), **(files or {})}
    return on(name, "accuracy", files, "j.jsonl", "--correctness", "c.jsonl", "--bootstrap", "0", *args,
              names=names)


ACCURACY = [
    accuracy("accuracy_elo_k_zero", "--elo-k", "0", names=("--elo-k",)),
    accuracy("accuracy_elo_k_negative", "--elo-k", "-32", names=("--elo-k",)),
    accuracy("accuracy_elo_k_nan", "--elo-k", "nan", names=("--elo-k",)),
    accuracy("accuracy_elo_k_inf", "--elo-k", "inf", names=("--elo-k",)),
    accuracy("accuracy_bt_l2_negative", "--bt-l2", "-1", names=("--bt-l2",)),
    accuracy("accuracy_bt_l2_text", "--bt-l2", "lots", names=("--bt-l2",)),
    accuracy("accuracy_bt_l2_nan", "--bt-l2", "nan", names=("--bt-l2",)),
    accuracy("accuracy_bt_l2_inf", "--bt-l2", "inf", names=("--bt-l2",)),
    accuracy("accuracy_unparsed_unknown", "--unparsed", "maybe", names=("maybe",)),
    accuracy("accuracy_correctness_repeated", files={"c.jsonl": jsonl(correctness() + [
        {"prompt_id": "p1", "model": "alpha", "correct": 1}])}, names=("c.jsonl", "row 13", '"model"')),
    accuracy("accuracy_correctness_a_fraction", files={"c.jsonl": jsonl([{**correctness()[0], "correct": 0.5},
                                                                         *correctness()[1:]])},
             names=("c.jsonl", "row 1", '"correct"', "0.5")),
    accuracy("accuracy_direct_repeated", "--direct", "d.jsonl", files={"d.jsonl": jsonl(
        [{"prompt_id": "p1", "model": "alpha", "label": "correct"},
         {"prompt_id": "p1", "model": "alpha", "label": "incorrect"}])}, names=("d.jsonl", "row 2")),
    accuracy("accuracy_ci_level_zero", "--ci-level", "0", names=("--ci-level",)),
]


def anchors(name: str, *args, files=None, names=()) -> Case:
    files = {"j.jsonl": ANCHORED, **(files or {})}
    return on(name, "anchors", files, "j.jsonl", *args, names=names)


ANCHORS = [
    anchors("anchors_several_one_unknown", "--anchor", "anchor,nobody", names=("nobody",)),
    anchors("anchors_empty_list", "--anchor", ",", names=("--anchor",)),
    anchors("anchors_listed_twice", "--anchor", "anchor,anchor", names=("--anchor",)),
    anchors("anchors_format_unknown", "--format", "xml", names=("xml",)),
    anchors("anchors_judge_unknown", "--judge", "nobody", names=("nobody",)),
    on("anchors_store_not_sqlite", "anchors", {"s.sqlite": b"not a database at all\x00\xff"}, "s.sqlite",
       "--format", "store", names=("s.sqlite",)),
    on("anchors_store_empty_file", "anchors", {"s.sqlite": b""}, "s.sqlite", "--format", "store",
       names=("s.sqlite",)),
    Case("anchors_store_missing", lambda root: ["anchors", root / "nope.sqlite", "--format", "store"],
         ("nope.sqlite",)),
    on_dir("anchors_store_directory", "anchors", {}, "d", "d", "--format", "store"),
]


def echo_config(root, **changes):
    cfg = {"responses": str(write(root, "r.jsonl", jsonl([{"prompt_id": f"p{p}", "model": m, "text": f"t{p}{m}",
                                                           "instruction": f"q{p}"}
                                                          for p in range(3) for m in ("a", "b", "c")]))),
           "store": str(root / "s.sqlite"),
           "judge": {"backend": "simulated", "ratings": {"a": 900, "b": 1000, "c": 1100}, "p_judge": 1.0, "seed": 3},
           "design": {"name": "all_pairs"}}
    cfg.update(changes)
    return write(root, "run.yaml", json.dumps(cfg))


def echo(name: str, *args, names=(), **changes) -> Case:
    return Case(name, lambda root: ["echo-test", "--config", echo_config(root, **changes), *args], tuple(names))


ECHO = [
    echo("echo_times_zero", "--times", "0", names=("--times",)),
    echo("echo_times_negative", "--times", "-2", names=("--times",)),
    echo("echo_limit_zero", "--limit", "0", names=("--limit",)),
    echo("echo_limit_negative", "--limit", "-1", names=("--limit",)),
    echo("echo_text_unknown", "--echo-text", "shout", names=("shout",)),
    echo("echo_bootstrap_negative", "--bootstrap", "-1", names=("--bootstrap",)),
    Case("echo_config_missing", lambda root: ["echo-test", "--config", root / "nope.yaml"], ("nope.yaml",)),
    Case("echo_config_binary", lambda root: ["echo-test", "--config", write(root, "c.yaml", b"\xff\xfe\x00\x00")],
         ("c.yaml",)),
    Case("echo_config_directory", lambda root: ["echo-test", "--config", _dir("cfg")(root)], ("cfg",)),
    echo("echo_config_judge_a_string", names=("judge",), judge="gpt-4"),
    echo("echo_simulated_judge_lacks_a_rating", names=("run.yaml", "judge.ratings", "'c'"),
         judge={"backend": "simulated", "ratings": {"a": 900, "b": 1000}}),
    echo("echo_config_responses_missing", names=("nope.jsonl",), responses="nope.jsonl"),
]


def study(name: str, *args, names=()) -> Case:
    return on(name, "study", {"s.jsonl": SCORES}, "s.jsonl", "--trials", "2", "--budgets", "4", *args, names=names)


STUDY = [
    study("study_minutes_per_label_zero", "--minutes-per-label", "0", names=("--minutes-per-label",)),
    study("study_minutes_per_label_negative", "--minutes-per-label", "-5", names=("--minutes-per-label",)),
    study("study_minutes_per_label_nan", "--minutes-per-label", "nan", names=("--minutes-per-label",)),
    study("study_minutes_per_label_inf", "--minutes-per-label", "inf", names=("--minutes-per-label",)),
    study("study_cost_per_hour_negative", "--cost-per-hour", "-500", names=("--cost-per-hour",)),
    study("study_cost_per_hour_nan", "--cost-per-hour", "nan", names=("--cost-per-hour",)),
    study("study_cost_per_hour_inf", "--cost-per-hour", "inf", names=("--cost-per-hour",)),
    study("study_target_twice", "--target", "judge1", "--target", "judge1", names=("--target", "judge1")),
    study("study_output_missing_folder", "--output", "no/such/out.json", names=("no/such",)),
]


def sim(name: str, *args, names=()) -> Case:
    return cmd(name, "simulate", "--executor", "serial", "--trials", "1", "--n-model", "4", "--prompts", "10",
               *args, names=names)


SIMULATE = [
    sim("simulate_baseline_reference_elo_nan", "--designs", "baseline", "--reference-elo", "nan",
        names=("--reference-elo",)),
    sim("simulate_baseline_reference_elo_inf", "--designs", "baseline", "--reference-elo", "inf",
        names=("--reference-elo",)),
    sim("simulate_designs_duplicated", "--designs", "baseline,baseline", names=("baseline",)),
    sim("simulate_designs_blank_item", "--designs", "baseline,,insert-binary", names=("design",)),
    cmd("simulate_insert_two_models", "simulate", "--executor", "serial", "--trials", "1", "--n-model", "1",
        "--designs", "insert-binary", names=("--n-model",)),
    sim("simulate_prompts_nan", "--prompts", "nan", names=("--prompts",)),
    sim("simulate_prompts_fraction", "--prompts", "10.5", names=("--prompts",)),
    sim("simulate_n_model_inf", "--n-model", "inf", names=("--n-model",)),
    sim("simulate_p_judge_negative", "--p-judge", "-0.2", names=("--p-judge",)),
]


def rel(name: str, *args, files=None, names=()) -> Case:
    files = {"s.jsonl": SCORES, **(files or {})}
    return on(name, "reliability", files, "s.jsonl", "--target", "judge1", *args, names=names)


RELIABILITY = [
    rel("reliability_estimator_unknown", "--items", "i.txt", "--estimator", "magic", files={"i.txt": "i0\ni1\ni2\n"},
        names=("magic",)),
    rel("reliability_items_duplicated", "--items", "i.txt", files={"i.txt": "i0\ni1\ni1\ni2\n"},
        names=("i.txt", "row 3", "i1")),
    rel("reliability_items_json_wrong_types", "--items", "i.json", files={"i.json": '{"items": 5}'},
        names=("i.json",)),
    rel("reliability_items_json_list_of_objects", "--items", "i.json", files={"i.json": '[{"a": 1}]'},
        names=("i.json",)),
    rel("reliability_estimator_without_items", "--estimator", "bias-correction", names=("--items",)),
    rel("reliability_items_json_boolean", "--items", "i.json", files={"i.json": '["i0", true, "i2"]'},
        names=("i.json", "row 2")),
    rel("reliability_human_repeated_item", "--human", "h.jsonl", files={"h.jsonl": jsonl(
        [{"item_id": f"i{i}", "rater": "human", "score": float(i % 5)} for i in range(12)]
        + [{"item_id": "i0", "rater": "human", "score": 3.0}])}, names=("h.jsonl", "row 13", '"item_id"')),
    rel("reliability_items_one", "--items", "i.txt", files={"i.txt": "i0\n"}, names=("i.txt",)),
    rel("reliability_items_non_utf8", "--items", "i.txt", files={"i.txt": b"i0\n\xe9\xff\n"}, names=("i.txt",)),
]

def arena_hard_games(change=None) -> dict:
    """model_judgment/<judge>/<model>.jsonl of Arena-Hard v0.1 (two games per record) for m1, m2; ``change(rows)``
    edits the records first."""
    rows = [{"question_id": q, "model": m, "judge": "j",
             "games": [{"score": "A>B" if (q + i) % 3 else "B>A"}, {"score": "B>A" if (q + i) % 2 else "A=B"}]}
            for q in range(1, 6) for i, m in enumerate(("m1", "m2"))]
    if change:
        change(rows)
    return {f"bench/j/{m}.jsonl": jsonl([r for r in rows if r["model"] == m]) for m in ("m1", "m2")}


def games(name: str, change, *args, names=()) -> Case:
    def build(root):
        for key, content in arena_hard_games(change).items():
            write(root, key, content)
        return ["rank", root / "bench" / "j", "--baseline", "base", *args]
    return Case(name, build, tuple(names))


GAMES = [
    games("games_three_games_in_a_record", lambda rows: rows[0].update(games=[{"score": "A>B"}] * 3),
          names=("m1.jsonl", "row 1", '"games"')),
    games("games_record_repeated", lambda rows: rows.append(dict(rows[0])), names=("m1.jsonl", "row 6", "second")),
    games("games_score_a_number", lambda rows: rows[2]["games"][1].update(score=5),
          names=("m1.jsonl", "row 2", "games[1].score")),
    games("games_weighting_unknown", None, "--weighting", "triple", names=("--weighting",)),
    games("games_style_control_without_answers", None, "--style-control", names=("model_answer",)),
]

NEW_FEATURE_CASES = GAMES + RANK + ACCURACY + ANCHORS + ECHO + STUDY + SIMULATE + RELIABILITY
