"""A refused command leaves nothing behind: every ``JUDGEWISE_*`` setting is checked when a command starts (before a
store or output folder exists, with no "coroutine was never awaited" warning), ``label`` binds its host and port
before making its store, and ``demo`` checks its options and output folder before part 1. ``JUDGEWISE_PROGRESS``
takes the usual on and off spellings in any case and refuses the rest.

Each command runs through the real entry point (:func:`tests.support.run_cli`) in a folder holding only its inputs;
the folder must be the same afterwards."""

from __future__ import annotations

import io
import socket
import subprocess

import pytest
import yaml
from rich.console import Console

from judgewise.commands.progress import env_setting, progress_mode
from judgewise.errors import ConfigError, InputError
from tests.support import REPO, run_cli
from tests.support.bad_inputs.outcomes import classify, snapshot
from tests.support.labelling import make_label_inputs

SLICE = REPO / "examples" / "alpacaeval"


def judge_config(folder) -> str:
    ratings = {"claude-2": 1100, "gpt-3.5-turbo-1106": 1050, "falcon-7b-instruct": 950}
    config = {"responses": str(SLICE), "models": sorted(ratings), "max_prompts": 3, "orders": "both",
              "judge": {"backend": "simulated", "ratings": ratings, "seed": 3}, "store": "store.sqlite"}
    (folder / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return "run.yaml"


def refused(folder, *args, env=None):
    """Run ``judgewise ARGS`` in ``folder``; assert it was refused in one error line with the folder unchanged and
    no warning; returns that error line."""
    before = snapshot(folder)
    try:
        res = run_cli(*args, cwd=folder, env=env, timeout=60)
    except subprocess.TimeoutExpired:
        res = None  # still running (a labelling page served): classified a timeout
    kind, line = classify(res, before, snapshot(folder))
    assert kind == "clean", f"{kind}: {line}"
    assert res.returncode != 0 and "never awaited" not in res.stderr and "Warning" not in res.stderr, res.stderr
    return line


@pytest.mark.parametrize(("name", "value"), [
    ("JUDGEWISE_PROGRESS_INTERVAL", "-1"), ("JUDGEWISE_PROGRESS_INTERVAL", "nan"),
    ("JUDGEWISE_PROGRESS_INTERVAL", "soon"), ("JUDGEWISE_PROGRESS_INTERVAL", "1e999"),
    ("JUDGEWISE_EVENT_LOOP", "trio"), ("JUDGEWISE_PROGRESS", "maybe")])
def test_a_bad_setting_refuses_judge_before_its_store_is_made(tmp_path, name, value):
    line = refused(tmp_path, "judge", "--config", judge_config(tmp_path), env={name: value})
    assert name in line and repr(value) in line


def test_a_bad_event_loop_refuses_evaluate_and_demo_before_anything_is_written(tmp_path):
    env = {"JUDGEWISE_EVENT_LOOP": "trio"}
    refused(tmp_path, "evaluate", "--config", REPO / "examples" / "evaluate-simulated.yaml", "--store", "s.sqlite",
            "--bootstrap", "0", env=env)
    refused(tmp_path, "demo", "--no-judge", "--output", "out", env=env)


@pytest.mark.parametrize("value", ["off", "OFF", "0", "false", "No"])
def test_progress_off_in_any_usual_spelling_draws_nothing_on_a_pipe(tmp_path, value):
    res = run_cli("judge", "--config", judge_config(tmp_path), cwd=tmp_path,
                  env={"JUDGEWISE_PROGRESS": value, "JUDGEWISE_PROGRESS_INTERVAL": "0"})
    assert res.returncode == 0, res.stderr
    assert "━" not in res.stderr and "judged " not in res.stderr and "judging" not in res.stderr, res.stderr


@pytest.mark.parametrize(("value", "expected"), [
    ("on", True), ("ON", True), ("1", True), ("true", True), ("Yes", True), (" off ", False), ("FALSE", False),
    ("", None)])
def test_progress_setting_spellings(monkeypatch, value, expected):
    monkeypatch.setenv("JUDGEWISE_PROGRESS", value)
    assert env_setting() is expected
    mode = progress_mode(None, Console(file=io.StringIO(), force_terminal=False))
    assert mode == {True: "bar", False: None, None: "lines"}[expected]


@pytest.mark.parametrize("value", ["maybe", "2", "enable", "nope", "0.0"])
def test_progress_setting_refuses_anything_else(monkeypatch, value):
    monkeypatch.setenv("JUDGEWISE_PROGRESS", value)
    with pytest.raises(ConfigError, match="JUDGEWISE_PROGRESS"):
        env_setting()


def label_args(folder, *extra) -> list:
    scores, answers, items = make_label_inputs(folder, n_items=4)
    return ["label", scores, "--store", "labels.sqlite", "--target", "judge-x", "--responses", answers, "--items",
            items, *extra]


def test_label_on_a_port_in_use_is_refused_before_its_store_is_made(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        line = refused(tmp_path, *label_args(tmp_path, "--port", str(port)))
    assert f"port {port}" in line and "in use" in line and "--port" in line


@pytest.mark.parametrize(("extra", "says"), [
    (("--port", "70000"), "--port 70000 is not a TCP port"), (("--port", "-1"), "--port -1 is not a TCP port"),
    (("--host", "192.0.2.1", "--port", "0"), "not an address of this machine")])
def test_label_with_a_bad_port_or_a_foreign_host_is_refused_before_its_store_is_made(tmp_path, extra, says):
    assert says in refused(tmp_path, *label_args(tmp_path, *extra))


def test_label_with_a_bad_setting_is_refused_instead_of_serving(tmp_path):
    line = refused(tmp_path, *label_args(tmp_path, "--port", "0"), env={"JUDGEWISE_PROGRESS_INTERVAL": "-1"})
    assert "JUDGEWISE_PROGRESS_INTERVAL" in line


@pytest.mark.parametrize(("args", "says"), [
    (("--output", "taken"), "taken: is a file, not a folder"),
    (("--output", "taken/sub"), "taken is a file, not a folder"),
    (("--output", "/proc/judgewise-demo/out"), "cannot make it in /proc"),
    (("--bootstrap", "-1"), "--bootstrap rounds must be an integer in [0, 100,000], got -1"),
    (("--threads", "0"), "--threads 0: expected a number of CPU threads >= 1")])
def test_demo_checks_its_options_and_output_folder_before_part_1(tmp_path, args, says):
    (tmp_path / "taken").write_text("a file\n", encoding="utf-8")
    line = refused(tmp_path, "demo", "--no-judge", *args)
    assert says in line


def test_an_output_folder_is_checked_without_leaving_anything(tmp_path):
    from judgewise.io.atomic import check_output_folder

    check_output_folder(tmp_path / "new" / "deeper")  # may be made: nothing made yet
    check_output_folder(tmp_path)  # an existing folder is written into
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "f").write_text("x")
    for bad in (tmp_path / "f", tmp_path / "f" / "sub"):
        with pytest.raises(InputError, match="not a folder"):
            check_output_folder(bad)


@pytest.mark.parametrize(("output", "says"), [
    ("taken/answers", "taken is a file, not a folder"), ("/proc/judgewise-gen/answers", "cannot make it in /proc")])
def test_generate_refuses_an_answers_folder_it_cannot_make_before_any_call(tmp_path, output, says):
    from tests.support.generation import server, write_gen_config, write_questions

    write_questions(tmp_path, 2)
    (tmp_path / "taken").write_text("a file\n", encoding="utf-8")
    with server() as srv:
        config = write_gen_config(tmp_path, srv.url, format="mtbench", output=output)
        line = refused(tmp_path, "generate", "-c", config)
        assert sum(srv.requests.values()) == 0  # nothing paid for answers that could not be written
    assert says in line
