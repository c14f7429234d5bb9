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


def test_library_errors_name_parameters_and_the_cli_prints_its_flags(tmp_path):
    from judgewise.analysis.power import check_wilcoxon_sizes
    from judgewise.cli.error_flags import as_flags
    from judgewise.errors import ConfigError

    with pytest.raises(ConfigError) as err:  # a notebook user is told the parameter ...
        check_wilcoxon_sizes([10, 20], 0)
    assert str(err.value) == "`n_simulations` must be an integer ≥ 1, got 0"
    assert as_flags(str(err.value)) == "--simulations must be an integer ≥ 1, got 0"  # ... the CLI its flag
    assert as_flags('use `method="bt"`; `by=\'topic\'`: (`partial=True`)') == "use --method bt; --by topic: (--partial)"
    assert as_flags("run `judgewise evaluate --config a.yaml` first; ``seed``") == \
        "run `judgewise evaluate --config a.yaml` first; ``seed``"  # a command line or a doc literal is kept
    res = run_cli("power", "wilcoxon", "--distribution", "1:0.5,-1:0.5", "--n", "10", "--simulations", "0",
                  cwd=tmp_path)
    assert res.returncode != 0 and "error: --simulations must be an integer ≥ 1, got 0" in res.stderr
