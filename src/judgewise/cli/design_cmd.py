"""``judgewise power sign|wilcoxon``, ``plan``, ``anchors`` and ``simulate``: decide what to pay for, before paying."""

from __future__ import annotations

from pathlib import Path

import typer

from judgewise.cli.options import Alpha, InputFormat, Json, Judge, Power, Seed, Trials, flag, options_command
from judgewise.commands.options import PlanOptions
from judgewise.commands.text import json_text


def _echo(obj, text: str, as_json: bool) -> None:
    """Print ``obj`` as JSON with ``--json``, else ``text``."""
    typer.echo(json_text(obj) if as_json else text)


def _register_power(app: typer.Typer) -> None:
    power_app = typer.Typer(help="Sample size and power of pairwise comparisons (Anchor §4.3, App. C).",
                            no_args_is_help=True)
    app.add_typer(power_app, name="power")

    @power_app.command("sign")
    def sign_command(
        win_rate: str = typer.Option(..., "--win-rate", help="Win rate among discordant pairs (comma list ok)."),
        tie_rate: str = typer.Option("0", "--tie-rate", help="Share of ties / non-informative (comma list ok)."),
        alpha: Alpha = 0.05,
        power: Power = 0.8,
        exact: bool = typer.Option(False, "--exact", help="Exact binomial instead of the normal approximation."),
        as_json: Json = False,
    ) -> None:
        """One-sided sign test sample size: N informative prompts and N_total = N / (1 − tie rate)."""
        from judgewise.commands.design_runs import sign_study  # the commands layer loads pandas (and with it pyarrow)

        _echo(*sign_study(win_rate, tie_rate, alpha, power, exact), as_json)

    @power_app.command("wilcoxon")
    def wilcoxon_command(
        path: Path = typer.Argument(None, help="Anchor-based judgments (any supported format or a judging store)."),
        anchor: str = typer.Option(None, "--anchor"),
        distribution: str = typer.Option(None, "--distribution", help="Paired differences 'value:prob,...'."),
        effect: float = typer.Option(0.05, "--effect", help="Edge (win rate − 0.5 among discordant) of pairs used, compared on exact counts: a win rate of exactly 0.6 is in the 0.10 band (Anchor App. C uses [effect, effect + 0.01))."),
        width: float = typer.Option(0.01, "--width", help="Width of the edge interval."),
        n_grid: str = typer.Option("50,100,200,300,400,500,600,700,800,900,1000,1200,1500,2000", "--n"),
        simulations: int = typer.Option(1000, "--simulations"),
        alpha: Alpha = 0.05,
        power: Power = 0.8,
        seed: Seed = 0,
        as_json: Json = False,
    ) -> None:
        """Simulated power of the one-sided Wilcoxon signed-rank test (zero_method='pratt'; Anchor App. C)."""
        # the commands layer loads pandas (and with it pyarrow)
        from judgewise.commands.design_runs import wilcoxon_study

        _echo(*wilcoxon_study(path, anchor=anchor, distribution=distribution, effect=effect, width=width,
                              n_grid=n_grid, simulations=simulations, alpha=alpha, power=power, seed=seed), as_json)


PLAN_FLAGS = {
    "n_models": flag("--models", help="Number of models to evaluate (default: from PATH)."),
    "natural_baseline": flag("--natural-baseline", help="Name of a natural baseline model, if one exists."),
    "baseline_exists": flag("--has-baseline", help="A natural baseline exists (unnamed)."),
    "full_ranking": flag("--full-ranking/--pairs-only", help="Leaderboard (rank all) or only pairs of interest."),
    "budget": flag("--budget", help="Judge-call budget."),
    "effect": flag("--effect", help="Expected edge over 50% (0.05 = 55% win rate)."),
    "alpha": Alpha,
    "power": Power,
    "informativeness": flag("--informativeness", help="Measured anchor informativeness (share of informative "
                            "anchor comparisons, §4.3; default: from PATH, else the papers' mean 0.54)."),
}


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


def anchors_command(
    path: Path = typer.Argument(..., help="Judgments: anchor-based (report) or all-pairs pilot (recommend), in "
                                          "any supported format or a judging store (SQLite file of judgewise judge)."),
    anchor: str = typer.Option(None, "--anchor", help="Anchor(s) to report, comma-separated (default: detected); "
                                                       "several add per-anchor win rates and the pooled BT "
                                                       "(Anchor §5, App. E)."),
    format: InputFormat = None,
    judge: Judge = None,
    pilot_prompts: int = typer.Option(10, "--pilot-prompts", help="Prompts sampled by the pilot (§5.3)."),
    seed: Seed = 0,
    as_json: Json = False,
) -> None:
    """Informativeness, win-count histogram and waste of an anchor; pilot recommendation (Anchor §4, §5.3)."""
    from judgewise.commands.design_runs import anchors_study  # the commands layer loads pandas (and with it pyarrow)

    _echo(*anchors_study(path, anchor=anchor, format=format, judge=judge, pilot_prompts=pilot_prompts, seed=seed),
          as_json)


def simulate_command(
    designs: str = typer.Option("tournament,anchor,adaptive", "--designs",
                                help="Comma list of: tournament, anchor, quadratic, sampled, adaptive; baseline "
                                     "(Arena-lite's baseline-mediated method: win rate against an external "
                                     "reference model, n·|X| calls); insert-binary, insert-anchor (one newcomer "
                                     "placed into the others' leaderboard)."),
    n_model: str = typer.Option("20", "--n-model"),
    prompts: str = typer.Option("100", "--prompts", help="|X| per trial (comma list ok)."),
    p_judge: str = typer.Option("0.8", "--p-judge"),
    trials: Trials = 20,
    seed: Seed = 0,
    reference_elo: float = typer.Option(1233.0, "--reference-elo", help="Elo of baseline's external reference "
                                        "(the paper: gpt-4-1106-preview, 1233; the truth is uniform over "
                                        "[1000, 1500])."),
    executor: str = typer.Option("process", "--executor", help="serial | process | ray"),
    workers: int = typer.Option(None, "--workers"),
    address: str = typer.Option(None, "--address", help="Ray cluster address (ray.init(address=...))."),
    as_json: Json = False,
) -> None:
    """Arena-lite §4.2 sweep on the simulated judge: Spearman/Kendall vs the truth per design and calls."""
    from judgewise.commands.design_runs import simulate_study  # the commands layer loads pandas (and with it pyarrow)

    _echo(*simulate_study(designs, n_model=n_model, prompts=prompts, p_judge=p_judge, trials=trials, seed=seed,
                          reference_elo=reference_elo, executor=executor, workers=workers, address=address), as_json)


def register(app: typer.Typer) -> None:
    """Add ``power``, ``plan``, ``anchors`` and ``simulate`` to the app."""
    _register_power(app)
    app.command("plan")(plan_command)
    app.command("anchors")(anchors_command)
    app.command("simulate")(simulate_command)
