"""The demo's HTML reports: one per part, of the games its evaluation judged (read back from its store).

``judgewise demo`` calls :func:`write_demo_report` with the :class:`~judgewise.commands.demo.DemoRun` it made.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from judgewise.report import ReportOptions, write_report

if TYPE_CHECKING:
    from judgewise.commands.demo import DemoRun


def write_demo_report(demo: DemoRun) -> list[Path]:
    """Write the HTML report of each part's store into ``demo.out_dir`` (``replay-report.html``,
    ``embedded-report.html``), with the slice's answers; returns their paths."""
    responses = demo.examples / "alpacaeval"
    paths = []
    for store, name in ((demo.replay_store, "replay-report.html"), (demo.embedded_store, "embedded-report.html")):
        if store is not None:
            report = demo.out_dir / name
            command = f"judgewise report {store} --responses {responses} -o {report}"
            paths.append(write_report(store, report, ReportOptions(command=command), responses=responses))
    return paths
