"""Library error messages name Python parameters (```bootstrap```, ```method="bt"```); the CLI shows its flags.

The library writes a parameter in backticks, alone or with its value: ``"`bootstrap` must be ≥ 0, got -1"``,
``"use `method='bt'`"``. :func:`as_flags` rewrites each one whose name is in :data:`PARAMETER_FLAGS` to the flag
of the same meaning (``--bootstrap must be ≥ 0, got -1``, ``use --method bt``); other backticked text (a
command line to run, a file name) is left as it is. The CLI's error printer is the one caller.
"""

from __future__ import annotations

import re

# Library parameter → the CLI flag that sets it (one table for every command).
PARAMETER_FLAGS = {
    "bootstrap": "--bootstrap", "bt_l2": "--bt-l2", "budgets": "--budgets", "by": "--by",
    "cost_per_hour": "--cost-per-hour", "designs": "--designs", "difficulty": "--lc-difficulty",
    "distribution": "--distribution", "effect": "--effect", "elo_k": "--elo-k", "format": "--format",
    "host": "--host", "insertion": "--insertion", "judge": "--judge", "method": "--method",
    "minutes_per_label": "--minutes-per-label", "n": "--n", "n_grid": "--n", "n_model": "--n-model",
    "n_models": "--models", "n_prompts": "--prompts", "n_simulations": "--simulations", "output": "--output",
    "p_judge": "--p-judge", "partial": "--partial", "pool_judges": "--pool-judges", "port": "--port",
    "seed": "--seed", "soft": "--soft", "store": "--store", "targets": "--target", "times": "--times",
    "threads": "--threads", "trials": "--trials", "width": "--width", "workers": "--workers",
    "scale": "--scale", "table": "--table", "tokens_in": "--tokens-in", "tokens_out": "--tokens-out",
    "shared_tokens": "--shared-tokens", "alpha": "--alpha", "power": "--power",
    "anchor_informativeness": "--informativeness", "tie_rate": "--tie-rate",
    "stop_width": "--stop-width", "order": "--order",
}

# `name`, `name=value`, `name="value"` or `name='value'` (a value in quotes keeps everything up to the quote)
_PARAMETER = re.compile(r"(?<!`)`([a-z][a-z0-9_]*)(?:=(?:\"([^\"`]*)\"|'([^'`]*)'|([^`]*)))?`(?!`)")


def _flag(match: re.Match) -> str:
    flag = PARAMETER_FLAGS.get(match[1])
    if flag is None:
        return match[0]
    value = next((v for v in match.groups()[1:] if v is not None), None)
    if value == "True":  # a switch: `partial=True` is --partial
        return flag
    return flag if value is None else f"{flag} {value}"


def as_flags(message: str) -> str:
    """``message`` with every backticked library parameter written as the CLI flag that sets it."""
    return _PARAMETER.sub(_flag, message)
