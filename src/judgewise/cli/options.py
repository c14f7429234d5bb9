"""Every option more than one command takes, declared once as a ``typing.Annotated`` alias, and
:func:`options_command`, which turns the fields of a command's frozen options dataclass into its options.

A command writes ``as_json: Json = False``; the default stays with the command (``--bootstrap`` is 0 for ``rank``,
200 for ``report``). A command whose settings are a dataclass of the commands layer (``RankOptions``) declares
only its flags (``{field: alias}``) and gets one built dataclass (:func:`options_command`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from pathlib import Path
from typing import Annotated

import typer

Json = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the random draws (bootstrap, sampling).")]
Bootstrap = Annotated[int, typer.Option("--bootstrap", help="Bootstrap rounds for the intervals (0 = none).")]
CiLevel = Annotated[float, typer.Option("--ci-level", help="Interval level.")]
Output = Annotated[Path, typer.Option("--output", "-o", help="Write the result to this file (its suffix names "
                                                              "the format) or folder.")]
InputFormat = Annotated[str, typer.Option("--format", help="Force the input format, or 'store' (default: detect).")]
SkipInvalid = Annotated[bool, typer.Option("--skip-invalid", help="Skip and count malformed rows.")]
Judge = Annotated[str, typer.Option("--judge", help="Use only this judge's rows (the others are counted as "
                                                    "skipped); needed when the input holds several judges.")]
PoolJudges = Annotated[bool, typer.Option("--pool-judges", help="Pool the rows of several judges into one "
                                                                "ranking on purpose (said in the output).")]
L2 = Annotated[float, typer.Option("--l2", help="BT ridge ½·l2·‖θ‖². Default: the exact MLE, or l2=0.01 (a weak "
                                                "prior, reported) only when the data are separated; 0 refuses "
                                                "separated data.")]
Config = Annotated[Path, typer.Option("--config", "-c", help="Run config (YAML); see README 'Judging'.")]
Store = Annotated[str, typer.Option("--store", help="Store file or postgresql:// URL (overrides the config).")]
Responses = Annotated[Path, typer.Option("--responses", help="Model outputs (prompt_id, model, text).")]
MaxCalls = Annotated[int, typer.Option("--max-calls", help="Stop before exceeding this many calls.")]
MaxCost = Annotated[float, typer.Option("--max-cost", help="Stop before exceeding this cost ($).")]
Concurrency = Annotated[int, typer.Option("--concurrency", help="Calls in flight (overrides config).")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Print the calls, tokens, cost and time; call nothing.")]
RetryFailed = Annotated[bool, typer.Option("--retry-failed", help="Run the calls stored as failed again.")]
Alpha = Annotated[float, typer.Option("--alpha", help="Significance level.")]
Power = Annotated[float, typer.Option("--power", help="Target power.")]


def options_command(options_class: type, flags: dict[str, object] | None = None):
    """A decorator: the command ``fn(*own, options)`` becomes a Typer command whose options are the fields of the
    dataclass ``options_class`` the command line sets — those declared with ``judgewise.flags.option`` (their
    flags and help) and those named in ``flags`` (each an ``Annotated`` alias, e.g. a shared one; the type, unless
    the alias gives one, and the default from the field) — next to ``fn``'s own parameters; ``fn`` is called with
    the built ``options_class`` (the other fields keep their defaults). The options stand where ``fn`` has its
    ``options`` parameter (own parameters after it are keyword-only)."""
    flags = dict(flags or {})
    unknown = sorted(set(flags) - {f.name for f in dataclasses.fields(options_class)})
    if unknown:
        raise TypeError(f"{options_class.__name__} has no fields {unknown}")
    for f in dataclasses.fields(options_class):
        if f.name not in flags and "flags" in f.metadata:
            flags[f.name] = flag(*f.metadata["flags"], help=f.metadata["help"])
    fields = [f for f in dataclasses.fields(options_class) if f.name in flags]  # the others keep their defaults
    hints = typing.get_type_hints(options_class)
    declared = []
    for f in fields:
        base, *info = typing.get_args(flags[f.name])
        default = ... if f.default is dataclasses.MISSING else f.default  # ...: a required option
        declared.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                          annotation=Annotated[hints[f.name] if base is object else base, *info]))

    def decorate(fn):
        own_hints = typing.get_type_hints(fn, include_extras=True)
        params = list(inspect.signature(fn).parameters.values())
        at = [p.name for p in params].index("options")  # the options take its place among fn's own parameters
        own = [p.replace(annotation=own_hints.get(p.name, p.annotation)) for p in params if p.name != "options"]
        ordered = [*own[:at], *declared, *own[at:]]

        @functools.wraps(fn)
        def command(**values):
            settings = options_class(**{f.name: values.pop(f.name) for f in fields})
            return fn(**values, options=settings)

        del command.__wrapped__  # typer reads the signature below, not fn's
        command.__signature__ = inspect.Signature(ordered)
        command.__annotations__ = {p.name: p.annotation for p in ordered}
        return command

    return decorate


def flag(*decls: str, help: str | None):
    """A command's own option (one no other command takes) as the ``Annotated`` alias :func:`options_command`
    reads (its type comes from the dataclass field)."""
    return Annotated[object, typer.Option(*decls, help=help)]


PROGRESS_HELP = ("Progress on stderr: a bar on a terminal, else a line every JUDGEWISE_PROGRESS_INTERVAL s (30) "
                 "(default); --progress: the bar; --no-progress: none.")
ShowProgress = Annotated[bool, typer.Option("--progress/--no-progress", help=PROGRESS_HELP)]
OVERRIDE_FLAGS = {"store": Store, "max_calls": MaxCalls, "max_cost": MaxCost, "concurrency": Concurrency}
"""The run-config overrides every command that runs a config takes (``RunOverrides``; judge and generate add
``--output`` and ``--retry-failed``)."""

Human = Annotated[Path, typer.Option("--human", help="Human scores table (default: rater 'human' in SCORES).")]
HumanLabels = Annotated[Path, typer.Option("--human", help="Human pairwise labels (a store's human_labels, or a file "
                                           "of human verdicts): adds prediction-powered rank-sets (Chatzi et al.).")]
HumanRater = Annotated[str, typer.Option("--human-rater", help="Rater name of the human in SCORES.")]
Candidates = Annotated[int, typer.Option("--candidates", help="Candidate subsets C for the matching methods "
                                                              "(Paper: 20).")]
Trials = Annotated[int, typer.Option("--trials", help="Trials per setting.")]
