"""``judgewise rank`` (a leaderboard from judgments in any supported format or a judging store) and ``judgewise agree``.

``rank`` prints a rich table by default (CI level labelled; rows read/used/skipped under it). ``--json`` prints
``Ranking.to_records()`` (a JSON list, best first) on stdout and the read report as one line on stderr.
``--output FILE`` writes the ranking atomically (temp file + rename) whichever way results are shown, in the format
of its suffix (``.json`` = what ``--json`` prints, ``.csv``, ``.parquet``: ``commands.ranking_files``).
``--by COLUMN`` adds one leaderboard per group (same method and intervals; ``commands.grouping`` finds the column),
printed before the overall one; ``--json`` then prints ``{"by", "groups", "skipped_groups", "missing", "overall"}``
(``missing``: the rows without a value, apart from any text value).
``--human LABELS`` adds rank-sets (``commands.human_ranking``); ``--json`` then prints ``{ranking, human_anchored}``.
Input mixing judges is refused unless ``--judge NAME`` keeps one or ``--pool-judges`` pools them (io.provenance).
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgewise.cli.console import err, out, piped_width
from judgewise.cli.options import (Alpha, Bootstrap, CiLevel, InputFormat, Json, Judge, L2, Output, PoolJudges,
                                   Seed, SkipInvalid, options_command)
from judgewise.commands.display import say, show
from judgewise.commands.options import RankOptions
from judgewise.commands.tables import agreement_lines, input_lines
from judgewise.commands.text import json_text, ranking_info_lines

RANK_FLAGS = {"format": InputFormat, "bootstrap": Bootstrap, "seed": Seed, "ci_level": CiLevel, "l2": L2,
              "skip_invalid": SkipInvalid, "judge": Judge, "pool_judges": PoolJudges, "alpha": Alpha}  # shared


@options_command(RankOptions, RANK_FLAGS)
def rank_command(
    path: list[Path] = typer.Argument(..., help="Judgments: AlpacaEval results dir, Arena-Hard battles, "
                                                "JudgeBench outputs, a canonical JSONL/CSV/Parquet table, or a "
                                                "judging store (SQLite file of judgewise judge). Several inputs "
                                                "of one kind are ranked together."),
    as_json: Json = False,
    output: Output = None,
    *,
    options: RankOptions,
) -> None:
    """Rank models from pairwise judgments (format detected; --format to force)."""
    from judgewise.commands import ranking, ranking_files  # the commands layer loads pandas (and with it pyarrow)

    ranking_files.check_ranking_output(output)
    ranked = ranking.rank_path(path, options)
    if output is not None:
        ranking_files.write_ranking(output, ranked)
    if as_json:
        typer.echo(ranking_files.ranking_json(ranked))
        for line in [*ranking_info_lines(ranked.ranking)[1:], *input_lines(ranked.table)]:
            say(err(), line)
    else:
        show(piped_width(120), ranking.rank_blocks(ranked))


def agree_command(
    a: Path = typer.Argument(..., help="A rank --json output or a {model: score} JSON file."),
    b: Path = typer.Argument(..., help="The other one."),
    key: str = typer.Option(None, "--key", help="Read the {model: score} map under this key (both files)."),
    as_json: Json = False,
) -> None:
    """Agreement of two rankings over their common models: Kendall τ-b, Spearman ρ, Pearson r, distance."""
    from judgewise.commands.ranking import agreement_of_files  # the commands layer loads pandas (and with it pyarrow)

    result = agreement_of_files(a, b, key=key)
    if as_json:
        typer.echo(json_text(result))
        return
    show(out(), agreement_lines(result))


def register(app: typer.Typer) -> None:
    """Add ``rank`` and ``agree`` to the app."""
    app.command("rank")(rank_command)
    app.command("agree")(agree_command)
