"""How the blocks a command made (``commands.tables``) appear on a rich console: text that is never read as markup.

Rich parses ``[...]`` in a plain ``str`` as markup: a model ``llama[v1]`` prints as ``llama``, ``A[/]`` raises a
``MarkupError`` and a file ``data[red].jsonl`` is shown as ``data.jsonl``. Every command prints through these
helpers, on the console the CLI gives them, which wrap strings in :class:`rich.text.Text` (shown exactly as given)
and apply styles only to our own fixed labels. :func:`print_table` is the one way a command prints a table,
:func:`show` prints the tables and lines a command made (``commands.tables``, which also holds the number format
``fmt_num``).
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from judgewise.commands.tables import Note, Rule, TextTable


def plain(value) -> Text:
    """``value`` as a Text shown exactly as written (a Text is returned as it is)."""
    return value if isinstance(value, Text) else Text(str(value))


def print_table(console: Console, title, columns, rows, *, soft_wrap: bool | None = None, **column_options) -> None:
    """Print a table titled ``title`` (left-justified): ``columns`` as ``(name, justify)`` or ``(name, justify,
    {options})``, ``rows`` as cell lists shown exactly as written (a ``None`` row starts a new section);
    ``soft_wrap=False``: a title longer than the table wraps (default: the console's setting)."""
    table = Table(title=title, title_justify="left")
    for name, justify, *options in columns:
        table.add_column(name, justify=justify, **column_options, **(options[0] if options else {}))
    for cells in rows:
        if cells is None:
            table.add_section()
        else:
            table.add_row(*(plain(c) for c in cells))
    console.print(table, soft_wrap=soft_wrap)


def show(console: Console, blocks) -> None:
    """Print what a command made (``commands.tables``), each block as it comes: each :class:`TextTable` as a
    table, each :class:`Note` as a line after its styled label, each :class:`Rule` as a bold rule, each other item
    as a plain line."""
    for block in blocks:
        if isinstance(block, TextTable):
            print_table(console, plain(block.title), block.columns, block.rows,
                        soft_wrap=False if block.wrap_title else None, **block.column_options)
        elif isinstance(block, Note):
            say(console, block.text, label=block.label, style=block.style)
        elif isinstance(block, Rule):
            console.rule(block.title, style="bold")
        else:
            say(console, block)


def say(console: Console, line, *, label: str | None = None, style: str | None = None) -> None:
    """Print one line of plain text (no markup, no highlighting), optionally after a styled fixed ``label``
    (e.g. ``say(console, message, label="warning:", style="yellow")``)."""
    body = plain(line)
    if label:
        text = Text.assemble((label, style or ""), " ", body)
    else:
        text = Text(body.plain, style=style) if style else body
    console.print(text, highlight=False, soft_wrap=True)
