"""How a field of an options dataclass declares, once, the command-line flag that sets it and its help."""

from __future__ import annotations

from dataclasses import MISSING, field


def option(default, *flags: str, help: str | None):
    """A dataclass field the command line sets with ``flags`` (e.g. ``"--method"``), described by ``help``;
    ``default`` ``...``: a required option (a field without default)."""
    return field(default=MISSING if default is ... else default, metadata={"flags": flags, "help": help})
