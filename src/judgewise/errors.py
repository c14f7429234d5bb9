"""Typed exceptions raised by library code; only the CLI turns them into messages and exit codes."""

from __future__ import annotations


SHOWN_AS: dict[str, str] = {}
"""Temporary copies of inputs (a pipe read once, :mod:`judgewise.io.streams`) → the name the user gave."""


def shown_file(name: str | None) -> str | None:
    """The name to show for a file: the input as the user gave it when ``name`` is a temporary copy of it."""
    return SHOWN_AS.get(str(name), name) if name is not None else None


class JudgewiseError(Exception):
    """Base class of every error judgewise raises on purpose."""

    exit_code = 1


class InputError(JudgewiseError):
    """Bad user input: names the file, row and field, what was expected and what was found.

    ``row`` is 1-based (the line of a JSONL/CSV file's data, the index+1 of a JSON list element).
    """

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None,
                 field: str | None = None):
        self.file, self.row, self.field, self.detail = shown_file(file), row, field, message
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.file:
            where.append(str(self.file))
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.field:
            where.append(f'field "{self.field}"')
        prefix = " ".join(where)
        return f"{prefix}: {self.detail}" if prefix else self.detail


class ConfigError(JudgewiseError):
    """An invalid setting or combination of settings (config file or CLI options)."""

    exit_code = 2


class RatingError(JudgewiseError):
    """The data cannot support the requested rating (e.g. a disconnected comparison graph)."""

    exit_code = 3


class JudgeError(JudgewiseError):
    """The judge backend failed in a way retries cannot fix (401, 404, bad model name, ...)."""

    exit_code = 4


class BudgetExceeded(JudgewiseError):
    """A run stopped because a call or cost cap was reached."""

    exit_code = 5


class ReportError(JudgewiseError):
    """A report section raised: ``report`` names the section and the cause and exits non-zero (with
    ``partial=True`` the other sections are still written)."""

    exit_code = 7


class StoreUnavailable(JudgewiseError):
    """A shared judgment store (PostgreSQL) could not be reached, nor reached again within the reconnect window."""

    exit_code = 6


class StoreBusy(JudgewiseError):
    """A run refused because another writer holds the store's calls (a batch run, or an open batch): sending them
    would pay for them twice. The message names the batch or process and how to go on."""

    exit_code = 8
