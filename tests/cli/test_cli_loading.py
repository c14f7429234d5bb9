"""``judgewise NAME ...`` imports only the module of command NAME (cli.app.COMMANDS): every command is in that table,
points at the module that registers it, and shows the same help alone as among all the commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from judgewise.cli.app import COMMAND_MODULES, COMMANDS, build_app
from tests.support import REPO


def top_commands(app: typer.Typer) -> set[str]:
    return set(typer.main.get_command(app).commands)


def test_the_table_names_every_command_of_the_app():
    assert top_commands(build_app()) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_command_alone_shows_the_help_it_shows_among_all(name):
    runner = CliRunner()
    alone = runner.invoke(build_app(name), [name, "--help"], prog_name="judgewise")
    among_all = runner.invoke(build_app(), [name, "--help"], prog_name="judgewise")
    assert alone.exit_code == 0, alone.output
    assert name in top_commands(build_app(name))
    assert alone.output == among_all.output


@pytest.mark.parametrize(("args", "loaded"), [
    (["rank", "--help"], {"judgewise.cli.rank_cmd"}),
    (["store", "stats", "--help"], {"judgewise.cli.store_cmd"}),
    (["--help"], set(COMMAND_MODULES) | {"judgewise.cli.store_cmd"}),  # the root help lists every command
    (["rnak"], set(COMMAND_MODULES) | {"judgewise.cli.store_cmd"}),    # a typo: every name to suggest from
])
def test_a_run_imports_the_command_modules_it_needs(args, loaded):
    code = ("import sys\nfrom judgewise.cli.app import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "import json\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('judgewise.cli.') "
            "and m.endswith('_cmd'))), file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    shown = set(json.loads(res.stderr.strip().splitlines()[-1]))
    assert shown == loaded | {"judgewise.cli.completion_cmd"}  # the app reads its COMPLETE_VAR
