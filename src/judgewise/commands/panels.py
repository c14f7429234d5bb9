"""``rank --panel``: read a panel's members from any judgments input and derive the panel's verdicts
(:func:`judgewise.analysis.panel.panel_of_options`, as ``diagnose`` and ``report`` do), the rows of other judges
counted as skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from judgewise.analysis.panel import note_outside, panel_of_options
from judgewise.analysis.panel_text import check_panel_options
from judgewise.commands.options import RankOptions
from judgewise.io.tables import Table
from judgewise.store.reading import read_rated


def read_panel(path: Path | Sequence[Path], options: RankOptions, reader_options: dict):
    """The panel's derived judgments of ``path`` and the table read; ``table.extras["panel"]`` is the panel's
    summary (:meth:`judgewise.analysis.panel.Panel.as_dict`, plus each member's agreement with the reference
    under ``weighted``), and the read report counts the rows of judges outside the panel as skipped."""
    check_panel_options(options)  # before reading anything
    frame, table = read_rated(path, format=options.format, skip_invalid=options.skip_invalid, pool_judges=True,
                              options=reader_options)
    return panel_frame(frame, table, options), table


def panel_frame(frame, table: Table, options):
    """The panel's derived verdicts of ``frame`` read as ``table`` (``rank`` and ``diagnose``): its summary kept in
    ``table.extras["panel"]``, the rows of other judges counted as skipped in ``table.report``."""
    panel = panel_of_options(frame, options)
    note_outside(table.report, panel, len(frame))
    table.extras["panel"] = panel.as_dict()
    return panel.judgments

