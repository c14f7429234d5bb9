"""``judgewise power sign|wilcoxon``, ``plan``, ``anchors`` and ``simulate``: decide what to pay for, before paying."""

from __future__ import annotations

from pathlib import Path

import typer

from judgewise.cli.options import Alpha, InputFormat, Json, Judge, Power, Seed, Trials, options_command
from judgewise.commands.options import AnchorsOptions, PlanOptions, SignOptions, SimulateOptions, WilcoxonOptions
from judgewise.commands.text import json_text


def _echo(obj, text: str, as_json: bool) -> None:
    """Print ``obj`` as JSON with ``--json``, else ``text``."""
    typer.echo(json_text(obj) if as_json else text)


def _register_power(app: typer.Typer) -> None:
    power_app = typer.Typer(help="Sample size and power of pairwise comparisons (Anchor §4.3, App. C).",
                            no_args_is_help=True)
    app.add_typer(power_app, name="power")

    @power_app.command("sign")
    @options_command(SignOptions, {"alpha": Alpha, "power": Power})
    def sign_command(*, options: SignOptions, as_json: Json = False) -> None:
        """One-sided sign test sample size: N informative prompts and N_total = N / (1 − tie rate)."""
        from judgewise.commands.design_runs import sign_study  # the commands layer loads pandas (and with it pyarrow)

        _echo(*sign_study(options), as_json)

    @power_app.command("wilcoxon")
    @options_command(WilcoxonOptions, {"alpha": Alpha, "power": Power, "seed": Seed})
    def wilcoxon_command(
        path: Path = typer.Argument(None, help="Anchor-based judgments (any supported format or a judging store)."),
        *,
        options: WilcoxonOptions,
        as_json: Json = False,
    ) -> None:
        """Simulated power of the one-sided Wilcoxon signed-rank test (zero_method='pratt'; Anchor App. C)."""
        from judgewise.commands.design_runs import wilcoxon_study  # the commands layer loads pandas (and pyarrow)

        _echo(*wilcoxon_study(path, options), as_json)


PLAN_FLAGS = {"alpha": Alpha, "power": Power}  # shared flags


@options_command(PlanOptions, PLAN_FLAGS)
def plan_command(
    path: Path = typer.Argument(None, help="Judgments already made (any format or a judging store): the number "
                                           "of models and a measured anchor informativeness come from them."),
    write: Path = typer.Option(None, "--write", help="Write the run config (judge / evaluate) this plan implies."),
    responses: str = typer.Option("responses.jsonl", "--responses", help="responses: of the written config."),
    as_json: Json = False,
    *,
    options: PlanOptions,
) -> None:
    """Recommend a design, anchor strategy, prompts and judge calls (Anchor Fig. 5 / §6)."""
    from judgewise.commands.design_runs import plan_study  # the commands layer loads pandas (and with it pyarrow)

    _echo(*plan_study(path, options, write=write, responses=responses), as_json)


@options_command(AnchorsOptions, {"format": InputFormat, "judge": Judge, "seed": Seed})
def anchors_command(
    path: Path = typer.Argument(..., help="Judgments: anchor-based (report) or all-pairs pilot (recommend), in "
                                          "any supported format or a judging store (SQLite file of judgewise judge)."),
    *,
    options: AnchorsOptions,
    as_json: Json = False,
) -> None:
    """Informativeness, win-count histogram and waste of an anchor; pilot recommendation (Anchor §4, §5.3)."""
    from judgewise.commands.design_runs import anchors_study  # the commands layer loads pandas (and with it pyarrow)

    _echo(*anchors_study(path, options), as_json)


@options_command(SimulateOptions, {"trials": Trials, "seed": Seed})
def simulate_command(*, options: SimulateOptions, as_json: Json = False) -> None:
    """Arena-lite §4.2 sweep on the simulated judge: Spearman/Kendall vs the truth per design and calls."""
    from judgewise.commands.design_runs import simulate_study  # the commands layer loads pandas (and with it pyarrow)

    _echo(*simulate_study(options), as_json)


def register(app: typer.Typer) -> None:
    """Add ``power``, ``plan``, ``anchors`` and ``simulate`` to the app."""
    _register_power(app)
    app.command("plan")(plan_command)
    app.command("anchors")(anchors_command)
    app.command("simulate")(simulate_command)
