"""Simulated judge: Arena-lite's stochastic judge (Eq. 3) with tie rate, position and length bias, and a ``Judge``.

The model, from the view of the two responses as shown (A = shown first, B = shown second); verdict
probabilities are the vector ``(A wins, tie, B wins)``:

1. **Eq. 3** (Arena-lite §4.2): a judge of accuracy ``P_judge`` facing models i and j with a BT/Elo gap Δ_ij
   predicts ``P_predict(i > j) = P_judge · P_gt(i > j)``, ``P_gt(i > j) = 1 / (1 + 10^((R_j − R_i)/400))``
   (Eq. 1). Eq. 3 leaves the mass ``1 − P_judge`` unassigned; we read it, symmetrically for both models, as a
   **tie** (the judge fails to separate the responses; ``remainder="tie"``, default) or, when the judge must
   always pick a side, as a fair coin (``remainder="coin"``). With ``P_judge = 1`` both are BT sampling.
2. **Tie rate** τ (``tie_rate``; ``None``, the default, lets the Eq. 3 remainder decide): an explicit tie
   probability. The judge ties with probability τ and is otherwise decisive, the remainder read as a coin:
   ``q = ((1 − τ)·(P_judge·P_gt + (1 − P_judge)/2),  τ,  (1 − τ)·(P_judge·(1 − P_gt) + (1 − P_judge)/2))``.
3. **Position bias** b ∈ [−1, 1] (``position_bias``): with probability |b| position alone decides — the
   response shown first wins when b > 0, the one shown second when b < 0 — else the verdict ``q`` stands:
   ``p = (1 − |b|)·q + |b|·e_first`` (``e`` a one-hot verdict). Over both orders the ``q`` part is
   order-symmetric, so, ties counted as half, **P(first shown wins) = 0.5 + b/2** and
   ``P(first wins) − P(second wins) = b`` exactly; the observed tie rate is ``(1 − |b|)·q_tie``.
4. **Length bias** ℓ ∈ [0, 1] (``length_bias``; |b| + ℓ ≤ 1): when the two texts differ in length, with
   probability ℓ the longer wins: ``p = (1 − |b| − ℓ)·q + |b|·e_position + ℓ·e_longer`` (ℓ has no effect on
   equal lengths). With lengths independent of strength, ties as half, **P(longer wins) = 0.5 + ℓ/2**.

With ``tie_rate=None`` and zero biases this is Eq. 3 exactly, with the same draws for the same seeds.

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
from judgewise.io.schema import LABEL5
from judgewise.judges.base import Comparison, Game, JudgeResult, Verdict

ELO_SCALE = 400.0
REMAINDERS = ("tie", "coin")


def _unit_interval(name: str, value) -> np.ndarray:
    value = np.asarray(value, dtype=float)
    if np.any((value < 0) | (value > 1)):
        raise ConfigError(f"{name} must be in [0, 1], got {value}")
    return value


def p_gt(elo_a, elo_b) -> np.ndarray:
    """Arena-lite Eq. 1: the ground-truth probability that a beats b, ``1 / (1 + 10^((R_b − R_a)/400))``."""
    return 1.0 / (1.0 + 10.0 ** ((np.asarray(elo_b, float) - np.asarray(elo_a, float)) / ELO_SCALE))


def eq3_probabilities(elo_a, elo_b, p_judge, *, remainder: str = "tie", tie_rate=None) -> np.ndarray:
    """Arena-lite Eq. 3: probabilities (a wins, tie, b wins) of the simulated judge, shape ``broadcast + (3,)``.

    ``P(a wins) = p_judge · P_gt(a > b)``, ``P(b wins) = p_judge · P_gt(b > a)``, and the remaining
    ``1 − p_judge`` is a tie (``remainder="tie"``) or split evenly between the two (``"coin"``). An explicit
    ``tie_rate`` τ replaces the remainder reading: ties with probability τ, the coin reading scaled by 1 − τ.
    """
    if remainder not in REMAINDERS:
        raise ConfigError(f"remainder must be one of {REMAINDERS}, got {remainder!r}")
    p_judge = _unit_interval("p_judge", p_judge)
    gt = p_gt(elo_a, elo_b)
    win, loss = p_judge * gt, p_judge * (1.0 - gt)
    rest = np.broadcast_to(1.0 - p_judge, win.shape)
    if tie_rate is not None:
        decisive = 1.0 - _unit_interval("tie_rate", tie_rate)
        return np.stack(np.broadcast_arrays(decisive * (win + rest / 2), 1.0 - decisive,
                                            decisive * (loss + rest / 2)), axis=-1)
    if remainder == "coin":
        return np.stack([win + rest / 2, np.zeros_like(win), loss + rest / 2], axis=-1)
    return np.stack([win, rest, loss], axis=-1)


def with_biases(probs, *, position_bias=0.0, length_bias=0.0, longer=0) -> np.ndarray:
    """Mix position and length bias into verdict probabilities ``(first wins, tie, second wins)`` (step 3–4
    of the module docstring): ``(1 − |b| − ℓ·[unequal])·probs + |b|·e_position + ℓ·[unequal]·e_longer``.

    ``longer`` is +1 where the first-shown text is longer, −1 where the second is, 0 where equal.
    """
    probs = np.asarray(probs, dtype=float)
    b = np.asarray(position_bias, dtype=float)
    ell = _unit_interval("length_bias", length_bias)
    if np.any(np.abs(b) + ell > 1):
        raise ConfigError(f"need |position_bias| + length_bias <= 1, got {position_bias} and {length_bias}")
    ell = ell * (np.asarray(longer) != 0)
    longer = np.asarray(longer)
    e_position = np.stack(np.broadcast_arrays(b > 0, np.zeros_like(b), b < 0), axis=-1).astype(float)
    e_longer = np.stack(np.broadcast_arrays(longer > 0, np.zeros_like(longer), longer < 0), axis=-1)
    keep = (1.0 - np.abs(b) - ell)[..., None]
    return keep * probs + np.abs(b)[..., None] * e_position + ell[..., None] * e_longer.astype(float)


def sample_verdicts(elo_a, elo_b, p_judge, rng: np.random.Generator, *, remainder: str = "tie",
                    strong_win: float = 0.75, tie_rate=None, position_bias=0.0, length_bias=0.0,
                    longer=0) -> tuple[np.ndarray, np.ndarray]:
    """Draw verdicts for arrays of comparisons (a shown first): (outcome of a in {1, 0.5, 0}, 5-way verdict).

    Probabilities are Eq. 3 with the optional tie rate and biases (:func:`eq3_probabilities`,
    :func:`with_biases`). The 5-way magnitude is ±2 when the winner's ground-truth win probability is at
    least ``strong_win`` (a clear gap), ±1 otherwise; ties are 0.
    """
    probs = eq3_probabilities(elo_a, elo_b, p_judge, remainder=remainder, tie_rate=tie_rate)
    if np.any(np.asarray(position_bias) != 0) or np.any(np.asarray(length_bias) != 0):
        probs = with_biases(probs, position_bias=position_bias, length_bias=length_bias, longer=longer)
    u = rng.random(probs.shape[:-1])
    a_wins = u < probs[..., 0]
    b_wins = u >= probs[..., 0] + probs[..., 1]
    outcome = np.where(a_wins, 1.0, np.where(b_wins, 0.0, 0.5))
    gt = p_gt(elo_a, elo_b)
    strength = np.where(a_wins, gt >= strong_win, (1.0 - gt) >= strong_win)
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
    """A ``Judge`` (judges/base.py protocol) answering by the module's model from known true ratings.

    ``ratings`` maps model name → true Elo-scale strength. Position and length bias act on the game's shown
    order (``Game.swapped``) and shown texts. Each game's draw is seeded from (seed, prompt_id, models in
    shown order), so the same game always gets the same verdict (store- and replay-friendly), and the
    response jitter from (seed, prompt_id, model). Raises ``JudgeError`` for a model without a rating.
    """

    ratings: Mapping[str, float]
    p_judge: float = 0.8
    seed: int = 0
    remainder: str = "tie"
    response_sd: float = 0.0
    strong_win: float = 0.75
    tie_rate: float | None = None
    position_bias: float = 0.0
    length_bias: float = 0.0
    identity: dict = field(init=False)

    def __post_init__(self) -> None:
        probs = eq3_probabilities(0.0, 0.0, self.p_judge, remainder=self.remainder, tie_rate=self.tie_rate)
        with_biases(probs, position_bias=self.position_bias, length_bias=self.length_bias)  # validates
        self.identity = {"kind": "simulated", "p_judge": self.p_judge, "seed": self.seed,
                         "remainder": self.remainder, "response_sd": self.response_sd,
                         "strong_win": self.strong_win}
        # only when set, so that stores keyed by the plain Eq. 3 judge's identity stay valid
        extras = {"tie_rate": self.tie_rate, "position_bias": self.position_bias, "length_bias": self.length_bias}
        self.identity.update({k: v for k, v in extras.items() if v})

    def game_parameters(self, game: Game) -> dict:
        """What this game's verdict reads beyond :attr:`identity`: the true ratings of its two models (part of the
        game's store key, so a config with other ``ratings:`` never reuses a stored verdict; a rating of another
        model does not touch this game)."""
        c = game.comparison
        return {"ratings": [float(self.ratings[m]) if m in self.ratings else None for m in (c.model_a, c.model_b)]}

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
        text_first, text_second = game.shown
        q1, q2 = self.quality(c.prompt_id, first), self.quality(c.prompt_id, second)
        rng = np.random.default_rng(_stable_seed(self.seed, "game", c.prompt_id, first, second))
        outcome, verdict = sample_verdicts(
            q1, q2, self.p_judge, rng, remainder=self.remainder, strong_win=self.strong_win,
            tie_rate=self.tie_rate, position_bias=self.position_bias, length_bias=self.length_bias,
            longer=int(np.sign(len(text_first) - len(text_second))))
        label = LABEL5[int(verdict)]  # A = shown first
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


def verdict_fn(quality: np.ndarray, p_judge: float, rng: np.random.Generator, *, remainder: str = "tie",
               tie_rate=None, position_bias: float = 0.0):
    """A design verdict callback ``(prompt ids, a ids, b ids) -> outcomes of a`` drawing verdicts (Eq. 3, with
    the optional tie rate and position bias, a taken as shown first) from a (n_prompts, n_models) quality
    matrix (:func:`response_quality`); vectorised, for fast simulation."""
    quality = np.asarray(quality, dtype=float)

    def verdicts(prompt, a, b) -> np.ndarray:
        outcome, _ = sample_verdicts(quality[prompt, a], quality[prompt, b], p_judge, rng, remainder=remainder,
                                     tie_rate=tie_rate, position_bias=position_bias)
        return outcome

    return verdicts
