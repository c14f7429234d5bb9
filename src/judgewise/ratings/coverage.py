"""What the bootstrap intervals were measured to cover on replayed real verdicts, and the line that says so.

``coverage.json`` (written by ``benchmarks/interval_coverage.py --write``) holds, per rating method and bootstrap
interval, the share of 95% prompt-bootstrap intervals that contained the all-prompts value on random prompt subsets
of AlpacaEval 2 (28 models). :func:`measured_coverage` picks the figure for a ranking's method, interval and number
of prompts: the largest measured subset size not above it (coverage grows with prompts, so this errs low), or the
smallest size when there are fewer prompts. Where the measured coverage falls short of the nominal level, every
output says so (:func:`interval_line`: what ``rank`` and ``evaluate`` print and the report's leaderboard caption).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

FILE = Path(__file__).with_name("coverage.json")
SHORTFALL = 0.02  # a measured coverage this far below the nominal level is reported (≈ the benchmark's own se)


@functools.cache
def _measured() -> dict:
    return json.loads(FILE.read_text(encoding="utf-8")) if FILE.exists() else {"rows": []}


def measured_coverage(method: str, interval: str, n_prompts: int, level: float, unit: str = "prompt") -> dict | None:
    """{nominal, measured (score intervals), rank (CI-aware rank ranges), prompts (the measured size), fewer
    (whether this ranking has fewer prompts than that), source} for a ranking, or None when nothing was measured
    for it (another method, interval, level or resampling unit)."""
    data = _measured()
    if unit != "prompt" or abs(level - data.get("level", 0.95)) > 1e-9:
        return None
    rows = sorted((r for r in data["rows"] if r["method"] == method and r["interval"] == interval),
                  key=lambda r: r["prompts"])
    if not rows:
        return None
    below = [r for r in rows if r["prompts"] <= n_prompts]
    row = below[-1] if below else rows[0]
    return {"nominal": level, "measured": row["score_coverage"], "rank": row["rank_coverage"],
            "prompts": row["prompts"], "fewer": not below, "source": data.get("source", "")}


def coverage_line(coverage: dict | None) -> str | None:
    """"nominal 95%, measured 87% at 50 prompts (source)" when the measured coverage falls short of the nominal
    level by more than :data:`SHORTFALL` (with the CI-aware ranks' coverage when they fall short too), or "…, not
    measured on fewer" when the ranking has fewer prompts than any measured subset; None otherwise."""
    short = coverage["nominal"] - SHORTFALL if coverage else None
    if not coverage or (coverage["measured"] >= short and not coverage["fewer"]):
        return None
    if coverage["measured"] >= short:  # covers where measured, but this ranking has fewer prompts than that
        return (f"nominal {coverage['nominal'] * 100:g}%, measured {coverage['measured'] * 100:.0f}% at "
                f"{coverage['prompts']} prompts, not measured on fewer ({coverage['source']})")
    at = f"at {coverage['prompts']} prompts" + (" (fewer here: lower still)" if coverage["fewer"] else "")
    ranks = f", ranks {coverage['rank'] * 100:.0f}%" if coverage["rank"] < short else ""
    return (f"nominal {coverage['nominal'] * 100:g}%, measured {coverage['measured'] * 100:.0f}%{ranks} {at} "
            f"({coverage['source']})")


RANK_WITH_INTERVALS = "rank = 1 + models whose lower bound exceeds this upper bound"
RANK_WITHOUT_INTERVALS = "rank = 1 + models with a higher score (tied scores share a rank)"


#: Methods whose bootstrap interval is not a confidence interval for a fixed rating, and what it is instead.
#: Online Elo's rating depends on how many games it has seen and in what order (k=4 moves it little in 50 games):
#: its interval is the spread of this sequence's rating, and covered the all-prompts rating 15% of the time at
#: 50 prompts, 78% at 400 (docs/ratings.md).
SPREAD_NOT_CONFIDENCE = {
    "elo": "the spread of this game sequence's online rating, not a confidence interval for the rating more "
           "prompts would give (use --method bt for that)",
}


def interval_line(ranking) -> str:
    """How a ranking's intervals were made (or that there are none), what they are (a confidence interval, with
    its measured coverage where that falls short, or :data:`SPREAD_NOT_CONFIDENCE`'s description) and what its
    ranks count (:func:`judgewise.ratings.result.ci_aware_rank`)."""
    boot = ranking.info.get("bootstrap")
    if not boot:
        return f"no intervals (pass --bootstrap 1000 for bootstrap CIs and CI-aware ranks); {RANK_WITHOUT_INTERVALS}"
    kind = {"bca": "BCa", "percentile": "percentile"}.get(boot.get("interval"), boot.get("interval"))
    note = coverage_line(boot.get("coverage"))
    if ranking.method in SPREAD_NOT_CONFIDENCE:
        note = SPREAD_NOT_CONFIDENCE[ranking.method] + (f"; {note}" if note else "")
    return (f"{ranking.ci_level * 100:g}% intervals: {kind} bootstrap, {boot['rounds']} rounds over "
            f"{boot['unit']}s (seed {boot['seed']}){' — ' + note if note else ''}; {RANK_WITH_INTERVALS}")
