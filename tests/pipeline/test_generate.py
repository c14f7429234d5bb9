"""`judgewise generate` against a real OpenAI-compatible server on 127.0.0.1: faults retried, every answer paid once,
multi-turn conversations sent as they must be, outputs readable by the project's readers, bad configs refused."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest

import yaml

from judgewise.errors import BudgetExceeded, ConfigError, InputError
from judgewise.io import read_responses
from judgewise.io.arenahard import read_answers as read_arena_hard_answers
from judgewise.io.mtbench import read_answers as read_fastchat_answers
from judgewise.store.generations import GenerationStore
from judgewise.pipeline.evaluation import evaluate
from judgewise.pipeline.generate import generate, generated_responses
from judgewise.pipeline.generate_config import load_generate_with_overrides
from tests.support import cli_json, run_cli
from tests.support.fault_server import request_key
from tests.support.generation import answer, server, write_gen_config, write_questions

FAULTS = {"429": 0.1, "500": 0.08, "drop": 0.04, "html": 0.04, "truncated_json": 0.04, "no_choices": 0.04}


def _summary(res) -> dict:
    assert res.returncode == 0, f"exit {res.returncode}\n{res.stderr}"
    return json.loads(res.stdout)


def test_faults_are_retried_and_every_answer_is_paid_exactly_once(tmp_path):
    write_questions(tmp_path, 12)
    with server(rates=FAULTS, seed=5) as srv:
        config = write_gen_config(tmp_path, srv.url)
        summary = _summary(run_cli("generate", "-c", config, "--no-progress", "--json", cwd=tmp_path))
        successes, events = dict(srv.successes), dict(srv.events)
    assert summary["answers"] == 2 * 12 * 2 and summary["generated"] == 48 and summary["failed"] == 0
    assert summary["retries"] > 0 and sum(events.get(k, 0) for k in FAULTS) == summary["retries"]
    assert set(successes.values()) == {1} and len(successes) == 48  # no answer paid twice
    assert summary["calls_made"] == 48 and summary["complete"] == 24
    frame = pd.read_json(tmp_path / "answers.jsonl", lines=True)
    assert len(frame) == 24 and frame["turns"].map(len).eq(2).all()


def test_rerun_of_a_finished_job_makes_no_call(tmp_path):
    write_questions(tmp_path, 5)
    with server() as srv:
        config = write_gen_config(tmp_path, srv.url)
        first = generate(config).summary
        before = sum(srv.requests.values())
        again = generate(config).summary
        after = sum(srv.requests.values())
    assert first["generated"] == 20 and before == 20
    assert after == before  # not one request
    assert again["calls_made"] == 0 and again["cached"] == 20 and again["generated"] == 0


def test_turn_two_is_asked_with_the_models_own_first_answer(tmp_path):
    questions = write_questions(tmp_path, 4)
    seen: list[list[dict]] = []

    def recording(messages):
        seen.append(messages)
        return answer(messages)

    with server() as srv:
        srv.answer = recording
        generate(write_gen_config(tmp_path, srv.url))
    asked = [json.loads(line) for line in questions.read_text().splitlines()]
    expected = []
    for model in ("alpha", "beta"):
        for q in asked:
            first = [{"role": "system", "content": f"You are {model}."}, {"role": "user", "content": q["turns"][0]}]
            expected.append(first)  # turn 2 carries turn 1's answer as the server gave it
            expected.append(first + [{"role": "assistant", "content": answer(first)},
                                     {"role": "user", "content": q["turns"][1]}])
    assert sorted(map(request_key, seen)) == sorted(map(request_key, expected))
    frame = pd.read_json(tmp_path / "answers.jsonl", lines=True)
    row = frame[(frame["model"] == "beta") & (frame["prompt_id"] == 101)].iloc[0]
    assert row["turns"] == [answer(expected[10]), answer(expected[11])]  # beta: after alpha's 8 requests
    assert row["prompt_turns"] == asked[1]["turns"] and row["instruction"] == asked[1]["turns"][0]


def test_turns_first_asks_only_the_first_turn(tmp_path):
    write_questions(tmp_path, 3)
    with server() as srv:
        summary = generate(write_gen_config(tmp_path, srv.url, turns="first")).summary
        assert sum(srv.requests.values()) == 6
    assert summary["answers"] == 6 and summary["complete"] == 6


MARKDOWN = "# Title\n## Part\n- one\n* two\n1. first\n**bold** and __also__\n```\n# not a header\n- nor a list\n```\n"


def test_arena_hard_output_is_read_back_by_the_arena_hard_reader(tmp_path, shared):
    questions = shared / "data" / "arenahard" / "v2.0" / "question.jsonl"
    published = json.loads((shared / "data" / "arenahard" / "v2.0" / "model_answer" /
                            "o3-mini-2025-01-31.jsonl").read_text().splitlines()[0])
    with server() as srv:
        srv.answer = lambda messages: MARKDOWN
        generate(write_gen_config(tmp_path, srv.url, prompts=str(questions), max_prompts=5, format="arena-hard",
                                  output="model_answer"))
    table = read_arena_hard_answers(tmp_path / "model_answer")
    uids = [json.loads(line)["uid"] for line in questions.read_text().splitlines()[:5]]
    assert sorted(table.frame["model"].unique()) == ["alpha", "beta"]
    assert sorted(table.frame["prompt_id"]) == sorted(uids * 2) and (table.frame["text"] == MARKDOWN).all()
    assert read_responses(tmp_path / "model_answer").report.format == "arenahard-answers"  # detected as such
    record = json.loads((tmp_path / "model_answer" / "alpha.jsonl").read_text().splitlines()[0])
    assert set(record) >= set(published) - {"metadata"} and set(record["metadata"]) == set(published["metadata"])
    assert record["metadata"]["header_count"] == {"h1": 1, "h2": 1, "h3": 0, "h4": 0, "h5": 0, "h6": 0}
    assert record["metadata"]["list_count"] == {"ordered": 1, "unordered": 2}  # the code block's lines not counted
    assert record["metadata"]["bold_count"] == {"**": 1, "__": 1}
    assert (table.frame[["n_headers", "n_lists", "n_bold"]] == [2, 3, 2]).all().all()  # the reader's style columns
    assert [m["role"] for m in record["messages"]] == ["system", "user", "assistant"][1:]


def test_mtbench_output_is_read_back_as_fastchat_answers(tmp_path):
    write_questions(tmp_path, 3)
    with server() as srv:
        generate(write_gen_config(tmp_path, srv.url, format="mtbench", output="model_answer"))
    frame = read_fastchat_answers(tmp_path / "model_answer").frame
    assert len(frame) == 6 and frame["turns"].map(len).eq(2).all()
    assert sorted(frame["prompt_id"].astype(str).unique()) == ["100", "101", "102"]


def test_one_store_rewrites_another_format_without_a_call(tmp_path):
    write_questions(tmp_path, 3)
    with server() as srv:
        config = write_gen_config(tmp_path, srv.url)
        generate(config)
        n = sum(srv.requests.values())
        again = generate(load_generate_with_overrides(config, format="arena-hard", output=str(tmp_path / "ah")))
        assert sum(srv.requests.values()) == n and again.summary["calls_made"] == 0
    assert sorted(p.name for p in (tmp_path / "ah").iterdir()) == ["alpha.jsonl", "beta.jsonl"]


def test_evaluate_takes_the_generate_config_or_its_store_as_responses(tmp_path):
    write_questions(tmp_path, 4)
    with server() as srv:
        config = write_gen_config(tmp_path, srv.url)
        run = {"judge": {"backend": "simulated", "ratings": {"alpha": 1000, "beta": 1200}}, "store": "judge.sqlite"}
        (tmp_path / "early.yaml").write_text(json.dumps({"responses": "gen.yaml", **run}))
        with pytest.raises(ConfigError, match="does not exist yet"):
            evaluate(tmp_path / "early.yaml", bootstrap=0)
        with pytest.raises(BudgetExceeded):
            generate(load_generate_with_overrides(config, max_calls=3))
        with pytest.raises(ConfigError, match=r"not fully generated yet .*; run `judgewise generate --config"):
            evaluate(tmp_path / "early.yaml", bootstrap=0)
        assert not (tmp_path / "judge.sqlite").exists()
        generate(config)
    for source in ("gen.yaml", "gens.sqlite", "answers.jsonl"):
        (tmp_path / "run.yaml").write_text(json.dumps({"responses": source, **run}))
        ranking = evaluate(tmp_path / "run.yaml", bootstrap=0).ranking.to_records()
        assert sorted(r["model"] for r in ranking) == ["alpha", "beta"], source
        assert all(r["n"] == 4 * 2 for r in ranking), source  # 4 prompts, both orders (turn 1)
    result = cli_json("evaluate", "-c", "early.yaml", "--json", "--bootstrap", "20", cwd=tmp_path)  # the command too
    assert sorted(r["model"] for r in result["ranking"]) == ["alpha", "beta"]
    by_config, by_store = generated_responses(config), generated_responses(tmp_path / "gens.sqlite")
    cols = ["prompt_id", "model", "turns"]
    pd.testing.assert_frame_equal(by_config[cols].sort_values(cols[:2], ignore_index=True),
                                  by_store[cols].sort_values(cols[:2], ignore_index=True))


def test_budget_stops_with_everything_stored_and_a_rerun_finishes(tmp_path):
    write_questions(tmp_path, 5)
    with server() as srv:
        config = write_gen_config(tmp_path, srv.url, limits={"concurrency": 1})
        stopped = run_cli("generate", "-c", config, "--max-calls", "7", "--no-progress", cwd=tmp_path)
        assert stopped.returncode == 5 and "budget" in stopped.stderr and "rerun to continue" in stopped.stderr
        assert not (tmp_path / "answers.jsonl").exists()  # no partial output
        assert sum(srv.successes.values()) == 7
        summary = generate(config).summary
        successes = dict(srv.successes)
    assert summary["generated"] == 13 and summary["cached"] == 7
    assert set(successes.values()) == {1} and len(successes) == 20


def test_a_refused_call_stops_the_run_with_the_reason(tmp_path):
    write_questions(tmp_path, 2)
    with server(api_key="right-key") as srv:
        config = write_gen_config(tmp_path, srv.url, model_options={"api_key_env": "GEN_TEST_KEY"})
        res = run_cli("generate", "-c", config, "--no-progress", cwd=tmp_path, env={"GEN_TEST_KEY": "wrong-key"})
    assert res.returncode == 4 and "refused a call" in res.stderr and "HTTP 401" in res.stderr
    assert "wrong-key" not in res.stderr  # the key never shown


def test_failed_answers_are_stored_counted_and_their_later_turns_not_asked(tmp_path, caplog):
    write_questions(tmp_path, 4)

    def fault(messages, seen):  # every first turn of prompt "Question 2" fails each attempt with 500
        return "500" if "Question 2, turn 1" in messages[-1]["content"] else None

    with server(fault_fn=fault) as srv:
        summary = generate(write_gen_config(tmp_path, srv.url, limits={"max_attempts": 2})).summary
    assert summary["failed"] == 2 and summary["blocked"] == 2 and summary["complete"] == 6
    assert "2 of 8 conversations are incomplete" in caplog.text
    frame = pd.read_json(tmp_path / "answers.jsonl", lines=True)
    assert 102 not in set(frame["prompt_id"]) and len(frame) == 6
    with GenerationStore.open_readonly(tmp_path / "gens.sqlite") as store:
        failed = store.frame().query("status == 'failed'")
    assert len(failed) == 2 and failed["error"].str.contains("HTTP 500").all()


BAD_CONFIGS = [
    ({"models": [{"name": "a", "temperature": -1}]}, "models[0].temperature = -1: must be a number in [0, 2]"),
    ({"models": [{"name": "a", "temprature": 0.5}]}, "did you mean 'temperature'"),
    ({"models": [{"name": "a"}, {"name": "a"}]}, '"a" is listed more than once'),
    ({"models": [{"name": "a", "model": "gpt-4o"}]}, "configure an OpenAI-compatible endpoint"),
    ({"models": []}, "models = []"),
    ({"prompts": "missing.jsonl"}, "missing.jsonl: no such questions file"),
    ({"output": "answers.txt"}, "output = "),
    ({"format": "alpacaeval"}, "format = \"alpacaeval\""),
]


@pytest.mark.parametrize("change, message", BAD_CONFIGS, ids=[m[:30] for _, m in BAD_CONFIGS])
def test_a_bad_config_is_one_clear_error_and_no_call(tmp_path, change, message):
    write_questions(tmp_path, 2)
    with server() as srv:
        config = write_gen_config(tmp_path, srv.url)
        cfg = yaml.safe_load(config.read_text())
        cfg.update(change)
        config.write_text(json.dumps(cfg))
        with pytest.raises((ConfigError, InputError)) as err:
            generate(config)
        assert sum(srv.requests.values()) == 0
    assert message in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "gens.sqlite").exists()


def test_the_command_shows_a_bad_config_as_one_line_and_exits_2(tmp_path):
    write_questions(tmp_path, 2)
    config = write_gen_config(tmp_path, "http://127.0.0.1:9/v1", models=["alpha"])
    config.write_text(config.read_text().replace("max_tokens: 64", "max_tokens: 0"))
    res = run_cli("generate", "-c", config, "--no-progress", cwd=tmp_path)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "models[0].max_tokens = 0: must be an integer >= 1" in res.stderr


def test_a_bad_questions_row_names_file_row_and_field(tmp_path):
    (tmp_path / "question.jsonl").write_text('{"uid": "a", "prompt": "fine"}\n{"uid": "b", "prompt": ""}\n')
    with server() as srv:
        with pytest.raises(InputError, match='question.jsonl row 2 field "turns": expected a prompt text'):
            generate(write_gen_config(tmp_path, srv.url))
        assert sum(srv.requests.values()) == 0


def test_dry_run_calls_nothing_and_writes_no_file(tmp_path):
    write_questions(tmp_path, 3)
    with server() as srv:
        result = generate(write_gen_config(tmp_path, srv.url), dry_run=True)
        assert sum(srv.requests.values()) == 0
    plan = result.plan.as_dict()
    assert plan["answers"] == 12 and plan["new"] == 12 and plan["max_tokens_out"] == 12 * 64
    assert not (tmp_path / "gens.sqlite").exists() and not (tmp_path / "answers.jsonl").exists()


def test_the_store_refuses_a_foreign_sqlite_file_without_writing_to_it(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE people (name TEXT)")
    before = path.read_bytes()
    with pytest.raises(InputError, match="SQLite database of something else"):
        GenerationStore(path)
    assert path.read_bytes() == before
    with pytest.raises(InputError, match="holds no generated answers|something else"):
        generated_responses(path)


def test_an_edited_question_is_a_new_answer(tmp_path):
    questions = write_questions(tmp_path, 2, turns=1)
    with server() as srv:
        config = write_gen_config(tmp_path, srv.url)
        generate(config)
        questions.write_text(questions.read_text().replace("Question 1,", "Question one,"))
        result = generate(config)
        assert sum(srv.requests.values()) == 4 + 2  # the edited question, for both models
    assert result.summary["generated"] == 2 and result.summary["cached"] == 2
    with pytest.raises(InputError, match="several answers to prompt '101'"):
        generated_responses(tmp_path / "gens.sqlite")
    assert len(generated_responses(config)) == 4  # the config names one version


def test_config_errors_from_python_name_the_source():
    with pytest.raises(ConfigError, match=r"<dict>: missing required key 'models'"):
        generate({"prompts": "question.jsonl"})
