"""Comparisons from a responses table: the two simple designs ("all_pairs", "anchor") and the text join.

A design maps (models, prompt ids, options) to (prompt_id, model_a, model_b) triples; ``PAIR_DESIGNS``
is the registry ``judgewise judge`` looks names up in (the designs package registers richer designs
here). :func:`build_comparisons` joins the triples with the response and prompt texts, counting every
triple it cannot build (a missing response) instead of dropping it silently.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import typing
from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

from judgewise.errors import ConfigError
from judgewise.judges.base import Comparison

Triple = tuple[str, str, str]
PROMPT_TEXT_COLUMNS = ("prompt", "instruction", "question")


def all_pairs(models: list[str], prompt_ids: list[str]) -> list[Triple]:
    """Every pair of models on every prompt (quadratic design): n(n−1)/2 per prompt."""
    return [(p, a, b) for p in prompt_ids for a, b in itertools.combinations(models, 2)]


def anchor(models: list[str], prompt_ids: list[str], *, anchor: str | None = None) -> list[Triple]:
    """Every other model against one anchor on every prompt (model as model_a, anchor as model_b)."""
    if not anchor:
        raise ConfigError('design "anchor" needs an anchor model: design: {name: anchor, anchor: <model>}')
    if anchor not in models:
        raise ConfigError(f'design.anchor = "{anchor}" is not among the models {models[:10]}')
    return [(p, m, anchor) for p in prompt_ids for m in models if m != anchor]


PAIR_DESIGNS: dict[str, Callable[..., list[Triple]]] = {"all_pairs": all_pairs, "anchor": anchor}


def register_pair_design(name: str, fn: Callable[..., list[Triple]]) -> None:
    """Add a design: ``fn(models, prompt_ids, **options) -> [(prompt_id, model_a, model_b), ...]``."""
    PAIR_DESIGNS[name] = fn


def design_options(name: str) -> dict[str, Any] | None:
    """Option name → type of design ``name`` as a run config's ``design:`` may give them (``None``: any options,
    a function taking ``**options``). Looks in :data:`PAIR_DESIGNS` and the designs package's registry (a
    dataclass design takes its fields, plus ``seed``); an unknown name is a ConfigError listing the known ones."""
    import judgewise.designs  # noqa: F401  (registers the designs package's designs)
    from judgewise.designs.base import DESIGNS

    fn, cls = PAIR_DESIGNS.get(name), DESIGNS.get(name)
    if fn is not None and (cls is None or fn in (all_pairs, anchor)):  # the engine's own, or a user's function
        return _signature_options(fn)
    if cls is not None and dataclasses.is_dataclass(cls):
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # noqa: BLE001 — unresolvable annotations: check the names only
            hints = {}
        return {**{f.name: hints.get(f.name, Any) for f in dataclasses.fields(cls) if f.init}, "seed": int}
    if cls is not None:
        return None
    known = sorted(set(PAIR_DESIGNS) | set(DESIGNS))
    raise ConfigError(f'design.name = "{name}": unknown design; known: {known}')


def _signature_options(fn: Callable) -> dict[str, Any] | None:
    params = list(inspect.signature(fn).parameters.values())[2:]  # after (models, prompt_ids)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001
        hints = {}
    return {p.name: hints.get(p.name, Any) for p in params}


@dataclass
class Built:
    """Comparisons built from a design, and the triples that could not be built (with the reason)."""

    comparisons: list[Comparison]
    skipped: list[str] = field(default_factory=list)


def prompt_texts(responses: pd.DataFrame, prompts: pd.DataFrame | None = None) -> dict[str, str]:
    """prompt_id → prompt text, from a prompts table or a prompt/instruction column of the responses."""
    for frame in (prompts, responses):
        if frame is None:
            continue
        col = next((c for c in PROMPT_TEXT_COLUMNS if c in frame.columns), None)
        if col is not None:
            rows = frame[frame[col].map(lambda x: isinstance(x, str))]
            return dict(zip(rows["prompt_id"].astype(str), rows[col]))
    raise ConfigError("the judge needs each prompt's text: give `prompts:` (a table with prompt_id and one of "
                      f"{list(PROMPT_TEXT_COLUMNS)}) or responses with such a column")


def build_comparisons(responses: pd.DataFrame, triples: list[Triple], prompts: dict[str, str]) -> Built:
    """Join (prompt_id, model_a, model_b) triples with response and prompt texts."""
    texts = {(str(p), str(m)): t for p, m, t in zip(responses["prompt_id"], responses["model"], responses["text"])}
    built = Built([])
    for p, a, b in triples:
        missing = [m for m in (a, b) if (p, m) not in texts]
        if missing or p not in prompts:
            why = f"no response from {missing}" if missing else "no prompt text"
            built.skipped.append(f"prompt {p!r}, {a!r} vs {b!r}: {why}")
            continue
        built.comparisons.append(Comparison(prompt_id=p, prompt=prompts[p], model_a=a, model_b=b,
                                            response_a=texts[(p, a)], response_b=texts[(p, b)]))
    return built


def design_triples(name: str, models: list[str], prompt_ids: list[str], **options) -> list[Triple]:
    """Look ``name`` up in :data:`PAIR_DESIGNS` and run it (an option it does not take is a ConfigError)."""
    allowed = design_options(name)
    if name not in PAIR_DESIGNS:
        raise ConfigError(f'design.name: "{name}" is a multi-round design (it asks for verdicts round by round); '
                          f"single-shot designs: {sorted(PAIR_DESIGNS)}")
    unknown = sorted(set(options) - set(allowed)) if allowed is not None else []
    if unknown:
        raise ConfigError(f'unknown option(s) {unknown} for design "{name}"; it takes {sorted(allowed) or "none"}')
    return PAIR_DESIGNS[name](models, prompt_ids, **options)
