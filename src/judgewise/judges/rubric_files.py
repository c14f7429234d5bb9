"""Rubrics as data: a YAML file (criterion, a description per score, reference use) that renders judge templates.

A rubric (prometheus-eval's idea: grade by a criterion and what each score means, optionally against a reference
answer) is a *template source*: :func:`rubric_template` fills the shipped generic prompt (``rubrics/absolute.j2``
for 1..N grades, ``rubrics/pairwise.j2`` for A/B/tie verdicts) with the rubric, which travels in the template's
metadata. So the rubric's text is part of the template's content hash, hence of every store key (an edited rubric
never reuses old grades), and the parser reads exactly the rubric's scale (a rating outside 1..N is no rating: the
judge is re-asked once, then the grade is stored as failed and counted). A rubric file::

    name: helpfulness            # letters, digits, _ and -
    version: 1                   # bump when the wording changes (it is in the template's name@version)
    criterion: Does the response help the user with what they asked?
    scores:                      # 1..N, N from 2 to 10, each with what it means
      1: The response does not help.
      ...
      5: The response helps fully.
    reference: optional          # required (grade only answers with a reference), optional, or none (never shown)

Shipped rubrics (``judges/rubrics/*.yaml``) are looked up by name; any other is read from its path.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from judgewise.errors import ConfigError
from judgewise.judges.config_schema import first_problem, read_yaml_file
from judgewise.judges.templates import _HEADER, JudgeTemplate, parse_template
from judgewise.registry import Registry

MIN_SCALE, MAX_SCALE = 2, 10
REFERENCE_USES = ("required", "optional", "none")
KIND_FILES = {"pointwise": "absolute.j2", "pairwise": "pairwise.j2"}
_SUFFIXES = (".yaml", ".yml")


def _text(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("rubric", "must be a non-empty text")
    return " ".join(value.split())


def _scale(scores: dict[int, str]) -> dict[int, str]:
    keys = sorted(scores)
    if len(keys) < MIN_SCALE or len(keys) > MAX_SCALE or keys != list(range(1, len(keys) + 1)):
        raise PydanticCustomError("rubric", f"must give the scores 1, 2, ... N, N from {MIN_SCALE} to {MAX_SCALE}, "
                                  f"each with what it means (found the scores {keys})")
    return scores


Text = Annotated[str, AfterValidator(_text), Field(description="a non-empty text")]


class RubricSchema(BaseModel):
    """The fields of a rubric file (strict types, no other keys)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$",
                               description="a name of letters, digits, _ and - (at most 64)")]
    version: Annotated[int, Field(ge=1, description="an integer >= 1")] = 1
    criterion: Text
    scores: Annotated[dict[int, Text], AfterValidator(_scale),
                      Field(description=f"a mapping score → description for the scores 1..N, N from {MIN_SCALE} "
                                        f"to {MAX_SCALE}")]
    reference: Literal[REFERENCE_USES] = "optional"


@dataclass(frozen=True)
class Rubric:
    """A checked rubric: ``scores`` maps 1..N to what each score means; ``reference`` says when a reference answer
    is shown (``required``: only answers to prompts with one are graded; ``none``: never shown)."""

    name: str
    version: int
    criterion: str
    scores: dict[int, str]
    reference: str = "optional"
    path: str = "<dict>"

    @property
    def high(self) -> int:
        """N, the top score."""
        return max(self.scores)

    def variables(self) -> dict:
        """What the generic templates read as ``rubric``."""
        return {"name": self.name, "criterion": self.criterion, "reference": self.reference,
                "scores": [{"score": k, "description": self.scores[k]} for k in sorted(self.scores)]}

    def template(self, kind: str = "pointwise") -> JudgeTemplate:
        """The judge template this rubric renders: ``pointwise`` (absolute 1..N grades) or ``pairwise``."""
        return rubric_template(self, kind)


def parse_rubric(data, source: str = "<dict>") -> Rubric:
    """A :class:`Rubric` from a rubric file's mapping; a bad field is one ConfigError naming ``source`` and it."""
    if not isinstance(data, dict):
        shown = "nothing (an empty file)" if data is None else type(data).__name__
        raise ConfigError(f"{source}: expected a rubric (a mapping with name, criterion, scores), found {shown}")
    try:
        checked = RubricSchema.model_validate(data)
    except ValidationError as exc:
        raise first_problem(exc, source, RubricSchema) from None
    return Rubric(checked.name, checked.version, checked.criterion, dict(sorted(checked.scores.items())),
                  checked.reference, source)


def read_rubric_file(path: str | Path) -> Rubric:
    """Read a rubric file under the run config's YAML limits (size, aliases, repeated keys)."""
    return parse_rubric(read_yaml_file(Path(path), what="the rubric file"), str(path))


RUBRICS: Registry[Rubric] = Registry("rubric")  # the shipped ones, loaded on first use; users may register more


def _load_shipped() -> None:
    if RUBRICS:
        return
    folder = resources.files("judgewise.judges").joinpath("rubrics")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(_SUFFIXES):
            source = f"judgewise/judges/rubrics/{entry.name}"
            RUBRICS.setdefault(Path(entry.name).stem, parse_rubric(yaml.safe_load(entry.read_text("utf-8")), source))


def available_rubrics() -> list[str]:
    """Names of the shipped (and registered) rubrics."""
    _load_shipped()
    return sorted(RUBRICS)


def is_rubric_path(value: str) -> bool:
    """Whether a ``rubric:`` value names a file (a YAML path) rather than a shipped rubric."""
    return str(value).lower().endswith(_SUFFIXES) or "/" in str(value)


def get_rubric(name_or_path: str | Path | Rubric) -> Rubric:
    """A shipped rubric by name, or one read from a YAML file."""
    if isinstance(name_or_path, Rubric):
        return name_or_path
    _load_shipped()
    key = str(name_or_path)
    if key in RUBRICS:
        return RUBRICS[key]
    if is_rubric_path(key) or Path(key).is_file():
        return read_rubric_file(key)
    raise ConfigError(f"unknown rubric {key!r}: not a shipped rubric ({', '.join(available_rubrics())}) nor a "
                      ".yaml file")


def _generic(kind: str) -> str:
    if kind not in KIND_FILES:
        raise ConfigError(f"a rubric renders a pointwise (absolute) or pairwise template, not {kind!r}")
    return resources.files("judgewise.judges").joinpath("rubrics", KIND_FILES[kind]).read_text("utf-8")


def _escaped_header(meta: dict) -> str:
    """``meta`` as the YAML of a template header: every scalar double-quoted with ``#`` written ``\\x23``, so no
    rubric text can end the Jinja comment that holds it."""
    text = yaml.safe_dump(meta, default_style='"', allow_unicode=True, sort_keys=False, width=10**6)
    return text.replace("#", "\\x23")


def rubric_template(rubric: Rubric | str | Path, kind: str = "pointwise") -> JudgeTemplate:
    """The generic rubric template of ``kind`` with ``rubric`` in its metadata: named ``rubric-<name>`` (absolute
    grades on 1..N, the ``rating`` parser on that scale) or ``rubric-<name>-pairwise`` (``[[A]]``/``[[B]]``/
    ``[[C]]``); version ``<template version>.<rubric version>``."""
    rubric = get_rubric(rubric)
    generic = _generic(kind)
    header = _HEADER.match(generic)
    meta = yaml.safe_load(header.group("meta"))
    suffix = "" if kind == "pointwise" else "-pairwise"
    meta.update(name=f"rubric-{rubric.name}{suffix}", version=f"{meta['version']}.{rubric.version}",
                low=1, high=rubric.high, rubric=rubric.variables())
    source = "{#- judgewise-template\n" + _escaped_header(meta) + "-#}" + generic[header.end():]
    return parse_template(source, f"{rubric.path} ({KIND_FILES[kind]})")


def rubric_of(template: JudgeTemplate) -> dict | None:
    """The rubric a template was rendered from (:meth:`Rubric.variables`), or None for any other template."""
    found = template.options.get("rubric")
    return found if isinstance(found, dict) else None

