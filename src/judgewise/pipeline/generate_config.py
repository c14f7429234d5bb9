"""The ``judgewise generate`` config (a YAML file or a dict): load, check against one typed schema, override, build.

Keys (``prompts`` and ``models`` are required)::

    prompts: question.jsonl             # MT-bench or Arena-Hard question.jsonl, or canonical prompts (io.prompts)
    models:                             # each answers every prompt; name labels its answers
      - name: gpt-4o-mini               # an OpenAI-compatible endpoint (backend openai: base_url given)
        model: gpt-4o-mini
        base_url: https://api.openai.com/v1
        api_key_env: OPENAI_API_KEY     # the NAME of the environment variable holding the key
        temperature: 0.7
        max_tokens: 1024                # default 1024 (FastChat's gen_model_answer default)
        system: You are a helpful assistant.
        params: {top_p: 0.95, seed: 1}
        prices: {input_per_mtok: 0.15, output_per_mtok: 0.60}
      - name: gemma-270m                # the embedded model (backend local: no base_url), llama-cpp-python
        temperature: 0.0
        max_tokens: 256
    turns: all                          # multi-turn prompts: every turn (default) or only the first
    max_prompts: 50                     # the first N prompts of the file
    output: answers.jsonl               # responses table (.jsonl/.parquet), or a folder for format arena-hard/mtbench
    format: responses                   # responses | arena-hard (model_answer/<name>.jsonl) | mtbench (FastChat)
    store: generations.sqlite           # default judgewise-generations.sqlite in the working folder
    # a models: entry of an OpenAI endpoint may say batch: true (and batch_poll_s, batch_retry, batch_max_rounds, as
    # judge: in a run config): each turn's answers then go through OpenAI's Batch API, one batch a turn
    limits: {concurrency: 16, rpm: 500, tpm: 200000, timeout_s: 120, max_attempts: 6}
    budget: {max_calls: 5000, max_cost: 10.0}
    retry_failed: false                 # generate again answers stored as failed

Relative paths are resolved against the config file's folder. Every problem is one ConfigError line naming the key
path (``gen.yaml: models[1].temperature = -1: must be a number in [0, 2]``), before anything is read or called.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

from pydantic import AfterValidator, Field, ValidationError
from pydantic_core import PydanticCustomError

from judgewise.errors import ConfigError
from judgewise.judges.config_schema import (BATCH_KEYS, ENDPOINT_KEYS, AnswerMB, BatchRetry, BatchRounds,
                                            DownloadSecs, OutputMB,
                                            BudgetSection, Limits, Name, PathText, PollSecs, Prices, Seed, Url, _Section, _distinct, _env_name, _params, check_option,
                                            first_problem, read_config_file, show_value)
from judgewise.store.generations import DEFAULT_GENERATION_STORE
from judgewise.judges.generator import Generator
from judgewise.judges.limits import Budget, RateLimits
from judgewise.judges.local_backend import LocalBackend
from judgewise.judges.openai_backend import OpenAIBackend
from judgewise.judges.prices import resolve_prices
from judgewise.judges.scheduler import RetryPolicy
from judgewise.pipeline.backends import answer_cap
from judgewise.pipeline.config import with_prices_file_resolved
from judgewise.registry import Registry

DEFAULT_MAX_TOKENS = 1024
FORMATS = ("responses", "arena-hard", "mtbench")
SET_BY_MODEL = {"max_tokens": "max_tokens", "model": "model", "messages": "prompts:", "temperature": "temperature"}


def _gen_params(value):
    """Sampling parameters, without the keys a model entry sets itself."""
    if isinstance(value, dict):
        for key, where in SET_BY_MODEL.items():
            if key in value:
                raise PydanticCustomError("params", "{key} is set by the model entry's {where}, not in params",
                                          {"key": key, "where": where})
    return _params(value)


def _file_stem(value: str) -> str:
    if any(c in value for c in "/\\") or value.startswith(".") or not value.isprintable():
        raise PydanticCustomError("path", "must be a label without / or \\ (it names the model's answer file), "
                                  "e.g. llama-3-8b; put the server's model name in model:")
    return value


def _distinct_names(models: list) -> list:
    _distinct([m.name for m in models])
    return models


class GenModel(_Section):
    """One ``models:`` entry (which keys apply depends on the backend: :data:`MODEL_KEYS`)."""

    name: Annotated[str, Field(min_length=1, max_length=200, description="a label (the model's answers are "
                                                                        "filed under it)"), AfterValidator(_file_stem)]
    backend: Literal["openai", "local"] = None
    model: Name = None
    base_url: Url = None
    base_urls: Annotated[list[Url], Field(min_length=1), AfterValidator(_distinct)] = None
    api_key_env: Annotated[str, AfterValidator(_env_name)] = None
    params: Annotated[Any, AfterValidator(_gen_params)] = None
    temperature: Annotated[float, Field(ge=0, le=2, allow_inf_nan=False, description="a number in [0, 2]")] = None
    max_tokens: Annotated[int, Field(ge=1, le=1_000_000, description="an integer >= 1")] = None
    system: Annotated[str, Field(max_length=100_000, description="text (the system prompt)")] = None
    prices: Prices = None
    spread: Literal["round_robin", "least_busy"] = None
    max_answer_mb: AnswerMB = None
    batch: bool = None  # OpenAI's Batch API, as judge.batch (each turn one batch)
    batch_poll_s: PollSecs = None
    batch_retry: BatchRetry = None
    batch_max_rounds: BatchRounds = None
    batch_download_s: DownloadSecs = None
    batch_max_output_mb: OutputMB = None
    model_path: PathText = None
    seed: Seed = None
    n_ctx: Annotated[int, Field(ge=256, le=1_048_576, description="an integer >= 256 (context tokens)")] = None


class GenerateSchema(_Section):
    """The whole ``judgewise generate`` config (the module docstring lists the keys)."""

    prompts: PathText
    models: Annotated[list[GenModel], Field(min_length=1, description="a list of models, each {name: ..., ...}"),
                      AfterValidator(_distinct_names)]
    output: PathText | None = None
    format: Literal[FORMATS] = None
    store: PathText = None
    max_prompts: Annotated[int, Field(ge=1, description="an integer >= 1")] = None
    turns: Literal["all", "first"] = None
    limits: Limits = None
    budget: BudgetSection = None
    retry_failed: bool = None


COMMON_KEYS = {"name", "backend", "temperature", "max_tokens", "system"}
MODEL_KEYS = {"openai": COMMON_KEYS | {"model", "base_url", "base_urls", "api_key_env", "params", "prices", "spread",
                                       "max_answer_mb", *BATCH_KEYS},
              "local": COMMON_KEYS | {"model_path", "seed", "n_ctx"}}


def model_backend(entry: dict) -> str:
    """A model entry's backend: ``backend``, else openai when a URL is given, else local (the embedded model)."""
    return entry.get("backend") or ("openai" if entry.get("base_url") or entry.get("base_urls") else "local")


def _check_model(entry: dict, where: str, source: str) -> None:
    """The keys given apply to the entry's backend, and the openai backend has its model name."""
    kind = model_backend(entry)
    stray = sorted(set(entry) - MODEL_KEYS[kind])
    if kind == "local" and any(k in ENDPOINT_KEYS for k in stray):
        raise ConfigError(f"{source}: {where}: {[k for k in stray if k in ENDPOINT_KEYS]} configure an "
                          "OpenAI-compatible endpoint, but the embedded model would run (no base_url); give base_url "
                          "(or backend: openai for OpenAI's API) or remove them")
    if stray:
        raise ConfigError(f'{source}: {where}.{stray[0]} = {show_value(entry[stray[0]])}: not an option of the '
                          f'"{kind}" backend; its options: {sorted(MODEL_KEYS[kind] - {"backend"})}')
    if kind == "openai" and not entry.get("model"):
        raise ConfigError(f'{source}: {where}.model: missing; the openai backend needs the server\'s model name '
                          f'(model "{entry["name"]}")')
    if "base_url" in entry and "base_urls" in entry:
        raise ConfigError(f"{source}: {where}: give base_url or base_urls, not both")


def _refuse_repeats(models: list[dict], source: str) -> None:
    """Two ``models:`` entries equal but for their names would send the same calls (one answer paid twice, or,
    in batch mode, sent live at full price as calls already batched): refused, naming both."""
    seen: dict[str, int] = {}
    for i, entry in enumerate(models):
        same = json.dumps({k: v for k, v in entry.items() if k != "name"}, sort_keys=True, default=str)
        if same in seen:
            j = seen[same]
            raise ConfigError(f'{source}: models[{i}] ("{entry["name"]}") repeats models[{j}] '
                              f'("{models[j]["name"]}"): the same model with the same settings, so the same calls '
                              "paid twice; remove one of them")
        seen[same] = i


@dataclass
class GenerateConfig:
    """A validated ``judgewise generate`` config, paths resolved (see the module docstring for the keys)."""

    prompts: str
    models: list[dict]
    output: str | None = None
    format: str = "responses"
    store: str = DEFAULT_GENERATION_STORE
    max_prompts: int | None = None
    turns: str = "all"
    limits: dict = field(default_factory=dict)
    budget: dict = field(default_factory=dict)
    retry_failed: bool = False
    source: str = "<dict>"

    def engine_options(self) -> dict:
        """Keyword arguments of the judging engine (:func:`judgewise.judges.generator.agenerate`)."""
        retry = {k: self.limits[k] for k in ("max_attempts", "base_delay_s", "max_delay_s") if k in self.limits}
        return {"concurrency": int(self.limits.get("concurrency", 8)),
                "limits": RateLimits(rpm=self.limits.get("rpm"), tpm=self.limits.get("tpm")),
                "timeout_s": float(self.limits.get("timeout_s", 120.0)), "retry": RetryPolicy(**retry),
                "retry_failed": self.retry_failed}

    def budget_caps(self) -> Budget:
        return Budget(**self.budget)


def _resolve(value, base: Path):
    if value is None:
        return None
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def load_generate_config(source: str | Path | dict) -> GenerateConfig:
    """Read and validate a generate config from a YAML file or a dict (paths relative to the file's folder)."""
    if isinstance(source, dict):
        data, name, base = dict(source), "<dict>", Path.cwd()
    else:
        path = Path(source)
        data = read_config_file(path, needs="prompts: and models:", readme="Generating answers")
        name, base = str(path), path.resolve().parent
    try:
        checked = GenerateSchema.model_validate(data)
    except ValidationError as exc:
        raise first_problem(exc, name, GenerateSchema) from None
    clean = checked.model_dump(exclude_unset=True)
    models = []
    for i, entry in enumerate(clean["models"]):
        _check_model(entry, f"models[{i}]", name)
        if isinstance(entry.get("model_path"), str):
            entry["model_path"] = _resolve(entry["model_path"], base)
        models.append(with_prices_file_resolved(entry, base))
    _refuse_repeats(models, name)
    return GenerateConfig(
        prompts=_resolve(clean["prompts"], base), models=models, output=_resolve(clean.get("output"), base),
        format=clean.get("format", "responses"),
        store=_resolve(clean["store"], base) if "store" in clean else str(Path.cwd() / DEFAULT_GENERATION_STORE),
        max_prompts=clean.get("max_prompts"), turns=clean.get("turns", "all"), limits=dict(clean.get("limits", {})),
        budget=dict(clean.get("budget", {})), retry_failed=clean.get("retry_failed", False), source=name)


def load_generate_with_overrides(source: str | Path | dict, *, store: str | None = None, output: str | None = None,
                                 format: str | None = None, retry_failed: bool = False, max_calls: int | None = None,
                                 max_cost: float | None = None, concurrency: int | None = None) -> GenerateConfig:
    """The generate config with command-line overrides, each checked by the schema field it replaces."""
    overrides = [("--max-calls", "budget", "max_calls", max_calls), ("--max-cost", "budget", "max_cost", max_cost),
                 ("--concurrency", "limits", "concurrency", concurrency)]
    for option, section, key, value in overrides:
        if value is not None:
            check_option(option, section, key, value)
    if format is not None and format not in FORMATS:
        raise ConfigError(f'`format` = "{format}": must be one of {list(FORMATS)}')
    cfg = load_generate_config(source)
    cfg.store, cfg.output = store or cfg.store, output or cfg.output
    cfg.format, cfg.retry_failed = format or cfg.format, retry_failed or cfg.retry_failed
    for _, section, key, value in overrides:
        if value is not None:
            getattr(cfg, section)[key] = value
    return cfg


# -- building the generators -----------------------------------------------------------------------------------------
def _openai_backend(entry: dict):
    urls = entry.get("base_urls") or entry.get("base_url")
    params = {**(entry.get("params") or {}), **({"temperature": entry["temperature"]} if "temperature" in entry
                                                 else {})}
    return OpenAIBackend(entry["model"], base_urls=urls, api_key_env=entry.get("api_key_env", None if urls else
                                                                                "OPENAI_API_KEY"),
                         params=params, prices=resolve_prices(entry["model"], entry.get("prices")),
                         spread=entry.get("spread", "round_robin"), **answer_cap(entry))


def _local_backend(entry: dict):
    options = {k: entry[k] for k in ("seed", "n_ctx", "temperature") if k in entry}
    return LocalBackend(entry.get("model_path"), **options)


GENERATION_BACKENDS: Registry[Callable[[dict], Any]] = Registry("generation backend", {
    "openai": _openai_backend, "local": _local_backend})


def build_generator(entry: dict) -> Generator:
    """The :class:`~judgewise.judges.generator.Generator` of one ``models:`` entry."""
    backend = GENERATION_BACKENDS[model_backend(entry)](entry)
    return Generator(entry["name"], backend, system=entry.get("system") or None,
                     max_tokens=entry.get("max_tokens", DEFAULT_MAX_TOKENS))
