"""``judgewise completion SHELL``: print the shell-completion script (``--install-completion`` installs it)."""

from __future__ import annotations

import typer
from typer.completion import Shells, get_completion_script

PROG = "judgewise"
COMPLETE_VAR = "_JUDGEWISE_COMPLETE"  # what Typer reads when the shell asks for completions


def register(app: typer.Typer) -> None:
    """Add ``completion`` to the app."""

    @app.command()
    def completion(shell: Shells = typer.Argument(..., help="The shell to complete in.")) -> None:
        """Print the completion script for SHELL; e.g. `judgewise completion bash >> ~/.bashrc`, or
        `judgewise --install-completion` to install it for the current shell."""
        typer.echo(get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell.value))
