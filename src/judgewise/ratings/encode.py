"""Encode a canonical judgments table to integer ids and aggregate it to counts (FastChat rating_systems.py spirit).

Every rating method reads an :class:`EncodedJudgments`: models and prompts as integer ids, the outcome as a float
array (model_a's result) and a per-row sample weight. Methods that only need sufficient statistics aggregate the rows
further, so that millions of battles become the few thousand distinct (model_a, model_b, outcome) rows — and
per-prompt counts for the cluster bootstrap.

Sample weights come from one of (multiplied together when both are given):

* ``weight_column``: a per-row numeric column of the table (frequency weights: a weight of 3 counts as 3 rows);
* ``weighting="arena_hard"``: Arena-Hard-Auto's 5-way weighting, where a strong verdict (``verdict`` = ±2,
  ``A>>B``) counts as ``strong_weight`` = 3 games and every other verdict as one game
  (:func:`judgewise.io.schema.verdict_weight`, after arena-hard-auto v0.1 ``show_result.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.io.schema import ARENA_HARD_STRONG_WEIGHT, require_columns, verdict_weight


@dataclass
class EncodedJudgments:
    """A judgments table as integer arrays: row i is ``a[i]`` vs ``b[i]`` on prompt ``prompt[i]``, ``outcome[i]``
    being a's result in [0, 1], counted ``weight[i]`` times. ``models[k]`` names id k; ``prompts[p]`` names id p."""

    models: list[str]
    prompts: list[str]
    a: np.ndarray
    b: np.ndarray
    prompt: np.ndarray
    outcome: np.ndarray
    weight: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def n_models(self) -> int:
        return len(self.models)

    @property
    def n_rows(self) -> int:
        return len(self.a)

    def model_id(self, name: str) -> int:
        """Integer id of ``name``; a ConfigError listing the known models when it is not in the table."""
        try:
            return self.models.index(name)
        except ValueError:
            shown = ", ".join(self.models[:20]) + (" ..." if len(self.models) > 20 else "")
            raise ConfigError(f'model "{name}" is not in the judgments (models: {shown})') from None

    def rows_per_model(self) -> np.ndarray:
        """Number of judgments (rows, unweighted) each model took part in."""
        n = np.bincount(self.a, minlength=self.n_models) + np.bincount(self.b, minlength=self.n_models)
        return n - np.bincount(self.a[self.a == self.b], minlength=self.n_models)

    def subset(self, rows: np.ndarray) -> "EncodedJudgments":
        """The same encoding restricted to a boolean/index selection of rows (model and prompt ids unchanged)."""
        return EncodedJudgments(self.models, self.prompts, self.a[rows], self.b[rows], self.prompt[rows],
                                self.outcome[rows], self.weight[rows], dict(self.info))


CODE_DTYPE = np.int32  # ids of a categorical column (2**31 models or prompts are beyond any table)


def _codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Integer codes and the names they stand for (pandas Categorical columns are used as they are)."""
    if isinstance(column.dtype, pd.CategoricalDtype):  # int32 ids: 10M rows in 40 MB, not 80 (io.columnar)
        return column.cat.codes.to_numpy(CODE_DTYPE), [str(c) for c in column.cat.categories.tolist()]
    codes, names = pd.factorize(column.astype(str), sort=False)
    return codes.astype(np.int64), [str(n) for n in names]


def _model_codes(model_a: pd.Series, model_b: pd.Series) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """One shared id space for both model columns, ids in order of first appearance (a before b)."""
    if isinstance(model_a.dtype, pd.CategoricalDtype) and isinstance(model_b.dtype, pd.CategoricalDtype) \
            and list(model_a.cat.categories) == list(model_b.cat.categories):
        a, names = _codes(model_a)
        b, _ = _codes(model_b)
        used = np.flatnonzero(np.bincount(a, minlength=len(names)) + np.bincount(b, minlength=len(names)))
        if len(used) < len(names):  # drop unused categories so every listed model has data
            remap = np.full(len(names), -1, dtype=CODE_DTYPE)
            remap[used] = np.arange(len(used))
            return remap[a], remap[b], [names[i] for i in used]
        return a, b, names
    codes, names = pd.factorize(pd.concat([model_a.astype(str), model_b.astype(str)], ignore_index=True))
    n = len(model_a)
    return codes[:n].astype(np.int64), codes[n:].astype(np.int64), [str(x) for x in names]


def _check_values(values: np.ndarray, name: str, low: float, high: float | None) -> None:
    bad = ~np.isfinite(values) | (values < low) | ((values > high) if high is not None else False)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        expect = f"a number in [{low:g}, {high:g}]" if high is not None else f"a finite number >= {low:g}"
        raise InputError(f"{name} = {values[i]!r} is not {expect} ({int(bad.sum())} such rows)",
                         row=i + 1, field=name)


def sample_weights(judgments: pd.DataFrame, weighting: str | None = None, weight_column: str | None = None,
                   strong_weight: float = ARENA_HARD_STRONG_WEIGHT) -> np.ndarray:
    """Per-row frequency weights from ``weight_column`` and/or a named ``weighting`` (see module docstring)."""
    if weight_column is None and weighting is None:  # unweighted: one read-only 1.0 seen n times, no n-row array
        return np.broadcast_to(np.float64(1.0), (len(judgments),))
    weight = np.ones(len(judgments), dtype=np.float64)
    if weight_column is not None:
        require_columns(judgments, (weight_column,), what="judgments table")
        w = pd.to_numeric(judgments[weight_column], errors="coerce").to_numpy(np.float64)
        _check_values(w, weight_column, 0.0, None)
        weight *= w
    if weighting is None:
        return weight
    if weighting != "arena_hard":
        raise ConfigError(f'unknown weighting "{weighting}" (known: arena_hard)')
    require_columns(judgments, ("verdict",), what="judgments table (arena_hard weighting)")
    verdict = pd.to_numeric(judgments["verdict"], errors="coerce").to_numpy(np.float64)
    _check_values(verdict, "verdict", -2.0, 2.0)
    return weight * verdict_weight(verdict, strong_weight)


def encode(judgments: pd.DataFrame, *, weighting: str | None = None, weight_column: str | None = None,
           strong_weight: float = ARENA_HARD_STRONG_WEIGHT) -> EncodedJudgments:
    """Encode a canonical judgments DataFrame (``io.tables``) to integer arrays, validating outcome and weights."""
    require_columns(judgments, ("model_a", "model_b", "outcome"), what="judgments table")
    if len(judgments) == 0:
        raise InputError("judgments table has no rows; nothing to rate")
    for column in ("model_a", "model_b"):
        missing = judgments[column].isna().to_numpy()
        if missing.any():
            i = int(np.flatnonzero(missing)[0])
            raise InputError(f"{column} is missing ({int(missing.sum())} such rows); every judgment needs both models",
                             row=i + 1, field=column)
    a, b, models = _model_codes(judgments["model_a"], judgments["model_b"])
    outcome = pd.to_numeric(judgments["outcome"], errors="coerce").to_numpy(np.float64)
    _check_values(outcome, "outcome", 0.0, 1.0)
    if "prompt_id" in judgments.columns:
        prompt, prompts = _codes(judgments["prompt_id"])
    else:  # every row its own prompt: the cluster bootstrap then equals the battle bootstrap
        prompt, prompts = np.arange(len(judgments), dtype=np.int64), [str(i) for i in range(len(judgments))]
    weight = sample_weights(judgments, weighting, weight_column, strong_weight)
    info = {"rows": int(len(judgments)), "weighting": weighting, "weight_column": weight_column}
    return EncodedJudgments(models, prompts, a, b, prompt, outcome, weight, info)


__all__ = ["EncodedJudgments", "encode", "sample_weights", "ARENA_HARD_STRONG_WEIGHT"]
