"""Decide what to pay for, before paying: sign-test sizes, Wilcoxon pools, anchor reports and sweep points.

What ``judgewise power``, ``anchors`` and ``simulate`` compute before printing (Anchor §4, §4.3, §5.3, App. C;
Arena-lite §4.2).
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.analysis.anchor_experiments import pilot, several_anchor_estimates
from judgewise.analysis.anchor_selection import QuadraticData, likely_anchors, report_from_judgments, verdict_matrix
from judgewise.analysis.power import (check_edge_window, distribution_from_probabilities, edge_in_window,
                                      sign_test_sample_size)
from judgewise.analysis.sweeps import SweepPoint
from judgewise.designs import DESIGNS
from judgewise.errors import ConfigError
from judgewise.io import read_any, read_judgments
from judgewise.ratings.bootstrap import rng_from_seed

SIGN_LABELS = {"normal": "normal approximation, rounded up (Anchor Table 2)",
               "exact": "exact binomial (smallest n reaching the power)"}


@dataclass
class SignTestTable:
    """Sign-test sample sizes, one row per (win rate, tie rate); see :func:`sign_test_table`."""

    rows: list[dict]

    def as_dict(self) -> dict | list[dict]:
        """The one row as an object, or the list of rows."""
        return self.rows[0] if len(self.rows) == 1 else self.rows

    def to_text(self) -> str:
        """A fixed-width table: the chosen method's sizes, then the other method's."""
        first = self.rows[0]
        lines = [f"one-sided sign test, alpha={first['alpha']}, power={first['power']} — {first['label']}",
                 f"{'win rate':>9} {'ties':>6} {'N (informative)':>16} {'N_total = N/I':>14}   other method"]
        for r in self.rows:
            other = r["exact"] if r["method"] == "normal" else r["normal"]
            lines.append(f"{r['win_rate']:>9.2f} {r['tie_rate']:>6.2f} {r['n_informative']:>16} {r['n_total']:>14}"
                         f"   {other['n_informative']} / {other['n_total']} ({other['label'].split(' (')[0]})")
        return "\n".join(lines)


def sign_test_table(win_rates: list[float], tie_rates: list[float], alpha: float = 0.05, power: float = 0.8,
                    exact: bool = False) -> SignTestTable:
    """One-sided sign-test sample sizes for each (win rate, tie rate), by both methods (Anchor §4.3, Table 2).

    Parameters
    ----------
    win_rates : list of float
        Win rates among discordant (informative) pairs.
    tie_rates : list of float
        Shares of ties / non-informative pairs.
    alpha, power : float
        Level and power of the one-sided test.
    exact : bool
        Lead with the exact binomial size (default: the normal approximation).

    Returns
    -------
    SignTestTable
        ``rows``: :meth:`SignTestSize.as_dict` of the chosen method with its ``label``, plus the other method's
        ``{n_informative, n_total, label}`` under its name (``"normal"`` or ``"exact"``).
    """
    rows = []
    for w in win_rates:
        for t in tie_rates:
            main = sign_test_sample_size(w, t, alpha, power, "exact" if exact else "normal")
            other = sign_test_sample_size(w, t, alpha, power, "normal" if exact else "exact")
            rows.append({**main.as_dict(), "label": SIGN_LABELS[main.method],
                         other.method: {"n_informative": other.n_informative, "n_total": other.n_total,
                                        "label": SIGN_LABELS[other.method]}})
    return SignTestTable(rows)


def edge_pools(frame: pd.DataFrame, anchor: str, effect: float = 0.05, width: float = 0.01) -> list[np.ndarray]:
    """Paired verdict differences of every model pair whose edge against ``anchor`` is in [effect, effect + width).

    Parameters
    ----------
    frame : DataFrame
        Anchor-based judgments (5-way ``verdict`` when present, else the sign of ``outcome``).
    anchor : str
        The anchor model.
    effect, width : float
        The edge (win rate − 0.5 among discordant prompts) interval of the pairs kept (Anchor App. C).

    Returns
    -------
    list of ndarray
        One array of finite per-prompt differences per pair kept (possibly empty).
    """
    check_edge_window(effect, width)
    column = "verdict" if "verdict" in frame.columns and frame["verdict"].notna().any() else "outcome"
    v, _, _ = verdict_matrix(frame, anchor, column)
    v = np.sign(v) if column == "outcome" else v
    pools = []
    for i in range(v.shape[1]):
        for j in range(v.shape[1]):
            d = v[:, i] - v[:, j]
            d = d[np.isfinite(d)]
            if i != j and edge_in_window(d, effect, width):
                pools.append(d)
    return pools


def edge_pools_of_file(path: Path, anchor: str | None = None, effect: float = 0.05,
                       width: float = 0.01, frame: pd.DataFrame | None = None) -> list[np.ndarray]:
    """:func:`edge_pools` of a judgments file (``frame``: its judgments already read, e.g. from a judging store);
    the anchor is detected when not given.

    Raises
    ------
    ConfigError
        No anchor found, or no pair with an edge in the interval.
    """
    frame = read_any(path).frame if frame is None else frame
    anchor = anchor or (likely_anchors(frame) or [None])[0]
    if anchor is None:
        raise ConfigError(f"{path}: no anchor found; pass --anchor")
    pools = edge_pools(frame, anchor, effect, width)
    if not pools:
        raise ConfigError(f"no model pair in {path} has an edge in [{effect}, {effect + width}) against {anchor}")
    return pools


def wilcoxon_pools(path: Path | None = None, *, anchor: str | None = None, distribution: str | None = None,
                   effect: float = 0.05, width: float = 0.01, frame: pd.DataFrame | None = None) -> list[np.ndarray]:
    """Paired-difference pools for :func:`judgewise.analysis.power.wilcoxon_power` (Anchor App. C): one from a
    ``"value:prob,..."`` distribution, or :func:`edge_pools_of_file` of a judgments file (``frame``: read already).

    Raises
    ------
    ConfigError
        An edge window outside [0, 0.5], a malformed distribution, or neither a distribution nor a file.
    """
    check_edge_window(effect, width)
    if distribution:
        try:
            values, probs = zip(*[(float(v), float(p)) for v, p in
                                  (x.split(":") for x in distribution.split(",") if x.strip())])
        except ValueError:
            raise ConfigError(f"--distribution must be value:prob pairs, got {distribution!r}") from None
        return [distribution_from_probabilities(values, probs)]
    if path is None:
        raise ConfigError("give --distribution or a judgments PATH (with --anchor)")
    return edge_pools_of_file(path, anchor, effect, width, frame)


@dataclass
class AnchorReports:
    """Anchor reports of one judgments file and, for an all-pairs file, the pilot's recommendation."""

    source: str
    read: dict
    anchors: list[dict]
    pilot: dict | None = field(default=None)
    several: dict | None = field(default=None)  # several anchors: per-anchor and pooled estimates (Anchor §5)

    def as_dict(self) -> dict:
        """``source, read, anchors`` and ``pilot`` / ``several`` when there is one."""
        out = {"source": self.source, "read": self.read, "anchors": self.anchors}
        out = out if self.pilot is None else {**out, "pilot": self.pilot}
        return out if self.several is None else {**out, "several": self.several}

    def to_text(self) -> str:
        """Per anchor: size, informativeness, waste and histogram; the pilot's candidates (no read line)."""
        lines = []
        for r in self.anchors:
            five = ("n/a (no 5-way verdicts)" if r["informativeness_5way"] is None
                    else f"{r['informativeness_5way']:.3f}")
            lines += [f"anchor {r['anchor']}: {r['n_models']} models × {r['n_prompts']} prompts",
                      f"  informativeness I (collapsed -1/0/1): {r['informativeness']:.3f}   5-way: {five}",
                      f"  wasted share (1 - I): {r['wasted_share']:.1%}; prompts where the anchor beats every "
                      f"model: {r['anchor_wins_all_share']:.1%}; prompts with no signal (all verdicts equal): "
                      f"{r['no_signal_share']:.1%}",
                      "  prompts by number of models beating the anchor: "
                      + " ".join(f"{k}:{c}" for k, c in enumerate(r["histogram"]) if c)]
        if self.several is not None:
            lines += _several_text(self.several)
        if self.pilot is not None:
            p = self.pilot
            lines.append(f"pilot on {p['n_prompts']} prompts: recommended anchor {p['recommended']} — {p['reason']}")
            lines += [f"  {c['anchor']:<30} I={c['informativeness']:.3f}"
                      + (f" I5={c['informativeness_5way']:.3f}" if c.get("informativeness_5way") is not None else "")
                      + f" rank={c['pilot_rank']} {c['position']}" for c in p["candidates"]]
        return "\n".join(lines)


def _several_text(sev: dict) -> list[str]:
    """The per-anchor win rates and pooled BT of several anchors, one line per model, best pooled first."""
    head = "  ".join(f"vs {a:>10}" for a in sev["anchors"])
    lines = ["several anchors (Anchor §5, App. E): win rate % against each anchor, and the pooled BT θ over "
             "every comparison with an anchor", f"  {'model':<24} {head}  {'pooled BT':>9}"]
    order = np.argsort(-np.asarray(sev["pooled_bt"]), kind="stable")
    for k in order:
        cells = "  ".join(f"{'—':>13}" if sev["win_rates"][a][k] is None or sev["models"][k] == a
                          else f"{sev['win_rates'][a][k]:>13.1f}" for a in sev["anchors"])
        lines.append(f"  {sev['models'][k]:<24} {cells}  {sev['pooled_bt'][k]:>9.3f}")
    lines.append("  Kendall τ-b of each anchor's ranking vs the pooled one: "
                 + ", ".join(f"{a} {t:.3f}" if t is not None and math.isfinite(t)
                             else f"{a} — (undefined: fewer than two distinct win rates)"
                             for a, t in sev["tau_vs_pooled"].items()))
    return lines


def anchor_reports_of_file(path: Path, anchor: str | None = None, pilot_prompts: int = 10,
                           seed: int = 0, rated: tuple | None = None) -> AnchorReports:
    """Anchor reports (informativeness, histogram, waste; Anchor §4) of a judgments file, and a pilot
    recommendation (§5.3) when the file holds all pairs and no anchor.

    Returns
    -------
    AnchorReports
        ``source, read`` (the read report as a dict), ``anchors`` (one report per anchor) and, for a pilot,
        ``pilot`` (``n_prompts, recommended, reason, candidates``).

    ``rated``: (frame, table) already read, e.g. from a judging store by the pipeline's one reader
    (``judgewise.store.reading.read_rated``); default: read ``path`` with :func:`judgewise.io.read_judgments`.
    """
    rng = rng_from_seed(seed)
    if pilot_prompts < 1:
        raise ConfigError(f"--pilot-prompts must be ≥ 1, got {pilot_prompts}")
    if rated is None:
        table = read_judgments(path)
        rated = (table.frame, table)
    frame, table = rated
    anchors = [a.strip() for a in anchor.split(",") if a.strip()] if anchor else likely_anchors(frame)
    if anchor is not None and (not anchors or len(set(anchors)) < len(anchors)):
        raise ConfigError(f"--anchor must list distinct model names, comma-separated, got {anchor!r}")
    out = AnchorReports(str(path), table.report.as_dict(), [report_from_judgments(frame, a).as_dict() for a in anchors])
    if len(anchors) >= 2:
        out.several = several_anchor_estimates(frame, anchors)
    if not anchor and not anchors:
        res = pilot(QuadraticData(frame), pilot_prompts, rng, judgments=frame)
        out.pilot = {"n_prompts": res.n_prompts, "recommended": res.recommended, "reason": res.reason,
                     "scale": res.scale, "tied": res.tied, "candidates": res.table.to_dict(orient="records")}
    return out


ADAPTIVE_MIN_POOL = 500  # prompts the adaptive design of a sweep chooses from, at least (its budget stays (n − 1)·|X|)
BASELINE = "baseline"  # Arena-lite §4.2 step 5: win rate against an external reference model
REFERENCE_ELO = 1233.0  # the paper's reference, gpt-4-1106-preview's Chatbot Arena Elo


def sweep_points(designs: list[str], n_models: list[int], prompts: list[int], p_judges: list[float],
                 reference_elo: float = REFERENCE_ELO) -> list:
    """The grid of :class:`~judgewise.analysis.sweeps.SweepPoint` of an Arena-lite §4.2 sweep.

    The anchor design uses the pool's middle (mediocre) model; adaptive and sampled spend the tournament's budget
    (n − 1)·|X| (adaptive on at least 500 prompts). ``baseline`` is the paper's baseline-mediated method: every
    model against a reference model outside the pool at ``reference_elo`` on every prompt (n·|X| calls), scored
    by win rate against it. ``insert-binary`` / ``insert-anchor`` place one newcomer into the leaderboard of the
    others (:func:`judgewise.analysis.sweeps._insertion_trial`).

    Raises
    ------
    ConfigError
        An unknown design.
    """
    if not math.isfinite(reference_elo):
        raise ConfigError(f"--reference-elo must be a finite Elo rating, got {reference_elo}")
    twice = sorted({name for name in designs if designs.count(name) > 1})
    if twice:
        raise ConfigError(f"--designs lists {', '.join(twice)} more than once")
    points = []
    for name in designs:
        if name not in DESIGNS and name != BASELINE:
            raise ConfigError(f"unknown design {name!r}; known: {sorted([*DESIGNS, BASELINE])}")
        for n in n_models:
            for x in prompts:
                for p in p_judges:
                    if name == BASELINE:
                        points.append(SweepPoint(BASELINE, "anchor", n, x, p, {}, scoring="winrate",
                                                 external_anchor_elo=float(reference_elo)))
                        continue
                    opts = {"anchor": {"anchors": [f"m{n // 2}"]}, "adaptive": {"budget": (n - 1) * x},
                            "sampled": {"budget": (n - 1) * x}}.get(name, {})
                    pool = x if name != "adaptive" else max(x, ADAPTIVE_MIN_POOL)
                    points.append(SweepPoint(name, name, n, pool, p, opts))
    return points


def adaptive_pool_note(designs: list[str], prompts: list[int]) -> str | None:
    """The line saying why a sweep's adaptive rows show more prompts than ``--prompts`` asked (None when they do
    not): adaptive spends the tournament's budget (n − 1)·|X| but chooses from a pool of at least 500 prompts."""
    if "adaptive" not in designs or min(prompts) >= ADAPTIVE_MIN_POOL:
        return None
    return (f"adaptive: n_prompts is the pool it chooses from (at least {ADAPTIVE_MIN_POOL} prompts); its budget is "
            f"the tournament's (n − 1)·|X| calls for the |X| asked")