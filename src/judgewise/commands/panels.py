"""``rank --panel``: read a panel's members from any judgments input and rank the panel's derived verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from judgewise.analysis.panel import panel_verdicts, reliability_weights
from judgewise.commands.options import RankOptions
from judgewise.errors import ConfigError
from judgewise.io.tables import ReadReport
from judgewise.store.reading import read_rated


def panel_members(text: str) -> list[str]:
    """The members ``--panel a,b,c`` names, in order (blank names dropped)."""
    return [m.strip() for m in str(text).split(",") if m.strip()]


def check_panel_options(options: RankOptions) -> None:
    """Raise :class:`ConfigError` for panel flags that contradict each other or the judge flags."""
    if options.judge is not None or options.pool_judges:
        raise ConfigError("--panel ranks the verdicts its members make together; it excludes --judge and "
                          "--pool-judges")
    if (options.panel_rule == "weighted") != (options.panel_reference is not None):
        raise ConfigError("--panel-rule weighted weighs each member by its agreement with --panel-reference JUDGE "
                          "(e.g. the human labels in the same input); give both or neither")


def read_panel(path: Path | Sequence[Path], options: RankOptions, reader_options: dict):
    """The panel's derived judgments of ``path`` and the table read; ``table.extras["panel"]`` is the panel's
    summary (:meth:`judgewise.analysis.panel.Panel.as_dict`, plus each member's agreement with the reference
    under ``weighted``), and the read report counts the rows of judges outside the panel as skipped."""
    check_panel_options(options)
    members = panel_members(options.panel)
    frame, table = read_rated(path, format=options.format, skip_invalid=options.skip_invalid, pool_judges=True,
                              options=reader_options)
    weights = accuracy = None
    if options.panel_rule == "weighted":
        weights, accuracy = reliability_weights(frame, members, options.panel_reference)
    panel = panel_verdicts(frame, members, options.panel_rule, split=options.panel_split, weights=weights)
    note_outside(table.report, len(frame) - sum(panel.member_rows.values()))
    table.extras["panel"] = {**panel.as_dict(), "reference": options.panel_reference, "accuracy": accuracy}
    return panel.judgments, table


def note_outside(report: ReadReport, outside: int) -> None:
    """Count the rows of judges outside the panel as skipped, with the reason first."""
    if outside:
        report.rows_used = max(report.rows_used - outside, 0)
        report.rows_skipped += outside
        report.skipped_reasons.insert(0, f"{outside:,} rows of judges outside the panel (--panel)")
