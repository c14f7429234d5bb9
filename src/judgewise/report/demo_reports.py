"""The demo's HTML reports: the shipped AlpacaEval slice and, when judged, the tiny job's store.

``judgewise demo`` calls :func:`write_demo_report` with the :class:`~judgewise.pipeline.demo.DemoRun` it made.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from judgewise.report import write_report

if TYPE_CHECKING:
    from judgewise.pipeline.demo import DemoRun


def write_demo_report(demo: DemoRun) -> list[Path]:
    """Write the HTML reports of the demo into ``demo.out_dir``: the AlpacaEval slice (``report.html``) and,
    when the tiny job was judged, its store (``judged-report.html``); returns their paths."""
    demo.out_dir.mkdir(parents=True, exist_ok=True)
    slice_report = demo.out_dir / "report.html"
    paths = [write_report(demo.slice_path, slice_report,
                          command=f"judgewise report {demo.slice_path} -o {slice_report}")]
    if demo.store_path is not None:
        judged_report = demo.out_dir / "judged-report.html"
        paths.append(write_report(demo.store_path, judged_report, responses=demo.slice_path,
                                  command=f"judgewise report {demo.store_path} --responses {demo.slice_path} "
                                          f"-o {judged_report}"))
    return paths
