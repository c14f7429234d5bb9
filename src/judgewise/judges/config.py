"""Run configuration (``judgewise judge --config run.yaml``, or a dict from Python) and building a run from it.

Sections (only ``responses`` and ``judge`` are required)::

    responses: alpaca_results/          # anything judgewise.io reads (canonical table, AlpacaEval dir, ...)
    prompts: questions.jsonl            # optional: prompt_id + prompt/instruction/question text
    models: [gpt-4o, llama-3-70b]       # optional subset (default: every model in responses)
    max_prompts: 50                     # optional: the first N prompt ids (sorted)
    judge:
      backend: openai                   # openai | local | simulated | replay (JUDGE_BUILDERS)
      model: gpt-4o-mini
      base_url: https://api.openai.com/v1   # or base_urls: [...] for several endpoints
      api_key_env: OPENAI_API_KEY       # the NAME of the environment variable holding the key
      template: arena_hard_5way         # registered name or a .j2 file
      params: {temperature: 0}
      prices: {input_per_mtok: 0.15, output_per_mtok: 0.60}
      # backend: simulated takes ratings: {model: elo}, p_judge, tie_rate, position_bias, length_bias, seed
    design: {name: all_pairs}           # or {name: anchor, anchor: gpt-4o}
    orders: both                        # or one (a seeded coin per prompt and pair)
    seed: 0
    store: judgments.sqlite             # default judgewise-store.sqlite in the working folder
    limits: {concurrency: 16, rpm: 500, tpm: 200000, timeout_s: 120, max_attempts: 6}
    budget: {max_calls: 5000, max_cost: 10.0}

Relative paths are resolved against the config file's folder. The raw mapping is checked against one typed
schema (:mod:`judgewise.judges.config_schema`, pydantic v2) before anything is read or called: unknown keys at
every level, strict types (``retry_failed: "false"`` is a string, not a boolean), ranges (``concurrency >= 1``,
``timeout_s > 0``, ...), repeats in lists, each backend's and each design's own options; the YAML file itself
is capped in size, nesting and aliases. The first problem is one ConfigError line naming the key path:
``run.yaml: limits.concurrency = 0: must be an integer >= 1 (calls in flight)``. A job with fewer than two
models or no comparisons to judge is a ConfigError too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.judges.base import Comparison, Judge
from judgewise.judges.config_schema import ENDPOINT_KEYS, backend_of, read_config_file, validate_run_config
from judgewise.judges.limits import Budget, RateLimits
from judgewise.judges.pairs import PAIR_DESIGNS, build_comparisons, design_triples, prompt_texts
from judgewise.judges.scheduler import RetryPolicy
from judgewise.judges.store import DEFAULT_STORE

@dataclass
class RunConfig:
    """A validated run configuration (see the module docstring for the keys)."""

    responses: str | pd.DataFrame
    judge: dict
    prompts: str | pd.DataFrame | None = None
    models: list[str] | None = None
    max_prompts: int | None = None
    design: dict = field(default_factory=lambda: {"name": "all_pairs"})
    orders: str = "both"
    seed: int = 0
    store: str = DEFAULT_STORE
    limits: dict = field(default_factory=dict)
    budget: dict = field(default_factory=dict)
    retry_failed: bool = False
    output: str | None = None
    source: str = "<dict>"

    def rate_limits(self) -> RateLimits:
        return RateLimits(rpm=self.limits.get("rpm"), tpm=self.limits.get("tpm"))

    def retry_policy(self) -> RetryPolicy:
        keys = ("max_attempts", "base_delay_s", "max_delay_s")
        return RetryPolicy(**{k: self.limits[k] for k in keys if k in self.limits})

    def run_options(self) -> dict:
        """Keyword arguments for :func:`~judgewise.judges.runner.run_judging`."""
        return {"orders": self.orders, "seed": self.seed, "concurrency": int(self.limits.get("concurrency", 8)),
                "limits": self.rate_limits(), "timeout_s": float(self.limits.get("timeout_s", 120.0)),
                "retry": self.retry_policy(), "budget": Budget(**self.budget), "retry_failed": self.retry_failed}


def load_config(source: str | Path | dict) -> RunConfig:
    """Read and validate a run config from a YAML file or a dict (paths relative to the file's folder)."""
    if isinstance(source, dict):
        data, name, base = dict(source), "<dict>", Path.cwd()
    else:
        path = Path(source)
        data, name, base = read_config_file(path), str(path), path.resolve().parent
    data = validate_run_config(data, name, JUDGE_BUILDERS)
    design = data.get("design", {"name": "all_pairs"})
    judge = dict(data["judge"])
    for key in ("model_path", "judgments"):
        if isinstance(judge.get(key), str):
            judge[key] = str(_resolve(judge[key], base))
    if isinstance(judge.get("template"), str) and judge["template"].endswith(".j2"):
        judge["template"] = str(_resolve(judge["template"], base))
    return RunConfig(
        responses=_resolve(data["responses"], base), prompts=_resolve(data.get("prompts"), base),
        judge=judge, models=data.get("models"), max_prompts=data.get("max_prompts"), design=dict(design),
        orders=data.get("orders", "both"), seed=data.get("seed", 0),
        store=str(_resolve(data["store"], base) if "store" in data else Path.cwd() / DEFAULT_STORE),
        limits=dict(data.get("limits", {})), budget=dict(data.get("budget", {})),
        retry_failed=data.get("retry_failed", False), output=_resolve(data.get("output"), base), source=name)


def _name(source) -> str:
    return "the table given" if isinstance(source, pd.DataFrame) else str(source)


def _resolve(value, base: Path):
    if value is None or not isinstance(value, (str, Path)):
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


# -- judges -----------------------------------------------------------------------------------------
def _openai_judge(cfg: dict) -> Judge:
    from judgewise.judges.llm_judge import LLMJudge
    from judgewise.judges.openai_backend import OpenAIBackend, Prices

    if not cfg.get("model"):
        raise ConfigError("judge.model is required for the openai backend (e.g. gpt-4o-mini)")
    urls = cfg.get("base_urls") or cfg.get("base_url")
    key_env = cfg.get("api_key_env", None if urls else "OPENAI_API_KEY")
    backend = OpenAIBackend(cfg["model"], base_urls=urls, api_key_env=key_env, params=cfg.get("params"),
                            logprobs=bool(cfg.get("logprobs", False)), top_logprobs=int(cfg.get("top_logprobs", 5)),
                            prices=Prices(**cfg.get("prices", {})), spread=cfg.get("spread", "round_robin"),
                            name=cfg.get("name"))
    return LLMJudge(backend, cfg.get("template", "arena_hard_5way"), use_grammar=bool(cfg.get("use_grammar")),
                    want_logprobs=bool(cfg.get("logprobs", False)), max_tokens=cfg.get("max_tokens"))


def _local_judge(cfg: dict) -> Judge:
    from judgewise.judges.local_backend import embedded_judge

    endpoint_only = [k for k in ENDPOINT_KEYS if k in cfg]
    if endpoint_only:  # e.g. model: gpt-4o-mini without base_url must not silently run the embedded Gemma
        raise ConfigError(f"judge: {endpoint_only} configure an OpenAI-compatible endpoint, but the embedded local "
                          "judge would run (no base_url); set backend: openai (base_url defaults to OpenAI's API) "
                          "or remove them")
    options = {k: cfg[k] for k in ("template", "use_grammar", "max_tokens") if k in cfg}  # else its defaults
    return embedded_judge(model_path=cfg.get("model_path"), **options)


def _simulated_judge(cfg: dict) -> Judge:
    from judgewise.judges.simulated import SimulatedJudge

    if not isinstance(cfg.get("ratings"), dict):
        raise ConfigError("judge.ratings (model → true Elo) is required for the simulated judge")
    tie_rate = cfg.get("tie_rate")
    return SimulatedJudge(ratings=cfg["ratings"], p_judge=float(cfg.get("p_judge", 0.8)),
                          seed=int(cfg.get("seed", 0)), tie_rate=None if tie_rate is None else float(tie_rate),
                          position_bias=float(cfg.get("position_bias", 0.0)),
                          length_bias=float(cfg.get("length_bias", 0.0)))


def _replay_judge(cfg: dict) -> Judge:
    from judgewise.io import read_judgments
    from judgewise.judges.replay import ReplayJudge

    if not cfg.get("judgments"):
        raise ConfigError("judge.judgments (a recorded judgments file) is required for the replay judge")
    return ReplayJudge(read_judgments(cfg["judgments"]), judge=cfg.get("recorded_judge"))


JUDGE_BUILDERS: dict[str, Callable[[dict], Judge]] = {
    "openai": _openai_judge, "local": _local_judge, "simulated": _simulated_judge, "replay": _replay_judge}


def build_judge(cfg: dict) -> Judge:
    """A judge from the ``judge:`` section; backend defaults to openai when a URL is given, else local."""
    kind = backend_of(cfg)
    if kind not in JUDGE_BUILDERS:
        raise ConfigError(f'judge.backend: unknown backend "{kind}"; known: {sorted(JUDGE_BUILDERS)}')
    judge = JUDGE_BUILDERS[kind](cfg)
    if cfg.get("name") and judge.identity.get("name") != cfg["name"]:
        judge.identity = {**judge.identity, "name": str(cfg["name"])}  # the judgments' "judge" label
    return judge


# -- comparisons ------------------------------------------------------------------------------------
def _read(source, kind: str) -> pd.DataFrame:
    from judgewise.io import read_any, read_responses

    if kind == "responses":
        return read_responses(source).frame
    return read_any(source).frame if not isinstance(source, pd.DataFrame) else source


def _read_prompts(source) -> pd.DataFrame:
    """A prompts table: canonical files via pandas, id column prompt_id/uid/question_id."""
    if isinstance(source, pd.DataFrame):
        frame = source
    else:
        path = Path(source)
        readers = {".jsonl": lambda p: pd.read_json(p, lines=True), ".json": pd.read_json, ".csv": pd.read_csv,
                   ".parquet": pd.read_parquet}
        if path.suffix not in readers:
            raise ConfigError(f"prompts file {path}: expected .jsonl/.json/.csv/.parquet, found '{path.suffix}'")
        try:
            frame = readers[path.suffix](path)
        except (OSError, ValueError) as exc:  # missing file, malformed JSON/CSV/parquet
            raise InputError(f"cannot read the prompts table: {exc}", file=str(path)) from exc
    id_col = next((c for c in ("prompt_id", "uid", "question_id") if c in frame.columns), None)
    if id_col is None:
        raise ConfigError(f"prompts table {source}: no id column (prompt_id, uid or question_id)")
    return frame.assign(prompt_id=frame[id_col].astype(str))


@dataclass
class Pool:
    """The material a design draws from: responses, prompt texts, models and prompt ids."""

    responses: pd.DataFrame
    texts: dict[str, str]
    models: list[str]
    prompt_ids: list[str]


@dataclass
class Job:
    """Everything a run needs, built from a config: comparisons, judge, and what was skipped.

    ``comparisons`` is empty for a multi-round design (not in ``PAIR_DESIGNS``): those ask the engine
    for verdicts round by round (see :mod:`judgewise.judges.rounds`) from ``pool``.
    """

    config: RunConfig
    comparisons: list[Comparison]
    judge: Judge
    skipped: list[str]
    models: list[str]
    n_prompts: int
    pool: Pool | None = None

    @property
    def multi_round(self) -> bool:
        return self.config.design.get("name", "all_pairs") not in PAIR_DESIGNS


def load_pool(cfg: RunConfig) -> Pool:
    """Read responses (and prompts) and choose the models and prompts the config names."""
    responses = _read(cfg.responses, "responses")
    responses = responses.assign(prompt_id=responses["prompt_id"].astype(str), model=responses["model"].astype(str))
    models = list(cfg.models) if cfg.models else sorted(responses["model"].unique())
    unknown = sorted(set(models) - set(responses["model"]))
    if unknown:
        raise ConfigError(f"{cfg.source}: models {unknown} have no responses in {cfg.responses}")
    if len(models) < 2:
        where = "models:" if cfg.models else f"the responses in {_name(cfg.responses)}"
        raise ConfigError(f"{cfg.source}: nothing to judge: {where} name {len(models)} model(s) {models[:3]}; "
                          "a judge compares at least 2 models")
    prompt_ids = sorted(responses.loc[responses["model"].isin(models), "prompt_id"].unique())
    if cfg.max_prompts is not None:
        if isinstance(cfg.max_prompts, bool) or not isinstance(cfg.max_prompts, int) or cfg.max_prompts < 1:
            raise ConfigError(f"{cfg.source}: max_prompts: expected an integer >= 1, found {cfg.max_prompts!r}")
        prompt_ids = prompt_ids[: cfg.max_prompts]
    prompts = _read_prompts(cfg.prompts) if cfg.prompts is not None else None
    try:
        texts = prompt_texts(responses, prompts)
    except ConfigError as exc:
        raise ConfigError(f"{_name(cfg.prompts if cfg.prompts is not None else cfg.responses)}: {exc}") from None
    return Pool(responses, texts, models, prompt_ids)


def build_job(config: RunConfig | dict | str | Path, *, allow_rounds: bool = False) -> Job:
    """Read the inputs, apply the design, build the judge. A multi-round design (one not in
    ``PAIR_DESIGNS``) is accepted only with ``allow_rounds`` and yields no comparisons up front."""
    cfg = config if isinstance(config, RunConfig) else load_config(config)
    pool = load_pool(cfg)
    name = cfg.design.get("name", "all_pairs")
    if allow_rounds and name not in PAIR_DESIGNS:
        return Job(cfg, [], build_judge(cfg.judge), [], pool.models, len(pool.prompt_ids), pool)
    options = {k: v for k, v in cfg.design.items() if k != "name"}
    triples = design_triples(name, pool.models, pool.prompt_ids, **options)
    built = build_comparisons(pool.responses, triples, pool.texts)
    if not built.comparisons:
        why = (f"all {len(built.skipped)} could not be built (first: {built.skipped[0]})" if built.skipped
               else "the design chose none")
        raise ConfigError(f"{cfg.source}: nothing to judge: design {name} on {len(pool.models)} models and "
                          f"{len(pool.prompt_ids)} prompts gives 0 comparisons; {why}")
    return Job(cfg, built.comparisons, build_judge(cfg.judge), built.skipped, pool.models, len(pool.prompt_ids), pool)
