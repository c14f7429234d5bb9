"""The report's document model: sections of facts, tables, figures and notes that HTML and Markdown both render."""

from __future__ import annotations

from dataclasses import dataclass, field

OK, UNAVAILABLE, NOT_APPLICABLE, FAILED = "ok", "not available yet", "not applicable", "failed"


class NotApplicable(Exception):
    """A section needs an input this run does not have (the message says which)."""


class Omitted(Exception):
    """A section about something most runs never have (a store's human labels): left out, not shown as a slot."""


@dataclass
class TableBlock:
    """A table: ``columns`` headers and ``rows`` of already formatted cells (plain text, escaped on output)."""

    caption: str
    columns: list[str]
    rows: list[list]
    css_class: str = ""


@dataclass
class Figure:
    """An SVG chart with a caption; ``name`` is its file stem in the Markdown report."""

    name: str
    caption: str
    svg: str


@dataclass
class Section:
    """One report section. ``status`` is OK, or a marked slot (UNAVAILABLE / NOT_APPLICABLE / FAILED) whose
    ``note`` says why. ``source`` names the library function(s) the numbers came from."""

    key: str
    title: str
    status: str = OK
    note: str = ""
    source: str = ""
    facts: list[tuple[str, str]] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)
    tables: list[TableBlock] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)

    @property
    def is_slot(self) -> bool:
        return self.status != OK


def fmt_num(x, digits: int = 3) -> str:
    """A number for a table cell: '—' for missing, ints as ints, floats to ``digits`` significant places."""
    if x is None:
        return "—"
    try:
        xf = float(x)
    except (TypeError, ValueError):
        return str(x)
    if xf != xf:
        return "—"
    if float(xf).is_integer() and abs(xf) < 1e15:
        return f"{int(xf):,}"
    return f"{xf:.{digits}g}" if abs(xf) < 1e4 else f"{xf:,.0f}"
