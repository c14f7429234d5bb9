"""Style-control and self-preference coefficients through diagnose(): known values from a simulated judge."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgewise.analysis.diagnostics import diagnose

STRENGTH = {"gpt-a": 0.4, "gpt-b": -0.2, "claude-a": 0.3, "claude-b": -0.1, "llama-a": 0.0}
JUDGES = ("gpt-judge", "claude-judge")


def _family(name: str) -> str:
    return name.split("-")[0]


def simulate(self_pref: float, length_pref: float, n_prompts: int = 400, seed: int = 0):
    """Every pair on every prompt, judged by both judges: logit = θa − θb + self_pref·s + length_pref·z, with
    s = +1/−1/0 (only a / only b / neither-or-both from the judge's family) and z the length feature."""
    rng = np.random.default_rng(seed)
    models = sorted(STRENGTH)
    lengths = {(p, m): int(rng.integers(50, 500)) for p in range(n_prompts) for m in models}
    rows = []
    for p in range(n_prompts):
        judge = JUDGES[p % 2]
        for i, a in enumerate(models):
            for b in models[i + 1:]:
                s = float(_family(a) == _family(judge)) - float(_family(b) == _family(judge))
                la, lb = lengths[p, a], lengths[p, b]
                z = (la - lb) / (la + lb) / 0.3
                logit = STRENGTH[a] - STRENGTH[b] + self_pref * s + length_pref * z
                rows.append({"prompt_id": f"p{p}", "model_a": a, "model_b": b, "judge": judge,
                             "outcome": float(rng.random() < 1 / (1 + np.exp(-logit)))})
    def text(n_words: int) -> str:  # random markdown, independent of everything else
        k = rng.integers(0, 3, size=3)
        return "\n".join(["# h"] * k[0] + ["- item"] * k[1] + ["**b**"] * k[2] + [" ".join(["w"] * n_words)])

    responses = pd.DataFrame([{"prompt_id": f"p{p}", "model": m, "text": text(n)} for (p, m), n in lengths.items()])
    return pd.DataFrame(rows), responses


@pytest.mark.slow
def test_self_preference_coefficient_recovers_the_simulated_bonus_and_is_zero_without_one():
    for bonus in (0.0, 0.8):
        judgments, responses = simulate(self_pref=bonus, length_pref=0.0, seed=int(bonus * 10))
        style = diagnose(judgments, responses, bootstrap=0).style
        coef = style["self_preference"]["coefficients"]["self_preference"]["estimate"]
        assert coef == pytest.approx(bonus, abs=0.2)


@pytest.mark.slow
def test_length_coefficient_is_positive_for_a_length_loving_judge_and_near_zero_otherwise():
    coefs = {}
    for pref in (0.0, 0.6):
        judgments, responses = simulate(self_pref=0.0, length_pref=pref, seed=3)
        style = diagnose(judgments, responses, bootstrap=5).style
        coefs[pref] = style["per_judge"]["gpt-judge"]["coefficients"]["length"]
    assert abs(coefs[0.0]["estimate"]) < 0.15
    assert coefs[0.6]["estimate"] > 0.3 and coefs[0.6]["ci_low"] > 0
