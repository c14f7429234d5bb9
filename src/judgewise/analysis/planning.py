"""Evaluation planning: the decision framework of Anchor Fig. 5 / §6 turned into a design, an anchor strategy,
a number of prompts and judge calls, with the reasons.

Fig. 5 / §6, in order:
1. a **natural baseline** exists (e.g. the method a new one improves on) → use it as the anchor and draw no
   conclusions about other pairs;
2. otherwise, **≤ 3 models** → compare all pairs (quadratic): 3·N judgments, the same as an external anchor;
3. ≥ 4 models and **no full ranking needed** → judge only the pairs of interest;
4. a **leaderboard** (full ranking) → an anchor chosen to be *mediocre* relative to the pool (avoid the strongest
   and weakest), confirmed by a pilot on ~10 prompts (§5.3), and report its informativeness.

Prompts come from the sign-test sample size at the expected edge (Table 2, normal approximation) divided by
the expected informativeness (N_total = N / I, §4.3).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from judgewise.analysis.power import sign_test_n_normal, total_with_ties
from judgewise.errors import ConfigError

# Anchor §4.3: mean informativeness of the empirical anchors (54%); a direct comparison loses only its ties.
MEAN_ANCHOR_INFORMATIVENESS = 0.54
DEFAULT_TIE_RATE = 0.39  # Table 2's first tie column (the best anchor's share of non-informative comparisons)
PILOT_PROMPTS = 10  # §5.3


@dataclass
class PlanInputs:
    """What the user knows before spending: pool size, baseline, goal, budget and the expected edge."""

    n_models: int
    natural_baseline: str | None = None  # name of the natural anchor, or "" when one exists but is unnamed
    full_ranking: bool = True
    budget: int | None = None  # judge calls
    effect: float = 0.05  # expected edge over 50% among discordant comparisons (Table 2 "Edge")
    alpha: float = 0.05
    power: float = 0.8
    tie_rate: float = DEFAULT_TIE_RATE
    anchor_informativeness: float = MEAN_ANCHOR_INFORMATIVENESS


@dataclass
class Plan:
    """A recommended evaluation: design, anchor strategy, prompts, judge calls and why."""

    design: str
    anchor_strategy: str
    n_prompts: int
    judge_calls: int
    pilot_calls: int
    n_informative: int
    informativeness: float
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    inputs: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)

    def to_text(self) -> str:
        lines = [f"design:          {self.design}", f"anchor strategy: {self.anchor_strategy}",
                 f"prompts:         {self.n_prompts}", f"judge calls:     {self.judge_calls}"
                 + (f" (+ {self.pilot_calls} pilot)" if self.pilot_calls else ""), "why:"]
        lines += [f"  - {r}" for r in self.reasons]
        lines += [f"  ! {w}" for w in self.warnings]
        return "\n".join(lines)


def _prompts(inputs: PlanInputs, informativeness: float) -> tuple[int, int]:
    n = sign_test_n_normal(0.5 + inputs.effect, inputs.alpha, inputs.power)
    return n, total_with_ties(n, informativeness)


MAX_MODELS = 100_000  # beyond this the judge-call counts are no plan (1e9 models gave 1e12 calls)
#: the smallest edge, informativeness and level and the largest power and tie rate a plan is sized for: beyond
#: them the sizes are no plan (an edge of 1e-200 needs 1e400 prompts, past any float) — (low, high) each, closed
PLAN_RANGES = {"effect": (0.001, 0.4999), "alpha": (1e-6, 0.5), "power": (0.01, 1 - 1e-6),
               "tie_rate": (0.0, 0.999), "anchor_informativeness": (0.001, 1.0)}


def _check(inputs: PlanInputs) -> None:
    if not 2 <= inputs.n_models <= MAX_MODELS:
        raise ConfigError(f"`n_models`: planning needs 2 to {MAX_MODELS:,} models, got {inputs.n_models:,}")
    for name, (low, high) in PLAN_RANGES.items():
        value = getattr(inputs, name)
        if not low <= value <= high:  # NaN too
            raise ConfigError(f"`{name}` must be in [{low:g}, {high:g}] to size a plan, got {value:.12g}"
                              + (" (edge over 50%)" if name == "effect" else ""))
    if inputs.budget is not None and inputs.budget < 1:
        raise ConfigError(f"budget must be a positive number of judge calls, got {inputs.budget}")


def plan(inputs: PlanInputs) -> Plan:
    """Walk Anchor Fig. 5 (module docstring) and size the evaluation."""
    _check(inputs)
    n, edge = inputs.n_models, f"+{inputs.effect:.0%}"
    direct_i = 1.0 - inputs.tie_rate
    if inputs.natural_baseline is not None:
        base = inputs.natural_baseline or "the natural baseline"
        n_inf, prompts = _prompts(inputs, direct_i)
        others = n - 1 if inputs.natural_baseline else n
        result = Plan("anchor", f"natural baseline: {base} (every model vs it)", prompts, others * prompts, 0,
                      n_inf, direct_i, [
                          "a natural baseline exists, so compare every model to it (Anchor §6, Fig. 5) and "
                          "draw no conclusions about other model pairs",
                          _size_reason(n_inf, prompts, direct_i, edge, "direct comparisons lose only ties")])
    elif n <= 3:
        n_inf, prompts = _prompts(inputs, direct_i)
        calls = n * (n - 1) // 2 * prompts
        result = Plan("quadratic", "none (all pairs)", prompts, calls, 0, n_inf, direct_i, [
            f"{n} models and no natural baseline: compare all pairs — {n * (n - 1) // 2}·N judgments, no more "
            "than an external anchor's (Anchor §6, Fig. 5)",
            _size_reason(n_inf, prompts, direct_i, edge, "direct comparisons lose only ties")])
    elif not inputs.full_ranking:
        n_inf, prompts = _prompts(inputs, direct_i)
        result = Plan("pairs-of-interest", "none (judge only the pairs you will report)", prompts, prompts, 0,
                      n_inf, direct_i, [
                          "no full ranking needed: judge only the specific pairs of interest and report their "
                          "win rates, not absolute scores (Anchor §6, Fig. 5); calls are per pair of interest",
                          _size_reason(n_inf, prompts, direct_i, edge, "direct comparisons lose only ties")])
    else:
        result = _leaderboard_plan(inputs, edge)
    result.inputs = asdict(inputs)
    _check_budget(result, inputs)
    return result


def _leaderboard_plan(inputs: PlanInputs, edge: str) -> Plan:
    n, i_anchor = inputs.n_models, inputs.anchor_informativeness
    n_inf, prompts = _prompts(inputs, i_anchor)
    pilot = PILOT_PROMPTS * n * (n - 1) // 2
    return Plan("anchor", "mediocre anchor chosen by a pilot: avoid the strongest and weakest models; run all "
                f"pairs on {PILOT_PROMPTS} prompts and take the most informative anchor "
                "(`judgewise anchors PILOT.jsonl`); report its informativeness",
                prompts, (n - 1) * prompts, pilot, n_inf, i_anchor, [
                    f"{n} models and a full ranking is needed (leaderboard): anchor-based evaluation, with a "
                    "'mediocre' anchor — extreme anchors waste up to 55% of comparisons (Anchor §4.1-4.3, §6)",
                    f"pilot: {PILOT_PROMPTS} prompts × all pairs estimates every candidate anchor's "
                    "informativeness (Pearson ≥ 0.86 with the full-data value for ≥ 3 models, §5.3)",
                    _size_reason(n_inf, prompts, i_anchor, edge,
                                 "anchor-mediated pairs are informative only when the two verdicts differ"),
                    f"alternative without an anchor: Arena-lite tournament, (n−1)·N = {(n - 1) * prompts} calls "
                    "of direct comparisons, or `adaptive` to stop early once the ranking is resolved"])


def _size_reason(n_inf: int, prompts: int, informativeness: float, edge: str, why: str) -> str:
    return (f"{n_inf} informative prompts detect a {edge} edge (one-sided sign test, normal approximation, "
            f"Table 2); / informativeness {informativeness:.2f} ({why}) = {prompts} prompts (N/I, §4.3)")


def _check_budget(result: Plan, inputs: PlanInputs) -> None:
    if inputs.budget is None:
        return
    needed = result.judge_calls + result.pilot_calls
    if needed > inputs.budget:
        per_prompt = max(result.judge_calls // max(result.n_prompts, 1), 1)
        affordable = max((inputs.budget - result.pilot_calls) // per_prompt, 0)
        result.warnings.append(
            f"budget {inputs.budget} calls < {needed} needed: it buys {affordable} prompts, which detect only an "
            f"edge of about +{detectable_edge(affordable * result.informativeness, inputs.alpha, inputs.power):.0%}"
            " — raise the budget or expect to resolve only large differences")


def detectable_edge(n_informative: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest edge over 50% the sign test detects with ``n_informative`` discordant prompts (normal approx.)."""
    if n_informative < 1:
        return 0.5
    lo, hi = 1e-4, 0.4999
    for _ in range(60):
        mid = (lo + hi) / 2
        if sign_test_n_normal(0.5 + mid, alpha, power) <= n_informative:
            hi = mid
        else:
            lo = mid
    return hi
