"""Canonical tables, readers and importers of foreign formats, and row validation.

``read_any(path)`` detects the format and returns a :class:`Table` (``kind``, ``frame``, ``report``, ``extras``);
``read_judgments`` / ``read_responses`` / ``read_scores`` return that table kind; ``register_format`` adds a format.
"""

from judgewise.io.readers import read_any, read_judgments, read_responses, read_scores
from judgewise.io.formats import FORMATS, Format, Probe, detect_format, register_format
from judgewise.io.tables import ReadReport, Table

__all__ = ["read_any", "read_judgments", "read_responses", "read_scores", "FORMATS", "Format", "Probe",
           "detect_format", "register_format", "ReadReport", "Table"]
