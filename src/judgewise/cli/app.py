"""The ``judgewise`` command: builds the Typer app from the command modules and maps errors to exit codes."""

from __future__ import annotations

import importlib
import logging
import os
import sys

import typer
from rich.logging import RichHandler

import judgewise
from judgewise.cli.completion_cmd import COMPLETE_VAR
from judgewise.cli.console import err
from judgewise.cli.error_flags import as_flags
from judgewise.commands.display import say
from judgewise.commands.environment import check_environment
from judgewise.commands.progress import read_progress
from judgewise.errors import JudgewiseError
from judgewise.redaction import scrub
from judgewise.store.urls import is_url, masked

try:  # typer >= 0.2x vendors click; its usage errors derive from TyperException
    from typer import TyperException as UsageError
except ImportError:  # older typer on plain click
    from click import ClickException as UsageError

# Each module defines ``register(app)``; order is the order of ``judgewise --help``.
COMMAND_MODULES = (
    "judgewise.cli.rank_cmd",      # rank, agree
    "judgewise.cli.evaluate_cmd",  # evaluate
    "judgewise.cli.judge_cmd",     # judge, store export/stats
    "judgewise.cli.generate_cmd",  # generate
    "judgewise.cli.design_cmd",    # power, plan, simulate, anchors
    "judgewise.cli.reliability_cmd",  # select, reliability, study
    "judgewise.cli.diagnose_cmd",  # diagnose, accuracy
    "judgewise.cli.report_cmd",    # report, serve
    "judgewise.cli.demo_cmd",      # demo, version
    "judgewise.cli.completion_cmd",  # completion
)

# Each command -> the module that registers it: ``judgewise NAME ...`` imports that module only (the root help, shell
# completion and a name that is no command import them all, to list or suggest every command).
COMMANDS = {
    "rank": "judgewise.cli.rank_cmd", "agree": "judgewise.cli.rank_cmd",
    "evaluate": "judgewise.cli.evaluate_cmd",
    "judge": "judgewise.cli.judge_cmd", "store": "judgewise.cli.store_cmd",
    "generate": "judgewise.cli.generate_cmd",
    "power": "judgewise.cli.design_cmd", "plan": "judgewise.cli.design_cmd", "anchors": "judgewise.cli.design_cmd",
    "simulate": "judgewise.cli.design_cmd",
    "select": "judgewise.cli.reliability_cmd", "reliability": "judgewise.cli.reliability_cmd",
    "study": "judgewise.cli.reliability_cmd", "label": "judgewise.cli.reliability_cmd",
    "diagnose": "judgewise.cli.diagnose_cmd", "accuracy": "judgewise.cli.diagnose_cmd",
    "echo-test": "judgewise.cli.diagnose_cmd",
    "report": "judgewise.cli.report_cmd", "serve": "judgewise.cli.report_cmd",
    "demo": "judgewise.cli.demo_cmd", "version": "judgewise.cli.demo_cmd",
    "completion": "judgewise.cli.completion_cmd",
}

# The commands that read judgments (a judgments file or folder of any registered format, or a judging store); the
# command × input matrix (tests/project/test_command_input_matrix.py) runs each on every input kind. Every other command is
# in OTHER_COMMANDS; a command in neither fails that test, so a new command is placed in the matrix or left out on
# purpose. ``evaluate`` reads judgments only from the store its run config names (``--add-model``).
JUDGMENT_COMMANDS = ("rank", "report", "diagnose", "anchors", "accuracy", "plan", "serve", "store export",
                     "store stats", "evaluate")
OTHER_COMMANDS = ("agree", "judge", "generate", "simulate", "power sign", "power wilcoxon", "select", "reliability",
                  "study", "label", "echo-test", "demo", "version", "completion", "store copy")


def build_app(command: str | None = None) -> typer.Typer:
    """The app with every command, or with only the module of ``command`` (a name in COMMANDS) registered."""
    app = typer.Typer(add_completion=True, no_args_is_help=True, pretty_exceptions_enable=False,
                      help="Evaluate language models with an LLM judge, reliably and at the lowest cost.")

    @app.callback()
    def root(_version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                           help="Print `judgewise X.Y.Z` and exit.")) -> None:
        """Evaluate language models with an LLM judge (add --verbose to any command for debug logs)."""

    for name in (COMMANDS[command],) if command else COMMAND_MODULES:
        importlib.import_module(name).register(app)
    return app


def command_of(args: list[str]) -> str | None:
    """The command ``args`` run when their first word names one, else None (no command, a root option such as
    ``--help``, shell completion asking, or a name that is no command: every command module is needed)."""
    if not args or os.environ.get(COMPLETE_VAR) or args[0] not in COMMANDS:
        return None
    return args[0]


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"judgewise {judgewise.__version__}")
        raise typer.Exit()


class _Scrubbed(logging.Filter):
    """Every log line scrubbed of secrets (``redaction.scrub``) before it is shown."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(message)
        if clean is not message:
            record.msg, record.args = clean, None
        return True


def _setup_logging(verbose: bool) -> None:
    handler = RichHandler(console=err(), show_path=False, show_time=False, markup=False)
    handler.addFilter(_Scrubbed())
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(message)s", handlers=[handler])


def _register_url_passwords(args: list[str]) -> None:
    """The password of a PostgreSQL URL given on the command line is a secret from the start: every message that
    might quote it (a usage error, libpq's own) is scrubbed of it (``store.urls.masked`` registers it)."""
    values = [a.partition("=")[2] if a.startswith("-") else a for a in args]  # --store=URL too
    for url in (v for v in values if "://" in v and is_url(v)):
        masked(url)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: runs the app, turning library errors into one-line messages."""
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in args
    if verbose:
        args.remove("--verbose")
    _setup_logging(verbose)
    _register_url_passwords(args)
    command = typer.main.get_command(build_app(command_of(args)))
    try:
        check_environment()  # a bad JUDGEWISE_* setting is refused before any command starts
        with read_progress(err()):  # a bar for large inputs, on a terminal only
            code = command.main(args=args, prog_name="judgewise", standalone_mode=False)
    except JudgewiseError as exc:
        say(err(), scrub(as_flags(str(exc))), label="error:", style="bold red")  # user text: never read as markup
        sys.exit(exc.exit_code)
    except UsageError as exc:  # a usage error: one line, as for every other bad input
        if str(exc).strip():  # no arguments at all: the help was printed, nothing to add
            say(err(), scrub(_usage_line(exc)), label="error:", style="bold red")
        sys.exit(getattr(exc, "exit_code", 2))
    except typer.Abort:
        sys.exit(130)
    if isinstance(code, int) and code:
        sys.exit(code)


def _usage_line(exc: Exception) -> str:
    """Click's usage message on one line, naming the command and where to read its options."""
    message = " ".join(exc.format_message().split()) if hasattr(exc, "format_message") else str(exc)
    ctx = getattr(exc, "ctx", None)
    if ctx is None:
        return message
    return f"{ctx.command_path}: {message} (see `{ctx.command_path} --help`)"

if __name__ == "__main__":
    main()
