"""Usage errors (unknown command or option, a value of the wrong type, a missing argument) are one line too."""

from __future__ import annotations

import pytest

from tests.support import run_cli

CASES = {
    "wrong_type": (("rank", "--bootstrap", "abc", "x.jsonl"), "'--bootstrap'"),
    "missing_argument": (("rank",), "'path'"),
    "unknown_command": (("nosuch",), "'nosuch'"),
    "unknown_option": (("rank", "--nope", "x.jsonl"), "--nope"),
    "bad_choice_type": (("power", "sign", "--alpha", "x"), "--alpha"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_usage_error_is_one_line_naming_the_option_and_exit_2(name):
    args, names = CASES[name]
    res = run_cli(*args)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2, res.stderr
    assert len(lines) == 1 and lines[0].startswith("error: judgewise"), res.stderr
    assert names in lines[0] and "--help" in lines[0]
    assert "Traceback" not in res.stderr and "╭" not in res.stderr


def test_help_still_exits_0_with_the_command_list():
    res = run_cli("--help")
    assert res.returncode == 0 and "rank" in res.stdout and not res.stderr.strip()
