"""Wilcoxon signed-rank power by simulation (Anchor App. C): calibrated under the null, powered under an effect."""

import numpy as np
import pytest

from judgewise.analysis.power import (distribution_from_probabilities, sign_test_sample_size,
                                      wilcoxon_power)
from judgewise.errors import ConfigError
from tests.support import cli_json


def test_wilcoxon_rejection_rate_is_about_alpha_without_an_effect():
    pool = distribution_from_probabilities([-2, -1, 0, 1, 2], [0.1, 0.2, 0.4, 0.2, 0.1])
    res = wilcoxon_power([pool], [200], n_simulations=2000, power=0.99, rng=np.random.default_rng(1))
    assert res.power[0] == pytest.approx(0.05, abs=0.02)
    assert res.n_required is None


def test_wilcoxon_needs_no_more_samples_than_sign_test_when_wins_are_larger():
    # wins are large (+2) and losses small (-1): Wilcoxon uses the magnitude, the sign test cannot (§4.3).
    values, probs = [-1, 0, 2], [0.27, 0.40, 0.33]
    pool = distribution_from_probabilities(values, probs)
    res = wilcoxon_power([pool], range(20, 400, 20), n_simulations=1000, rng=np.random.default_rng(2))
    sign = sign_test_sample_size(0.33 / 0.60, tie_rate=0.40)
    assert res.n_required is not None and res.n_required < sign.n_total
    assert res.power[-1] >= 0.8 > res.power[0]


def test_distribution_must_sum_to_one():
    with pytest.raises(ConfigError):
        distribution_from_probabilities([0, 1], [0.5, 0.6])


def test_cli_power_wilcoxon_from_a_distribution():
    out = cli_json("power", "wilcoxon", "--distribution", "-1:0.27,0:0.40,2:0.33", "--n", "50,100,200,400",
                   "--simulations", "300", "--json")
    assert out["n_required"] in (50, 100, 200, 400)
    assert out["power"][-1] >= 0.8


def _anchor_file(tmp_path, verdicts: dict, n_prompts: int):
    """Anchor-based 5-way verdicts the way Anchor §2 builds them: every model against anchor X on every prompt,
    v ∈ {−2..2} from the model's view; the model is shown first on even prompts, second on odd ones."""
    import pandas as pd
    rows = []
    for m, vs in verdicts.items():
        for p, v in enumerate(vs):
            first = p % 2 == 0
            rows.append({"prompt_id": f"p{p}", "model_a": m if first else "X", "model_b": "X" if first else m,
                         "judge": "j", "verdict": int(v if first else -v),
                         "outcome": {2: 1.0, 1: 1.0, 0: 0.5, -1: 0.0, -2: 0.0}[int(v if first else -v)]})
    path = tmp_path / "anchor.jsonl"
    pd.DataFrame(rows).to_json(path, orient="records", lines=True)
    return path


def _oracle_pairs_in_band(verdicts: dict, effect_pct: int, width_pct: int) -> int:
    """Independent oracle on integers: effect/100 <= wins/disc − 1/2 < (effect+width)/100 over ordered pairs."""
    kept = 0
    for a, va in verdicts.items():
        for b, vb in verdicts.items():
            if a == b:
                continue
            diffs = [x - y for x, y in zip(va, vb)]
            disc, wins = sum(d != 0 for d in diffs), sum(d > 0 for d in diffs)
            if disc and 2 * effect_pct * disc <= 200 * wins - 100 * disc < 2 * (effect_pct + width_pct) * disc:
                kept += 1
    return kept


def test_power_band_holds_a_win_rate_of_exactly_0_6(tmp_path):
    # seeded 5-way verdicts of 8 models against anchor X, plus A and B planted so that A beats B on 6 of the 10
    # prompts where they differ: 0.6 − 0.5 = 0.0999… in floating point, yet the edge is exactly 0.10.
    import numpy as np
    rng = np.random.default_rng(7)
    n = 60
    verdicts = {f"m{k}": rng.choice([-2, -1, 0, 1, 2], size=n, p=[.1, .2, .35, .2, .15]).tolist() for k in range(8)}
    verdicts["A"] = [1] * 6 + [-1] * 4 + [0] * (n - 10)
    verdicts["B"] = [0] * n
    path = _anchor_file(tmp_path, verdicts, n)
    expected = _oracle_pairs_in_band(verdicts, 10, 1)
    assert expected >= 1
    out = cli_json("power", "wilcoxon", str(path), "--anchor", "X", "--effect", "0.10", "--width", "0.01",
                   "--n", "50", "--simulations", "20", "--json")
    assert out["n_distributions"] == expected


def test_power_wilcoxon_reads_a_judging_store_as_its_export(tmp_path):
    """A store is read like every command that reads judgments (was "cannot detect the file's format")."""
    from tests.support import run_cli
    from tests.support.judging import simulated_store

    store = simulated_store(tmp_path, {f"m{k}": 1000 + 40 * k for k in range(5)}, n_prompts=30, tie_rate=0.2)
    assert run_cli("store", "export", str(store), "-o", str(tmp_path / "e.jsonl")).returncode == 0
    args = ["--anchor", "m2", "--effect", "0.05", "--width", "0.5", "--n", "50,100", "--simulations", "30", "--json"]
    from_store = cli_json("power", "wilcoxon", str(store), *args)
    from_export = cli_json("power", "wilcoxon", str(tmp_path / "e.jsonl"), *args)
    assert from_store["n_distributions"] > 0 and from_store == from_export
