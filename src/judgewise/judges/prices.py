"""Prices as data: dollars per million tokens (input, cached input, cache writes, output) and the batch discount.

A price table is a YAML file: ``source``, ``as_of`` (a date), ``batch_discount`` (the share taken off every token
by a batch API, 0.5 for OpenAI's and Anthropic's) and ``models: {name: {input_per_mtok, cached_input_per_mtok,
cache_write_input_per_mtok, output_per_mtok, aliases}}`` (``cache_write_input_per_mtok``: prompt tokens written to
a prompt cache, which Anthropic bills above the input price). judgewise ships one per provider (``price_tables/``,
each named for its source and date; a model is named in one of them only); a user file
(``prices.file`` of a judge or a generate model, read with the run config's guards: size cap, no repeated key, few
aliases) overrides its models; ``prices`` fields override both. Every rate is a finite number in
[0, :data:`MAX_PRICE_PER_MTOK`]; a model named twice, or an alias naming two models, is refused.

A model's prices are found by its exact name or by an alias its table lists (``aliases: [gpt-4.1-2025-04-14]``
under ``gpt-4.1``), never by a prefix: ``o3-pro`` is not ``o3``, and ``gpt-4o-2024-05-13`` (priced above
``gpt-4o``) is no alias of it. A model no table names has no known price: its calls count $0 and every cost shown
for it says so (:func:`price_note`) until ``prices`` or a table gives one.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path

from judgewise.errors import ConfigError
from judgewise.judges.config_schema import MAX_PRICE_PER_MTOK, parse_yaml, read_yaml_file

MAX_TOKEN_COUNT = 10**9  # tokens in one call's usage beyond any context window: a count above it is refused
SHIPPED_TABLES = ("openai-2025-08-07.yaml", "anthropic-2025-08-07.yaml", "google-2025-08-07.yaml")
RATES = ("input_per_mtok", "cached_input_per_mtok", "cache_write_input_per_mtok", "output_per_mtok")
TABLE_KEYS = ("source", "as_of", "batch_discount", "models")
NO_PRICE = "no price known"  # how an unknown model's prices name their source


def _clamp(n: int) -> int:
    return min(max(int(n), 0), MAX_TOKEN_COUNT)


@dataclass(frozen=True)
class Prices:
    """Dollars per million tokens: prompt, cached prompt and prompt written to the cache (``None``: the prompt price)
    and completion, and the share a batch API takes off (``batch_discount``). ``source`` says where they come from
    (shown with estimates); ``known`` is False for a model no table or setting prices (its calls count $0)."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0
    cached_input_per_mtok: float | None = None
    batch_discount: float = 0.5
    cache_write_input_per_mtok: float | None = None
    source: str = field(default="", compare=False)
    known: bool = field(default=True, compare=False)

    def __post_init__(self):
        for name in RATES:
            value = getattr(self, name)
            if value is not None:
                _rate(value, f"Prices.{name}")
        if isinstance(self.batch_discount, bool) or not 0 <= self.batch_discount <= 1:
            raise ConfigError(f"Prices.batch_discount = {self.batch_discount!r}: expected a share in [0, 1]")

    def cost(self, tokens_in: int, tokens_out: int, *, cached_in: int = 0, cache_write_in: int = 0,
             batch: bool = False) -> float:
        """Dollars for a call of ``tokens_in`` prompt tokens (``cached_in`` of them read from the prompt cache,
        ``cache_write_in`` written to it) and ``tokens_out`` completion tokens, live or through a batch API
        (``batch``). Counts are clamped to [0, MAX_TOKEN_COUNT], ``cached_in`` to [0, tokens_in] and
        ``cache_write_in`` to what is left (a hostile count never overflows)."""
        n_in, n_out = _clamp(tokens_in), _clamp(tokens_out)
        n_cached = min(_clamp(cached_in), n_in)
        n_written = min(_clamp(cache_write_in), n_in - n_cached)
        cached_rate = self.input_per_mtok if self.cached_input_per_mtok is None else self.cached_input_per_mtok
        write_rate = self.input_per_mtok if self.cache_write_input_per_mtok is None else \
            self.cache_write_input_per_mtok
        dollars = ((n_in - n_cached - n_written) * self.input_per_mtok + n_cached * cached_rate
                   + n_written * write_rate + n_out * self.output_per_mtok) / 1e6
        return dollars * (1.0 - self.batch_discount) if batch else dollars

    def three_ways(self, tokens_in: int, tokens_out: int, cached_in: int) -> tuple[float, float, float]:
        """What calls of these counts cost live, live with ``cached_in`` prompt tokens from the prompt cache, and
        through a batch API with the same cached tokens (the three figures plans and dry runs show)."""
        return (self.cost(tokens_in, tokens_out), self.cost(tokens_in, tokens_out, cached_in=cached_in),
                self.cost(tokens_in, tokens_out, cached_in=cached_in, batch=True))


GIVE_A_PRICE = "give one in prices: (judge.prices, a models entry's prices) or a price table naming it (prices.file)"


def price_note(prices: Prices | None, how: str = GIVE_A_PRICE) -> str:
    """What follows a cost shown for calls at ``prices``: nothing when the price is known (or no model is called),
    else that the cost counts the model $0 and ``how`` to give a price (plans, dry runs and summaries show it)."""
    if prices is None or prices.known:
        return ""
    return f" ({prices.source}: counted as $0; {how})"


def unpriced_fields(priced: dict[str, Prices | None]) -> dict:
    """The fields a run's summary gains when a model it called (``{model: its prices}``) has no known price:
    ``no_price_known`` (the models) and ``price_note`` (what the text summary prints after the cost); none
    otherwise."""
    models = sorted(m for m, p in priced.items() if p is not None and not p.known)
    if not models:
        return {}
    note = price_note(Prices(source=f"{NO_PRICE} for {', '.join(models)}", known=False))
    return {"no_price_known": models, "price_note": note}


def check_cost_cap_priced(max_cost: float | None, priced: dict[str, Prices | None], source: str) -> None:
    """``budget.max_cost`` stops a run only when every model it pays has a known price (an unpriced model's calls
    count $0, so the cap would never stop them): a ConfigError naming the models otherwise, before any call."""
    models = unpriced_fields(priced).get("no_price_known")
    if max_cost is not None and models:
        raise ConfigError(f"{source}: budget.max_cost = {max_cost:g} cannot stop this run: {NO_PRICE} for "
                          f"{', '.join(models)} (its calls count $0); {GIVE_A_PRICE}, or drop max_cost")


@dataclass(frozen=True)
class PriceTable:
    """A price table: where its prices come from, as of when, each model's :class:`Prices`, and the aliases it
    lists (alias → model)."""

    source: str
    as_of: dt.date
    models: dict[str, Prices]
    aliases: dict[str, str] = field(default_factory=dict)

    def name_of(self, model: str) -> str | None:
        """The table's name for ``model``: its own name or the model an alias of it names (no prefix rule)."""
        return model if model in self.models else self.aliases.get(model)

    def lookup(self, model: str) -> Prices | None:
        """The model's prices, by its exact name or a listed alias; None when the table does not name it."""
        name = self.name_of(model)
        return None if name is None else self.models[name]


def _rate(value, where: str) -> float:
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or not 0 <= value <= MAX_PRICE_PER_MTOK):
        raise ConfigError(f"{where} = {value!r}: expected dollars per million tokens, a number in "
                          f"[0, {MAX_PRICE_PER_MTOK:,.0f}]")
    return float(value)


def _aliases(entry: dict, where: str) -> list[str]:
    names = entry.get("aliases", [])
    if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
        raise ConfigError(f"{where}.aliases = {names!r}: expected a list of model names (e.g. dated snapshots "
                          "billed at this model's prices)")
    return names


def _check_top(data, label: str) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise ConfigError(f"{label}: expected a mapping with 'source', 'as_of' (a date) and 'models: {{name: "
                          f"{{input_per_mtok, cached_input_per_mtok, output_per_mtok}}}}'")
    unknown = sorted(str(k) for k in set(data) - set(TABLE_KEYS))
    if unknown:
        raise ConfigError(f"{label}: unknown field(s) {unknown}; a price table has {list(TABLE_KEYS)}")


def parse_table(data, label: str) -> PriceTable:
    """A :class:`PriceTable` from a table file's YAML content; ``label`` (the file) names it in errors."""
    _check_top(data, label)
    as_of = data.get("as_of")
    if not isinstance(as_of, dt.date):
        raise ConfigError(f"{label}: field 'as_of' = {as_of!r} is not a date (YYYY-MM-DD): say when these prices held")
    discount = data.get("batch_discount", 0.5)
    if isinstance(discount, bool) or not isinstance(discount, (int, float)) or not 0 <= discount <= 1:
        raise ConfigError(f"{label}: field 'batch_discount' = {discount!r} is not a share in [0, 1]")
    source = f"{data.get('source') or label} as of {as_of.isoformat()}"
    models, aliases = {}, {}
    for name, entry in data["models"].items():
        where = f"{label}: models.{name}"
        if not isinstance(entry, dict) or set(entry) - {*RATES, "aliases"} or "input_per_mtok" not in entry:
            raise ConfigError(f"{where}: expected {{input_per_mtok, cached_input_per_mtok, cache_write_input_per_mtok, "
                              f"output_per_mtok, aliases}}, found {entry!r}")
        rates = {k: _rate(v, f"{where}.{k}") for k, v in entry.items() if k != "aliases"}
        models[str(name)] = Prices(**rates, batch_discount=float(discount), source=source)
        for alias in _aliases(entry, where):
            if alias in aliases:
                raise ConfigError(f"{where}.aliases: {alias!r} is already an alias of {aliases[alias]!r}; an alias "
                                  "names one model")
            aliases[alias] = str(name)
    clash = sorted(set(aliases) & set(models))
    if clash:
        raise ConfigError(f"{label}: models.{aliases[clash[0]]}.aliases: {clash[0]!r} is a model of the table "
                          "itself; an alias names a model the table does not list")
    return PriceTable(source, as_of, models, aliases)


def read_table(path: str | Path) -> PriceTable:
    """A user's price table file (same format as the shipped one), read with the run config's guards."""
    path = Path(path)
    return parse_table(read_yaml_file(path, what="the price table named by prices.file"), str(path))


@lru_cache(maxsize=1)
def shipped_tables() -> tuple[PriceTable, ...]:
    """The price tables judgewise ships (:data:`SHIPPED_TABLES`), one per provider."""
    folder = resources.files("judgewise.judges").joinpath("price_tables")
    return tuple(parse_table(parse_yaml(folder.joinpath(name).read_text(encoding="utf-8"), name), name)
                 for name in SHIPPED_TABLES)


@lru_cache(maxsize=1)
def shipped_table() -> PriceTable:
    """The shipped tables as one (:func:`shipped_tables`; each model keeps its own table's source and date); a
    model or alias named by two of them is refused."""
    tables = shipped_tables()
    models, aliases = {}, {}
    for table in tables:
        clash = sorted((set(table.models) | set(table.aliases)) & (set(models) | set(aliases)))
        if clash:
            raise ConfigError(f"the shipped price tables name {clash[0]!r} twice; a model is priced in one table")
        models.update(table.models)
        aliases.update(table.aliases)
    return PriceTable(", ".join(t.source for t in tables), max(t.as_of for t in tables), models, aliases)


def _find(model: str, user: PriceTable | None) -> Prices | None:
    """The user's table (by name, alias, or the shipped table's name for ``model``), else the shipped table."""
    shipped = shipped_table()
    if user is not None:
        found = user.lookup(model)
        shipped_name = shipped.name_of(model)
        if found is None and shipped_name is not None:
            found = user.lookup(shipped_name)
        if found is not None:
            return found
    return shipped.lookup(model)


def resolve_prices(model: str | None, section: dict | None = None) -> Prices:
    """The prices of ``model``: ``section`` (a ``prices`` mapping: rate fields, ``batch_discount``, ``file``)
    over the user's table file over the shipped table; unknown (``known`` False, zero) when none names the model
    and ``section`` gives no rate."""
    section = dict(section or {})
    user_file = section.pop("file", None)
    user = read_table(user_file) if user_file is not None else None
    found = _find(model or "", user) or Prices(source=f"{NO_PRICE} for {model or 'this model'}", known=False)
    given = {k: v for k, v in section.items() if v is not None}
    if not given:
        return found
    for key in RATES:
        if key in given:
            given[key] = _rate(given[key], f"prices.{key}")
    known = found.known or any(k in given for k in RATES)
    return replace(found, **given, source="judge.prices" if known else found.source, known=known)
