"""The run config's typed schema and guarded YAML reader, and the judge command's exit codes, through
``load_config``/``build_job`` and the real CLI (``judgewise judge --config run.yaml``)."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest
import yaml

from judgewise.errors import ConfigError
from judgewise.pipeline import build_job, load_config

from tests.support import run_cli
from tests.support.fault_server import FaultServer
from tests.support.judging import simulated_pool as _simulated_pool, write_config, write_responses

SIMULATED = {"backend": "simulated", "ratings": {"m1": 1000, "m2": 1100, "m3": 900}}


def _write(folder, cfg: dict, name: str = "run.yaml"):
    """responses.jsonl (3 prompts, models m1..m3) next to a YAML run config with ``cfg``'s keys."""
    write_responses(folder, 3, ["m1", "m2", "m3"])
    path = folder / name
    path.write_text(yaml.safe_dump({"responses": "responses.jsonl", "store": "s.sqlite", "judge": SIMULATED, **cfg},
                                   sort_keys=False), encoding="utf-8")
    return path


def _one_clean_error(res, *needles: str) -> str:
    """The command failed with exactly one error line containing every needle, and no traceback."""
    assert res.returncode != 0, res.stdout
    assert "Traceback" not in res.stderr, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, res.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _config_error(data: dict) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(data)
    message = str(info.value)
    assert "\n" not in message
    return message


BASE = {"responses": "r.jsonl", "judge": SIMULATED}


# -- the measured problems, through the CLI -------------------------------------------------------------
def test_retry_failed_given_as_a_string_is_refused_not_read_as_true(tmp_path):
    res = run_cli("judge", "--config", _write(tmp_path, {"retry_failed": "false"}), "--dry-run", cwd=tmp_path)
    _one_clean_error(res, "run.yaml: retry_failed = \"false\" (a string): must be true or false")
    assert res.returncode == 2
    assert not (tmp_path / "s.sqlite").exists()


def test_yaml_booleans_are_accepted_for_retry_failed():
    assert load_config({**BASE, "retry_failed": False}).retry_failed is False
    assert load_config({**BASE, "retry_failed": True}).retry_failed is True


def test_a_model_listed_twice_is_refused_before_anything_is_paid(tmp_path):
    res = run_cli("judge", "--config", _write(tmp_path, {"models": ["m1", "m1", "m2"]}), "--no-progress",
                  cwd=tmp_path)
    _one_clean_error(res, 'models = ["m1", "m1", "m2"]', '"m1" is listed more than once')
    assert not (tmp_path / "s.sqlite").exists()


@pytest.mark.parametrize("limits, message", [
    ({"concurrency": 0}, "limits.concurrency = 0: must be an integer >= 1"),
    ({"timeout_s": -1}, "limits.timeout_s = -1: must be seconds > 0"),
])
def test_limits_that_judge_nothing_or_fail_every_game_are_refused(tmp_path, limits, message):
    res = run_cli("judge", "--config", _write(tmp_path, {"limits": limits}), "--no-progress", cwd=tmp_path)
    _one_clean_error(res, f"run.yaml: {message}")
    assert not (tmp_path / "s.sqlite").exists()


@pytest.mark.parametrize("section, values, path", [
    ("limits", {"concurrency": -3}, "limits.concurrency"),
    ("limits", {"concurrency": 2.5}, "limits.concurrency"),
    ("limits", {"concurrency": True}, "limits.concurrency"),
    ("limits", {"concurrency": "8"}, "limits.concurrency"),
    ("limits", {"timeout_s": 0}, "limits.timeout_s"),
    ("limits", {"timeout_s": float("inf")}, "limits.timeout_s"),
    ("limits", {"rpm": 0}, "limits.rpm"),
    ("limits", {"tpm": -100}, "limits.tpm"),
    ("limits", {"max_attempts": 0}, "limits.max_attempts"),
    ("limits", {"base_delay_s": -0.5}, "limits.base_delay_s"),
    ("limits", {"max_delay_s": "1s"}, "limits.max_delay_s"),
    ("budget", {"max_calls": -1}, "budget.max_calls"),
    ("budget", {"max_cost": -0.01}, "budget.max_cost"),
    ("budget", {"max_cost": float("nan")}, "budget.max_cost"),
])
def test_out_of_range_or_mistyped_limits_name_the_key_and_the_value(section, values, path):
    message = _config_error({**BASE, section: values})
    assert message.startswith(f"<dict>: {path} = ") and "must be" in message


@pytest.mark.parametrize("extra, path", [
    ({"max_prompts": 0}, "max_prompts"), ({"seed": -1}, "seed"), ({"orders": "random"}, "orders"),
    ({"models": ["m1"]}, "models"), ({"models": "m1, m2"}, "models"), ({"models": ["m1", ""]}, "models[1]"),
    ({"store": ""}, "store"), ({"responses": ""}, "responses"), ({"responses": 3}, "responses"),
    ({"design": ["all_pairs"]}, "design"), ({"design": {"anchor": "m1"}}, "design.name: missing"),
    ({1: "x"}, "the top level: key 1 is not a name"), ({"limits": {2: 1}}, "limits: key 2 is not a name"),
])
def test_top_level_values_are_typed_and_ranged(extra, path):
    assert _config_error({**BASE, **extra}).startswith(f"<dict>: {path}")


def test_a_valid_full_config_keeps_the_documented_semantics(tmp_path):
    cfg = load_config(_write(tmp_path, {
        "models": ["m1", "m2"], "max_prompts": 2, "orders": "one", "seed": 3, "output": "out/j.jsonl",
        "design": {"name": "anchor", "anchor": "m2"}, "retry_failed": False,
        "limits": {"concurrency": 2, "rpm": 60, "tpm": 1000.5, "timeout_s": 30, "max_attempts": 2,
                   "base_delay_s": 0, "max_delay_s": 1},
        "budget": {"max_calls": 0, "max_cost": 1.5}}))
    assert cfg.responses == str(tmp_path / "responses.jsonl") and cfg.store == str(tmp_path / "s.sqlite")
    assert cfg.output == str(tmp_path / "out" / "j.jsonl")  # relative to the config file's folder
    assert cfg.design == {"name": "anchor", "anchor": "m2"} and cfg.limits["concurrency"] == 2
    opts = cfg.run_options()
    assert opts["concurrency"] == 2 and opts["timeout_s"] == 30 and opts["retry"].max_attempts == 2
    assert opts["budget"].max_calls == 0 and opts["orders"] == "one" and opts["seed"] == 3
    defaults = load_config(BASE)
    assert defaults.design == {"name": "all_pairs"} and defaults.limits == {} and defaults.orders == "both"


def test_a_responses_table_from_python_is_kept_as_given(tmp_path):
    frame = pd.read_json(write_responses(tmp_path, 2, ["m1", "m2"]), lines=True)
    job = build_job({"responses": frame, "judge": SIMULATED, "store": str(tmp_path / "s.sqlite")})
    assert len(job.comparisons) == 2


# -- unknown keys and options at every level ---------------------------------------------------------------
@pytest.mark.parametrize("data, needle", [
    ({**BASE, "limit": {}}, "unknown key(s) ['limit'] in the top level"),
    ({**BASE, "limits": {"concurency": 2}}, "unknown key(s) ['concurency'] in limits"),
    ({**BASE, "budget": {"max_call": 2}}, "unknown key(s) ['max_call'] in budget"),
    ({**BASE, "judge": {**SIMULATED, "ratingz": {}}}, "unknown key(s) ['ratingz'] in judge"),
    ({"responses": "r", "judge": {"base_url": "http://x:1/v1", "model": "m", "prices": {"input": 1}}},
     "unknown key(s) ['input'] in judge.prices"),
])
def test_unknown_keys_are_errors_at_every_level_with_a_suggestion(data, needle):
    message = _config_error(data)
    assert needle in message and "did you mean" in message


@pytest.mark.parametrize("design, needle", [
    ({"name": "all_pairs", "anchor": "m1"}, "unknown option(s) ['anchor'] for design \"all_pairs\""),
    ({"name": "anchor", "anchr": "m1"}, "unknown option(s) ['anchr'] for design \"anchor\""),
    ({"name": "anchor"}, "design anchor: the anchor design needs an anchor model"),
    ({"name": "quadratic", "budget": 3}, "unknown option(s) ['budget'] for design \"quadratic\""),
    ({"name": "sampled", "budgt": 3}, "did you mean 'budget'"),
    ({"name": "tournament", "tiebreak": "coin"}, "for design \"tournament\""),
    ({"name": "sampled", "budget": "ten"}, 'design.budget = "ten" (a string): must be an integer'),
    ({"name": "insert-binary", "leaderboard": [1, 2]}, "design.leaderboard"),
    ({"name": "no-such-design"}, "unknown design; known: ["),
    ({"name": "tournament", "tie_break": "dice"}, "design tournament: tie_break must be one of"),
    ({"name": "adaptive"}, "design adaptive: the adaptive design needs a budget of at least 1 call"),
    ({"name": "adaptive", "budget": 10, "fit": "bt_fit"}, "design.fit = \"bt_fit\" (a string): must be a Python"),
])
def test_each_design_takes_only_its_own_options(design, needle):
    assert needle in _config_error({**BASE, "design": design})


def test_design_options_that_a_design_takes_are_accepted(tmp_path):
    write_responses(tmp_path, 3, ["m1", "m2", "m3"])
    base = {"responses": str(tmp_path / "responses.jsonl"), "judge": SIMULATED}
    sampled = build_job({**base, "design": {"name": "sampled", "budget": 4, "seed": 1}})
    assert len(sampled.comparisons) == 4
    assert load_config({**base, "design": {"name": "tournament", "tie_break": "coin", "seed": 2}}).design["seed"] == 2
    assert load_config({**base, "design": "quadratic"}).design == {"name": "quadratic"}


@pytest.mark.parametrize("judge, needle", [
    ({**SIMULATED, "model": "gpt-4o"}, 'judge.model = "gpt-4o": not an option of the "simulated" backend'),
    ({"backend": "openai", "model": "m", "ratings": {"a": 1}}, 'judge.ratings = {"a": 1.0}: not an option of the "openai"'),
    ({"backend": "replay", "judgments": "j.jsonl", "temperature": 0}, "unknown key(s) ['temperature'] in judge"),
    ({"backend": "nope"}, 'judge.backend = "nope": must be one of'),
    ({"model": "gpt-4o-mini"}, "configure an OpenAI-compatible endpoint, but the embedded local judge would run"),
    ({"base_url": "http://a:1/v1", "base_urls": ["http://b:1/v1"], "model": "m"}, "base_url or base_urls, not both"),
    ({"base_urls": ["http://a:1/v1", "http://a:1/v1"], "model": "m"}, "is listed more than once"),
    ({"base_url": "localhost:8000", "model": "m"}, "judge.base_url = \"localhost:8000\": must be an http"),
    ({"base_url": "http://a:1/v1", "model": "m", "spread": "random"}, "judge.spread"),
    ({"base_url": "http://a:1/v1", "model": "m", "logprobs": "yes"}, "judge.logprobs"),
    ({"base_url": "http://a:1/v1", "model": "m", "prices": {"input_per_mtok": -1}}, "judge.prices.input_per_mtok"),
    ({**SIMULATED, "p_judge": 1.5}, "judge.p_judge = 1.5: must be a number in [0, 1]"),
    ({"backend": "simulated", "ratings": {"m1": "high"}}, "judge.ratings.m1"),
    ({"backend": "simulated"}, 'judge.ratings: missing; the "simulated" backend needs it'),
    ({"backend": "replay"}, 'judge.judgments: missing; the "replay" backend needs it'),
    ({"base_url": "http://a:1/v1"}, 'judge.model: missing; the "openai" backend needs it'),
])
def test_the_judge_section_is_checked_against_its_backend(judge, needle):
    assert needle in _config_error({"responses": "r", "judge": judge})


@pytest.mark.parametrize("params, needle", [
    ({"temperature": 0, "stop": ["\n", "###"], "logit_bias": {"42": -100}, "seed": 1}, None),
    ("temperature=0", "must be a mapping of sampling parameters"),
    ({"max_tokens": 10}, "max_tokens is set by judgewise (use judge.max_tokens)"),
    ({"model": "other"}, "model is set by judgewise"),
    ({"stop": [["deep", ["er"]]]}, "stop must be a number, string, boolean"),
    ({"extra": {"a": {"b": 1}}}, "extra.a must be"),
    ({"temperature": float("inf")}, "temperature must be a finite number"),
])
def test_judge_params_are_free_form_but_a_mapping_of_scalars_and_lists(params, needle):
    data = {"responses": "r", "judge": {"base_url": "http://a:1/v1", "model": "m", "params": params}}
    if needle is None:
        assert load_config(data).judge["params"] == params
    else:
        assert needle in _config_error(data)


def test_a_key_pasted_as_api_key_env_is_refused_without_echoing_it():
    secret = "sk-proj-abcdefghijklmnop1234567890"
    message = _config_error({"responses": "r", "judge": {"base_url": "http://a:1/v1", "model": "m",
                                                         "api_key_env": secret}})
    assert "judge.api_key_env" in message and "NAME of an environment variable" in message
    assert secret not in message and "abcdef" not in message


def test_several_problems_report_the_first_and_count_the_rest():
    message = _config_error({**BASE, "seed": -1, "orders": "x", "limits": {"concurrency": 0}})
    assert message.count(" = ") == 1 and message.endswith("(+2 more problems)")


# -- the YAML file itself -----------------------------------------------------------------------------------
LAUGHS = "\n".join(["responses: r.jsonl", "judge:", "  backend: openai", "  model: m",
                    "  base_url: http://127.0.0.1:9/v1", "  params:",
                    '    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
                   + [f"    {c}: &{c} [{', '.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("content, needle", [
    (LAUGHS, "refused: expands to more than 20,000 values through YAML aliases"),
    ("a: &a [*a]\n", "refused: a YAML alias refers to the mapping or list that contains it"),
    ("responses: r\nx: *nowhere\n", "not valid YAML at line 2"),
    ("responses: r\njudge: {}\nlimits: {concurrency: 2, concurrency: 8}\n", "key 'concurrency' appears twice"),
    ("responses: r\njudge: {}\nz: " + "[" * 200 + "]" * 200 + "\n", "nested"),
    ("responses: r\njudge: {params: {x: [" + ",".join(["1"] * 30_000) + "]}}\n", "more than 20,000 values"),
    ("- responses: r\n", "expected a mapping of settings (key: value) at the top level, found a list"),
    ("just text\n", "found a string"),
    ("", "the file is empty"),
    ("responses: [unclosed\n", "not valid YAML at line 2"),
])
def test_a_hostile_or_malformed_yaml_file_is_one_clean_error_naming_it(tmp_path, content, needle):
    path = tmp_path / "run.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ") and needle in str(info.value) and "\n" not in str(info.value)


def test_many_aliases_are_refused_before_expansion(tmp_path):
    anchors = "\n".join(f"a{i}: &a{i} {i}" for i in range(150))
    path = tmp_path / "run.yaml"
    path.write_text(anchors + "\nx: [" + ", ".join(f"*a{i}" for i in range(150)) + "]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="more than 100 YAML aliases"):
        load_config(path)


def test_a_shared_anchor_within_the_limits_still_works(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("responses: r.jsonl\njudge:\n  backend: simulated\n  ratings: &r {m1: 1000, m2: 1100}\n"
                    "models: [m1, m2]\n", encoding="utf-8")
    assert load_config(path).judge["ratings"] == {"m1": 1000.0, "m2": 1100.0}


@pytest.mark.parametrize("kind", ["billion_laughs", "latin1", "folder", "missing", "list", "too_big"])
def test_the_cli_refuses_a_bad_config_file_with_one_line_naming_it(tmp_path, kind):
    path = tmp_path / "run.yaml"
    if kind == "billion_laughs":
        path.write_text(LAUGHS, encoding="utf-8")
    elif kind == "latin1":
        path.write_bytes("responses: r\u00e9sum\u00e9.jsonl\njudge: {}\n".encode("latin-1"))
    elif kind == "folder":
        path.mkdir()
    elif kind == "list":
        path.write_text("- a\n- b\n", encoding="utf-8")
    elif kind == "too_big":
        path.write_text("# " + "x" * 1_100_000 + "\n", encoding="utf-8")
    res = run_cli("judge", "--config", path, "--dry-run", cwd=tmp_path, timeout=120)
    _one_clean_error(res, "run.yaml: ")
    assert res.returncode == 2 and list(tmp_path.glob("*.sqlite")) == []


# -- jobs that would do nothing, and runs that fail -----------------------------------------------------------
def test_a_one_model_job_exits_non_zero_even_on_a_dry_run(tmp_path):
    path = _write(tmp_path, {"models": ["m1"]})
    _one_clean_error(run_cli("judge", "--config", path, "--dry-run", cwd=tmp_path), "models", "at least 2")
    write_responses(tmp_path, 3, ["m1"])  # responses from one model only, no models: filter
    path.write_text(yaml.safe_dump({"responses": "responses.jsonl", "judge": SIMULATED}), encoding="utf-8")
    _one_clean_error(run_cli("judge", "--config", path, "--dry-run", cwd=tmp_path), "nothing to judge",
                     "1 model(s)", "at least 2 models")


def test_a_job_with_no_comparisons_exits_non_zero(tmp_path):
    with (tmp_path / "responses.jsonl").open("w", encoding="utf-8") as fh:  # each prompt answered by one model
        for p, m in (("p0", "m1"), ("p1", "m2")):
            fh.write(json.dumps({"prompt_id": p, "model": m, "text": "t", "instruction": "q"}) + "\n")
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"responses": "responses.jsonl", "judge": SIMULATED}), encoding="utf-8")
    res = run_cli("judge", "--config", path, "--dry-run", cwd=tmp_path)
    _one_clean_error(res, "nothing to judge", "0 comparisons", "could not be built")


@pytest.mark.parametrize("design", ["all_pairs", "tournament"])
def test_a_run_where_every_game_fails_exits_4_after_storing_the_failures(tmp_path, design):
    path = write_config(tmp_path, "http://127.0.0.1:9/v1", n_prompts=2, models=["m1", "m2"], design=design,
                        limits={"max_attempts": 1})  # nothing listens on port 9: every call fails
    res = run_cli("judge", "--config", path, "--no-progress", "-o", "j.jsonl", cwd=tmp_path, timeout=120)
    _one_clean_error(res, "all 4 games of this job failed", "--retry-failed")
    assert res.returncode == 4 and "0 judged, 4 failed" in res.stdout
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        assert db.execute("SELECT status, COUNT(*) FROM games GROUP BY status").fetchall() == [("failed", 4)]
    assert len((tmp_path / "j.jsonl").read_text().splitlines()) == 4
    again = run_cli("judge", "--config", path, "--no-progress", cwd=tmp_path, timeout=120)  # all stored failed
    _one_clean_error(again, "all 4 games of this job failed")


def test_a_run_where_some_games_fail_exits_0_and_reports_the_count(tmp_path):
    fail_p0 = lambda messages, seen: "500" if "thing 0." in json.dumps(messages) else None  # noqa: E731
    with FaultServer(fault_fn=fail_p0) as srv:
        path = write_config(tmp_path, srv.url, n_prompts=3, models=["m1", "m2"], limits={"max_attempts": 1})
        res = run_cli("judge", "--config", path, "--no-progress", "--json", cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert (summary["judged"], summary["failed"], summary["ok_total"], summary["failed_total"]) == (4, 2, 4, 2)
    assert "2 of 6 games of this job failed" in res.stderr


@pytest.mark.parametrize("option", [["--concurrency", "0"], ["--max-calls", "-1"], ["--max-cost", "-1.5"]])
def test_cli_overrides_are_range_checked_too(tmp_path, option):
    res = run_cli("judge", "--config", _write(tmp_path, {}), "--dry-run", *option, cwd=tmp_path)
    _one_clean_error(res, f"error: {option[0]} = {option[1]}: must be ")
    assert res.returncode == 2 and not (tmp_path / "s.sqlite").exists()


def test_budget_and_rate_limits_from_python_are_checked_by_the_same_schema():
    import numpy as np

    from judgewise.judges.limits import Budget, RateLimits

    assert Budget(max_calls=np.int64(3), max_cost=0).max_calls == 3 and RateLimits(rpm=60).rpm == 60
    for make, message in [(lambda: Budget(max_calls=-1), "budget.max_calls = -1: must be an integer >= 0"),
                          (lambda: Budget(max_calls=True), "budget.max_calls = true (a boolean)"),
                          (lambda: Budget(max_cost=float("nan")), "budget.max_cost = NaN"),
                          (lambda: RateLimits(tpm=0), "limits.tpm = 0: must be a number >= 1 (per minute)"),
                          (lambda: RateLimits(rpm=1e-300), "limits.rpm = 1e-300: must be a number >= 1")]:
        with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
            make()


def test_paths_may_be_pathlib_objects_from_python(tmp_path):
    cfg = load_config({"responses": tmp_path / "r.jsonl", "store": tmp_path / "s.sqlite", "output": None,
                       "judge": SIMULATED})
    assert cfg.store == str(tmp_path / "s.sqlite") and cfg.responses == str(tmp_path / "r.jsonl")
    assert cfg.output is None


# -- designs from a run config ------------------------------------------------------------------------
def test_the_adaptive_design_runs_from_a_run_config_through_the_cli_round_by_round(tmp_path):
    cfg = {**_simulated_pool(tmp_path, 5, 12), "orders": "one",
           "design": {"name": "adaptive", "budget": 40, "batch_size": 5, "seed": 1}}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    res = run_cli("judge", "--config", tmp_path / "run.yaml", "--no-progress", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["design"] == "adaptive" and summary["rounds"] >= 3  # it asked round by round
    assert summary["design_info"]["stopped"] in ("budget", "resolved", "exhausted")
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        stored = db.execute("SELECT COUNT(*) FROM games WHERE status = 'ok'").fetchone()[0]
    assert stored == summary["ok_total"] and 0 < stored <= 40
    again = run_cli("judge", "--config", tmp_path / "run.yaml", "--no-progress", "--json", cwd=tmp_path)
    assert again.returncode == 0 and json.loads(again.stdout)["calls_made"] == 0  # a rerun pays nothing again


def test_a_designs_package_design_works_in_a_fresh_process_without_importing_the_designs_first(tmp_path):
    import subprocess
    import sys
    cfg = {**_simulated_pool(tmp_path, 3, 2), "design": {"name": "quadratic"}}
    code = ("import json, sys; from judgewise.pipeline import build_job; "
            f"print(len(build_job(json.loads(sys.argv[1])).comparisons))")
    res = subprocess.run([sys.executable, "-c", code, json.dumps(cfg)], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "6"


def test_an_anchor_design_accepts_several_anchors_from_a_run_config(tmp_path):
    cfg = {**_simulated_pool(tmp_path, 4, 2), "design": {"name": "anchor", "anchors": ["m1", "m2"]}}
    job = build_job(cfg)
    assert len(job.comparisons) == 2 * 5 and all(c.model_b in ("m1", "m2") for c in job.comparisons)


# -- prompt_ids: the prompts a run judges, by id ---------------------------------------------------------------
def test_prompt_ids_choose_the_prompts_judged_before_max_prompts(tmp_path):
    write_responses(tmp_path, 5, ["m1", "m2", "m3"])
    base = {"responses": str(tmp_path / "responses.jsonl"), "judge": SIMULATED, "store": str(tmp_path / "s.sqlite")}
    job = build_job({**base, "prompt_ids": ["p4", "p1", "p3"]})
    assert sorted({c.prompt_id for c in job.comparisons}) == ["p1", "p3", "p4"]
    assert len(job.comparisons) == 3 * 3  # 3 pairs of 3 models on each
    job = build_job({**base, "prompt_ids": ["p4", "p1", "p3"], "max_prompts": 2})
    assert sorted({c.prompt_id for c in job.comparisons}) == ["p1", "p3"]  # the first 2 of the ids, sorted


def test_prompt_ids_given_as_numbers_are_read_as_the_ids_the_readers_hold(tmp_path):
    rows = [{"prompt_id": p, "model": m, "text": f"{m} on {p}", "instruction": f"q{p}"} for p in (81, 82, 83)
            for m in ("m1", "m2")]
    pd.DataFrame(rows).to_json(tmp_path / "r.jsonl", orient="records", lines=True)
    job = build_job({"responses": str(tmp_path / "r.jsonl"), "judge": SIMULATED, "prompt_ids": [83, 81],
                     "store": str(tmp_path / "s.sqlite")})
    assert sorted({c.prompt_id for c in job.comparisons}) == ["81", "83"]


@pytest.mark.parametrize("ids, needle", [
    ([], "<dict>: prompt_ids"), ("p1", "<dict>: prompt_ids"), (["p1", "p1"], '"p1" is listed more than once'),
    ([True], "<dict>: prompt_ids[0]"), ([""], "<dict>: prompt_ids[0]")])
def test_malformed_prompt_ids_are_refused_naming_the_key(ids, needle):
    assert needle in _config_error({**BASE, "prompt_ids": ids})


def test_prompt_ids_without_responses_are_refused_naming_them(tmp_path):
    path = _write(tmp_path, {"prompt_ids": ["p0", "p9", "P1"]})
    with pytest.raises(ConfigError) as info:
        build_job(path)
    message = str(info.value)
    assert message.startswith(f"{path}: prompt_ids ['P1', 'p9'] (2 of 3)") and "p0" in message  # ids there


def test_the_local_backend_takes_n_threads_and_no_other_backend_does():
    cfg = load_config({**BASE, "judge": {"backend": "local", "n_threads": 2}})
    assert cfg.judge["n_threads"] == 2
    assert _config_error({**BASE, "judge": {"backend": "local", "n_threads": 0}}).startswith(
        "<dict>: judge.n_threads = 0")
    assert "not an option of the \"simulated\" backend" in _config_error(
        {**BASE, "judge": {**SIMULATED, "n_threads": 2}})
