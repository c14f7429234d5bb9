"""``anchors``' pilot (Anchor §5.3) on the verdicts' own scale — 5-way margins kept, as the paper's pilot — with
one tie rule shared with ``evaluate`` that does not depend on how rows are oriented."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from tests.support import cli_json


def five_way_all_pairs(n_models=8, n_prompts=12, seed=0, noise=1.2):
    """All pairs on every prompt with 5-way verdicts v ∈ {−2..2} (Anchor §2): v = clip(round(s_a − s_b + ε), ±2)
    from model_a's view, model strengths s spaced by 0.6; the shown order alternates."""
    rng = np.random.default_rng(seed)
    strength = np.arange(n_models) * 0.6
    rows = []
    for p in range(n_prompts):
        for i, j in itertools.combinations(range(n_models), 2):
            v = int(np.clip(np.round(strength[i] - strength[j] + rng.normal(0, noise)), -2, 2))
            a, b, v = (i, j, v) if rng.random() < 0.5 else (j, i, -v)
            rows.append({"prompt_id": f"x{p}", "model_a": f"m{a}", "model_b": f"m{b}", "judge": "j",
                         "verdict": v, "outcome": 1.0 if v > 0 else (0.0 if v < 0 else 0.5)})
    return pd.DataFrame(rows)


def oracle_informativeness(frame: pd.DataFrame, anchor: str, collapse: bool) -> float:
    """Anchor §4.3 from the definition: share of (prompt, pair of other models) whose verdicts against the anchor
    differ; verdicts from each model's view (sign only when ``collapse``)."""
    differ = total = 0
    for _, g in frame.groupby("prompt_id"):
        view = {}
        for r in g.itertuples():
            if r.model_a == anchor:
                view[r.model_b] = -r.verdict
            elif r.model_b == anchor:
                view[r.model_a] = r.verdict
        values = [np.sign(v) if collapse else v for v in view.values()]
        for x, y in itertools.combinations(values, 2):
            differ += x != y
            total += 1
    return differ / total


def _pilot(tmp_path, frame, name="pilot.jsonl"):
    path = tmp_path / name
    frame.to_json(path, orient="records", lines=True)
    n_prompts = frame["prompt_id"].nunique()
    return cli_json("anchors", str(path), "--pilot-prompts", str(n_prompts), "--json")["pilot"]


def test_the_pilot_keeps_5way_margins_and_recommends_the_most_informative_anchor(tmp_path):
    frame = five_way_all_pairs(seed=4)
    models = sorted(set(frame["model_a"]))
    five = {m: oracle_informativeness(frame, m, collapse=False) for m in models}
    signs = {m: oracle_informativeness(frame, m, collapse=True) for m in models}
    assert max(five, key=five.get) != max(signs, key=signs.get)  # the two scales disagree on this data
    pilot = _pilot(tmp_path, frame)
    assert pilot["scale"] == "5-way verdicts"
    assert pilot["recommended"] == max(five, key=five.get)
    got = {c["anchor"]: c for c in pilot["candidates"]}
    for m in models:
        assert got[m]["informativeness_5way"] == pytest.approx(five[m], abs=1e-12)
        assert got[m]["informativeness"] == pytest.approx(signs[m], abs=1e-12)


def test_a_tie_among_anchors_is_named_and_broken_the_same_way_whatever_the_row_orientation(tmp_path):
    # strengths 0, 1, 2, 2, 3, 4 and v = clip(s_a − s_b, ±2): anchors m2 and m3 (equally strong) both split the
    # other five into five different 5-way verdicts (I = 1, the maximum): a tie at the top.
    strength = [0, 1, 2, 2, 3, 4]
    rows = []
    for p in range(6):
        for i, j in itertools.combinations(range(6), 2):
            v = int(np.clip(strength[i] - strength[j], -2, 2))
            rows.append({"prompt_id": f"x{p}", "model_a": f"m{i}", "model_b": f"m{j}", "judge": "j",
                         "verdict": v, "outcome": 1.0 if v > 0 else (0.0 if v < 0 else 0.5)})
    frame = pd.DataFrame(rows)
    flipped = frame.assign(model_a=frame["model_b"], model_b=frame["model_a"], verdict=-frame["verdict"],
                           outcome=1 - frame["outcome"]).iloc[::-1]
    first, second = _pilot(tmp_path, frame, "a.jsonl"), _pilot(tmp_path, flipped, "b.jsonl")
    assert first["recommended"] == second["recommended"]
    assert sorted(first["tied"]) == ["m2", "m3"] and first["tied"][0] == first["recommended"]
    assert "tied at" in first["reason"] and "then by name" in first["reason"]


def test_several_anchors_give_per_anchor_win_rates_and_the_pooled_bt(tmp_path):
    # Anchor §5 / App. E: every model against anchors m2 and m5 on every prompt, both orders; per anchor the win
    # rate against it, pooled one BT fit over every comparison that involves an anchor.
    frame = five_way_all_pairs(n_models=7, n_prompts=15, seed=2)
    anchors = ["m2", "m5"]
    frame = frame[frame["model_a"].isin(anchors) | frame["model_b"].isin(anchors)].reset_index(drop=True)
    swapped = frame.assign(model_a=frame["model_b"], model_b=frame["model_a"], verdict=-frame["verdict"],
                           outcome=1 - frame["outcome"])
    frame = pd.concat([frame, swapped], ignore_index=True)
    path = tmp_path / "two_anchors.jsonl"
    frame.to_json(path, orient="records", lines=True)
    out = cli_json("anchors", str(path), "--anchor", "m2,m5", "--json")["several"]
    models = out["models"]
    for anchor in anchors:
        for k, m in enumerate(models):
            if m == anchor:
                continue
            mine = pd.concat([frame[(frame.model_a == m) & (frame.model_b == anchor)]["outcome"],
                              1 - frame[(frame.model_b == m) & (frame.model_a == anchor)]["outcome"]])
            assert out["win_rates"][anchor][k] == pytest.approx(100 * mine.mean(), abs=1e-9)
    # pooled: ridge BT (l2 = 0.01, the array fit's prior) on the per-(prompt, pair) mean outcome, by Newton
    idx = {m: k for k, m in enumerate(models)}
    key = frame.apply(lambda r: (r.prompt_id, *sorted((r.model_a, r.model_b))), axis=1)
    first_wins = np.where(frame["model_a"] < frame["model_b"], frame["outcome"], 1 - frame["outcome"])
    mean = pd.Series(first_wins).groupby(key.to_numpy()).mean()
    theta = np.zeros(len(models))
    for _ in range(60):
        grad, hess = 0.01 * theta, 0.01 * np.eye(len(models))
        for (_, lo, hi), y in mean.items():
            i, j = idx[lo], idx[hi]
            p = 1 / (1 + np.exp(theta[j] - theta[i]))
            grad[i] += p - y
            grad[j] -= p - y
            w = p * (1 - p)
            hess[i, i] += w
            hess[j, j] += w
            hess[i, j] -= w
            hess[j, i] -= w
        theta -= np.linalg.solve(hess, grad)
    assert np.asarray(out["pooled_bt"]) - np.mean(out["pooled_bt"]) == pytest.approx(theta - theta.mean(), abs=1e-8)
    assert set(out["tau_vs_pooled"]) == set(anchors)
