"""``plan`` from measured judgments (a file or a judging store) and ``plan --write``: the run config a plan implies."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from judgewise.analysis.planning import PlanInputs, plan
from judgewise.commands.design_studies import anchor_reports_of_file
from judgewise.commands.options import PlanOptions
from judgewise.errors import ConfigError
from judgewise.io.atomic import write_text_atomic
from judgewise.judges.base import games_per_comparison
from judgewise.pipeline.config import load_config
from judgewise.store.reading import read_rated

#: the judge a written config names until the user edits it (any OpenAI-compatible endpoint works)
DEFAULT_JUDGE = {"model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"}


@dataclass
class Measured:
    """What judgments already made say about a plan: how many models, and an anchor's measured informativeness."""

    source: str
    n_models: int
    informativeness: float | None
    anchor: str | None
    how: str

    def line(self) -> str:
        return f"measured from {self.source}: {self.n_models} models; {self.how}"


def measure(path: Path, *, anchor: str | None = None, pilot_prompts: int = 10, seed: int = 0,
            informative: bool = True) -> Measured:
    """Read ``path`` (any judgments format or a judging store, through :func:`read_rated`) and measure: an
    anchor-based file gives its anchor's informativeness (Anchor §4.3), an all-pairs one the pilot's recommended
    anchor and its informativeness (§5.3). ``informative``: a measured informativeness of 0 (no anchor comparison
    separates two models) is a ConfigError naming ``path``, as no anchor plan can be sized from it."""
    frame, table = read_rated(path)
    reports = anchor_reports_of_file(path, anchor, pilot_prompts, seed, rated=(frame, table))
    n_models = len(set(frame["model_a"]) | set(frame["model_b"]))
    if reports.anchors:
        rep = reports.anchors[0]
        measured = Measured(str(path), n_models, float(rep["informativeness"]), rep["anchor"],
                            f"anchor {rep['anchor']} has informativeness {rep['informativeness']:.2f} "
                            f"over {rep['n_prompts']} prompts")
    elif reports.pilot:
        rec = reports.pilot["recommended"]
        value = next(float(c["informativeness"]) for c in reports.pilot["candidates"] if c["anchor"] == rec)
        measured = Measured(str(path), n_models, value, rec,
                            f"pilot on {reports.pilot['n_prompts']} prompts recommends anchor {rec} "
                            f"(informativeness {value:.2f}): {reports.pilot['reason']}")
    else:
        return Measured(str(path), n_models, None, None, "no anchor or all-pairs pilot to measure informativeness on")
    if informative and not measured.informativeness:
        raise ConfigError(f"{path}: {measured.how}: no comparison through the anchor separates two models, so no "
                          "anchor plan can be sized from these judgments (N/I is infinite); give --informativeness "
                          "to plan with an assumed value")
    return measured


def plan_of(path: Path | None, options: PlanOptions):
    """The plan (:func:`judgewise.analysis.planning.plan`) for ``options``, the number of models and the anchor's
    informativeness measured in the judgments at ``path`` where ``options`` leave them out; returns the plan and
    what was measured (None without ``path``)."""
    measured = measure(path, informative=options.informativeness is None) if path is not None else None
    n_models = options.n_models or (measured.n_models if measured else None)
    if not n_models:
        raise ConfigError("plan needs --models N or judgments to count them in (PATH)")
    informativeness = options.informativeness
    if informativeness is None and measured is not None:
        informativeness = measured.informativeness
    baseline = options.natural_baseline if options.natural_baseline else ("" if options.baseline_exists else None)
    extra = {} if informativeness is None else {"anchor_informativeness": informativeness}
    inputs = PlanInputs(n_models, baseline, options.full_ranking, options.budget, options.effect, options.alpha,
                        options.power, **extra)
    return plan(inputs), measured


def plan_design(result, anchor: str | None) -> tuple[dict, dict]:
    """(``design:``, ``target:``) of a plan: an anchor plan with a known anchor → the anchor design; a leaderboard
    plan whose anchor is still to be piloted → the adaptive design at the plan's calls with a Kendall-τ target
    (``evaluate`` stops there; ``judge`` spends the budget); all pairs → quadratic."""
    if result.design == "pairs-of-interest":
        raise ConfigError("plan --write: a pairs-of-interest plan has no run design (list the pairs to judge "
                          "yourself); drop --pairs-only to plan a leaderboard")
    if result.design == "quadratic":
        return {"name": "quadratic"}, {}
    if anchor:
        return {"name": "anchor", "anchor": anchor}, {}
    calls = int(result.judge_calls + result.pilot_calls)
    return {"name": "adaptive", "budget": calls}, {"kendall_tau": 0.9}


def plan_run_config(result, *, responses: str, anchor: str | None = None, judge: dict | None = None,
                    orders: str = "both") -> dict:
    """The run config (``judgewise judge`` / ``evaluate``) a :class:`~judgewise.analysis.planning.Plan` implies:
    its design, ``max_prompts`` = the plan's prompts, ``budget.max_calls`` = its calls in ``orders``."""
    design, target = plan_design(result, (result.inputs or {}).get("natural_baseline") or anchor or None)
    per_call = games_per_comparison(orders)
    cfg = {"responses": responses, "judge": dict(judge or DEFAULT_JUDGE), "design": design, "orders": orders,
           "max_prompts": int(result.n_prompts),
           "budget": {"max_calls": int(result.judge_calls + result.pilot_calls) * per_call}}
    return {**cfg, "target": target} if target else cfg


def write_run_config(path: Path, cfg: dict, header: str | None = None) -> Path:
    """Validate ``cfg`` with the run schema (:func:`judgewise.pipeline.load_config`), then write it as YAML under
    ``header`` (comment lines; default: how to use a config ``judgewise plan --write`` wrote)."""
    load_config(cfg)
    if header is None:
        header = "# written by `judgewise plan --write`; edit judge: to point at your endpoint, then\n" \
                 "#   judgewise evaluate --config {0}   (or judgewise judge --config {0})\n".format(Path(path).name)
    return write_text_atomic(path, header + yaml.safe_dump(cfg, sort_keys=False))
