"""A job from a run config: read the responses (and prompts), choose models and prompts, apply the design.

A single-shot design's comparisons are listed up front; a multi-round design's job carries the pool it draws
from and asks the engine for verdicts round by round (:mod:`judgewise.pipeline.run`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgewise.designs import design_triples, is_single_shot
from judgewise.errors import ConfigError
from judgewise.io import read_responses
from judgewise.io.prompts import read_prompt_table
from judgewise.judges.base import Comparison, Judge
from judgewise.judges.config_schema import is_panel
from judgewise.judges.pairs import Pool, build_comparisons, prompt_texts, prompt_turns
from judgewise.judges.pointwise import DEFAULT_TEMPLATE, PointwiseJudge, grade_items
from judgewise.judges.prices import check_cost_cap_priced
from judgewise.judges.rubric_files import rubric_of
from judgewise.judges.templates import get_template
from judgewise.pipeline.backends import build_judge
from judgewise.pipeline.config import RunConfig, load_config
from judgewise.pipeline.generate import generated_responses

DESIGN_MODEL_KEYS = ("anchor", "anchors")  # design options naming models, which must have responses


@dataclass
class Job:
    """Everything a run needs, built from a config: comparisons, judge, and what was skipped.

    ``comparisons`` is empty for a multi-round design: those ask the engine for verdicts round by round
    (see :mod:`judgewise.judges.engine_verdicts`) from ``pool``.
    """

    config: RunConfig
    comparisons: list[Comparison]
    judge: Judge
    skipped: list[str]
    models: list[str]
    n_prompts: int
    pool: Pool | None = None
    grades: list | None = None  # judge.mode single: the GradeItems to grade (judges.pointwise); comparisons empty
    members: list[Job] | None = None  # a panel of judges (evaluate): each member's job (pipeline.panel_rounds)

    def __post_init__(self):
        check_cost_cap_priced(self.config.budget.get("max_cost"), judge_prices(self.judge), self.config.source)

    @property
    def multi_round(self) -> bool:
        return not is_single_shot(self.config.design.get("name", "all_pairs"))


def _name(source) -> str:
    return "the table given" if isinstance(source, pd.DataFrame) else str(source)


def _read_responses(source) -> pd.DataFrame:
    """A responses table: generated answers when ``source`` is a generate config or its store
    (:func:`judgewise.pipeline.generate.generated_responses`), else any responses file judgewise.io reads."""
    generated = generated_responses(source)
    return generated if generated is not None else read_responses(source).frame


def choose_prompts(cfg: RunConfig, responses: pd.DataFrame, models: list[str]) -> list[str]:
    """The prompts judged: those the models answered, ``prompt_ids`` of them when given, the first
    ``max_prompts``."""
    prompt_ids = sorted(responses.loc[responses["model"].isin(models), "prompt_id"].unique())
    if cfg.prompt_ids is not None:
        missing = sorted(set(cfg.prompt_ids) - set(prompt_ids))
        if missing:
            raise ConfigError(f"{cfg.source}: prompt_ids {missing[:5]} ({len(missing)} of {len(cfg.prompt_ids)}): "
                              f"no responses of the models {models} to these prompts in {_name(cfg.responses)}; "
                              f"ids there look like {prompt_ids[:3]}")
        prompt_ids = sorted(cfg.prompt_ids)
    if cfg.max_prompts is not None:
        if isinstance(cfg.max_prompts, bool) or not isinstance(cfg.max_prompts, int) or cfg.max_prompts < 1:
            raise ConfigError(f"{cfg.source}: max_prompts: expected an integer >= 1, found {cfg.max_prompts!r}")
        prompt_ids = prompt_ids[: cfg.max_prompts]
    return prompt_ids


def load_pool(cfg: RunConfig) -> Pool:
    """Read responses (and prompts) and choose the models and prompts the config names."""
    responses = _read_responses(cfg.responses)
    responses = responses.assign(prompt_id=responses["prompt_id"].astype(str), model=responses["model"].astype(str))
    models = list(cfg.models) if cfg.models else sorted(responses["model"].unique())
    unknown = sorted(set(models) - set(responses["model"]))
    if unknown:
        raise ConfigError(f"{cfg.source}: models {unknown} have no responses in {cfg.responses}")
    if len(models) < (1 if judge_mode(cfg) == "single" else 2):
        where = "models:" if cfg.models else f"the responses in {_name(cfg.responses)}"
        raise ConfigError(f"{cfg.source}: nothing to judge: {where} name {len(models)} model(s) {models[:3]}; "
                          "a judge compares at least 2 models")
    prompt_ids = choose_prompts(cfg, responses, models)
    prompts = read_prompt_table(cfg.prompts) if cfg.prompts is not None else None
    try:
        texts = prompt_texts(responses, prompts)
    except ConfigError as exc:
        raise ConfigError(f"{_name(cfg.prompts if cfg.prompts is not None else cfg.responses)}: {exc}") from None
    return Pool(responses, texts, models, prompt_ids, prompt_turns(responses, prompts))


def judge_mode(cfg: RunConfig) -> str:
    """``judge.mode`` when given, else "single" for a pointwise template and "pairwise" otherwise."""
    if cfg.judge.get("mode"):
        return cfg.judge["mode"]
    if cfg.judge.get("rubric"):
        return "single"  # a rubric grades each answer on its scale unless mode: pairwise
    template = cfg.judge.get("template")
    if template is None or cfg.judge.get("backend") in ("simulated", "replay"):
        return "pairwise"
    return "single" if get_template(template).kind == "pointwise" else "pairwise"


def _reference_turns(cfg: RunConfig) -> dict[str, list[str]]:
    """prompt_id → reference answer turns from ``references:`` (FastChat's reference_answer file, or any responses
    table of one model: prompt_id, model, text and perhaps turns)."""
    if cfg.references is None:
        return {}
    frame = _read_responses(cfg.references)
    models = sorted(frame["model"].astype(str).unique())
    if len(models) > 1:
        raise ConfigError(f"{cfg.source}: references: {_name(cfg.references)} holds answers of {len(models)} models "
                          f"{models[:5]}; give one model's reference answers")
    turns = frame["turns"] if "turns" in frame.columns else frame["text"].map(lambda t: [t])
    return {str(p): [str(x) for x in t] for p, t in zip(frame["prompt_id"], turns)}


def needs_reference(judge, cfg: RunConfig) -> bool:
    """Whether the judge's template comes from a rubric that grades against a reference answer; such a rubric
    without ``references:`` in the config is refused (nothing could be graded)."""
    rubric = rubric_of(judge.template) if getattr(judge, "template", None) is not None else None
    if not rubric or rubric["reference"] != "required":
        return False
    if cfg.references is None:
        raise ConfigError(f"{cfg.source}: judge.rubric {rubric['name']!r} grades against a reference answer: give "
                          "references: (reference answers per prompt, e.g. MT-bench's reference_answer/gpt-4.jsonl)")
    return True


def _grading_job(cfg: RunConfig, pool: Pool) -> Job:
    """A pointwise grading job: every turn of every (prompt, model) conversation, references filled in."""
    if cfg.design_given and cfg.design.get("name") != "all_pairs":
        raise ConfigError(f"{cfg.source}: design: chooses pairs to compare; judge.mode single grades every answer "
                          "alone, so remove design:")
    judge = PointwiseJudge(build_judge({"template": DEFAULT_TEMPLATE, **cfg.judge}))
    questions = {**{p: [t] for p, t in pool.texts.items()}, **pool.turns}
    built = grade_items(pool.responses, questions, _reference_turns(cfg), pool.models, pool.prompt_ids,
                        first_turn_only=cfg.turns == "first", needs_reference=needs_reference(judge, cfg))
    if not built.items:
        why = f" (first: {built.skipped[0]})" if built.skipped else ""
        raise ConfigError(f"{cfg.source}: nothing to grade: {len(pool.models)} models on {len(pool.prompt_ids)} "
                          f"prompts give 0 answers to grade{why}")
    return Job(cfg, [], judge, built.skipped, pool.models, len(pool.prompt_ids), pool, grades=built.items)


def _check_design_models(cfg: RunConfig, pool: Pool) -> None:
    """Models a design option names (an anchor) must have responses."""
    known = set(pool.responses["model"])
    for key in DESIGN_MODEL_KEYS:
        value = cfg.design.get(key)
        for model in [value] if isinstance(value, str) else list(value or ()):
            if model not in known:
                raise ConfigError(f'{cfg.source}: design.{key} = "{model}": no responses from this model in '
                                  f"{_name(cfg.responses)}; models there: {sorted(known)[:10]}")


def _check_simulated_ratings(cfg: RunConfig, pool: Pool) -> None:
    """A simulated judge needs a true rating for every model it will judge: refused here, before the store is
    created, rather than at the first game."""
    if cfg.judge.get("backend") != "simulated" or not isinstance(cfg.judge.get("ratings"), dict):
        return
    missing = [m for m in pool.models if m not in cfg.judge["ratings"]]
    if missing:
        raise ConfigError(f"{cfg.source}: judge.ratings has no true rating for {len(missing)} model(s) to judge "
                          f"(e.g. {', '.join(map(repr, missing[:5]))}); rated: {sorted(cfg.judge['ratings'])[:10]}")


def build_job(config: RunConfig | dict | str | Path, *, allow_rounds: bool = False, pool: Pool | None = None) -> Job:
    """Read the inputs, apply the design, build the judge. A multi-round design is accepted only with
    ``allow_rounds`` and yields no comparisons up front. ``pool``: the config's :func:`load_pool`, when the caller
    has read it already (the responses are then not read again)."""
    cfg = config if isinstance(config, RunConfig) else load_config(config)
    if is_panel(cfg.judge):
        raise ConfigError(f"{cfg.source}: judge.panel: a panel of judges is run by `judgewise judge` and "
                          "`judgewise evaluate` (each member as its own judge; `judgewise rank --panel` ranks their "
                          "verdicts); this command takes one judge")
    pool = load_pool(cfg) if pool is None else pool
    if judge_mode(cfg) == "single":
        return _grading_job(cfg, pool)
    pool.references = _reference_turns(cfg)
    pool.every_turn = cfg.turns == "all"
    _check_design_models(cfg, pool)
    _check_simulated_ratings(cfg, pool)
    options = {k: v for k, v in cfg.design.items() if k != "name"}
    name = cfg.design.get("name", "all_pairs")
    if allow_rounds and not is_single_shot(name):
        return Job(cfg, [], build_judge(cfg.judge), [], pool.models, len(pool.prompt_ids), pool)
    triples = design_triples(name, pool.models, pool.prompt_ids, **options)  # seed: the design's own, default 0
    built = build_comparisons(pool.responses, triples, pool.texts, pool.references,
                              pool.turns if pool.every_turn else None)
    if not built.comparisons:
        why = (f"all {len(built.skipped)} could not be built (first: {built.skipped[0]})" if built.skipped
               else "the design chose none")
        raise ConfigError(f"{cfg.source}: nothing to judge: design {name} on {len(pool.models)} models and "
                          f"{len(pool.prompt_ids)} prompts gives 0 comparisons; {why}")
    judge = build_judge(cfg.judge)
    comparisons, skipped = built.comparisons, built.skipped
    if needs_reference(judge, cfg):
        comparisons = [c for c in comparisons if c.reference is not None]
        missing = len(built.comparisons) - len(comparisons)
        if not comparisons:
            raise ConfigError(f"{cfg.source}: nothing to judge: none of the {missing} comparisons has a reference "
                              "answer, and the rubric grades against one")
        if missing:
            skipped = [*skipped, f"{missing} comparisons without a reference answer (the rubric grades against one)"]
    return Job(cfg, comparisons, judge, skipped, pool.models, len(pool.prompt_ids), pool)


def job_prices(job: Job) -> dict:
    """``{model: prices}`` of every judge the job pays: its judge's, or each member's of a panel."""
    return {k: v for member in (job.members or [job]) for k, v in judge_prices(member.judge).items()}


def judge_prices(judge) -> dict:
    """``{model: prices}`` of the model behind ``judge`` (none for a judge without one: the simulated judge)."""
    backend = getattr(judge, "backend", None)
    prices = getattr(backend, "prices", None)
    return {} if prices is None else {str(getattr(backend, "model", "") or "the judge's model"): prices}
