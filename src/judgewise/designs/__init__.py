"""Comparison designs: which (prompt, model_a, model_b) comparisons to pay for.

``DESIGNS`` maps a name to a design class (extend it with ``register_design``); ``make_design(name, **options)``
builds one. Importing this package registers the built-in designs.
"""

from judgewise.designs.base import DESIGNS, DesignRun, Pairs, VerdictFn, make_design, register_design
from judgewise.designs import adaptive, insertion, static, tournament  # noqa: F401  (registers the designs)

__all__ = ["DESIGNS", "DesignRun", "Pairs", "VerdictFn", "make_design", "register_design"]
