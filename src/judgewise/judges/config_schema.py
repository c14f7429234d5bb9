"""The run config's typed schema (pydantic v2) and a guarded YAML reader; every problem is one ConfigError line.

:func:`read_config_file` reads a YAML file with caps on its size, nesting and aliases (a billion-laughs file is
refused before any object is built) and refuses repeated mapping keys. :func:`validate_run_config` checks the
raw mapping against :class:`RunSchema` — types (strict: ``"false"`` is not a boolean), ranges, unknown keys at
every level, repeats in lists, each judge backend's own keys — and turns the first problem into
``ConfigError("run.yaml: limits.concurrency = 0: must be an integer >= 1")``. It knows nothing of designs:
the pipeline checks ``design:``'s options against the design registry with :func:`option_type_problem`.
"""

from __future__ import annotations

import difflib
import json
import math
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from judgewise.errors import ConfigError

MAX_CONFIG_BYTES = 1_000_000  # a run config is a few hundred bytes; a bigger file is a mistake or an attack
MAX_ALIASES = 100             # YAML aliases (*name) in one file
MAX_VALUES = 20_000           # scalars, lists and mappings, written or reached through aliases (billion laughs: 10^9)
MAX_DEPTH = 64                # nesting of mappings and lists
RESERVED_PARAMS = {"model": "judge.model", "messages": "the template", "stream": None, "n": None,
                   "max_tokens": "judge.max_tokens", "logprobs": "judge.logprobs",
                   "top_logprobs": "judge.top_logprobs", "grammar": "judge.use_grammar"}


# -- reading YAML -------------------------------------------------------------------------------------
class _Refused(Exception):
    """A YAML file refused by a limit (turned into a ConfigError naming the file)."""


_BASE_LOADER = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader


class GuardedLoader(_BASE_LOADER):
    """``yaml.SafeLoader`` (libyaml's when present) that refuses a key repeated in one mapping."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                    if key_node.value in seen:
                        line = key_node.start_mark.line + 1
                        raise _Refused(f"line {line}: key {key_node.value!r} appears twice in the same mapping")
                    seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


def _check_events(text: str) -> None:
    """Walk the parser's events (no objects built) and stop at the first limit passed: values, aliases, depth."""
    depth = values = aliases = 0
    for event in yaml.parse(text, Loader=_BASE_LOADER):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise _Refused(f"nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise _Refused(f"more than {MAX_ALIASES} YAML aliases (*name); write the values out")
        if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            values += 1
            if values > MAX_VALUES:
                raise _Refused(f"more than {MAX_VALUES:,} values; a config is a short YAML file")


def _expanded_size(root) -> int:
    """How many nodes the document has with every alias expanded (memoised, so linear in distinct nodes)."""
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()

    def size(node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in in_progress:
            raise _Refused("a YAML alias refers to the mapping or list that contains it")
        in_progress.add(key)
        children = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        total = 1 + sum(size(c) for c in children)
        in_progress.discard(key)
        sizes[key] = total
        return total

    return size(root)


def parse_yaml(text: str, name: str):
    """Parse one YAML document under the limits above; errors are one line naming ``name``."""
    loader = GuardedLoader(text)
    try:
        _check_events(text)
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node) > MAX_VALUES:
            raise _Refused(f"expands to more than {MAX_VALUES:,} values through YAML aliases; write the values out")
        return loader.construct_document(node)
    except _Refused as exc:
        raise ConfigError(f"{name}: refused: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = " ".join(str(exc.problem or exc.context or "syntax error").split())
        raise ConfigError(f"{name}: not valid YAML{where}: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{name}: not valid YAML: {' '.join(str(exc).split())}") from None
    finally:
        loader.dispose()


def read_yaml_file(path: Path, *, what: str = "the run config", hint: str = ""):
    """The YAML content of ``path`` under the caps above (the only YAML reader of user files: run and generate
    configs, price tables): a missing, oversized (at most :data:`MAX_CONFIG_BYTES` are read), non-UTF-8 or invalid
    file, a repeated key or too many aliases is a ConfigError naming the file; ``what`` names the file's role in
    those errors and ``hint`` follows it where the file is missing."""
    name = str(path)
    if not path.exists():
        raise ConfigError(f"{name}: no such file ({what}{hint})")
    if path.is_dir():
        raise ConfigError(f"{name}: is a folder; expected {what}, a YAML file")
    if not path.is_file():
        raise ConfigError(f"{name}: not a regular file; expected {what}, a YAML file")
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{name}: cannot read {what}: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{name}: larger than {MAX_CONFIG_BYTES:,} bytes; {what} is a short YAML file")
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark is fine
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{name}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                          f"save {what} as UTF-8") from None
    return parse_yaml(text, name)


def read_config_file(path: Path, *, needs: str = "responses: and judge:", readme: str = "Judging") -> dict:
    """The mapping in a run-config YAML file (:func:`read_yaml_file`); an empty or non-mapping file is a
    ConfigError (``needs`` and ``readme`` name the required keys and the README section, for other configs than a
    run's)."""
    name = str(path)
    data = read_yaml_file(path, hint=f"; see README '{readme}'")
    if data is None:
        raise ConfigError(f"{name}: the file is empty; a run config needs at least {needs}")
    if not isinstance(data, dict):
        raise ConfigError(f"{name}: expected a mapping of settings (key: value) at the top level, "
                          f"found {_kind(data)}")
    return data


# -- field types ----------------------------------------------------------------------------------------
def _distinct(values: list) -> list:
    seen = set()
    for v in values:
        if v in seen:
            raise PydanticCustomError("repeated", "{value} is listed more than once; list each once",
                                      {"value": json.dumps(v)})
        seen.add(v)
    return values


def _prompt_ids(values: list) -> list[str]:
    """Prompt ids as the readers hold them (strings; MT-bench's 81 is "81"), each listed once."""
    return _distinct([str(v) for v in values])


def _path_or_table(value):
    import pandas as pd

    if isinstance(value, (str, Path)) and str(value).strip():
        return value
    if isinstance(value, pd.DataFrame):
        return value
    raise PydanticCustomError("path", "must be a file or folder path (a non-empty string)")


def _path_text(value) -> str:
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, str) and value.strip() and len(value) <= 4096:
        return value
    raise PydanticCustomError("path", "must be a file path (a non-empty string)")


def _params(value):
    if not isinstance(value, dict):
        raise PydanticCustomError("params", "must be a mapping of sampling parameters, e.g. {temperature: 0}")
    for key, item in value.items():
        if not isinstance(key, str):
            raise PydanticCustomError("params", "parameter names must be strings, found {key}", {"key": repr(key)})
        if key in RESERVED_PARAMS:
            where = RESERVED_PARAMS[key]
            raise PydanticCustomError("params", "{key} is set by judgewise{hint}, not in params",
                                      {"key": key, "hint": f" (use {where})" if where else ""})
        _check_param_value(key, item, depth=0)
    return value


def _check_param_value(key: str, item, depth: int) -> None:
    """Scalars, lists of scalars, and one level of mapping (logit_bias, response_format, extra_body)."""
    if item is None or isinstance(item, (bool, int, str)):
        return
    if isinstance(item, float):
        if not math.isfinite(item):
            raise PydanticCustomError("params", "{key} must be a finite number", {"key": key})
        return
    if isinstance(item, list) and len(item) <= 100 and depth < 2:
        for x in item:
            _check_param_value(key, x, depth + 1)
        return
    if isinstance(item, dict) and len(item) <= 100 and depth < 1:
        for k, x in item.items():
            _check_param_value(f"{key}.{k}", x, depth + 1)
        return
    raise PydanticCustomError("params", "{key} must be a number, string, boolean, short list, or a mapping "
                              "of those", {"key": key})


def _env_name(value: str) -> str:
    if not value.replace("_", "a").isalnum() or not value.isascii() or value[0].isdigit():
        raise PydanticCustomError("env_name", "must be the NAME of an environment variable (letters, digits, _), "
                                  "never the key itself")
    return value


def _url(value: str) -> str:
    if not value.startswith(("http://", "https://")) or len(value) < 10:
        raise PydanticCustomError("url", "must be an http:// or https:// URL, e.g. http://127.0.0.1:8000/v1")
    return value


Name = Annotated[str, Field(min_length=1, max_length=1000, description="a non-empty string (at most 1,000 chars)")]
Url = Annotated[str, AfterValidator(_url)]
Secs = Annotated[float, Field(gt=0, le=86_400, allow_inf_nan=False, description="seconds > 0")]
Delay = Annotated[float, Field(ge=0, le=3_600, allow_inf_nan=False, description="seconds >= 0")]
# at least one a minute: a slower limit is a mistake (a rate of 1e-300 waited for ever, showing an ETA of 300 digits)
PerMinute = Annotated[float, Field(ge=1, allow_inf_nan=False, description="a number >= 1 (per minute)")]
Money = Annotated[float, Field(ge=0, allow_inf_nan=False, description="dollars >= 0")]
#: the highest price judgewise accepts, dollars per million tokens (today's dearest model asks a few hundred): a
#: bigger figure is a typo or an attack, and keeps every cost finite (at most MAX_TOKEN_COUNT tokens a call)
MAX_PRICE_PER_MTOK = 10_000.0
Rate = Annotated[float, Field(ge=0, le=MAX_PRICE_PER_MTOK, allow_inf_nan=False,
                              description=f"dollars per million tokens in [0, {MAX_PRICE_PER_MTOK:,.0f}]")]
Real = Annotated[float, Field(allow_inf_nan=False, description="a finite number")]
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False, description="a number in [0, 1]")]
Seed = Annotated[int, Field(ge=0, description="an integer >= 0")]
AnswerMB = Annotated[float, Field(gt=0, le=4096, allow_inf_nan=False,
                                  description="megabytes in (0, 4096] (the largest answer read from the server)")]
PollSecs = Annotated[float, Field(gt=0, le=3_600, allow_inf_nan=False,
                                  description="seconds in (0, 3600] (the first wait between polls)")]
BatchRetry = Literal["live", "batch"]
BatchRounds = Annotated[int, Field(ge=1, le=20, description="an integer in [1, 20] (batches per call)")]
DownloadSecs = Annotated[float, Field(gt=0, le=86_400, allow_inf_nan=False,
                                      description="seconds in (0, 86400] (the deadline of one download)")]
OutputMB = Annotated[float, Field(gt=0, le=1_048_576, allow_inf_nan=False,
                                  description="megabytes in (0, 1048576] (the largest batch output file read)")]
PathOrTable = Annotated[Any, AfterValidator(_path_or_table)]
PathText = Annotated[Any, AfterValidator(_path_text)]  # a str, or a pathlib.Path from Python


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)


class Prices(_Section):
    """``judge.prices``: dollars per million tokens (over the shipped price table's, :mod:`judgewise.judges.prices`),
    the batch discount, and ``file``: a user's price table overriding the shipped one."""

    input_per_mtok: Rate = None
    cached_input_per_mtok: Rate = None
    cache_write_input_per_mtok: Rate = None  # prompt tokens written to the prompt cache (Anthropic's)
    output_per_mtok: Rate = None
    batch_discount: Share = None  # the share of the price a batch API takes off (default 0.5)
    file: PathText = None


class JudgeSection(_Section):
    """``judge:``; which keys apply depends on the backend (see ``BACKEND_KEYS``)."""

    backend: Name = None
    model: Name = None
    base_url: Url = None
    base_urls: Annotated[list[Url], Field(min_length=1), AfterValidator(_distinct)] = None
    api_key_env: Annotated[str, AfterValidator(_env_name)] = None
    template: PathText = None
    rubric: PathText = None  # a shipped rubric's name or a rubric YAML file (judges.rubric_files): the template
    params: Annotated[Any, AfterValidator(_params)] = None
    logprobs: bool = None
    top_logprobs: Annotated[int, Field(ge=0, le=20, description="an integer in [0, 20]")] = None
    prices: Prices = None
    spread: Literal["round_robin", "least_busy"] = None
    max_answer_mb: AnswerMB = None
    name: Name = None
    use_grammar: bool = None
    max_tokens: Annotated[int, Field(ge=1, le=1_000_000, description="an integer >= 1")] = None
    model_path: PathText = None
    n_threads: Annotated[int, Field(ge=1, le=1024, description="an integer >= 1 (CPU threads)")] = None
    ratings: Annotated[dict[str, Real], Field(min_length=1, description="a mapping model → Elo")] = None
    p_judge: Share = None
    judgments: PathText = None
    recorded_judge: Name = None
    expected_latency_s: Secs = None
    expected_tokens_out: Annotated[int, Field(ge=1, description="an integer >= 1")] = None
    tie_rate: Share | None = None
    position_bias: Real = None
    length_bias: Real = None
    seed: Seed = None
    prompt_cache: bool = None  # anthropic: mark the system prompt for the prompt cache (default true)
    mode: Literal["pairwise", "single"] = None  # single: pointwise grading (judges.pointwise); default from template
    # OpenAI's Batch API (judges.batch): calls sent in batches at the batch price, results within 24 h
    batch: bool = None
    batch_poll_s: PollSecs = None
    batch_retry: BatchRetry = None  # calls a batch did not answer: sent live, or in a new batch
    batch_max_rounds: BatchRounds = None
    batch_download_s: DownloadSecs = None  # the total deadline of one download (an output file...)
    batch_max_output_mb: OutputMB = None  # the cap on a batch's output or error file


class Limits(_Section):
    """``limits:``: concurrency, rate limits, timeout and retries."""

    concurrency: Annotated[int, Field(ge=1, le=4096, description="an integer >= 1 (calls in flight)")] = None
    rpm: PerMinute | None = None
    tpm: PerMinute | None = None
    timeout_s: Secs = None
    max_attempts: Annotated[int, Field(ge=1, le=100, description="an integer >= 1 (1 = no retry)")] = None
    base_delay_s: Delay = None
    max_delay_s: Delay = None
    lease_s: Annotated[float, Field(ge=1, le=86400, allow_inf_nan=False,
                                    description="seconds in [1, 86400] (how long a claim on a game in flight "
                                                "lasts unless its owner renews it)")] = None


class BudgetSection(_Section):
    """``budget:``: caps on calls and dollars for one run."""

    max_calls: Annotated[int, Field(ge=0, description="an integer >= 0")] | None = None
    max_cost: Money | None = None


class TargetSection(_Section):
    """``target:`` (``judgewise evaluate``): when to stop; see :mod:`judgewise.pipeline.targets`."""

    kendall_tau: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False,
                                        description="a number in (0, 1), e.g. 0.9")] = None
    separated: Annotated[float, Field(gt=0.5, lt=1, allow_inf_nan=False,
                                      description="a probability in (0.5, 1), e.g. 0.95")] = None
    margin: Annotated[float, Field(gt=0, le=1000, allow_inf_nan=False, description="Elo points in (0, 1000]")] = None


def _design_mapping(value):
    if isinstance(value, str):
        return {"name": value}
    return value


class RunSchema(_Section):
    """The whole run config (module docstring of :mod:`judgewise.pipeline.config` lists the keys)."""

    responses: PathOrTable
    judge: JudgeSection
    prompts: PathOrTable | None = None
    references: PathOrTable | None = None  # reference answers (per turn), e.g. MT-bench's gpt-4.jsonl
    turns: Literal["first", "all"] = None  # multi-turn prompts: judge every turn, or only the first
    models: Annotated[list[Name], Field(min_length=2, description="a list of at least 2 model names"),
                      AfterValidator(_distinct)] = None
    max_prompts: Annotated[int, Field(ge=1, description="an integer >= 1")] = None
    prompt_ids: Annotated[list[Name | int], Field(min_length=1, description="a list of prompt ids"),
                          AfterValidator(_prompt_ids)] = None
    design: Annotated[dict[str, Any], BeforeValidator(_design_mapping),
                      Field(description="a design name or a mapping {name: ..., options}")] = None  # options: pipeline
    orders: Literal["both", "one"] = None
    seed: Seed = None
    store: PathText = None
    limits: Limits = None
    budget: BudgetSection = None
    retry_failed: bool = None
    output: PathText | None = None
    target: TargetSection = None  # judgewise evaluate only


class PanelSection(_Section):
    """``judge: {panel: [<judge>, <judge>, ...], rule: majority, split: tie}``: a panel of judges, each member a
    judge section of its own (``judgewise.analysis.panel``)."""

    panel: Annotated[list[JudgeSection], Field(min_length=2, description="a list of at least 2 judge sections")]
    rule: Literal["majority", "mean"] = None
    split: Literal["tie", "drop"] = None


class PanelRunSchema(RunSchema):
    """A run config whose ``judge:`` is a panel."""

    judge: PanelSection


def is_panel(judge) -> bool:
    """Whether a ``judge:`` section (raw or validated) is a panel of judges."""
    return isinstance(judge, dict) and "panel" in judge


# -- backends ------------------------------------------------------------------------------------------
BATCH_KEYS = ("batch", "batch_poll_s", "batch_retry", "batch_max_rounds", "batch_download_s",
              "batch_max_output_mb")  # how calls are sent, not the judge's identity
ENDPOINT_KEYS = ("model", "api_key_env", "params", "prices", "logprobs", "top_logprobs", "spread", "max_answer_mb")
_ESTIMATES = {"expected_latency_s", "expected_tokens_out"}
BACKEND_KEYS: dict[str, set[str]] = {
    "openai": {"backend", "name", "model", "base_url", "base_urls", "api_key_env", "template", "rubric", "params",
               "logprobs", "top_logprobs", "prices", "spread", "max_answer_mb", "use_grammar", "max_tokens", "mode", *_ESTIMATES,
               *BATCH_KEYS},
    "anthropic": {"backend", "name", "model", "base_url", "base_urls", "api_key_env", "template", "rubric", "params",
                  "prices", "spread", "max_answer_mb", "max_tokens", "mode", "prompt_cache", *_ESTIMATES, *BATCH_KEYS},
    "gemini": {"backend", "name", "model", "base_url", "base_urls", "api_key_env", "template", "rubric", "params",
               "prices", "spread", "max_answer_mb", "max_tokens", "mode", *_ESTIMATES},
    "local": {"backend", "name", "template", "rubric", "use_grammar", "max_tokens", "model_path", "n_threads",
              "mode", *_ESTIMATES},
    "simulated": {"backend", "name", "ratings", "p_judge", "seed", "tie_rate", "position_bias", "length_bias"},
    "replay": {"backend", "name", "judgments", "recorded_judge"},
}  # a backend added to JUDGE_BUILDERS by a user takes any key of the judge section
BACKEND_NEEDS = {"openai": ("model", "the server's model name, e.g. gpt-4o-mini"),
                 "anthropic": ("model", "Anthropic's model name, e.g. claude-sonnet-4-0"),
                 "gemini": ("model", "Gemini's model name, e.g. gemini-2.5-flash"),
                 "simulated": ("ratings", "a mapping model → true Elo"),
                 "replay": ("judgments", "a recorded judgments file")}


def backend_of(judge: dict) -> str:
    """The backend a ``judge:`` section selects: ``backend``, else openai when a URL is given, else local."""
    return judge.get("backend") or ("openai" if judge.get("base_url") or judge.get("base_urls") else "local")


def check_backend(judge: dict, backends, source: str) -> None:
    """The backend is registered and every key given applies to it (a key for another backend is an error)."""
    kind = backend_of(judge)
    if kind not in backends:
        raise ConfigError(f'{source}: judge.backend = "{kind}": must be one of {sorted(backends)}')
    if "base_url" in judge and "base_urls" in judge:
        raise ConfigError(f"{source}: judge: give base_url or base_urls, not both")
    allowed = BACKEND_KEYS.get(kind)
    if allowed is None:
        return
    stray = [k for k in judge if k not in allowed]
    if kind == "local" and any(k in ENDPOINT_KEYS for k in stray):
        endpoint_only = [k for k in ENDPOINT_KEYS if k in judge]
        raise ConfigError(f"{source}: judge: {endpoint_only} configure an OpenAI-compatible endpoint, but the "
                          "embedded local judge would run (no base_url); set backend: openai (base_url defaults "
                          "to OpenAI's API) or remove them")
    needed = BACKEND_NEEDS.get(kind)
    if needed and needed[0] not in judge:
        raise ConfigError(f'{source}: judge.{needed[0]}: missing; the "{kind}" backend needs it ({needed[1]})')
    if stray:
        shown = show_value(judge[stray[0]], ("judge", stray[0]))
        raise ConfigError(f'{source}: judge.{stray[0]} = {shown}: not an option of the "{kind}" backend; '
                          f"its options: {sorted(allowed - {'backend'})}")


# -- errors -----------------------------------------------------------------------------------------------
FRIENDLY = {"int_type": "an integer", "int_from_float": "an integer", "float_type": "a number",
            "bool_type": "true or false (a YAML boolean, unquoted)", "string_type": "a string",
            "dict_type": "a mapping (key: value)", "model_type": "a mapping (key: value)", "list_type": "a list",
            "finite_number": "a finite number", "is_instance_of": "a value of another type",
            "callable_type": "a Python function (set it from Python, not YAML)"}
CUSTOM = ("repeated", "params", "env_name", "url", "path", "rubric")  # their message says what is expected


def _kind(value) -> str:
    kinds = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"), (list, "a list"),
             (dict, "a mapping"), (type(None), "null"))
    return next((text for t, text in kinds if isinstance(value, t)), type(value).__name__)


def show_value(value, loc=()) -> str:
    if loc and loc[-1] == "api_key_env":
        return "(not shown)"  # it may be a pasted key
    if type(value).__name__ == "DataFrame":
        return "a table"
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _dotted(loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def did_you_mean(word: str, choices) -> str:
    prefixed = [c for c in sorted(choices) if str(c).startswith(str(word))]
    close = prefixed[:1] or difflib.get_close_matches(str(word), list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _field(loc, root: type[BaseModel] | None = None) -> tuple[type | None, Any]:
    """The model class holding ``loc``'s last part and that field's info (None where not a model field); ``root`` is
    the schema ``loc`` starts at (default :class:`RunSchema`); list positions in ``loc`` are stepped over."""
    model, info = root or RunSchema, None
    for i, part in enumerate(loc):
        if isinstance(part, int) and i < len(loc) - 1:  # models[0].name: the list's item schema holds name
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            return (model if i == len(loc) - 1 else None), None
        info = model.model_fields[part]
        if i < len(loc) - 1:
            model = next((a for a in (info.annotation, *typing.get_args(info.annotation))
                          if isinstance(a, type) and issubclass(a, BaseModel)), None)
    return model, info


def _description(info) -> str | None:
    if info is None:
        return None
    if info.description:
        return info.description
    for arg in typing.get_args(info.annotation):
        for meta in getattr(arg, "__metadata__", ()):
            if getattr(meta, "description", None):
                return meta.description
    return None


def _problem(err: dict, info) -> str:
    """``path = value (kind): must be ...`` for one pydantic error."""
    loc, kind, ctx = tuple(err["loc"]), err["type"], err.get("ctx") or {}
    path = _dotted(loc)
    if kind == "missing":
        return f"missing required key '{path}'"
    if kind == "invalid_key":
        return f"{_dotted(loc[:-1]) or 'the top level'}: key {show_value(loc[-1])} is not a name (keys are strings)"
    found = show_value(err.get("input"), loc)
    if kind.endswith("_type") or kind in ("int_from_float", "literal_error", "is_instance_of"):
        found += f" ({_kind(err.get('input'))})"
    description = _description(info)
    if kind in CUSTOM:
        expected = err["msg"]
    elif kind in ("less_than_equal", "less_than") and " in [" not in (description or ""):  # else it says the range
        expected = f"must be at most {ctx.get('le', ctx.get('lt'))}"
    elif kind == "literal_error":
        expected = f"must be one of {ctx.get('expected')}"
    elif description or kind in FRIENDLY:
        expected = f"must be {description or FRIENDLY[kind]}"
    else:
        expected = err["msg"][:1].lower() + err["msg"][1:]
    return f"{path} = {found}: {expected}"


def _unknown_keys(errors: list[dict], source: str, root: type[BaseModel] | None = None) -> str | None:
    extra = [e for e in errors if e["type"] == "extra_forbidden"]
    if not extra:
        return None
    parent = tuple(extra[0]["loc"][:-1])
    keys = [str(e["loc"][-1]) for e in extra if tuple(e["loc"][:-1]) == parent]
    model = _field(parent + ("?",), root)[0] if parent else (root or RunSchema)
    allowed = sorted(model.model_fields) if model is not None else []
    where = _dotted(parent) if parent else "the top level"
    return (f"{source}: unknown key(s) {keys} in {where}; expected some of {allowed}"
            f"{did_you_mean(keys[0], allowed)}")


def first_problem(exc: ValidationError, source: str, root: type[BaseModel] | None = None) -> ConfigError:
    """One ConfigError line for a failed validation: unknown keys first (a typo explains the rest), then the
    first other problem, with a count of the others. ``root``: the schema validated (default :class:`RunSchema`)."""
    errors = exc.errors()
    unknown = _unknown_keys(errors, source, root)
    rest = len(errors) - 1
    if unknown is not None:
        return ConfigError(unknown)
    err = errors[0]
    more = f" (+{rest} more problem{'s' if rest > 1 else ''})" if rest else ""
    return ConfigError(f"{source}: {_problem(err, _field(tuple(err['loc']), root)[1])}{more}")


def option_type_problem(loc: tuple, value, annotation) -> str | None:
    """``a.b = value (kind): must be ...`` when ``value`` is not of type ``annotation`` (strict), else None. An
    annotation pydantic cannot check (a user's type) and one name where a list of names is expected pass."""
    if annotation is Any:
        return None
    try:
        adapter = TypeAdapter(annotation, config=ConfigDict(strict=True, arbitrary_types_allowed=True))
    except Exception:  # noqa: BLE001 — an annotation pydantic cannot check: skip the type check
        return None
    try:
        adapter.validate_python(value)
    except ValidationError as exc:
        err = exc.errors()[0]
        if err["type"] == "sequence_str":  # one name where a list of names is expected: designs accept it
            return None
        return _problem({**err, "loc": loc}, None)
    return None


SECTIONS = {"limits": Limits, "budget": BudgetSection}


def _section_problem(section: str, values: dict) -> str | None:
    """``section.key = value: must be ...`` for the first of ``values`` the schema refuses, else None."""
    plain = {k: (v.item() if hasattr(v, "item") and not isinstance(v, bool) else v)  # numpy scalars from Python
             for k, v in values.items() if v is not None}
    try:
        SECTIONS[section].model_validate(plain)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = (section, *err["loc"])
        return _problem({**err, "loc": loc}, _field(loc)[1])
    return None


def check_values(section: str, values: dict) -> None:
    """``limits``/``budget`` values given from Python (:class:`~judgewise.judges.limits.Budget`, ``RateLimits``)
    checked by the same schema fields as a run config's."""
    problem = _section_problem(section, values)
    if problem:
        raise ConfigError(problem)


def check_option(option: str, section: str, key: str, value) -> None:
    """A command-line override (``--concurrency 0``) checked by the same schema field as ``section.key``."""
    problem = _section_problem(section, {key: value})
    if problem:
        raise ConfigError(f"{option}{problem[len(section) + len(key) + 1:]}")


def validate_run_config(data, source: str, backends) -> dict:
    """The raw config mapping validated against :class:`RunSchema` and the judge's backend keys (the design's own
    options are checked by the layer that knows designs, :func:`judgewise.pipeline.config.check_design`); returns
    the mapping of the keys given (nothing filled in), or raises one ConfigError line."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of settings at the top level, found {_kind(data)}")
    schema = PanelRunSchema if is_panel(data.get("judge")) else RunSchema
    try:
        checked = schema.model_validate(data)
    except ValidationError as exc:
        raise first_problem(exc, source, schema) from None
    clean = checked.model_dump(exclude_unset=True)
    clean["responses"], clean["prompts"] = data["responses"], data.get("prompts")  # tables stay as given
    if "references" in data:
        clean["references"] = data["references"]
    if is_panel(clean["judge"]):
        check_panel_members(clean["judge"]["panel"], backends, source)
        judges = clean["judge"]["panel"]
    else:
        check_backend(clean["judge"], backends, source)
        judges = [clean["judge"]]
    if any(isinstance(j, dict) and "template" in j and "rubric" in j for j in judges):
        raise ConfigError(f"{source}: judge: give template or rubric, not both (a rubric renders its own template)")
    return clean


def check_panel_members(members: list[dict], backends, source: str) -> None:
    """Each member of a panel checked as a judge of its own (``judge.panel[i]`` named in the message), and no
    member given twice (the same judge twice would be one judge: its stored calls are shared)."""
    for i, member in enumerate(members):
        try:
            check_backend(member, backends, source)
        except ConfigError as exc:
            raise ConfigError(str(exc).replace(f"{source}: judge", f"{source}: judge.panel[{i}]", 1)) from None
        if member in members[:i]:
            raise ConfigError(f"{source}: judge.panel[{i}] repeats judge.panel[{members.index(member)}]: a panel's "
                              "members must be different judges")
