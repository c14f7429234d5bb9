"""Panels of judges (issue 33): does a jury rank better than its members? Seeded simulation, then real verdicts.

1. Simulated (Arena-lite Eq. 3 judges, ``judgewise.judges.simulated``): 8 models 100 Elo apart, all pairs on
   each prompt, one random answer order per comparison, random answer lengths (independent of strength). Three
   judges with different biases — position (b = 0.25), length (ℓ = 0.25, longer wins), hedging (tie rate 0.15) —
   each with P_judge tuned (bisection on 19,600 comparisons) so that it names the stronger model 65% of the time.
   Each judges the same comparisons, independently. The panel takes the majority of their labels (a 1–1–1 split
   is a tie) or the mean of their outcomes. τ-b of each Bradley–Terry ranking against the true ratings, mean over
   ``--trials`` (10 prompts × 28 pairs each); each member given three times the prompts (the panel's number of
   calls) is printed for context.
2. Real (``../shared/data/chatbot-arena-ppr``, Networks-Learning/prediction-powered-ranking, MIT): 26,919 Chatbot
   Arena battles with the crowd's vote and the verdicts of GPT-4 (0125-preview) and GPT-3.5-turbo on the same
   battles. With two members, majority = they agree, else a tie (``split: tie``); mean = the mean of their
   outcomes. Agreement with the humans (labels A wins / tie / B wins, ``tie (bothbad)`` a tie) and τ-b of each BT
   ranking (all battles) against the BT ranking of all human votes. The weighted vote (weights from 1,000 human
   labels) is printed too: with two members it is the heavier member's verdict wherever they disagree.

Run: ``.venv/bin/python benchmarks/panel.py [--trials 100] [--seed 2026] [--shared ../shared]``. The last line is
the headline: ``panel_tau=… best_member_tau=… real_panel_agreement=… real_best_member_agreement=…``.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.analysis.panel import panel_verdicts, reliability_weights
from judgewise.judges.simulated import sample_verdicts
from judgewise.ratings import rank
from judgewise.ratings.agreement import kendall_tau_b

ELO = 1000.0 + 100.0 * np.arange(8)
MODELS = [f"m{i}" for i in range(len(ELO))]
RESPONSE_SD = 0.0
TARGET_RIGHT = 0.65
JUDGES = {"position": {"position_bias": 0.25}, "length": {"length_bias": 0.25}, "hedger": {"tie_rate": 0.15}}
OUTCOME = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}
REAL_FILES = {"human": "human.jsonl", "gpt-4": "gpt-4-0125-preview.jsonl", "gpt-3.5": "gpt-3.5-turbo.jsonl"}


def comparisons(n_prompts: int, rng: np.random.Generator) -> pd.DataFrame:
    """All pairs on ``n_prompts`` prompts, one random order each: shown-first/second model, their latent
    qualities on the prompt, and which answer is longer."""
    pairs = np.array(list(itertools.combinations(range(len(ELO)), 2)))
    quality = ELO + RESPONSE_SD * rng.standard_normal((n_prompts, len(ELO)))
    length = rng.lognormal(6.0, 0.5, (n_prompts, len(ELO)))
    prompt = np.repeat(np.arange(n_prompts), len(pairs))
    i, j = np.tile(pairs[:, 0], n_prompts), np.tile(pairs[:, 1], n_prompts)
    swap = rng.random(len(i)) < 0.5
    first, second = np.where(swap, j, i), np.where(swap, i, j)
    return pd.DataFrame({"prompt": prompt, "first": first, "second": second,
                         "q_first": quality[prompt, first], "q_second": quality[prompt, second],
                         "longer": np.sign(length[prompt, first] - length[prompt, second]).astype(int)})


def verdicts(games: pd.DataFrame, p_judge: float, bias: dict, rng: np.random.Generator) -> np.ndarray:
    """The shown-first answer's outcome (1, 0.5, 0) for every game, from a simulated judge with ``bias``."""
    outcome, _ = sample_verdicts(games["q_first"].to_numpy(), games["q_second"].to_numpy(), p_judge, rng,
                                 longer=games["longer"].to_numpy(), **bias)
    return outcome


def qualities(games: pd.DataFrame) -> dict:
    """(prompt_id, model) → the answer's latent quality, from the games."""
    out = {}
    for side in ("first", "second"):
        out.update(zip(zip(games["prompt"].astype(str), np.array(MODELS)[games[side]]), games[f"q_{side}"]))
    return out


def right_rate(frame: pd.DataFrame, quality: dict) -> float:
    """The share of judgments naming the answer of higher latent quality (``quality``: (prompt_id, model) →
    quality); a tie is not right."""
    qa = np.array([quality[p, m] for p, m in zip(frame["prompt_id"], frame["model_a"])])
    qb = np.array([quality[p, m] for p, m in zip(frame["prompt_id"], frame["model_b"])])
    outcome = frame["outcome"].to_numpy(float)
    return float(np.where(qa > qb, outcome == 1.0, outcome == 0.0).mean())


def tune_p_judge(bias: dict, seed: int) -> float:
    """P_judge at which a judge with ``bias`` is right ``TARGET_RIGHT`` of the time (bisection, common draws)."""
    games = comparisons(700, np.random.default_rng(seed))
    quality, low, high = qualities(games), 0.0, 1.0
    for _ in range(30):
        mid = (low + high) / 2
        outcome = verdicts(games, mid, bias, np.random.default_rng(seed + 1))
        rate = right_rate(judgments(games, "tuned", outcome), quality)
        low, high = (mid, high) if rate < TARGET_RIGHT else (low, mid)
    return (low + high) / 2


def judgments(games: pd.DataFrame, judge: str, outcome: np.ndarray) -> pd.DataFrame:
    """One judge's canonical judgments of ``games`` (model_a = the answer shown first)."""
    names = np.array(MODELS)
    return pd.DataFrame({"prompt_id": games["prompt"].astype(str), "model_a": names[games["first"]],
                         "model_b": names[games["second"]], "judge": judge, "outcome": outcome,
                         "first": names[games["first"]]})


def tau(frame: pd.DataFrame, truth: dict) -> float:
    """Kendall τ-b of the BT ranking of ``frame`` against ``truth`` (model → true score)."""
    ranking = rank(frame, "bt", l2=0.01)
    scores = dict(zip(ranking.models, ranking.scores))
    models = sorted(truth)
    return kendall_tau_b([scores.get(m, np.nan) for m in models], [truth[m] for m in models])


def panel_example(n_prompts: int, seed: int) -> pd.DataFrame:
    """The three simulated judges' judgments of all pairs on ``n_prompts`` prompts (``examples/panels``)."""
    rng = np.random.default_rng(seed)
    games = comparisons(n_prompts, rng)
    return pd.concat([judgments(games, judge, verdicts(games, tune_p_judge(bias, seed), bias, rng))
                      for judge, bias in JUDGES.items()], ignore_index=True)


def simulated_trial(p_judges: dict, n_prompts: int, seed: int) -> dict:
    """τ of each member and of the panels on one fresh draw of comparisons and verdicts; and the rates right."""
    rng = np.random.default_rng(seed)
    games, truth = comparisons(n_prompts, rng), dict(zip(MODELS, ELO))
    quality = qualities(games)
    frames, out = [], {}
    for judge, bias in JUDGES.items():
        outcome = verdicts(games, p_judges[judge], bias, rng)
        frames.append(judgments(games, judge, outcome))
        out[judge], out[f"right_{judge}"] = tau(frames[-1], truth), right_rate(frames[-1], quality)
    both = pd.concat(frames, ignore_index=True)
    for rule in ("majority", "mean"):
        panel = panel_verdicts(both, list(JUDGES), rule)
        out[f"panel_{rule}"] = tau(panel.judgments, truth)
        if rule == "majority":
            out["right_panel"] = right_rate(panel.judgments, quality)
            out["kappa"] = panel.kappa
    big = comparisons(3 * n_prompts, rng)  # each member given the panel's number of calls
    for judge, bias in JUDGES.items():
        out[f"3x_{judge}"] = tau(judgments(big, judge, verdicts(big, p_judges[judge], bias, rng)), truth)
    return out


def simulated(args) -> dict:
    """Part 1: mean τ per member and panel over the trials."""
    p_judges = {judge: tune_p_judge(bias, args.seed) for judge, bias in JUDGES.items()}
    print("simulated judges (P_judge tuned to be right 65% of the time):",
          ", ".join(f"{j} {JUDGES[j]} P_judge={p:.3f}" for j, p in p_judges.items()))
    trials = pd.DataFrame([simulated_trial(p_judges, args.prompts, args.seed + 1000 + t) for t in range(args.trials)])
    mean = trials.mean()
    print(f"{args.trials} trials, {args.prompts} prompts x 28 pairs = {args.prompts * 28:,} comparisons each, one "
          "random order; mean over trials (sd):")
    for judge in JUDGES:
        print(f"  member {judge:9s} right {mean[f'right_{judge}']:.1%}  tau {mean[judge]:.3f} "
              f"({trials[judge].std():.3f})   with 3x prompts: tau {mean[f'3x_{judge}']:.3f}")
    for rule in ("majority", "mean"):
        right = f"right {mean['right_panel']:.1%}" if rule == "majority" else "         "
        print(f"  panel {rule:11s} {right}  tau {mean[f'panel_{rule}']:.3f} ({trials[f'panel_{rule}'].std():.3f})")
    best = trials[list(JUDGES)].max(axis=1)
    above, level = (trials["panel_majority"] > best).mean(), (trials["panel_majority"] == best).mean()
    print(f"  members' agreement: Fleiss' kappa {mean['kappa']:.3f}; per trial, the panel's (majority) tau is above "
          f"the best member's in {above:.0%}, equal in {level:.0%}, below in {1 - above - level:.0%}")
    return {"panel_tau": mean["panel_majority"], "best_member_tau": max(mean[j] for j in JUDGES)}


def read_real(folder: Path) -> pd.DataFrame:
    """The three verdict files as one canonical judgments table (prompt_id = the battle's ``num``)."""
    frames = []
    for judge, name in REAL_FILES.items():
        rows = pd.read_json(folder / name, lines=True)
        frames.append(pd.DataFrame({"prompt_id": rows["num"].astype(str), "model_a": rows["model_a"],
                                    "model_b": rows["model_b"], "judge": judge,
                                    "outcome": rows["winner"].map(OUTCOME)}))
    return pd.concat(frames, ignore_index=True)


def label_agreement(a: pd.DataFrame, b: pd.DataFrame) -> float:
    """Share of battles on which two tables (one row per battle, same keys) give the same label."""
    key = ["prompt_id", "model_a", "model_b"]
    canon = lambda f: f.assign(outcome=np.where(f["model_a"] > f["model_b"], 1 - f["outcome"], f["outcome"]),  # noqa: E731
                               model_a=np.minimum(f["model_a"], f["model_b"]),
                               model_b=np.maximum(f["model_a"], f["model_b"]))[key + ["outcome"]]
    both = canon(a).merge(canon(b), on=key)
    label = lambda o: np.sign(o - 0.5)  # noqa: E731
    return float((label(both["outcome_x"]) == label(both["outcome_y"])).mean())


def real(args) -> dict:
    """Part 2: each LLM judge and their panels against the humans of Chatbot Arena."""
    folder = Path(args.shared) / "data" / "chatbot-arena-ppr"
    frame = read_real(folder)
    human = frame[frame["judge"] == "human"]
    truth_ranking = rank(human, "bt")
    truth = dict(zip(truth_ranking.models, truth_ranking.scores))
    rows = {judge: frame[frame["judge"] == judge] for judge in ("gpt-4", "gpt-3.5")}
    members = list(rows)
    for rule in ("majority", "mean"):
        rows[f"panel {rule}"] = panel_verdicts(frame, members, rule).judgments
    sample = human.sample(1000, random_state=args.seed)["prompt_id"]
    labelled = frame[(frame["judge"] != "human") | frame["prompt_id"].isin(sample)]
    weights, accuracy = reliability_weights(labelled, members, "human")
    rows["panel weighted"] = panel_verdicts(frame, members, "weighted", weights=weights).judgments
    kappa = panel_verdicts(frame, members).kappa
    print(f"real: {len(human):,} Chatbot Arena battles, {len(truth)} models; members' agreement Fleiss' kappa "
          f"{kappa:.3f}; weights from 1,000 human labels: "
          + ", ".join(f"{m} {weights[m]:.2f} (agrees {accuracy[m]:.1%})" for m in members))
    out = {}
    for name, judged in rows.items():
        agree, t = label_agreement(judged, human), tau(judged, truth)
        ties = float((judged["outcome"] == 0.5).mean())
        print(f"  {name:15s} agreement with humans {agree:.1%}  tau vs all-human BT {t:.3f}  ties {ties:.1%}")
        out[name] = (agree, t)
    return {"real_panel_agreement": out["panel majority"][0], "real_panel_tau": out["panel majority"][1],
            "real_best_member_agreement": max(out[m][0] for m in members),
            "real_best_member_tau": max(out[m][1] for m in members)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    args = parser.parse_args()
    headline = {**simulated(args), **real(args)}
    print(" ".join(f"{k}={v:.3f}" for k, v in headline.items()))


if __name__ == "__main__":
    main()
