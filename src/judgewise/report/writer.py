"""Building and writing a report: read the run, choose its judge, build every section, write HTML or Markdown."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from judgewise.analysis.panel import note_outside, panel_of_options
from judgewise.errors import ConfigError, InputError, ReportError
from judgewise.io.atomic import write_text_atomic
from judgewise.io.provenance import note_dropped, select_judge
from judgewise.io.tables import ReadReport
from judgewise.report.analysis_sections import study_data
from judgewise.report.context import ReportContext
from judgewise.report.inputs import add_responses, load_run, read_gold
from judgewise.report.options import ReportOptions
from judgewise.report.document import FAILED
from judgewise.report.render import render_html, render_markdown
from judgewise.report.sections import build_sections

log = logging.getLogger(__name__)

FORMATS = ("html", "md")


def build_report(sources, *, options=None, input_format: str | None = None, responses=None):
    """Read ``sources`` (and optional ``responses``) and build every section; returns the sections."""
    options = options or ReportOptions()
    run = load_run(sources, format=input_format)
    choose_judge(run, options)
    if responses is not None:
        add_responses(run, responses)
    return build_sections(ReportContext(run, options))


def choose_judge(run, options) -> None:
    """One judge (``options.judge``, the rest counted as skipped), several only with ``options.pool_judges``, or a
    panel's derived verdicts (``options.panel``: :func:`judgewise.analysis.panel.panel_of_options`, as ``rank
    --panel``); a run mixing judges otherwise stops with a ConfigError listing them (io.provenance)."""
    if options.panel is not None:
        panel = panel_of_options(run.judgments, options)
        note_outside(_selection_report(run), panel, len(run.judgments))
        run.judgments, run.panel = panel.judgments, panel.as_dict()
        return
    run.judgments, dropped = select_judge(run.judgments, options.judge, options.pool_judges)
    if dropped:
        note_dropped(_selection_report(run, len(run.judgments) + dropped), dropped, options.judge)


def _selection_report(run, rows: int | None = None) -> ReadReport:
    """The read report that counts the rows a judge selection or a panel leaves out: the run's one read report,
    or a new "judge selection" one over ``rows`` (default: the run's judgments) when it read several sources."""
    if len(run.read_reports) != 1:
        rows = len(run.judgments) if rows is None else rows
        run.read_reports.append(ReadReport("judge selection", "--judge/--panel", rows_read=rows, rows_used=rows))
    return run.read_reports[-1]


def write_report(sources, output, options: ReportOptions | None = None, *, format: str = "html",
                 input_format: str | None = None, responses=None, partial: bool = False) -> Path:
    """Write the report for ``sources`` (path(s) anything ``judgewise.io`` reads, a judging store, or a
    judgments DataFrame/Table) to ``output``; returns the path of the written HTML or Markdown file.

    ``format="md"`` writes ``output`` as a folder holding ``report.md`` and ``figures/*.svg``
    (or, when ``output`` ends in ``.md``, that file with ``figures/`` beside it).
    ``options`` (:class:`ReportOptions`): the method, intervals, title, the command line shown under "Reproduce"
    (default: this process's arguments), a gold ranking or study, which judge(s) and the BT ridge.
    ``responses`` adds model outputs (path or DataFrame ``prompt_id, model, text``) to a run without them.
    A section that raises is a :class:`ReportError` naming it and the cause, and nothing is written; with
    ``partial=True`` the other sections are written first (the failed one marked), then the error is raised.
    "Not applicable" sections (no gold ranking, no study, ...) are not failures.
    """
    if format not in FORMATS:
        raise ConfigError(f"unknown report format {format!r}: expected one of {', '.join(FORMATS)}")
    options = options or ReportOptions()
    target = output_target(Path(output), format)
    _check_side_inputs(options)
    sections = build_report(sources, options=options, input_format=input_format, responses=responses)
    failed = failed_sections(sections)
    if failed and not partial:
        raise ReportError(f"{failed}; no report written (`partial=True` writes the other sections)")
    _make_folder(target.parent)
    if format == "html":
        write_text_atomic(target, render_html(sections, title=options.title))
    else:
        write_text_atomic(target, render_markdown(sections, title=options.title, out_dir=target.parent))
    slots = [f"{s.title} ({s.status})" for s in sections if s.is_slot]
    if slots:
        log.info("report sections shown as slots: %s", "; ".join(slots))
    if failed:
        raise ReportError(f"{failed}; the other sections were written to {target} (`partial=True`)")
    return target


def failed_sections(sections) -> str:
    """'report section "Title" failed: Cause' for each section that raised ('' when none did)."""
    return "; ".join(f'report section "{s.title}" failed: {s.note}' for s in sections if s.status == FAILED)


def output_target(output: Path, format: str) -> Path:
    """The file a report writes (``output``, or ``output/report.md`` for a Markdown folder), checked before any
    work: not a directory, and its nearest existing folder is a writable folder (InputError naming it)."""
    target = output if format == "html" or output.suffix == ".md" else output / "report.md"
    if target.is_dir():
        raise InputError("cannot write the report: it is a directory, expected a file path", file=str(target))
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"cannot write the report: {parent} is a file, not a folder", file=str(target))
            if not os.access(parent, os.W_OK | os.X_OK):
                raise InputError(f"cannot write the report: folder {parent} is not writable", file=str(target))
            break
    return target


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the report's folder ({exc.strerror or exc})", file=str(folder)) from None


def _check_side_inputs(options) -> None:
    """Fail early, naming file/row/field, on a gold ranking or study file the user gave that cannot be read."""
    if options.gold is not None:
        read_gold(options.gold)
    if options.study is not None:
        study_data(options.study)
