"""The stopping rule's measured record: what ``benchmarks/calibration.py`` found for runs like this one.

The benchmark replays real verdicts (AlpacaEval 2's GPT-4-turbo preferences, made pairwise as
``examples/make_alpacaeval_pairwise.py`` does) through evaluate's loop on seeded random pools and writes, per pool
size and τ target, the mean calls, the mean realised τ_m against the ranking all comparisons on the same prompts give,
its 10th percentile and the share of runs reaching the target, into ``calibration.json`` beside this module. The
trust block of every τ-target run quotes the nearest cell, and warns when the run's pool size, target or margin lie
outside what was measured.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

RECORD = Path(__file__).with_name("calibration.json")


@lru_cache(maxsize=2)
def measured_cells(kind: str = "kendall_tau") -> tuple[dict, ...]:
    """The shipped AlpacaEval cells of a target kind, ``kendall_tau`` or ``separated`` (empty when the file is
    missing: a warning then says nothing was measured)."""
    try:
        data = json.loads(RECORD.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    return tuple(cell for cell in data.get("cells", [])
                 if cell.get("target_kind") == kind and cell.get("source") == "alpacaeval")


def nearest_cell(n_models: int, target: float, margin: float, kind: str = "kendall_tau") -> dict:
    """The measured cell of ``kind`` nearest this run (pool size first, then target) and a warning when it is not
    like it. (Separated targets were measured on 7 AlpacaEval models only: a 12-model run costs ~10 CPU minutes in
    the benchmark, so larger pools warn.)"""
    cells = [c for c in measured_cells(kind) if c.get("margin_elo") == margin]
    if not cells:
        return {"measured": None, "warning": f"no calibration was measured for a ±{margin:g} Elo margin; "
                                             "the stated probability is the model's, unchecked"}
    cell = min(cells, key=lambda c: (abs(c["models"] - n_models), abs(c["target"] - target), c["target"] < target))
    sizes = sorted({c["models"] for c in cells})
    targets = sorted({c["target"] for c in cells})
    warning = None
    if not sizes[0] <= n_models <= sizes[-1]:
        warning = f"{n_models} models is outside the measured pools ({sizes[0]}–{sizes[-1]} models)"
    elif not targets[0] <= target <= targets[-1]:
        warning = f"target {target:g} is outside the measured targets ({targets[0]:g}–{targets[-1]:g})"
    what = "target" if kind == "kendall_tau" else "separated target"
    line = (f"measured on replayed AlpacaEval verdicts, {cell['models']} models, {what} {cell['target']:g}: "
            f"{cell['share_reaching']:.0%} of {cell['runs']} runs reached it, mean realised τ "
            f"{cell['mean_tau']:.3f} (10th percentile {cell['p10_tau']:.2f}), mean {cell['mean_calls']:,.0f} calls")
    return {"measured": line, "cell": cell, "warning": warning}
