"""Run configuration (``judgewise judge --config run.yaml``, or a dict from Python): load, check, override.

Sections (only ``responses`` and ``judge`` are required)::

    responses: alpaca_results/          # anything judgewise.io reads (canonical table, AlpacaEval dir, ...)
    prompts: questions.jsonl            # optional: prompt_id + prompt/instruction/question text (or MT-bench turns)
    references: reference_answer/gpt-4.jsonl  # optional: reference answers (per turn), shown where templates take one
    turns: all                          # multi-turn prompts: judge every turn (default for judge.mode single) or first
    models: [gpt-4o, llama-3-70b]       # optional subset (default: every model in responses)
    prompt_ids: [q-17, q-42]            # optional: judge only these prompts (ids as in the responses)
    max_prompts: 50                     # optional: the first N prompt ids (sorted; after prompt_ids)
    judge:
      backend: openai                   # openai | local | simulated | replay (pipeline.backends.JUDGE_BUILDERS)
      model: gpt-4o-mini
      base_url: https://api.openai.com/v1   # or base_urls: [...] for several endpoints
      api_key_env: OPENAI_API_KEY       # the NAME of the environment variable holding the key
      template: arena_hard_5way         # registered name or a .j2 file
      # rubric: helpfulness             # or a shipped rubric / a rubric .yaml instead of template (judges.rubric_files)
      mode: pairwise                    # or single: grade each answer alone (default: the template's kind)
      params: {temperature: 0}
      prices: {input_per_mtok: 0.15, output_per_mtok: 0.60}   # batch_discount: 0.5 (taken off a batch call)
      batch: true                       # OpenAI's Batch API: half the price, answers within 24 h (judges.batch);
                                        # batch_poll_s: 30, batch_retry: live | batch, batch_max_rounds: 3
      # backend: local (the embedded Gemma 3 270M) takes template, use_grammar, max_tokens, model_path, n_threads
      # backend: simulated takes ratings: {model: elo}, p_judge, tie_rate, position_bias, length_bias, seed
      # or a panel of judges, each member a judge section (judgewise judge; pipeline.run.run_panel):
      # panel: [{backend: openai, model: gpt-4o-mini}, {backend: openai, model: ...}], rule: majority, split: tie
    design: {name: all_pairs}           # or {name: anchor, anchor: gpt-4o}, {name: adaptive, budget: 500}, ...
    orders: both                        # or one (a seeded coin per prompt and pair)
    seed: 0
    store: judgments.sqlite             # default judgewise-store.sqlite in the working folder, or a shared
                                        # PostgreSQL store: postgresql://user@host:5432/db (judgewise[postgres])
    limits: {concurrency: 16, rpm: 500, tpm: 200000, timeout_s: 120, max_attempts: 6, lease_s: 120}
    budget: {max_calls: 5000, max_cost: 10.0}

Relative paths are resolved against the config file's folder. The raw mapping is checked against one typed
schema (:mod:`judgewise.judges.config_schema`, pydantic v2) before anything is read or called: unknown keys at
every level, strict types (``retry_failed: "false"`` is a string, not a boolean), ranges (``concurrency >= 1``,
``timeout_s > 0``, ...), repeats in lists, each backend's keys; then ``design:`` against the design registry
(:func:`check_design`: its name, its options and their types, and the design built once so its own checks
run). The YAML file itself is capped in size, nesting and aliases. The first problem is one ConfigError line
naming the key path: ``run.yaml: limits.concurrency = 0: must be an integer >= 1 (calls in flight)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judgewise.designs import DESIGNS, design_options, make_design
from judgewise.errors import ConfigError
from judgewise.judges.config_schema import (check_option, did_you_mean, is_panel, option_type_problem,
                                            read_config_file, show_value, validate_run_config)
from judgewise.judges.batch import batch_settings
from judgewise.judges.limits import Budget, RateLimits
from judgewise.judges.rubric_files import get_rubric, is_rubric_path
from judgewise.judges.scheduler import RetryPolicy
from judgewise.store.judgments import DEFAULT_STORE
from judgewise.store.opening import is_store_url, store_location
from judgewise.pipeline.backends import JUDGE_BUILDERS
from judgewise.ratings.bradley_terry import fit_bt_arrays

#: options the pipeline gives any design that takes them and was not given them: the adaptive design's rating
#: fit is ratings' array BT fit (designs come before ratings, so they cannot import it themselves)
DESIGN_DEFAULTS: dict[str, Any] = {"fit": fit_bt_arrays}
AUTO_DESIGN = "auto"  # design: auto — judgewise evaluate chooses the design (pipeline.evaluate.choose_design)


@dataclass
class RunConfig:
    """A validated run configuration (see the module docstring for the keys)."""

    responses: str | pd.DataFrame
    judge: dict
    prompts: str | pd.DataFrame | None = None
    references: str | pd.DataFrame | None = None  # reference answers (per turn) for the templates that show one
    turns: str | None = None  # "all" | "first": which turns of multi-turn prompts are judged (default: mode's)
    models: list[str] | None = None
    max_prompts: int | None = None
    prompt_ids: list[str] | None = None
    design: dict = field(default_factory=lambda: {"name": "all_pairs"})
    orders: str = "both"
    seed: int = 0
    store: str = DEFAULT_STORE
    limits: dict = field(default_factory=dict)
    budget: dict = field(default_factory=dict)
    retry_failed: bool = False
    output: str | None = None
    source: str = "<dict>"
    target: dict = field(default_factory=dict)  # judgewise evaluate: when to stop (pipeline.targets)
    design_given: bool = True  # False: no design: key (judge runs all_pairs; evaluate chooses, as for auto)
    worker: bool = False  # judgewise judge --worker: one of many workers of the job on a shared store

    def rate_limits(self) -> RateLimits:
        return RateLimits(rpm=self.limits.get("rpm"), tpm=self.limits.get("tpm"))

    def retry_policy(self) -> RetryPolicy:
        keys = ("max_attempts", "base_delay_s", "max_delay_s")
        return RetryPolicy(**{k: self.limits[k] for k in keys if k in self.limits})

    def run_options(self) -> dict:
        """Keyword arguments for :func:`~judgewise.judges.runner.run_judging`."""
        return {"orders": self.orders, "seed": self.seed, "concurrency": int(self.limits.get("concurrency", 8)),
                "limits": self.rate_limits(), "timeout_s": float(self.limits.get("timeout_s", 120.0)),
                "retry": self.retry_policy(), "budget": Budget(**self.budget), "retry_failed": self.retry_failed,
                "worker": self.worker, "batch": batch_settings(self.judge)}

    def store_options(self) -> dict:
        """Keyword arguments for :func:`~judgewise.store.opening.open_store` (the claims' lease)."""
        return {"lease_s": float(self.limits["lease_s"])} if "lease_s" in self.limits else {}


def load_config(source: str | Path | dict) -> RunConfig:
    """Read and validate a run config from a YAML file or a dict (paths relative to the file's folder)."""
    if isinstance(source, dict):
        data, name, base = dict(source), "<dict>", Path.cwd()
    else:
        path = Path(source)
        data, name, base = read_config_file(path), str(path), path.resolve().parent
    data = validate_run_config(data, name, JUDGE_BUILDERS)
    if "design" in data:
        check_design(data["design"], name, sized_by_target=bool(data.get("target")))
    design = data.get("design", {"name": "all_pairs"})
    judge = dict(data["judge"])
    if is_panel(judge):
        judge["panel"] = [_judge_paths_resolved(member, base) for member in judge["panel"]]
    else:
        judge = _judge_paths_resolved(judge, base)
    return RunConfig(
        responses=_resolve(data["responses"], base), prompts=_resolve(data.get("prompts"), base),
        references=_resolve(data.get("references"), base), turns=data.get("turns"),
        judge=judge, models=data.get("models"), max_prompts=data.get("max_prompts"),
        prompt_ids=data.get("prompt_ids"), design=dict(design),
        orders=data.get("orders", "both"), seed=data.get("seed", 0),
        store=_store(data["store"], base) if "store" in data else str(Path.cwd() / DEFAULT_STORE),
        limits=dict(data.get("limits", {})), budget=dict(data.get("budget", {})),
        retry_failed=data.get("retry_failed", False), output=_resolve(data.get("output"), base), source=name,
        target=dict(data.get("target") or {}), design_given="design" in data)


def _judge_paths_resolved(judge: dict, base: Path) -> dict:
    """A ``judge:`` section with its file paths (model, recorded judgments, a ``.j2`` template, a rubric file, a
    price table) resolved against the config's folder."""
    judge = dict(judge)
    for key in ("model_path", "judgments"):
        if isinstance(judge.get(key), str):
            judge[key] = str(_resolve(judge[key], base))
    if isinstance(judge.get("template"), str) and judge["template"].endswith(".j2"):
        judge["template"] = str(_resolve(judge["template"], base))
    if isinstance(judge.get("rubric"), str):
        if is_rubric_path(judge["rubric"]):
            judge["rubric"] = str(_resolve(judge["rubric"], base))
        get_rubric(judge["rubric"])  # a bad rubric file is refused now, before anything is read or paid
    return with_prices_file_resolved(judge, base)


def load_with_overrides(source: str | Path | dict, *, store: str | None = None, output: str | None = None,
                        retry_failed: bool = False, max_calls: int | None = None, max_cost: float | None = None,
                        concurrency: int | None = None) -> RunConfig:
    """The run config with command-line overrides, each checked first by the schema field it replaces
    (``--concurrency 0`` is one error line naming the option)."""
    overrides = [("--max-calls", "budget", "max_calls", max_calls), ("--max-cost", "budget", "max_cost", max_cost),
                 ("--concurrency", "limits", "concurrency", concurrency)]
    for option, section, key, value in overrides:
        if value is not None:
            check_option(option, section, key, value)
    cfg = load_config(source)
    cfg.store = str(store_location(store)) if store else cfg.store
    cfg.output = output or cfg.output
    cfg.retry_failed = retry_failed or cfg.retry_failed
    for _, section, key, value in overrides:
        if value is not None:
            getattr(cfg, section)[key] = value
    return cfg


def _store(value, base: Path) -> str:
    """``store:``: a PostgreSQL URL as it is, a file path resolved against the config's folder."""
    return str(store_location(value)) if is_store_url(value) else str(_resolve(value, base))


def with_prices_file_resolved(entry: dict, base: Path) -> dict:
    """``entry`` (``judge:`` of a run config, a ``models:`` entry of a generate config) with ``prices.file``
    resolved against ``base``, the folder of the config naming it, as every path of a config is."""
    prices = entry.get("prices")
    if not isinstance(prices, dict) or prices.get("file") is None:
        return entry
    return {**entry, "prices": {**prices, "file": str(_resolve(prices["file"], base))}}


def _resolve(value, base: Path):
    if value is None or not isinstance(value, (str, Path)):
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


# -- the design section -------------------------------------------------------------------------------
def design_spec(design: dict) -> tuple[str, dict]:
    """(name, options) of a ``design:`` mapping, with the pipeline's defaults (:data:`DESIGN_DEFAULTS`) filled in
    for the options the design takes; ``seed`` stays among the options."""
    spec = dict(design)
    name = spec.pop("name", "all_pairs")
    takes = design_options(name)
    for key, value in DESIGN_DEFAULTS.items():
        if takes is not None and key in takes and key not in spec:
            spec[key] = value
    return name, spec


def build_design(design: dict):
    """The design a ``design:`` mapping names, built with its options and the pipeline's defaults (no seed)."""
    name, options = design_spec(design)
    options.pop("seed", None)
    return make_design(name, **options)


def check_design(design: dict, source: str, *, sized_by_target: bool = False) -> dict:
    """The design's name is registered and its options are ones it takes, of the right types; then the design is
    built once, so its own checks (tie_break, budget, ...) fail naming the config file before anything is read.
    ``sized_by_target``: the config has a ``target:`` (``judgewise evaluate``), so an adaptive design may leave its
    budget out (evaluate sizes it: :func:`judgewise.pipeline.evaluation.adaptive_budget`)."""
    name = design.get("name", "all_pairs")
    if name == AUTO_DESIGN and len(design) == 1:  # judgewise evaluate chooses it (pipeline.evaluate)
        return design
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{source}: design.name = {show_value(name)}: must be a design name, e.g. all_pairs")
    if name not in DESIGNS:
        raise ConfigError(f'{source}: design.name = "{name}": unknown design; known: {DESIGNS.names()}')
    if pilots_anchor(design):  # judgewise evaluate's Anchor §5.3 pilot chooses it (pipeline.evaluate)
        return _check_pilot(design, source)
    given = {k: v for k, v in design.items() if k != "name"}
    if given and "name" not in design:
        raise ConfigError(f"{source}: design.name: missing; a design with options names itself, e.g. "
                          "design: {name: anchor, anchor: <model>}")
    options = design_options(name)
    if options is None:
        return design
    unknown = sorted(set(given) - set(options))
    if unknown:
        hint = did_you_mean(unknown[0], options)
        raise ConfigError(f'{source}: unknown option(s) {unknown} for design "{name}"; it takes '
                          f"{sorted(options) or 'no options'}{hint}")
    for key, value in given.items():
        problem = option_type_problem(("design", key), value, options[key])
        if problem:
            raise ConfigError(f"{source}: {problem}")
    if sized_by_target and name == "adaptive" and "budget" not in design:  # evaluate sizes it, the target stops it
        return design
    try:
        build_design(design)
    except ConfigError as exc:
        raise ConfigError(f"{source}: design {name}: {exc}") from None
    return design


AUTO_ANCHOR = "auto"  # design: {name: anchor, anchor: auto} — evaluate's pilot picks the anchor


def pilots_anchor(design: dict) -> bool:
    """``design: {name: anchor, anchor: auto}``: the anchor is chosen by ``judgewise evaluate``'s pilot."""
    return design.get("name") == "anchor" and design.get("anchor") == AUTO_ANCHOR


def _check_pilot(design: dict, source: str) -> dict:
    unknown = sorted(set(design) - {"name", "anchor", "pilot_prompts", "seed"})
    if unknown:
        raise ConfigError(f"{source}: unknown option(s) {unknown} for design anchor with anchor: auto; it takes "
                          "['anchor', 'pilot_prompts', 'seed']")
    size = design.get("pilot_prompts", 1)
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ConfigError(f"{source}: design.pilot_prompts = {show_value(size)}: must be a whole number ≥ 1 "
                          "(prompts judged on all pairs by the anchor pilot)")
    return design
