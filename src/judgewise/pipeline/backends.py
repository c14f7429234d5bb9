"""Judges from a run config's ``judge:`` section: one builder per backend (openai, anthropic, gemini, local,
simulated, replay)."""

from __future__ import annotations

from typing import Callable

from judgewise.errors import ConfigError
from judgewise.io import read_judgments
from judgewise.registry import Registry
from judgewise.judges.anthropic_backend import AnthropicBackend
from judgewise.judges.base import Judge
from judgewise.judges.config_schema import ENDPOINT_KEYS, backend_of
from judgewise.judges.gemini_backend import GeminiBackend
from judgewise.judges.llm_judge import LLMJudge
from judgewise.judges.local_backend import embedded_judge
from judgewise.judges.openai_backend import OpenAIBackend
from judgewise.judges.prices import resolve_prices
from judgewise.judges.replay import ReplayJudge
from judgewise.judges.rubric_files import rubric_template
from judgewise.judges.simulated import SimulatedJudge


def _openai_judge(cfg: dict) -> Judge:
    if not cfg.get("model"):
        raise ConfigError("judge.model is required for the openai backend (e.g. gpt-4o-mini)")
    urls = cfg.get("base_urls") or cfg.get("base_url")
    key_env = cfg.get("api_key_env", None if urls else "OPENAI_API_KEY")
    backend = OpenAIBackend(cfg["model"], base_urls=urls, api_key_env=key_env, params=cfg.get("params"),
                            logprobs=bool(cfg.get("logprobs", False)), top_logprobs=int(cfg.get("top_logprobs", 5)),
                            prices=resolve_prices(cfg["model"], cfg.get("prices")),
                            spread=cfg.get("spread", "round_robin"),
                            name=cfg.get("name"), **answer_cap(cfg))
    return LLMJudge(backend, cfg.get("template", "arena_hard_5way"), use_grammar=bool(cfg.get("use_grammar")),
                    want_logprobs=bool(cfg.get("logprobs", False)), max_tokens=cfg.get("max_tokens"))


def _native_judge(backend_class, key_env: str, example: str):
    """The builder of a judge on a provider's native API (``backend_class``), its key from ``key_env`` by
    default (unless a base URL is given: a local server may need none)."""
    def build(cfg: dict) -> Judge:
        kind = backend_class.KIND
        if not cfg.get("model"):
            raise ConfigError(f"judge.model is required for the {kind} backend (e.g. {example})")
        urls = cfg.get("base_urls") or cfg.get("base_url")
        extra = {"prompt_cache": bool(cfg.get("prompt_cache", True))} if kind == "anthropic" else {}
        backend = backend_class(cfg["model"], base_urls=urls, api_key_env=cfg.get("api_key_env", None if urls else
                                                                                  key_env),
                                params=cfg.get("params"), prices=resolve_prices(cfg["model"], cfg.get("prices")),
                                spread=cfg.get("spread", "round_robin"), name=cfg.get("name"), **extra,
                                **answer_cap(cfg))
        return LLMJudge(backend, cfg.get("template", "arena_hard_5way"), max_tokens=cfg.get("max_tokens"))
    return build


def answer_cap(cfg: dict) -> dict:
    """``max_answer_mb`` of a judge section or a generate model entry, when it gives one (else the backend's)."""
    return {"max_answer_mb": float(cfg["max_answer_mb"])} if cfg.get("max_answer_mb") is not None else {}


def _local_judge(cfg: dict) -> Judge:
    endpoint_only = [k for k in ENDPOINT_KEYS if k in cfg]
    if endpoint_only:  # e.g. model: gpt-4o-mini without base_url must not silently run the embedded Gemma
        raise ConfigError(f"judge: {endpoint_only} configure an OpenAI-compatible endpoint, but the embedded local "
                          "judge would run (no base_url); set backend: openai (base_url defaults to OpenAI's API) "
                          "or remove them")
    options = {k: cfg[k] for k in ("template", "use_grammar", "max_tokens") if k in cfg}  # else its defaults
    return embedded_judge(model_path=cfg.get("model_path"), n_threads=cfg.get("n_threads"), **options)


def _simulated_judge(cfg: dict) -> Judge:
    if not isinstance(cfg.get("ratings"), dict):
        raise ConfigError("judge.ratings (model → true Elo) is required for the simulated judge")
    tie_rate = cfg.get("tie_rate")
    return SimulatedJudge(ratings=cfg["ratings"], p_judge=float(cfg.get("p_judge", 0.8)),
                          seed=int(cfg.get("seed", 0)), tie_rate=None if tie_rate is None else float(tie_rate),
                          position_bias=float(cfg.get("position_bias", 0.0)),
                          length_bias=float(cfg.get("length_bias", 0.0)))


def _replay_judge(cfg: dict) -> Judge:
    if not cfg.get("judgments"):
        raise ConfigError("judge.judgments (a recorded judgments file) is required for the replay judge")
    return ReplayJudge(read_judgments(cfg["judgments"]), judge=cfg.get("recorded_judge"))


JUDGE_BUILDERS: Registry[Callable[[dict], Judge]] = Registry("judge backend", {
    "openai": _openai_judge, "anthropic": _native_judge(AnthropicBackend, "ANTHROPIC_API_KEY", "claude-sonnet-4-0"),
    "gemini": _native_judge(GeminiBackend, "GEMINI_API_KEY", "gemini-2.5-flash"), "local": _local_judge,
    "simulated": _simulated_judge, "replay": _replay_judge})


def with_rubric_template(cfg: dict) -> dict:
    """``cfg`` with ``template`` the one its ``rubric`` renders: absolute grades (``mode`` single, the default for a
    rubric) or pairwise verdicts (``mode: pairwise``); ``cfg`` as it is without a rubric."""
    if not cfg.get("rubric"):
        return cfg
    kind = "pairwise" if cfg.get("mode") == "pairwise" else "pointwise"
    return {**{k: v for k, v in cfg.items() if k != "rubric"}, "template": rubric_template(cfg["rubric"], kind)}


def build_judge(cfg: dict) -> Judge:
    """A judge from the ``judge:`` section; backend defaults to openai when a URL is given, else local."""
    cfg = with_rubric_template(cfg)
    kind = backend_of(cfg)
    if kind not in JUDGE_BUILDERS:
        raise ConfigError(f'judge.backend: unknown backend "{kind}"; known: {sorted(JUDGE_BUILDERS)}')
    judge = JUDGE_BUILDERS[kind](cfg)
    if cfg.get("name") and judge.identity.get("name") != cfg["name"]:
        judge.identity = {**judge.identity, "name": str(cfg["name"])}  # the judgments' "judge" label
    return judge
