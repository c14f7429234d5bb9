"""Progress lines when stderr is not a terminal (commands.progress): judge, evaluate and generate runs whose stderr
is a pipe or a file print plain lines at most every JUDGEWISE_PROGRESS_INTERVAL seconds, ending at the run's final
count; --no-progress and JUDGEWISE_PROGRESS=0 silence them; a run shorter than the interval prints none."""

from __future__ import annotations

import io
import json
import re

import pytest
import yaml
from rich.console import Console

from judgewise.commands.progress import ProgressLines, progress_mode

from tests.support import REPO, run_cli, run_process

SLICE = REPO / "examples" / "alpacaeval"
JUDGED = re.compile(r"^judged ([\d,]+)/([\d,]+) games \((\d+)%\), [\d.]+ games/s, (\d+) failed, "
                    r"\d+:\d\d elapsed(, ETA \d+:\d\d)?$")
EVALUATED = re.compile(r"^evaluated ([\d,]+) games, [\d.]+ games/s, (\d+) failed \(cap ([\d,]+)\)")


def number(text: str) -> int:
    return int(text.replace(",", ""))


def judge_config(tmp_path, prompts: int = 30) -> str:
    ratings = {"claude-2": 1100, "gpt-3.5-turbo-1106": 1050, "falcon-7b-instruct": 950}
    config = {"responses": str(SLICE), "models": sorted(ratings), "max_prompts": prompts, "orders": "both",
              "judge": {"backend": "simulated", "ratings": ratings, "seed": 3}, "store": "store.sqlite"}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return "run.yaml"


@pytest.mark.slow
def test_judging_with_stderr_a_pipe_prints_progress_lines_up_to_every_game(tmp_path):
    games = 30 * 3 * 2
    res = run_process("judge", "--config", judge_config(tmp_path), "--json", cwd=tmp_path,
                      env={"JUDGEWISE_PROGRESS_INTERVAL": "0", "JUDGEWISE_PROGRESS": ""})
    assert res.returncode == 0, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.startswith("judged ")]
    matches = [JUDGED.match(line) for line in lines]
    assert lines and all(matches), lines[:3]
    done = [number(m.group(1)) for m in matches]
    assert done == sorted(done) and done[-1] == games == json.loads(res.stdout)["judged"]
    assert {number(m.group(2)) for m in matches} == {games}
    assert matches[-1].group(3) == "100" and matches[-1].group(5) is None  # nothing left: no ETA


def test_no_progress_and_the_environment_silence_the_lines_and_a_short_run_prints_none(tmp_path):
    config = judge_config(tmp_path, prompts=5)
    quiet = run_cli("judge", "--config", config, "--no-progress", "--store", "a.sqlite", cwd=tmp_path,
                    env={"JUDGEWISE_PROGRESS_INTERVAL": "0"})
    off = run_cli("judge", "--config", config, "--store", "b.sqlite", cwd=tmp_path,
                  env={"JUDGEWISE_PROGRESS_INTERVAL": "0", "JUDGEWISE_PROGRESS": "0"})
    short = run_cli("judge", "--config", config, "--store", "c.sqlite", cwd=tmp_path,
                    env={"JUDGEWISE_PROGRESS_INTERVAL": "3600"})
    for res in (quiet, off, short):
        assert res.returncode == 0, res.stderr
        assert "judged " not in res.stderr and "games/s" not in res.stderr


def test_evaluate_with_stderr_a_file_prints_lines_ending_at_its_calls(tmp_path):
    res = run_cli("evaluate", "--config", str(REPO / "examples" / "evaluate-simulated.yaml"), "--store",
                  "sim.sqlite", "--bootstrap", "0", "--max-calls", "120", "--json", cwd=tmp_path,
                  env={"JUDGEWISE_PROGRESS_INTERVAL": "0", "JUDGEWISE_PROGRESS": ""})
    assert res.returncode == 0, res.stderr
    matches = [EVALUATED.match(line) for line in res.stderr.splitlines() if line.startswith("evaluated ")]
    assert matches and all(matches)
    games = [number(m.group(1)) for m in matches]
    result = json.loads(res.stdout)
    assert games == sorted(games) and games[-1] == result["calls"]
    assert number(matches[-1].group(3)) >= result["calls"]


def test_a_bad_interval_is_one_error_line(tmp_path):
    res = run_cli("judge", "--config", judge_config(tmp_path, prompts=2), cwd=tmp_path,
                  env={"JUDGEWISE_PROGRESS_INTERVAL": "soon", "JUDGEWISE_PROGRESS": ""})
    assert res.returncode != 0
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "JUDGEWISE_PROGRESS_INTERVAL = 'soon'" in errors[0], res.stderr


def test_lines_are_at_least_the_interval_apart_and_the_last_state_is_printed_at_the_end():
    now = [0.0]
    console = Console(file=io.StringIO(), width=200)
    with ProgressLines(console, "judged", "games", interval=10.0, clock=lambda: now[0]) as lines:
        for done in range(1, 101):
            now[0] = done * 0.5  # one game every half second: a line every 20 games
            lines.show(done, 100, failed=done // 50)
    printed = console.file.getvalue().splitlines()
    assert [int(re.match(r"judged (\d+)/", line).group(1)) for line in printed] == [20, 40, 60, 80, 100]
    assert printed[-1].startswith("judged 100/100 games (100%), 2.0 games/s, 2 failed, 0:50 elapsed")


@pytest.mark.parametrize(("flag", "setting", "terminal", "expected"), [
    (None, "", True, "bar"), (None, "", False, "lines"), (True, "", False, "bar"), (False, "", True, None),
    (None, "0", False, None), (None, "1", False, "bar")])
def test_the_mode_follows_the_flag_then_the_environment_then_the_terminal(monkeypatch, flag, setting, terminal,
                                                                          expected):
    monkeypatch.setenv("JUDGEWISE_PROGRESS", setting)
    console = Console(file=io.StringIO(), force_terminal=terminal)
    assert progress_mode(flag, console) == expected
