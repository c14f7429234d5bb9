"""Rich output that never reads user text as markup: model names, paths and messages reach Rich as ``Text``.

Rich parses ``[...]`` in a plain ``str`` as markup: a model ``llama[v1]`` prints as ``llama``, ``A[/]`` raises a
``MarkupError`` and a file ``data[red].jsonl`` is shown as ``data.jsonl``. Every command prints through these
helpers, which wrap strings in :class:`rich.text.Text` (shown exactly as given) and apply styles only to our
own fixed labels.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text


def plain(value) -> Text:
    """``value`` as a Text shown exactly as written (a Text is returned as it is)."""
    return value if isinstance(value, Text) else Text(str(value))


def add_row(table: Table, *cells) -> None:
    """Add a table row whose cells are shown exactly as written."""
    table.add_row(*(plain(c) for c in cells))


def say(console: Console, line, *, label: str | None = None, style: str | None = None) -> None:
    """Print one line of plain text (no markup, no highlighting), optionally after a styled fixed ``label``
    (e.g. ``say(console, message, label="warning:", style="yellow")``)."""
    body = plain(line)
    if label:
        text = Text.assemble((label, style or ""), " ", body)
    else:
        text = Text(body.plain, style=style) if style else body
    console.print(text, highlight=False, soft_wrap=True)
