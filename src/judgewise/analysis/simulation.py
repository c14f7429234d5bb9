"""Arena-lite §4.2 simulator: run designs on the simulated judge and score their rankings against the truth.

One trial = true Elo ratings → (optional response jitter) → a design run on the vectorised Eq. 3 judge
(``judges.simulated``) → Bradley–Terry (``ratings.bradley_terry.fit_bt_arrays``) or
win rate against the anchor (the baseline-mediated score of Arena-lite §4.2 step 5) → Spearman ρ and
Kendall τ-b against the true ranking (``ratings.agreement``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from judgewise.designs.adaptive import AdaptiveDesign
from judgewise.designs.base import DesignRun
from judgewise.designs.catalog import make_design
from judgewise.designs.static import AnchorDesign
from judgewise.errors import ConfigError
from judgewise.judges.simulated import response_quality, verdict_fn
from judgewise.ratings.agreement import kendall_tau_b, spearman_rho
from judgewise.ratings.bradley_terry import ARRAY_FIT_L2, fit_bt_arrays
from judgewise.ratings.winrate import anchor_win_rates


def bt_scores(run: DesignRun, l2: float = ARRAY_FIT_L2) -> np.ndarray:
    """BT scores of a design run's models (natural log-odds)."""
    return fit_bt_arrays(run.pairs.a, run.pairs.b, run.outcome, len(run.pairs.models), l2)[0]


def anchor_win_rate_scores(run: DesignRun, anchor: int) -> np.ndarray:
    """Win rate of each model against ``anchor`` (Arena-lite §4.2 baseline-mediated score; Anchor §2 Win-Rate).

    The anchor itself gets 1 − the mean of the others' win rates (Anchor §2); fractions in [0, 1], 0 for a model
    never compared with the anchor. Computed by :func:`judgewise.ratings.winrate.anchor_win_rates`."""
    rates = anchor_win_rates(run.pairs.a, run.pairs.b, run.outcome, len(run.pairs.models), anchor,
                             anchor_score="complement")
    return np.nan_to_num(rates / 100.0)


@dataclass
class TrialSpec:
    """One simulated configuration: the truth, the judge and the design."""

    elo: np.ndarray
    n_prompts: int
    p_judge: float
    design: str
    options: dict = field(default_factory=dict)
    scoring: str = "bt"  # "bt" or "winrate" (against the first anchor)
    response_sd: float = 0.0
    remainder: str = "tie"


def run_trial(spec: TrialSpec, rng: np.random.Generator) -> dict:
    """Run one trial; returns calls, Spearman ρ, Kendall τ against the true ranking, the scores (and, for
    adaptive, τ along its trajectory)."""
    n = len(spec.elo)
    models, prompts = [f"m{i}" for i in range(n)], [f"x{i}" for i in range(spec.n_prompts)]
    quality = response_quality(spec.elo, spec.n_prompts, spec.response_sd, rng)
    options = dict(spec.options)
    if spec.design == "adaptive":
        options.setdefault("fit", fit_bt_arrays)
    design = make_design(spec.design, **options)
    run = design.run(models, prompts, verdict_fn(quality, spec.p_judge, rng, remainder=spec.remainder), rng)
    if spec.scoring == "winrate":
        if not isinstance(design, AnchorDesign):
            raise ConfigError("win-rate scoring needs the anchor design")
        scores = anchor_win_rate_scores(run, models.index(design.anchors[0]))
    else:
        scores = bt_scores(run)
    row = {"calls": run.n_calls, "spearman": spearman_rho(scores, spec.elo),
           "kendall": kendall_tau_b(scores, spec.elo), "scores": scores}
    if isinstance(design, AdaptiveDesign):
        row["trajectory"] = _trajectory_taus(run, spec.elo, refit=options["fit"] is not fit_bt_arrays)
    return row


def _trajectory_taus(run: DesignRun, elo, refit: bool) -> list[tuple[int, float]]:
    """Kendall τ against the truth along an adaptive run: of the scores it fitted after each round, or of a
    BT fit of the verdicts so far when its own fit is not BT (``refit``)."""
    out = []
    for calls, theta in run.info["trajectory"]:
        if refit:
            theta = fit_bt_arrays(run.pairs.a[:calls], run.pairs.b[:calls], run.outcome[:calls], len(elo))[0]
        out.append((calls, kendall_tau_b(np.asarray(theta), elo)))
    return out
