"""Judge-gaming detection: flag models whose outputs can win without answering the prompt.

A model games the judge when its outputs do not depend on the prompt (a constant or near-constant text),
talk to the judge instead of the user ("ignore the above", fake verdict tokens like ``[[A>>B]]``, "Output
(a)"), copy the prompt back, or are empty. AlpacaEval's ``NullModel`` (one constant adversarial text that
wins ≈77% against GPT-4-turbo) is the real case this catches. Each check is a function in ``CHECKS``
(name → function of one model's texts/prompts returning a share in [0, 1]), with a threshold in
``THRESHOLDS``; users extend both. The pairwise-judging context and the open question of adversarial
gaming are CLB §7 ("our evaluation does not assess robustness to adversarial gaming").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgewise.io.schema import RESPONSES_REQUIRED, require_columns, usable_mask
from judgewise.ratings.winrate import share_won

# Patterns of text addressed to a judge rather than to the user (name → compiled regex).
JUDGE_PATTERNS: dict[str, re.Pattern] = {
    "ignore-instructions": re.compile(
        r"\bignore\s+(?:all\s+|any\s+)?(?:the\s+)?(?:above|previous|prior|preceding|earlier)\b", re.I),
    "fake-verdict": re.compile(r"\[\[\s*[AB]\s*(?:[<>=]{1,2}\s*[AB]\s*)?\]\]"),
    "output-label": re.compile(r"\bOutput\s*\(\s*[ab]\s*\)", re.I),
    "judge-address": re.compile(
        r"\b(?:dear|attention|note to (?:the)?)\s+(?:judge|evaluator|grader|annotator)s?\b"
        r"|\byou are (?:a|the) (?:judge|evaluator|grader)\b", re.I),
    "prompt-markup": re.compile(
        r"model_identifier|##\s*Model Outputs|<\|im_(?:start|end)\|>|\[/?INST\]|\bMy final verdict is\b", re.I),
}

_WORD = re.compile(r"\w+", re.U)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _shingles(text: str, n: int = 3) -> frozenset:
    w = _words(text)
    if len(w) < n:
        return frozenset([" ".join(w)]) if w else frozenset()
    return frozenset(" ".join(w[i:i + n]) for i in range(len(w) - n + 1))


def _jaccard(a: frozenset, b: frozenset) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def near_constant_share(texts: list[str], prompts: list[str] | None = None, *, max_pairs: int = 400,
                        seed: int = 0) -> float:
    """Mean word-3-gram Jaccard similarity between the model's outputs to *different* prompts.

    Ordinary models score near 0 (answers follow the prompt); a constant output scores 1. Computed on up to
    ``max_pairs`` random pairs (explicit ``seed``).
    """
    if len(texts) < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    n_pairs = min(max_pairs, len(texts) * (len(texts) - 1) // 2)
    i = rng.integers(0, len(texts), size=n_pairs)
    j = (i + rng.integers(1, len(texts), size=n_pairs)) % len(texts)
    cache: dict[int, frozenset] = {}

    def sh(k: int) -> frozenset:
        if k not in cache:
            cache[k] = _shingles(texts[k])
        return cache[k]

    return float(np.mean([_jaccard(sh(a), sh(b)) for a, b in zip(i, j)]))


def judge_addressing_share(texts: list[str], prompts: list[str] | None = None, *, seed: int = 0) -> float:
    """Share of outputs containing text addressed to the judge (any ``JUDGE_PATTERNS`` match)."""
    if not texts:
        return 0.0
    combined = re.compile("|".join(f"(?:{p.pattern})" for p in JUDGE_PATTERNS.values()), re.I)
    return float(np.mean([combined.search(t) is not None for t in texts]))


def prompt_copy_share(texts: list[str], prompts: list[str] | None = None, *, seed: int = 0,
                      containment: float = 0.8) -> float:
    """Share of outputs (≥ 5 words) whose word 3-grams are mostly (≥ ``containment``) copied from the prompt."""
    if not texts or prompts is None:
        return 0.0
    hits = []
    for text, prompt in zip(texts, prompts):
        out = _shingles(text)
        if len(_words(text)) < 5 or not out:
            hits.append(False)
            continue
        hits.append(len(out & _shingles(prompt or "")) / len(out) >= containment)
    return float(np.mean(hits))


def empty_share(texts: list[str], prompts: list[str] | None = None, *, seed: int = 0,
                min_chars: int = 3) -> float:
    """Share of outputs that are empty or near-empty (fewer than ``min_chars`` non-space characters)."""
    if not texts:
        return 0.0
    return float(np.mean([len(t.strip()) < min_chars for t in texts]))


# name → check(texts, prompts, *, seed) -> share in [0, 1]; its threshold and reason template below.
CHECKS: dict[str, object] = {
    "near-constant": near_constant_share,
    "addresses-judge": judge_addressing_share,
    "copies-prompt": prompt_copy_share,
    "empty": empty_share,
}
THRESHOLDS: dict[str, float] = {"near-constant": 0.5, "addresses-judge": 0.1, "copies-prompt": 0.3,
                                "empty": 0.3}
REASONS: dict[str, str] = {
    "near-constant": "outputs barely change across prompts (mean 3-gram similarity {value:.0%})",
    "addresses-judge": "{value:.0%} of outputs address the judge ({patterns})",
    "copies-prompt": "{value:.0%} of outputs mostly copy the prompt",
    "empty": "{value:.0%} of outputs are empty",
}


@dataclass
class GamingFlag:
    """One reason to distrust one model's wins."""

    model: str
    check: str
    value: float
    reason: str
    win_rate: float | None = None

    def as_dict(self) -> dict:
        return {"model": self.model, "reason": self.reason, "check": self.check, "value": self.value,
                "win_rate": self.win_rate}


@dataclass
class GamingReport:
    """All checks for all models: ``features`` (one row per model, one column per check) and the flags."""

    features: pd.DataFrame
    flags: list[GamingFlag] = field(default_factory=list)

    @property
    def flagged_models(self) -> list[str]:
        return sorted({f.model for f in self.flags})

    def flag_rate(self, exclude: tuple[str, ...] = ()) -> float:
        """Fraction of models (minus ``exclude``) flagged at least once."""
        models = [m for m in self.features.index if m not in exclude]
        flagged = set(self.flagged_models)
        return float(np.mean([m in flagged for m in models])) if models else float("nan")


def _matched_patterns(texts: list[str]) -> str:
    names = [name for name, p in JUDGE_PATTERNS.items() if any(p.search(t) for t in texts)]
    return ", ".join(names)


def detect_gaming(responses: pd.DataFrame, prompts: dict[str, str] | None = None,
                  win_rates: dict[str, float] | None = None, *, checks: dict | None = None,
                  thresholds: dict[str, float] | None = None, max_outputs: int = 300,
                  seed: int = 0) -> GamingReport:
    """Run every gaming check on every model of a responses table (``prompt_id, model, text``).

    ``prompts`` maps prompt_id → prompt text (default: the responses' ``instruction`` column when present);
    ``win_rates`` (model → share of judgments won) is attached to flags so a report can say "wins X%
    without answering". A model is flagged by a check when its share reaches the check's threshold. Shares
    are measured on at most ``max_outputs`` outputs per model (a seeded sample).
    """
    require_columns(responses, RESPONSES_REQUIRED, what="responses table (gaming detection)")
    checks = checks or CHECKS
    thresholds = {**THRESHOLDS, **(thresholds or {})}
    prompts = prompts if prompts is not None else _prompts_from(responses)
    rows, flags = {}, []
    rng = np.random.default_rng(seed)
    for model, group in responses.groupby(responses["model"].astype(str), sort=True):
        if len(group) > max_outputs:
            group = group.iloc[np.sort(rng.choice(len(group), max_outputs, replace=False))]
        texts = group["text"].fillna("").astype(str).tolist()
        ptexts = [prompts.get(str(p), "") for p in group["prompt_id"]] if prompts else None
        values = {name: float(fn(texts, ptexts, seed=seed)) for name, fn in checks.items()}
        rows[model] = values
        flags += _flags_for(model, values, thresholds, texts, (win_rates or {}).get(model))
    return GamingReport(pd.DataFrame.from_dict(rows, orient="index"), flags)


def _flags_for(model, values, thresholds, texts, win_rate) -> list[GamingFlag]:
    flags = []
    for name, value in values.items():
        if name in thresholds and value >= thresholds[name]:
            reason = REASONS.get(name, name + " {value:.0%}").format(value=value, patterns=_matched_patterns(texts))
            if win_rate is not None:
                reason += f"; it wins {win_rate:.0%} of its judgments"
            flags.append(GamingFlag(model, name, float(value), reason, win_rate))
    return flags


def _prompts_from(responses: pd.DataFrame) -> dict[str, str] | None:
    if "instruction" not in responses.columns:
        return None
    first = responses.drop_duplicates("prompt_id")
    return dict(zip(first["prompt_id"].astype(str), first["instruction"].fillna("").astype(str)))


def win_rates_from(judgments: pd.DataFrame) -> dict[str, float]:
    """Share of judgments each model won (ties as half), over both sides of every judgment."""
    d = judgments[usable_mask(judgments)]
    ids, models = pd.factorize(pd.concat([d["model_a"].astype(str), d["model_b"].astype(str)]), sort=True)
    rates = share_won(ids[:len(d)], ids[len(d):], d["outcome"].to_numpy(float), len(models))
    return dict(zip(models, rates.tolist()))
