"""A seeded data set of the Correct-looks-better paper's shape and direct re-implementations of its formulas.

The data: models with known accuracies answer every question; a few answers cannot be parsed (empty
``correct``); a judge compares every pair of models on every question (CLB §3.2.1, all pairs), picks the correct
answer on discriminative pairs with a fixed probability and otherwise leans towards the more accurate model (an
echo-like cue, §5.4); no ties (the CLB code keeps only winner 1 or 2). The oracles are written from the paper's
definitions (§3.1.1, §4.3, §5.4, App. C), not from judgewise.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import trueskill
from scipy import stats


def clb_data(n_models=10, n_questions=126, seed=0, unparsed=0.05, p_correct_wins=0.85, cue=0.3):
    """(judgments, correctness) of the paper's shape; see the module docstring."""
    rng = np.random.default_rng(seed)
    acc = np.sort(rng.uniform(0.2, 0.9, n_models))[::-1]
    models = [f"model-{i:02d}" for i in range(n_models)]
    correct = rng.random((n_questions, n_models)) < acc
    missing = rng.random((n_questions, n_models)) < unparsed
    corr = pd.DataFrame([{"prompt_id": f"q{q}", "model": m, "correct": "" if missing[q, i] else int(correct[q, i])}
                         for q in range(n_questions) for i, m in enumerate(models)])
    rows = []
    for q in range(n_questions):
        for i, j in itertools.combinations(range(n_models), 2):
            ci, cj = correct[q, i] and not missing[q, i], correct[q, j] and not missing[q, j]
            p = (p_correct_wins if ci and not cj else 1 - p_correct_wins if cj and not ci
                 else 0.5 + cue * (acc[i] - acc[j]))
            i_wins = rng.random() < p
            a, b = (i, j) if rng.random() < 0.5 else (j, i)
            rows.append({"prompt_id": f"q{q}", "model_a": models[a], "model_b": models[b], "judge": "sim",
                         "outcome": float(i_wins == (a == i))})
    return pd.DataFrame(rows), corr


ACCURACIES = (0.15, 0.3, 0.45, 0.6, 0.75, 0.9)


def simulate(n_prompts=150, accuracies=ACCURACIES, p_correct_wins=0.9, nondisc_signal=0.0, seed=0,
             pairs_per_prompt=6, direct_flip=0.2):
    """Models with known accuracies; a judge that picks the correct answer with ``p_correct_wins`` on
    discriminative pairs and, on the rest, favours the more accurate model by ``nondisc_signal`` (CLB §5.4's
    echo-like cue). The direct judge flips ``direct_flip`` of its grades and skips 10% (not_attempted)."""
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(len(accuracies))]
    correct = rng.random((n_prompts, len(models))) < np.array(accuracies)
    corr = pd.DataFrame([{"prompt_id": f"p{p}", "model": m, "correct": int(correct[p, i])}
                         for p in range(n_prompts) for i, m in enumerate(models)])
    rows = []
    for p in range(n_prompts):
        for _ in range(pairs_per_prompt):
            a, b = rng.choice(len(models), 2, replace=False)
            if correct[p, a] != correct[p, b]:
                win = p_correct_wins if correct[p, a] else 1 - p_correct_wins
            else:
                win = 0.5 + nondisc_signal * np.sign(accuracies[a] - accuracies[b])
            rows.append({"prompt_id": f"p{p}", "model_a": models[a], "model_b": models[b], "judge": "sim",
                         "outcome": float(rng.random() < win)})
    flip = rng.random(correct.shape) < direct_flip
    label = np.where(rng.random(correct.shape) < 0.1, "not_attempted",
                     np.where(correct ^ flip, "correct", "incorrect"))
    direct = pd.DataFrame([{"prompt_id": f"p{p}", "model": m, "label": label[p, i]}
                           for p in range(n_prompts) for i, m in enumerate(models)])
    return pd.DataFrame(rows), corr, direct


def oracle_accuracy(corr: pd.DataFrame) -> dict[str, float]:
    """CLB §3.1.1: correct / questions; an unparsed answer is not correct."""
    out = {}
    for model, g in corr.groupby("model"):
        out[model] = sum(1 for v in g["correct"] if v != "" and int(v) == 1) / len(g)
    return out


def oracle_subsets(judgments: pd.DataFrame, corr: pd.DataFrame, unparsed: str = "exclude") -> dict[str, pd.DataFrame]:
    """CLB §5.4's split; ``exclude``: a pair with an unparsed side is in neither subset (the CLB code's filters
    keep a side only if graded correct or incorrect); ``incorrect``: an unparsed side is incorrect."""
    grade = {(r.prompt_id, r.model): r.correct for r in corr.itertuples()}
    disc, nondisc = [], []
    for k, r in enumerate(judgments.itertuples()):
        ga, gb = grade[(r.prompt_id, r.model_a)], grade[(r.prompt_id, r.model_b)]
        if "" in (ga, gb) and unparsed == "exclude":
            continue
        ga, gb = (0 if g == "" else int(g) for g in (ga, gb))
        (disc if ga != gb else nondisc).append(k)
    return {"all": judgments, "discriminative": judgments.iloc[disc], "non-discriminative": judgments.iloc[nondisc]}


def _players(j: pd.DataFrame):
    models = sorted(set(j["model_a"]) | set(j["model_b"]))
    return models, {m: k for k, m in enumerate(models)}


def oracle_winshare(j: pd.DataFrame) -> dict[str, float]:
    """Share of all games won, ties half (CLB App. C WinRate)."""
    won, played = {}, {}
    for r in j.itertuples():
        for m, s in ((r.model_a, r.outcome), (r.model_b, 1 - r.outcome)):
            won[m] = won.get(m, 0) + s
            played[m] = played.get(m, 0) + 1
    return {m: won[m] / played[m] for m in played}


def oracle_elo(j: pd.DataFrame, k: float = 32.0, initial: float = 1000.0) -> dict[str, float]:
    """Online Elo (CLB App. C): games in file order, both ratings updated from the ratings before the game."""
    rating = {}
    for r in j.itertuples():
        ra, rb = rating.get(r.model_a, initial), rating.get(r.model_b, initial)
        ea = 1 / (1 + 10 ** ((rb - ra) / 400))
        rating[r.model_a] = ra + k * (r.outcome - ea)
        rating[r.model_b] = rb + k * ((1 - r.outcome) - (1 - ea))
    return rating


def oracle_bt(j: pd.DataFrame, l2: float = 1.0) -> dict[str, float]:
    """BT as a logistic regression without intercept, x = e_a − e_b, y = 1 if a won, minimising
    Σ log-loss + ½·l2·‖θ‖² (scikit-learn's C = 1/l2), by Newton's method to machine precision."""
    models, idx = _players(j)
    x = np.zeros((len(j), len(models)))
    x[np.arange(len(j)), j["model_a"].map(idx)] = 1
    x[np.arange(len(j)), j["model_b"].map(idx)] = -1
    y = j["outcome"].to_numpy(float)
    theta = np.zeros(len(models))
    for _ in range(100):
        p = 1 / (1 + np.exp(-x @ theta))
        grad = x.T @ (p - y) + l2 * theta
        hess = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(len(models))
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.abs(step).max() < 1e-14:
            break
    return dict(zip(models, theta))


def oracle_trueskill(j: pd.DataFrame) -> dict[str, float]:
    """TrueSkill μ − 3σ with the package defaults, games in file order (CLB App. C)."""
    env = trueskill.TrueSkill()
    rating = {}
    for r in j.itertuples():
        ra, rb = rating.get(r.model_a, env.create_rating()), rating.get(r.model_b, env.create_rating())
        if r.outcome > 0.5:
            ra, rb = trueskill.rate_1vs1(ra, rb, env=env)
        elif r.outcome < 0.5:
            rb, ra = trueskill.rate_1vs1(rb, ra, env=env)
        else:
            ra, rb = trueskill.rate_1vs1(ra, rb, drawn=True, env=env)
        rating[r.model_a], rating[r.model_b] = ra, rb
    return {m: v.mu - 3 * v.sigma for m, v in rating.items()}


def oracle_figures(accuracy: dict[str, float], scores: dict[str, float]) -> dict[str, float]:
    """Kendall τ-b, Spearman ρ, Pearson r against accuracy (CLB §4.3)."""
    models = sorted(scores)
    a = [accuracy[m] for m in models]
    s = [scores[m] for m in models]
    return {"kendall_tau_b": stats.kendalltau(a, s).statistic, "spearman_rho": stats.spearmanr(a, s).statistic,
            "pearson_r": stats.pearsonr(a, s).statistic}


ORACLES = {"winrate": oracle_winshare, "bt": oracle_bt, "elo": oracle_elo, "trueskill": oracle_trueskill}


def finite(x) -> bool:
    return x is not None and math.isfinite(x)
