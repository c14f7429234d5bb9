"""Write a command's JSON text to the file ``--output`` names, atomically (``io.atomic``)."""

from __future__ import annotations

from pathlib import Path

from judgewise.io.atomic import write_text_atomic


def write_json_text(path: Path, text: str) -> Path:
    """``text`` and a final newline to ``path``, atomically."""
    return write_text_atomic(path, text + "\n")
