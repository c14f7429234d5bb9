"""Simulated judge: Arena-lite's stochastic judge (Eq. 3) as one vectorised pure function, and a ``Judge``.

Paper (Arena-lite §4.2, Eq. 3): a judge of accuracy ``P_judge`` facing models i and j with a BT/Elo gap
Δ_ij predicts ``P_predict(i > j) = P_judge · P_gt(i > j)`` with ``P_gt(i > j) = 1 / (1 + 10^((R_j − R_i)/400))``
(Eq. 1). Eq. 3 leaves the remaining mass ``1 − P_judge`` unassigned; we read it, symmetrically for both
models, as a **tie** (the judge fails to separate the responses; ``remainder="tie"``, default) or, when
the judge must always pick a side, as a fair coin (``remainder="coin"``). With ``P_judge = 1`` both readings
are exactly BT sampling.

Optional ``response_sd`` adds a per-(prompt, model) quality jitter on the Elo scale, shared by every
comparison that shows the same response — the prompt-level correlation behind the anchor paper's
per-prompt win-count histograms (Anchor §4.2). ``response_sd = 0`` is Eq. 3 exactly.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from judgewise.errors import ConfigError, JudgeError
from judgewise.judges.base import Comparison, Game, JudgeResult, Verdict

ELO_SCALE = 400.0
REMAINDERS = ("tie", "coin")
# 5-way labels from the shown-first view, keyed by verdict in {-2..2} (A = shown first).
LABELS5 = {2: "A>>B", 1: "A>B", 0: "A=B", -1: "B>A", -2: "B>>A"}


def eq3_probabilities(elo_a, elo_b, p_judge, *, remainder: str = "tie") -> np.ndarray:
    """Arena-lite Eq. 3: probabilities (a wins, tie, b wins) of the simulated judge, shape ``broadcast + (3,)``.

    ``P(a wins) = p_judge · P_gt(a > b)``, ``P(b wins) = p_judge · P_gt(b > a)``, and the remaining
    ``1 − p_judge`` is a tie (``remainder="tie"``) or split evenly between the two (``"coin"``).
    """
    if remainder not in REMAINDERS:
        raise ConfigError(f"remainder must be one of {REMAINDERS}, got {remainder!r}")
    p_judge = np.asarray(p_judge, dtype=float)
    if np.any((p_judge < 0) | (p_judge > 1)):
        raise ConfigError(f"p_judge must be in [0, 1], got {p_judge}")
    p_gt = 1.0 / (1.0 + 10.0 ** ((np.asarray(elo_b, float) - np.asarray(elo_a, float)) / ELO_SCALE))
    win, loss = p_judge * p_gt, p_judge * (1.0 - p_gt)
    rest = np.broadcast_to(1.0 - p_judge, win.shape)
    if remainder == "coin":
        return np.stack([win + rest / 2, np.zeros_like(win), loss + rest / 2], axis=-1)
    return np.stack([win, rest, loss], axis=-1)


def sample_verdicts(elo_a, elo_b, p_judge, rng: np.random.Generator, *, remainder: str = "tie",
                    strong_win: float = 0.75) -> tuple[np.ndarray, np.ndarray]:
    """Draw verdicts from Eq. 3 for arrays of comparisons: (outcome of a in {1, 0.5, 0}, 5-way verdict).

    The 5-way magnitude is ±2 when the winner's ground-truth win probability is at least ``strong_win``
    (a clear gap), ±1 otherwise; ties are 0.
    """
    probs = eq3_probabilities(elo_a, elo_b, p_judge, remainder=remainder)
    u = rng.random(probs.shape[:-1])
    a_wins = u < probs[..., 0]
    b_wins = u >= probs[..., 0] + probs[..., 1]
    outcome = np.where(a_wins, 1.0, np.where(b_wins, 0.0, 0.5))
    p_gt = 1.0 / (1.0 + 10.0 ** ((np.asarray(elo_b, float) - np.asarray(elo_a, float)) / ELO_SCALE))
    strength = np.where(a_wins, p_gt >= strong_win, (1.0 - p_gt) >= strong_win)
    magnitude = np.where(strength, 2, 1)
    verdict = np.where(a_wins, magnitude, np.where(b_wins, -magnitude, 0)).astype(int)
    return outcome, verdict


def response_quality(elo, n_prompts: int, response_sd: float, rng: np.random.Generator) -> np.ndarray:
    """Per-(prompt, model) latent quality on the Elo scale, shape (n_prompts, n_models): elo + sd·N(0, 1)."""
    elo = np.asarray(elo, dtype=float)
    if response_sd <= 0:
        return np.broadcast_to(elo, (n_prompts, len(elo))).copy()
    return elo + response_sd * rng.standard_normal((n_prompts, len(elo)))


def _stable_seed(*parts) -> int:
    """A seed derived from strings/ints, stable across processes (unlike ``hash``)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


@dataclass
class SimulatedJudge:
    """A ``Judge`` (judges/base.py protocol) answering by Arena-lite Eq. 3 from known true ratings.

    ``ratings`` maps model name → true Elo-scale strength. Each game's draw is seeded from
    (seed, prompt_id, models in shown order), so the same game always gets the same verdict (store- and
    replay-friendly), and the response jitter from (seed, prompt_id, model). Raises ``JudgeError`` for a
    model without a rating.
    """

    ratings: Mapping[str, float]
    p_judge: float = 0.8
    seed: int = 0
    remainder: str = "tie"
    response_sd: float = 0.0
    strong_win: float = 0.75
    identity: dict = field(init=False)

    def __post_init__(self) -> None:
        eq3_probabilities(0.0, 0.0, self.p_judge, remainder=self.remainder)  # validates settings
        self.identity = {"kind": "simulated", "p_judge": self.p_judge, "seed": self.seed,
                         "remainder": self.remainder, "response_sd": self.response_sd,
                         "strong_win": self.strong_win}

    def quality(self, prompt_id: str, model: str) -> float:
        """The latent quality of ``model``'s response to ``prompt_id`` (its Elo plus the response jitter)."""
        if model not in self.ratings:
            raise JudgeError(f"simulated judge has no true rating for model {model!r}; "
                             f"known: {sorted(self.ratings)[:10]}")
        base = float(self.ratings[model])
        if self.response_sd <= 0:
            return base
        rng = np.random.default_rng(_stable_seed(self.seed, "response", prompt_id, model))
        return base + self.response_sd * float(rng.standard_normal())

    def judge_sync(self, game: Game) -> JudgeResult:
        """Synchronous form of :meth:`judge` (the verdict is from the shown-first view)."""
        first = game.first_model
        c = game.comparison
        second = c.model_a if game.swapped else c.model_b
        q1, q2 = self.quality(c.prompt_id, first), self.quality(c.prompt_id, second)
        rng = np.random.default_rng(_stable_seed(self.seed, "game", c.prompt_id, first, second))
        outcome, verdict = sample_verdicts(q1, q2, self.p_judge, rng, remainder=self.remainder,
                                           strong_win=self.strong_win)
        label = LABELS5[int(verdict)]
        return JudgeResult(verdict=Verdict(outcome=float(outcome), verdict5=int(verdict), label=label),
                           raw=f"[[{label}]]")

    async def judge(self, game: Game) -> JudgeResult:
        """Judge one game (Judge protocol)."""
        return self.judge_sync(game)

    def batch_verdicts(self, prompt_ids, models_a, models_b) -> np.ndarray:
        """Outcomes of ``model_a`` for parallel sequences of comparisons (shown in a/b order), via :meth:`judge`'s
        per-game seeding — the same verdicts the engine would get; for vectorised simulation use
        :func:`sample_verdicts` directly."""
        out = np.empty(len(prompt_ids))
        for k, (p, a, b) in enumerate(zip(prompt_ids, models_a, models_b)):
            game = Game(Comparison(str(p), "", str(a), str(b), "", ""))
            out[k] = self.judge_sync(game).verdict.outcome
        return out


def verdict_fn(quality: np.ndarray, p_judge: float, rng: np.random.Generator, *, remainder: str = "tie"):
    """A design verdict callback ``(prompt ids, a ids, b ids) -> outcomes of a`` drawing Eq. 3 verdicts from a
    (n_prompts, n_models) quality matrix (:func:`response_quality`); vectorised, for fast simulation."""
    quality = np.asarray(quality, dtype=float)

    def verdicts(prompt, a, b) -> np.ndarray:
        outcome, _ = sample_verdicts(quality[prompt, a], quality[prompt, b], p_judge, rng, remainder=remainder)
        return outcome

    return verdicts
