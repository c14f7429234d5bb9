"""The registry of input formats (name → detector + reader) and format detection; users can add their own.

A reader is ``read(path, *, skip_invalid=False, kind=None) -> Table`` (``kind`` is the canonical table the
caller wants, a hint only foreign readers may ignore); a detector is ``detect(probe) -> bool`` where the
:class:`Probe` gives cheap facts about the path (is it a directory, its suffix, its container, the field names of
its first record). ``containers`` declares what the reader can open (``dir``, ``json``, ``jsonl``, ``csv``,
``parquet``; None = anything): detection offers a path only to formats that can read its container, so a CSV
whose header names a JSON format's fields is never sent to a JSON reader. Detection tries formats in registration
order (specific foreign formats first, canonical last)::

    from judgewise.io import register_format
    register_format("mytool", detect=lambda p: p.suffix == ".mytool", read=my_reader, description="...")
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from judgewise.errors import ConfigError, InputError
from judgewise.io.streams import read_once
from judgewise.io.tables import Table

PROBE_BYTES = 1 << 16
CONTAINER_OF_SUFFIX = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".json": "json"}
CONTAINERS = ("dir", "json", "jsonl", "csv", "parquet")


class Probe:
    """Cheap, cached facts about a path for detectors."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @cached_property
    def is_dir(self) -> bool:
        return self.path.is_dir()

    @cached_property
    def suffix(self) -> str:
        return self.path.suffix.lower()

    @cached_property
    def container(self) -> str:
        """What holds the data: ``dir``, ``csv``, ``parquet``, ``json`` (one JSON document), else ``jsonl``."""
        if self.is_dir:
            return "dir"
        return CONTAINER_OF_SUFFIX.get(self.suffix, "jsonl")

    @cached_property
    def head(self) -> str:
        """The first 64 KiB of a file as text ('' for directories or unreadable files)."""
        if self.is_dir:
            return ""
        try:
            with open(self.path, "rb") as fh:
                return fh.read(PROBE_BYTES).decode("utf-8-sig", errors="replace")
        except OSError:
            return ""

    @cached_property
    def keys(self) -> frozenset[str]:
        """Field names of the first record (JSONL line, JSON list element, CSV header, Parquet schema)."""
        try:
            return frozenset(self._first_keys())
        except (ValueError, OSError, csv.Error, StopIteration, TypeError, AttributeError, RecursionError):
            return frozenset()

    def _first_keys(self):
        if self.is_dir:
            return ()
        if self.container == "parquet":
            import pyarrow.parquet as pq

            return pq.read_schema(self.path).names
        if self.container == "csv":
            return next(csv.reader(io.StringIO(self.head)))
        if self.container == "json":
            data = json.loads(self.path.read_text(encoding="utf-8-sig"))
            return data[0].keys() if isinstance(data, list) and data and isinstance(data[0], dict) else ()
        first = next(line for line in self.head.splitlines() if line.strip())
        record = json.loads(first)
        return record.keys() if isinstance(record, dict) else ()


Reader = Callable[..., Table]


@dataclass(frozen=True)
class Format:
    """An input format: how to recognise it and how to read it into a canonical Table."""

    name: str
    detect: Callable[[Probe], bool]
    read: Reader
    description: str = ""
    containers: tuple[str, ...] | None = None  # what the reader opens (CONTAINERS); None: anything

    def can_open(self, probe: Probe) -> bool:
        return self.containers is None or probe.container in self.containers


FORMATS: dict[str, Format] = {}


def register_format(name: str, *, detect: Callable[[Probe], bool], read: Reader, description: str = "",
                    first: bool = False, containers: tuple[str, ...] | None = None) -> Format:
    """Add (or replace) a format; ``first=True`` makes detection try it before all others; ``containers`` (a
    subset of ``CONTAINERS``) limits detection to the paths its reader can open."""
    unknown = set(containers or ()) - set(CONTAINERS)
    if unknown:
        raise ConfigError(f"format {name!r}: unknown containers {sorted(unknown)}; expected some of {CONTAINERS}")
    fmt = Format(name, detect, read, description, tuple(containers) if containers is not None else None)
    if first:
        rest = {k: f for k, f in FORMATS.items() if k != name}
        FORMATS.clear()
        FORMATS.update({name: fmt, **rest})
    else:
        FORMATS[name] = fmt
    return fmt


def get_format(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise ConfigError(f"unknown format {name!r}: known formats are {', '.join(FORMATS)}") from None


def detect_format(path: str | Path) -> Format:
    """The first registered format whose detector accepts ``path``; InputError naming the path otherwise."""
    probe = Probe(read_once(path))  # a pipe: its temporary copy, which detection and the reader can both open
    if not probe.path.exists():
        raise InputError("no such file or directory", file=str(path))
    for fmt in FORMATS.values():
        if fmt.can_open(probe) and fmt.detect(probe):
            return fmt
    what = "directory holds no file of a known format (e.g. no AlpacaEval annotations.json under " \
           "results/<model>/<annotator>/)" if probe.is_dir else "cannot detect the file's format"
    raise InputError(f"{what}; known formats: {', '.join(FORMATS)} (force one with `format`)", file=str(path))
