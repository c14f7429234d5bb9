"""The small things a user expects of the command line (issue 22 item 5): --version, shell completion, ties shown
as ties, messages that say what happened, one warning per cause."""

from __future__ import annotations

from importlib.metadata import version

from tests.conftest import run_cli


def test_version_flag_prints_the_installed_distribution_version():
    res = run_cli("--version")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"judgewise {version('judgewise')}"


def test_completion_prints_a_bash_script_that_calls_judgewise():
    res = run_cli("completion", "bash")
    assert res.returncode == 0, res.stderr
    assert "complete " in res.stdout and "judgewise" in res.stdout
    assert "_JUDGEWISE_COMPLETE=complete_bash" in res.stdout


def test_completion_script_variable_completes_command_names():
    """What the bash script asks for (COMP_WORDS/COMP_CWORD and the variable) yields the matching commands."""
    res = run_cli(env={"_JUDGEWISE_COMPLETE": "complete_bash", "COMP_WORDS": "judgewise ra", "COMP_CWORD": "1"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["rank"]


def test_completion_refuses_an_unknown_shell_in_one_line():
    res = run_cli("completion", "tcsh")
    assert res.returncode != 0
    assert res.stderr.count("error:") == 1 and "tcsh" in res.stderr
