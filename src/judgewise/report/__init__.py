"""One-file offline HTML/Markdown report and the local read-only explorer.

``write_report(sources, output)`` is what ``judgewise report`` and ``judgewise demo`` call;
``judgewise.report.explorer.serve`` is what ``judgewise serve`` calls. Importing this package loads nothing heavy
(the CLI declares ``report``'s flags from :class:`~judgewise.report.options.ReportOptions` at start-up): a public
name's module is imported on first use.
"""

import importlib

#: public name -> module that defines it (imported on first use, so the CLI's start-up loads no pandas or jinja2)
_PUBLIC = {
    "ReportOptions": "options",
    "FORMATS": "writer", "build_report": "writer", "choose_judge": "writer", "write_report": "writer",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    """Import a public name's module on first use (PEP 562)."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'judgewise.report' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"judgewise.report.{module}"), name)
    globals()[name] = value
    return value
