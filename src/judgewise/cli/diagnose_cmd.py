"""``judgewise diagnose`` (bias figures with intervals, warnings, judge-gaming flags) and ``judgewise accuracy``.

``diagnose`` reads judgments in any supported format (an AlpacaEval results directory brings the model outputs
with it; JudgeBench outputs bring the responses and the objective labels). ``--json`` prints one object with
``judges`` (figures with intervals), ``warnings``, ``gaming_flags`` ([{"model", "reason", …}]), ``echo`` and
``style``. ``accuracy`` compares pairwise rankings with ground-truth accuracy (Correct-looks-better §5, App. B/C).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from judgewise.cli.console import piped_width
from judgewise.cli.options import (Bootstrap, CiLevel, Config, InputFormat, Json, Judge, Seed, SkipInvalid, flag,
                                   options_command)
from judgewise.cli.richtext import fmt_num, print_table, report_line, say, split_list
from judgewise.commands.options import AccuracyOptions
from judgewise.commands.text import pair_counts_line, parse_families


def render_diagnosis(result, report, level: float, console: Console) -> None:
    """The figures as one rich table (judge, figure, estimate, interval, n), then flags and warnings."""
    rows = []
    for jb in result.judges:
        for i, (name, p) in enumerate(jb.figures().items()):
            rows.append([jb.judge if i == 0 else "", name, fmt_num(p.estimate),
                         f"[{fmt_num(p.ci_low)}, {fmt_num(p.ci_high)}]", f"{p.n:,}"])
        rows.append(None)  # a section per judge
    columns = [("judge", "left"), ("figure", "left"), ("estimate", "right"),
               (f"{level * 100:g}% CI (Wilson)", "right"), ("n", "right")]
    print_table(console, "judgewise diagnose · judge bias figures", columns, rows, soft_wrap=False)
    if result.style is not None:
        render_style(result.style, console)
    if result.echo is not None:
        e = result.echo
        say(console, f"echo: ρ(echo_a − echo_b, outcome) = {fmt_num(e.spearman_rho)}; the non-echoing side wins "
                     f"{fmt_num(e.clean_side_wins.estimate)} of {e.n_one_sided:,} judgments where one side echoes")
    if result.gaming is not None:
        n = len(result.gaming.features)
        flagged = result.gaming.flagged_models
        say(console, f"judge gaming: {len(flagged)} of {n} models flagged"
                     + (f" ({', '.join(flagged)})" if flagged else ""))
    for w in result.warnings:
        say(console, w, label="warning:", style="yellow")
    say(console, report_line(report))


def _ci(row: dict, name: str) -> str:
    return f"{fmt_num(row[name])} [{fmt_num(row[name + '_low'])}, {fmt_num(row[name + '_high'])}]"


def render_alignment(result, console: Console) -> None:
    """The comparison table, then per-model accuracy, the filter report and what was skipped."""
    level = result.settings["level"]
    title = (f"judgewise accuracy · rankings vs ground-truth accuracy "
             f"({level * 100:g}% normal bootstrap CI over prompts, {result.settings['bootstrap']} rounds)")
    names = ("source", "pairs", "judgments", "Kendall τ", "Spearman ρ", "Pearson r", "Kendall distance", "note")
    print_table(console, title, [(n, "left" if n in ("source", "pairs", "note") else "right") for n in names],
                [[row["source"], row["subset"], f"{row['n_judgments']:,}", _ci(row, "kendall_tau_b"),
                  _ci(row, "spearman_rho"), _ci(row, "pearson_r"), _ci(row, "kendall_distance"), row["note"]]
                 for row in result.table.to_dict(orient="records")], soft_wrap=False)
    st = result.settings
    ridge = "auto" if st["bt_l2"] is None else f"{st['bt_l2']:g}"
    say(console, f"settings: Elo k={st['elo_k']:g}, BT ridge l2={ridge}, unparsed answers: {st['unparsed']} "
                 f"(the paper's code: k=32, l2=1, exclude)")
    bt = result.scores.get(("bt", "all"))
    direct = result.direct["accuracy"] if result.direct is not None else None
    rows = [[model, fmt_num(row["accuracy"]), fmt_num(row["parse_rate"]),
             fmt_num(direct.get(model)) if direct is not None else "—",
             fmt_num(bt.get(model), 1) if bt is not None else "—", "yes" if row["kept"] else "no"]
            for model, row in result.accuracy.sort_values("accuracy", ascending=False).iterrows()]
    names = ("model", "accuracy", "parse rate", "direct judge", "BT score", "kept")
    print_table(console, "accuracy per model (ground truth; direct judge = correct / attempted)",
                [(n, "left" if n == "model" else "right") for n in names], rows, soft_wrap=False)
    say(console, pair_counts_line(result.pair_counts))
    for d in result.filter.dropped:
        say(console, f"filtered ({d['step']}): {d['model']} — {d['reason']}")
    for method, why in result.skipped.items():
        say(console, why, label=f"skipped {method}:", style="yellow")


def render_style(style: dict, console: Console) -> None:
    """Style-control coefficients per judge (with intervals when bootstrapped) and self-preference."""
    features = ("length", "headers", "lists", "bold")
    rows = []
    for judge, entry in style["per_judge"].items():
        if "skipped" in entry:
            rows.append([judge, *["—"] * len(features), "—"])
            continue
        agree = entry.get("ranking_agreement")
        rows.append([judge, *[_coef(entry["coefficients"].get(f)) for f in features],
                     fmt_num(agree["kendall_tau_b"]) if agree else "— (< 3 models)"])
    print_table(console, "style control · BT coefficients (log-odds of winning per SD of the a−b difference)",
                [(n, "left" if n == "judge" else "right") for n in ("judge", *features, "τ plain vs styled")], rows,
                soft_wrap=False)
    sp = style["self_preference"]
    if "skipped" in sp:
        say(console, f"self-preference: not estimable — {sp['skipped']}")
    else:
        say(console, f"self-preference coefficient: {_coef(sp['coefficients']['self_preference'])}")
    if not style["bootstrap"]:
        say(console, "coefficients without intervals: pass --bootstrap 50 for percentile intervals over prompts")


def _coef(c: dict | None) -> str:
    if not c:
        return "—"
    if c.get("ci_low") is None:
        return fmt_num(c["estimate"])
    return f"{fmt_num(c['estimate'])} [{fmt_num(c['ci_low'])}, {fmt_num(c['ci_high'])}]"


def diagnose_command(
    judgments: Path = typer.Argument(..., help="Judgments in any supported format (an AlpacaEval results "
                                               "dir or JudgeBench outputs bring their texts), or a judging "
                                               "store (SQLite file of judgewise judge)."),
    responses: Path = typer.Option(None, "--responses", help="Responses table (prompt_id, model, text) "
                                                             "for length, markdown, echo and gaming."),
    format: InputFormat = None,
    style_control: bool = typer.Option(True, "--style-control/--no-style-control",
                                       help="Fit style-controlled BT and compare rankings (needs texts)."),
    bootstrap: Bootstrap = 0,
    family: list[str] = typer.Option(None, "--family", help="NAME=FAMILY for self-preference (repeatable; "
                                                            "NAME is a model/judge name prefix)."),
    judge: Judge = None,
    ci_level: CiLevel = 0.95,
    seed: Seed = 0,
    as_json: Json = False,
    skip_invalid: SkipInvalid = False,
) -> None:
    """Bias figures per judge with intervals (position, swap consistency, length, markdown, label
    agreement), echo, judge-gaming flags and warnings."""
    from judgewise.commands.diagnosis import diagnose_path

    result, table = diagnose_path(judgments, responses, format=format, style_control=style_control,
                                 ci_level=ci_level, seed=seed, skip_invalid=skip_invalid, bootstrap=bootstrap,
                                 families=parse_families(family), judge=judge)
    if as_json:
        out = {**result.as_dict(), "read": table.report.as_dict()}
        typer.echo(json.dumps(out, indent=2, default=str))
    else:
        render_diagnosis(result, table.report, ci_level, piped_width(160, at_least=True))


ACCURACY_FLAGS = {
    "methods": flag("--methods", help="Aggregators to compare."),
    "elo_k": flag("--elo-k", help="Elo step size: 32 from 1000, in the judgments' order, as the paper's code; "
                  "Chatbot Arena uses 4."),
    "bt_l2": flag("--bt-l2", help="BT ridge ½·l2·‖θ‖²: 1 as the paper's code (scikit-learn C=1); 0 = the plain MLE "
                  "(a separated subset is then reported as not estimable); auto = judgewise's rank default (MLE, "
                  "weak ridge 0.01 only when separated)."),
    "unparsed": flag("--unparsed", help="A pair with an unparsed answer: exclude = in neither pair subset (the "
                     "paper's code); incorrect = the unparsed side counts as incorrect."),
    "bootstrap": Bootstrap,
    "min_parse_rate": flag("--min-parse-rate", help="App. B filter 1 (e.g. 0.9)."),
    "baseline": flag("--baseline", help="App. B filter 2: keep accuracy > this."),
    "min_gap": flag("--min-gap", help="App. B filter 3: minimum accuracy gap (0.01)."),
    "seed": Seed,
    "ci_level": CiLevel,
    "format": InputFormat,
    "judge": Judge,
}


@options_command(AccuracyOptions, ACCURACY_FLAGS)
def accuracy_command(
    judgments: Path = typer.Argument(..., help="Pairwise judgments in any supported format, or a judging store "
                                               "(SQLite file of judgewise judge)."),
    correctness: Path = typer.Option(..., "--correctness", help="Ground truth: table of prompt_id, model, "
                                                                "correct (1/0; empty = unparsed)."),
    direct: Path = typer.Option(None, "--direct", help="Direct-judge grades: prompt_id, model, label "
                                                       "(correct / incorrect / not_attempted), or the store of a "
                                                       "judge.mode: single run with template direct_correctness."),
    as_json: Json = False,
    *,
    options: AccuracyOptions,
) -> None:
    """Do pairwise rankings recover accuracy? Each aggregator and the direct judge vs ground truth, on
    all / discriminative / non-discriminative pairs (Correct-looks-better §5, App. B/C)."""
    from judgewise.commands.diagnosis import accuracy_of_files

    result, table = accuracy_of_files(judgments, correctness, direct, methods=split_list(options.methods),
                                      bootstrap=options.bootstrap, seed=options.seed, ci_level=options.ci_level,
                                      filters=options.filters(), format=options.format, elo_k=options.elo_k,
                                      bt_l2=_ridge(options.bt_l2), unparsed=options.unparsed, judge=options.judge)
    if as_json:
        typer.echo(json.dumps(result.as_dict(), indent=2, default=str))
    else:
        render_alignment(result, piped_width(160, at_least=True))
        say(piped_width(160, at_least=True), report_line(table.report))


def _ridge(text: str) -> float | None:
    """``--bt-l2``: a number ≥ 0, or ``auto`` (None)."""
    from judgewise.errors import ConfigError

    if text.strip().lower() == "auto":
        return None
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"--bt-l2 must be a number >= 0 or auto, got {text!r}") from None


def echo_test_command(
    config: Config = ...,
    echo_text: str = typer.Option("paper", "--echo-text", help="paper = the question and the full answer "
                                  "appended three times (the CLB code); final-answer = 'Question: …/Answer: <final "
                                  "answer line>' blocks."),
    times: int = typer.Option(3, "--times", help="How many echo blocks are appended (the paper: 3)."),
    limit: int = typer.Option(None, "--limit", help="Use the first N base pairs (the paper: 500)."),
    include_echoing: bool = typer.Option(False, "--include-echoing", help="Also use base pairs where a response "
                                         "echoes already (the paper keeps pairs where neither does)."),
    bootstrap: Bootstrap = 2000,
    seed: Seed = 0,
    as_json: Json = False,
) -> None:
    """Echo intervention (Correct-looks-better App. F.2): judge each pair as is, with echo appended to A, and to
    B; report P(A wins) per condition and the contrast P(A | echo on A) − P(A | echo on B) (the paper's sign) with
    the paper's unpaired Wald intervals beside judgewise's paired bootstrap."""
    from judgewise.commands.diagnosis import echo_intervention_of_config

    res, run = echo_intervention_of_config(config, text=echo_text, times=times, skip_echoing=not include_echoing,
                                           limit=limit, bootstrap=bootstrap, seed=seed)
    if as_json:
        typer.echo(json.dumps({**res.as_dict(), "games": run.n_games, "echo_text": echo_text, "times": times},
                              indent=2, default=str))
        return
    console = piped_width(160, at_least=True)
    rows = [[c, fmt_num(res.p_a[c].estimate), f"[{fmt_num(res.p_a[c].ci_low)}, {fmt_num(res.p_a[c].ci_high)}]",
             f"[{fmt_num(res.wald[c]['ci_low'])}, {fmt_num(res.wald[c]['ci_high'])}]", f"{res.wald[c]['n']:,}"]
            for c in ("original", "echo_a", "echo_b")]
    print_table(console, f"echo intervention · P(A wins) per condition ({res.n_base:,} base pairs, {run.n_games:,} "
                         f"games, echo text: {echo_text} ×{times})",
                [("condition", "left"), ("P(A wins)", "right"), ("95% Wilson", "right"), ("95% Wald (paper)", "right"),
                 ("n", "right")], rows, soft_wrap=False)
    for name in ("+1 vs 0", "-1 vs 0", "+1 vs -1"):
        w = res.wald[name]
        say(console, f"contrast echo={name}: {w['estimate']:+.3f}, 95% Wald [{w['ci_low']:+.3f}, {w['ci_high']:+.3f}]")
    say(console, f"paired contrast P(A | echo on A) − P(A | echo on B) = {res.contrast:+.3f}, 95% paired bootstrap "
                 f"[{res.ci_low:+.3f}, {res.ci_high:+.3f}] over {res.n_base:,} base pairs (CLB: −0.52 for o3 on "
                 "non-discriminative BBH pairs)")


def register(app: typer.Typer) -> None:
    """Add ``diagnose``, ``accuracy`` and ``echo-test`` to the app."""
    app.command("diagnose")(diagnose_command)
    app.command("accuracy")(accuracy_command)
    app.command("echo-test")(echo_test_command)
