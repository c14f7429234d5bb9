"""Options declared once: ``cli.options.options_command`` builds a command's options from a frozen dataclass of the
commands layer, and every flag shared by several commands is one ``Annotated`` alias of ``cli/options.py``."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from judgewise.cli.options import Seed, flag, options_command
from judgewise.commands.options import RankOptions
from tests.support import REPO

CLI = REPO / "src" / "judgewise" / "cli"


@dataclasses.dataclass(frozen=True)
class Settings:
    level: float = 0.95
    seed: int = 0
    name: str | None = None
    internal: int = 7  # no flag: keeps its default


def test_options_command_builds_the_frozen_dataclass_from_flags_and_field_defaults():
    seen = []

    @options_command(Settings, {"level": flag("--level", help="A level."), "seed": Seed,
                                "name": flag("--name", help="A name.")})
    def command(path: Path = typer.Argument(...), *, options: Settings) -> None:
        seen.append((path, options))

    app = typer.Typer()
    app.command()(command)
    res = CliRunner().invoke(app, ["x.jsonl", "--seed", "5", "--name", "n[1]"])
    assert res.exit_code == 0, res.output
    assert seen == [(Path("x.jsonl"), Settings(seed=5, name="n[1]"))]
    assert CliRunner().invoke(app, ["y"]).exit_code == 0 and seen[-1][1] == Settings()
    assert "--internal" not in CliRunner().invoke(app, ["--help"]).output


def test_options_command_refuses_a_flag_for_no_field():
    with pytest.raises(TypeError, match="no fields"):
        options_command(Settings, {"levle": flag("--levle", help="typo")})


def test_rank_takes_every_rank_option_as_a_flag(cli):
    helptext = cli("rank", "--help", env={"COLUMNS": "250"}).stdout
    for f in dataclasses.fields(RankOptions):
        assert f"--{f.name.replace('_', '-')}" in helptext, f.name


SHARED = ("--json", "--seed", "--ci-level", "--skip-invalid", "--pool-judges", "--l2", "--store", "--max-calls",
          "--max-cost", "--concurrency", "--dry-run", "--retry-failed", "--alpha", "--power", "--human",
          "--candidates", "--trials")


def test_shared_flags_are_declared_only_in_the_options_module():
    """A shared flag's ``typer.Option`` appears in ``cli/options.py`` only (once per meaning: ``--human`` is human
    scores for ``reliability``, human pairwise labels for ``evaluate``); a command module names the alias."""
    declared = {}
    for path in CLI.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Option":
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and arg.value in SHARED:
                        declared.setdefault(arg.value, []).append(path.name)
    assert {name: set(files) for name, files in declared.items()} == {name: {"options.py"} for name in SHARED}
