"""Comparison designs: which (prompt, model_a, model_b) comparisons to pay for.

``DESIGNS`` (:mod:`judgewise.designs.catalog`) is the one registry of designs, filled from one table;
``make_design(name, **options)`` builds one, ``register_design(name, factory)`` adds a user's.
"""

from judgewise.designs.base import DesignRun, Pairs, VerdictFn
from judgewise.designs.catalog import (DESIGNS, design_options, design_triples, is_single_shot, make_design,
                                        register_design)

__all__ = ["DESIGNS", "DesignRun", "Pairs", "VerdictFn", "design_options", "design_triples", "is_single_shot",
           "make_design", "register_design"]
