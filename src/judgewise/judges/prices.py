"""Prices as data: dollars per million tokens (input, cached input, output) and the batch discount, per model.

A price table is a YAML file: ``source``, ``as_of`` (a date), ``batch_discount`` (the share taken off every token
by a batch API, 0.5 for OpenAI's) and ``models: {name: {input_per_mtok, cached_input_per_mtok, output_per_mtok}}``.
judgewise ships one (``price_tables/``, named for its source and date); a user file (``judge.prices.file``) overrides
its models; ``judge.prices`` fields override both. A model's entry is found by its name, or by the longest
table name it starts with followed by ``-`` (``gpt-4.1-2025-04-14`` → ``gpt-4.1``). A model in no table costs 0
unless ``judge.prices`` says otherwise.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from judgewise.errors import ConfigError

MAX_TOKEN_COUNT = 10**9  # tokens in one call's usage beyond any context window: a count above it is refused
SHIPPED_TABLE = "openai-2025-08-07.yaml"
RATES = ("input_per_mtok", "cached_input_per_mtok", "output_per_mtok")


def _clamp(n: int) -> int:
    return min(max(int(n), 0), MAX_TOKEN_COUNT)


@dataclass(frozen=True)
class Prices:
    """Dollars per million tokens: prompt, cached prompt (``None``: the prompt price) and completion, and the share
    a batch API takes off (``batch_discount``). ``source`` says where they come from (shown with estimates)."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0
    cached_input_per_mtok: float | None = None
    batch_discount: float = 0.5
    source: str = field(default="", compare=False)

    def cost(self, tokens_in: int, tokens_out: int, *, cached_in: int = 0, batch: bool = False) -> float:
        """Dollars for a call of ``tokens_in`` prompt tokens (``cached_in`` of them read from the prompt cache) and
        ``tokens_out`` completion tokens, live or through a batch API (``batch``). Counts are clamped to
        [0, MAX_TOKEN_COUNT] and ``cached_in`` to [0, tokens_in] (a hostile count never overflows)."""
        n_in, n_out = _clamp(tokens_in), _clamp(tokens_out)
        n_cached = min(_clamp(cached_in), n_in)
        cached_rate = self.input_per_mtok if self.cached_input_per_mtok is None else self.cached_input_per_mtok
        dollars = ((n_in - n_cached) * self.input_per_mtok + n_cached * cached_rate
                   + n_out * self.output_per_mtok) / 1e6
        return dollars * (1.0 - self.batch_discount) if batch else dollars

    def three_ways(self, tokens_in: int, tokens_out: int, cached_in: int) -> tuple[float, float, float]:
        """What calls of these counts cost live, live with ``cached_in`` prompt tokens from the prompt cache, and
        through a batch API with the same cached tokens (the three figures plans and dry runs show)."""
        return (self.cost(tokens_in, tokens_out), self.cost(tokens_in, tokens_out, cached_in=cached_in),
                self.cost(tokens_in, tokens_out, cached_in=cached_in, batch=True))


@dataclass(frozen=True)
class PriceTable:
    """A price table: where its prices come from, as of when, and each model's :class:`Prices`."""

    source: str
    as_of: dt.date
    models: dict[str, Prices]

    def lookup(self, model: str) -> Prices | None:
        """The model's prices: by its name, else the longest name it starts with followed by ``-``."""
        if model in self.models:
            return self.models[model]
        stems = [name for name in self.models if model.startswith(name + "-")]
        return self.models[max(stems, key=len)] if stems else None


def _rate(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"{where} = {value!r}: expected dollars per million tokens, a number >= 0")
    return float(value)


def parse_table(data, label: str) -> PriceTable:
    """A :class:`PriceTable` from a table file's YAML content; ``label`` (the file) names it in errors."""
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise ConfigError(f"{label}: expected a mapping with 'source', 'as_of' (a date) and 'models: {{name: "
                          f"{{input_per_mtok, cached_input_per_mtok, output_per_mtok}}}}'")
    as_of = data.get("as_of")
    if not isinstance(as_of, dt.date):
        raise ConfigError(f"{label}: field 'as_of' = {as_of!r} is not a date (YYYY-MM-DD): say when these prices held")
    discount = data.get("batch_discount", 0.5)
    if isinstance(discount, bool) or not isinstance(discount, (int, float)) or not 0 <= discount <= 1:
        raise ConfigError(f"{label}: field 'batch_discount' = {discount!r} is not a share in [0, 1]")
    source = f"{data.get('source') or label} as of {as_of.isoformat()}"
    models = {}
    for name, entry in data["models"].items():
        where = f"{label}: models.{name}"
        if not isinstance(entry, dict) or set(entry) - set(RATES) or "input_per_mtok" not in entry:
            raise ConfigError(f"{where}: expected {{input_per_mtok, cached_input_per_mtok, output_per_mtok}}, "
                              f"found {entry!r}")
        rates = {k: _rate(v, f"{where}.{k}") for k, v in entry.items()}
        models[str(name)] = Prices(**rates, batch_discount=float(discount), source=source)
    return PriceTable(source, as_of, models)


def read_table(path: str | Path) -> PriceTable:
    """A user's price table file (same format as the shipped one)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"judge.prices.file: cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"judge.prices.file: {path} is not YAML: {' '.join(str(exc).split())[:200]}") from None
    return parse_table(data, str(path))


@lru_cache(maxsize=1)
def shipped_table() -> PriceTable:
    """The price table judgewise ships (:data:`SHIPPED_TABLE`)."""
    text = resources.files("judgewise.judges").joinpath("price_tables", SHIPPED_TABLE).read_text(encoding="utf-8")
    return parse_table(yaml.safe_load(text), SHIPPED_TABLE)


def resolve_prices(model: str | None, section: dict | None = None) -> Prices:
    """The prices of ``model``: ``section`` (a ``judge.prices`` mapping: rate fields, ``batch_discount``, ``file``)
    over the user's table file over the shipped table; zero when none names the model and ``section`` gives none."""
    section = dict(section or {})
    user_file = section.pop("file", None)
    found = None
    if user_file is not None:
        found = read_table(user_file).lookup(model or "")
    if found is None:
        found = shipped_table().lookup(model or "") or Prices(source="no price known for this model")
    given = {k: v for k, v in section.items() if v is not None}
    return replace(found, **given, source="judge.prices" if given else found.source) if given else found
