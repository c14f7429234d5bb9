"""The one design registry: every comparison design by name, filled from one table, and building designs from it.

``DESIGNS`` maps a name to a design factory (a class called with the design's options). Single-shot designs
(``all_pairs``, ``anchor``, ``quadratic``, ``sampled``) have ``pairs(models, prompt_ids, rng)``; multi-round
designs (``tournament``, ``adaptive``, ``insert-binary``, ``insert-anchor``) only ``run(...)`` against a verdict
callback. ``quadratic`` (the papers' name) and ``all_pairs`` (a run config's default) are one design under two
names. Users add their own with :func:`register_design`; nothing registers itself on import.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Callable, Sequence

import numpy as np

from judgewise.designs.adaptive import AdaptiveDesign
from judgewise.designs.base import Design
from judgewise.designs.insertion import AnchorInsertion, BinarySearchInsertion
from judgewise.designs.static import AllPairsDesign, AnchorDesign, SampledDesign
from judgewise.designs.tournament import TournamentDesign
from judgewise.errors import ConfigError
from judgewise.registry import Registry

Triple = tuple[str, str, str]

DESIGNS: Registry[Callable[..., Design]] = Registry("design", {
    "all_pairs": AllPairsDesign, "anchor": AnchorDesign, "quadratic": AllPairsDesign, "sampled": SampledDesign,
    "tournament": TournamentDesign, "adaptive": AdaptiveDesign,
    "insert-binary": BinarySearchInsertion, "insert-anchor": AnchorInsertion,
})


def register_design(name: str, factory: Callable[..., Design], *, replace: bool = False) -> Callable[..., Design]:
    """Add a design: ``factory(**options)`` returns an object with ``name``, ``n_calls(n_models, n_prompts)`` and
    ``run(models, prompt_ids, verdicts, rng)`` (and ``pairs(models, prompt_ids, rng)`` for a single-shot design).
    A dataclass factory's fields are the options a run config's ``design:`` may give."""
    return DESIGNS.register(name, factory, replace=replace)


def make_design(name: str, **options) -> Design:
    """The design registered as ``name``, built with ``options`` (an unknown name lists the known ones)."""
    return DESIGNS.get(name)(**options)


def is_single_shot(name: str) -> bool:
    """Whether design ``name`` lists all its comparisons up front (``pairs``) rather than asking round by round."""
    return hasattr(DESIGNS.get(name), "pairs")


def design_options(name: str) -> dict[str, Any] | None:
    """Option name → type that design ``name`` takes (a dataclass's init fields, plus ``seed``, which seeds the
    design's generator), or ``None`` when the factory is not a dataclass (any options)."""
    factory = DESIGNS.get(name)
    if not dataclasses.is_dataclass(factory):
        return None
    try:
        hints = typing.get_type_hints(factory)
    except Exception:  # noqa: BLE001 — unresolvable annotations (a user's design): check the names only
        hints = {}
    return {**{f.name: hints.get(f.name, Any) for f in dataclasses.fields(factory) if f.init}, "seed": int}


def design_triples(name: str, models: Sequence[str], prompt_ids: Sequence[str], *, seed: int = 0,
                   **options) -> list[Triple]:
    """The (prompt_id, model_a, model_b) comparisons of single-shot design ``name``; a multi-round design is a
    ConfigError (it asks for verdicts round by round)."""
    if not is_single_shot(name):
        single = [n for n in DESIGNS if is_single_shot(n)]
        raise ConfigError(f'design "{name}" is a multi-round design (it asks for verdicts round by round); '
                          f"single-shot designs: {single}")
    design = make_design(name, **options)
    return design.pairs(list(models), list(prompt_ids), np.random.default_rng(seed)).records()
