"""What every design shares: comparisons as integer arrays, the verdict callback and the run result.

A design decides which (prompt_id, model_a, model_b) comparisons to pay for. Inside, prompts and models are
integer ids (hot paths never touch strings); ``Pairs`` carries the names to turn them back into rows.
Single-shot designs (anchor, quadratic, sampled) list their comparisons up front; multi-round designs
(tournament, adaptive, insertion) are written as **round generators** (``steps``): each yields the next
:class:`Round` of comparisons and receives an :class:`Answer` (the outcomes, and optionally the caller's rating fit of
every game so far), and returns its :class:`DesignRun`. ``run`` drives the generator with a **verdict callback**
(:func:`drive`); ``judgewise evaluate`` drives it in its own plain loop, judging each round through the engine and
deciding after each whether to go on. Neither knows anything else about judging, so the same design runs on the
vectorised simulated judge and through the judging engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generator, Protocol, Sequence

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError

# (prompt ids, model_a ids, model_b ids) -> outcome of model_a in [0, 1] (1 win, 0.5 tie, 0 loss; NaN failed).
VerdictFn = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Pairs:
    """A list of comparisons as aligned integer arrays over named prompts and models."""

    prompt_ids: list[str]
    models: list[str]
    prompt: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def __len__(self) -> int:
        return len(self.prompt)

    @classmethod
    def empty(cls, prompt_ids: Sequence[str], models: Sequence[str]) -> "Pairs":
        z = np.zeros(0, dtype=int)
        return cls(list(prompt_ids), list(models), z, z.copy(), z.copy())

    def extend(self, prompt, a, b) -> "Pairs":
        """A new ``Pairs`` with these comparisons appended."""
        cat = lambda old, new: np.concatenate([old, np.asarray(new, dtype=int)])  # noqa: E731
        return Pairs(self.prompt_ids, self.models, cat(self.prompt, prompt), cat(self.a, a), cat(self.b, b))

    def to_frame(self) -> pd.DataFrame:
        """The comparisons as rows ``prompt_id, model_a, model_b`` (what the engine judges)."""
        prompts, models = np.asarray(self.prompt_ids, dtype=object), np.asarray(self.models, dtype=object)
        return pd.DataFrame({"prompt_id": prompts[self.prompt], "model_a": models[self.a],
                             "model_b": models[self.b]})

    def records(self) -> list[tuple[str, str, str]]:
        return list(self.to_frame().itertuples(index=False, name=None))


@dataclass
class DesignRun:
    """The comparisons a design paid for, their outcomes (model_a's view) and design-specific facts."""

    design: str
    pairs: Pairs
    outcome: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def n_calls(self) -> int:
        return len(self.pairs)

    def to_judgments(self, judge: str = "simulated") -> pd.DataFrame:
        """Canonical judgments rows (io/tables.py): prompt_id, model_a, model_b, judge, outcome."""
        frame = self.pairs.to_frame()
        frame["judge"] = judge
        frame["outcome"] = self.outcome
        return frame


@dataclass(frozen=True)
class Round:
    """One batch a multi-round design asks for: aligned prompt and model id arrays."""

    prompt: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def __len__(self) -> int:
        return len(self.prompt)


@dataclass(frozen=True)
class Answer:
    """What a design's round gets back: model_a's outcomes, and ``fit`` — the caller's (θ, Σ) rating fit of every
    game judged so far, this round's included — when the caller fitted already (one fit per round, shared), else
    None (the design fits itself)."""

    outcome: np.ndarray
    fit: tuple[np.ndarray, np.ndarray] | None = None


Steps = Generator[Round, Answer, "DesignRun"]


def next_round(steps: Steps, answer: Answer | None = None) -> "Round | DesignRun":
    """The design's next round, or its finished :class:`DesignRun` (the generator protocol's return value)."""
    try:
        return next(steps) if answer is None else steps.send(answer)
    except StopIteration as finished:
        return finished.value


def drive(steps: Steps, verdicts: VerdictFn) -> "DesignRun":
    """Run a design's rounds against a verdict callback (every round answered, the design fitting itself)."""
    step = next_round(steps)
    while isinstance(step, Round):
        step = next_round(steps, Answer(call_verdicts(verdicts, step.prompt, step.a, step.b)))
    return step


class Design(Protocol):
    """A comparison design: its cost is known before running, and it runs against a verdict callback."""

    name: str

    def n_calls(self, n_models: int, n_prompts: int) -> int: ...

    def run(self, models: Sequence[str], prompt_ids: Sequence[str], verdicts: VerdictFn,
            rng: np.random.Generator) -> DesignRun: ...


class MultiRoundDesign(Design, Protocol):
    """A design that decides each round from the last: ``run`` is :func:`drive` over ``steps``."""

    def steps(self, models: Sequence[str], prompt_ids: Sequence[str], rng: np.random.Generator) -> Steps: ...


def check_pool(models: Sequence[str], prompt_ids: Sequence[str], min_models: int = 2) -> None:
    """Raise ``ConfigError`` unless there are enough distinct models and at least one prompt."""
    if len(set(models)) != len(models):
        raise ConfigError(f"model names must be unique, got {list(models)}")
    if len(models) < min_models:
        raise ConfigError(f"this design needs at least {min_models} models, got {len(models)}")
    if len(prompt_ids) < 1:
        raise ConfigError("this design needs at least one prompt")


def call_verdicts(verdicts: VerdictFn, prompt, a, b) -> np.ndarray:
    """Ask the callback for one batch and check the answer's shape and range."""
    return checked_outcome(verdicts(np.asarray(prompt), np.asarray(a), np.asarray(b)), len(prompt))


def checked_outcome(outcome, n: int) -> np.ndarray:
    """A round's outcomes as floats, checked: one per comparison, each in [0, 1] or NaN (failed)."""
    out = np.asarray(outcome, dtype=float)
    if out.shape != (n,):
        raise ConfigError(f"verdict callback returned shape {out.shape} for {n} comparisons")
    if np.any((out < 0) | (out > 1)):
        raise ConfigError("verdict callback returned outcomes outside [0, 1]")
    return out
