"""Panels of judges (a jury): one derived verdict per comparison from several judges' stored verdicts.

Verga et al., "Replacing Judges with Juries" (PoLL, 2024): a panel of smaller judges from different families
agrees with humans better than one large judge; inspect-ai grades with several models and takes the majority.
Here each member's verdict stays its own judgment (its own stored call); the panel's verdict is *derived* from
them, never stored as a call:

* ``majority``: the label (A wins, tie, B wins; a soft outcome read by its side of 0.5) most members gave; when
  the top count is shared (a split: 1–1 of two members, 1–1–1 of three) the ``split`` rule decides: ``tie``
  (outcome 0.5, the default) or ``drop`` (the comparison is left out, and counted);
* ``mean``: the mean of the members' outcomes (soft preferences where they are fractional);
* ``weighted``: a vote in which each member counts its weight, given or measured against a reference judge (the
  humans) by :func:`reliability_weights`; a shared top is a split as under ``majority``.

A *comparison* is one (prompt, pair of models, order shown, turn) — the k-th judgment of a judge on the same key
pairs with the k-th of each other judge, so repeated battles stay apart. Orientation is made canonical first
(``model_a`` < ``model_b``, outcome flipped where swapped) so members may write a pair either way round.
Comparisons that not every member judged get the verdict of those who did, and are counted
(:attr:`Panel.n_incomplete`), never dropped silently. Agreement between members is Fleiss' κ over the
comparisons every member judged (:func:`judgewise.analysis.reliability.fleiss_kappa`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgewise.analysis.panel_text import check_panel_options, panel_members
from judgewise.analysis.reliability import fleiss_kappa
from judgewise.errors import ConfigError
from judgewise.io.provenance import judge_groups, pick_judge
from judgewise.io.schema import JUDGMENTS_REQUIRED, require_columns, usable_mask
from judgewise.io.tables import ReadReport

PANEL_RULES = ("majority", "mean", "weighted")
SPLIT_RULES = ("tie", "drop")
KEY_COLUMNS = ("prompt_id", "model_a", "model_b")
OPTIONAL_KEYS = ("first", "turn")
LABELS = ("A", "tie", "B")  # column order of the vote counts: A (model_a) wins, tie, B wins


@dataclass
class Panel:
    """A panel's derived verdicts and how they were made (the ``scipy.stats``-style result of :func:`panel_verdicts`).

    Attributes
    ----------
    judgments : DataFrame
        One row per comparison kept: ``prompt_id, model_a, model_b, judge`` (the panel's name), ``outcome``,
        ``n_members`` (how many members judged it), ``first``/``turn`` when the input had them.
    members : list of str
        The members' judge labels, in the order given.
    rule, split : str
        The aggregation and the rule for splits.
    weights : dict or None
        Each member's weight (``weighted``).
    n_comparisons, n_complete, n_incomplete, n_split, n_dropped : int
        Comparisons any member judged; judged by every member; by some only (kept, with those members' verdict);
        whose vote was split (ties under ``split="tie"``); left out (``split="drop"``).
    missing_by_member : dict
        Per member, the comparisons other members judged and it did not.
    member_rows : dict
        Per member, its usable judgments read.
    kappa : float
        Fleiss' κ between the members over the ``n_complete`` comparisons (NaN with none, or one member).
    member_cost : dict or None
        Per member, the dollars its judgments cost (a store's ``cost`` column; None without one).
    reference, accuracy : str or None, dict or None
        ``weighted`` with weights measured (:func:`panel_of_options`): the reference judge, and each member's
        agreement with it.
    """

    judgments: pd.DataFrame
    members: list[str]
    rule: str
    split: str
    weights: dict | None
    n_comparisons: int
    n_complete: int
    n_incomplete: int
    n_split: int
    n_dropped: int
    missing_by_member: dict = field(default_factory=dict)
    member_rows: dict = field(default_factory=dict)
    kappa: float = float("nan")
    member_cost: dict | None = None
    reference: str | None = None
    accuracy: dict | None = None

    @property
    def name(self) -> str:
        """The panel's judge name in its derived judgments: ``panel(majority: a, b, c)``."""
        return panel_name(self.members, self.rule)

    def as_dict(self) -> dict:
        """Everything but the judgments, JSON-ready (κ NaN as None)."""
        out = {k: v for k, v in self.__dict__.items() if k != "judgments"}
        out["kappa"] = None if not np.isfinite(self.kappa) else round(float(self.kappa), 6)
        return {"name": self.name, **out}


def panel_of_options(judgments: pd.DataFrame, options) -> Panel:
    """The panel a command's options name (``panel``, ``panel_rule``, ``panel_split``, ``panel_reference``:
    :mod:`judgewise.analysis.panel_text`), derived from ``judgments`` by :func:`panel_verdicts`; under
    ``weighted`` each member weighed by its agreement with the reference (:func:`reliability_weights`). One
    derivation for ``rank``, ``diagnose`` and ``report``."""
    check_panel_options(options)
    members = panel_members(options.panel)
    weights = accuracy = None
    if options.panel_rule == "weighted":
        weights, accuracy = reliability_weights(judgments, members, options.panel_reference)
    panel = panel_verdicts(judgments, members, options.panel_rule, split=options.panel_split, weights=weights)
    panel.reference, panel.accuracy = options.panel_reference, accuracy
    return panel


def note_outside(report: ReadReport, panel: Panel, rows: int) -> None:
    """Count the rows of judges outside ``panel`` (of the ``rows`` read) as skipped in ``report``, reason first."""
    outside = rows - sum(panel.member_rows.values())
    if outside:
        report.rows_used = max(report.rows_used - outside, 0)
        report.rows_skipped += outside
        report.skipped_reasons.insert(0, f"{outside:,} rows of judges outside the panel (--panel)")


def panel_name(members, rule: str) -> str:
    """The judge name a panel's derived judgments carry."""
    return f"panel({rule}: {', '.join(members)})"


def check_panel(members, rule: str, split: str, weights: dict | None = None) -> list[str]:
    """The members as a list, after checking the rule, the split rule, the members (≥ 2, distinct) and weights."""
    members = [str(m).strip() for m in members]
    if rule not in PANEL_RULES:
        raise ConfigError(f"panel rule must be one of {', '.join(PANEL_RULES)}, got {rule!r}")
    if split not in SPLIT_RULES:
        raise ConfigError(f"panel split rule must be one of {', '.join(SPLIT_RULES)}, got {split!r}")
    if len(members) < 2 or "" in members or len(set(members)) != len(members):
        raise ConfigError(f"a panel needs at least two distinct judges, got {members}")
    if rule == "weighted":
        if weights is None:
            raise ConfigError("panel rule weighted needs weights: given, or measured against a reference judge "
                              "(reliability_weights; rank --panel-reference JUDGE)")
        missing = [m for m in members if m not in weights]
        bad = [m for m in members if m in weights and not (np.isfinite(weights[m]) and weights[m] >= 0)]
        if missing or bad or not sum(weights[m] for m in members) > 0:
            raise ConfigError(f"panel weights need a finite weight ≥ 0 for every member (not all 0): missing "
                              f"{missing}, invalid {bad}")
    return members


def member_codes(judgments: pd.DataFrame, members: list[str]) -> np.ndarray:
    """Each row's index into ``members`` (−1: a judge outside the panel), members named by label or judge name
    as ``--judge`` names them (:func:`judgewise.io.provenance.pick_judge`)."""
    groups, codes = judge_groups(judgments)
    of_group = np.full(len(groups), -1, dtype=np.int64)
    for i, member in enumerate(members):
        of_group[pick_judge(groups, member)] = i  # distinct names pick distinct judges (a name never picks a label)
    return of_group[codes] if len(codes) else np.zeros(0, dtype=np.int64)


def canonical_keys(rows: pd.DataFrame, member: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """The comparison key of each row (model_a < model_b; the k-th repeat of a key by one member numbered k) and
    its outcome in that orientation."""
    a, b = rows["model_a"].astype(str).to_numpy(), rows["model_b"].astype(str).to_numpy()
    outcome = pd.to_numeric(rows["outcome"], errors="coerce").to_numpy(float)
    swap = a > b
    keys = pd.DataFrame({"prompt_id": rows["prompt_id"].astype(str).to_numpy(), "model_a": np.where(swap, b, a),
                         "model_b": np.where(swap, a, b)})
    for column in OPTIONAL_KEYS:
        if column in rows.columns:
            keys[column] = rows[column].astype(object).where(rows[column].notna(), "").astype(str).to_numpy()
    keys["repeat"] = keys.assign(member=member).groupby([*keys.columns, "member"], sort=False).cumcount().to_numpy()
    return keys, np.where(swap, 1.0 - outcome, outcome)


def vote_labels(outcome: np.ndarray) -> np.ndarray:
    """Each outcome's label index in :data:`LABELS`: 0 where model_a won (> 0.5), 1 a tie, 2 where model_b won."""
    return np.where(outcome > 0.5, 0, np.where(outcome < 0.5, 2, 1))


def vote(counts: np.ndarray, split: str) -> tuple[np.ndarray, np.ndarray]:
    """The outcome of each row of (possibly weighted) vote counts over :data:`LABELS`, and which rows were split
    (their top shared): split rows are ties (``split="tie"``) or NaN (``"drop"``)."""
    top = counts.max(axis=1, keepdims=True)
    is_split = (np.isclose(counts, top) & (top > 0)).sum(axis=1) > 1
    outcome = np.array([1.0, 0.5, 0.0])[counts.argmax(axis=1)]
    return np.where(is_split, 0.5 if split == "tie" else np.nan, outcome), is_split


def panel_verdicts(judgments: pd.DataFrame, members, rule: str = "majority", *, split: str = "tie",
                   weights: dict | None = None) -> Panel:
    """One derived verdict per comparison from the verdicts of the panel's ``members`` (module docstring).

    Parameters
    ----------
    judgments : DataFrame
        Canonical judgments (``prompt_id, model_a, model_b, judge, outcome``; ``first``/``turn`` used when
        present) of the members and possibly of other judges (ignored); failed games are left out.
    members : list of str
        Judge labels or names (as ``--judge`` takes them), at least two.
    rule : {"majority", "mean", "weighted"}
    split : {"tie", "drop"}
        What a split vote becomes (``majority``/``weighted``).
    weights : dict, optional
        Member → weight ≥ 0, for ``weighted`` (:func:`reliability_weights` measures them).

    Returns
    -------
    Panel
    """
    members = check_panel(members, rule, split, weights)
    comparison, member, outcome, uniques, cost = ballots(judgments, members)
    n, k = len(uniques), len(members)
    judged = np.zeros((n, k), dtype=bool)
    judged[comparison, member] = True
    counts = np.zeros((n, len(LABELS)))
    np.add.at(counts, (comparison, vote_labels(outcome)), 1.0)
    complete = judged.all(axis=1)
    kappa = fleiss_kappa(counts[complete]) if complete.any() else float("nan")
    derived, is_split = derive(rule, split, comparison, member, outcome, counts, n, members, weights)
    frame = uniques.drop(columns="repeat")
    frame.insert(3, "judge", panel_name(members, rule))
    frame.insert(4, "outcome", derived)
    frame["n_members"] = judged.sum(axis=1)
    kept = ~np.isnan(derived)
    return Panel(frame[kept].reset_index(drop=True), members, rule, split,
                 {m: float(weights[m]) for m in members} if rule == "weighted" else None,
                 n, int(complete.sum()), int((~complete).sum()), int(is_split.sum()), int((~kept).sum()),
                 {m: int((~judged[:, i]).sum()) for i, m in enumerate(members)},
                 {m: int((member == i).sum()) for i, m in enumerate(members)}, kappa,
                 None if cost is None else {m: round(float(c), 6) for m, c in zip(members, cost)})


def ballots(judgments: pd.DataFrame, members: list[str]):
    """The members' usable verdicts as ballots: each one's comparison index, member index and outcome (canonical
    orientation), the comparisons' keys (:func:`canonical_keys`), and each member's cost in dollars, failed games
    included (None: the table has no ``cost`` column)."""
    require_columns(judgments, JUDGMENTS_REQUIRED, what="the judgments")
    member = member_codes(judgments, members)
    cost = None
    if "cost" in judgments.columns:
        paid = pd.to_numeric(judgments["cost"], errors="coerce").fillna(0.0).to_numpy(float)
        cost = np.bincount(member[member >= 0], weights=paid[member >= 0], minlength=len(members))
    usable = usable_mask(judgments) & (member >= 0)
    rows, member = judgments[usable].reset_index(drop=True), member[usable]
    keys, outcome = canonical_keys(rows, member)
    comparison = keys.groupby(list(keys.columns), sort=False).ngroup().to_numpy()  # numbered as first seen
    return comparison, member, outcome, keys.drop_duplicates().reset_index(drop=True), cost


def derive(rule, split, comparison, member, outcome, counts, n, members, weights):
    """The derived outcome of each of ``n`` comparisons under ``rule``, and which were split votes."""
    if rule == "mean":
        total = np.bincount(comparison, weights=outcome, minlength=n)
        return total / np.bincount(comparison, minlength=n), np.zeros(n, dtype=bool)
    if rule == "weighted":
        w = np.array([weights[m] for m in members], dtype=float)[member]
        counts = np.zeros_like(counts)
        np.add.at(counts, (comparison, vote_labels(outcome)), w)
    return vote(counts, split)


def reliability_weights(judgments: pd.DataFrame, members, reference: str) -> tuple[dict, dict]:
    """Each member's weight from its agreement with ``reference`` (a judge of the same table: the humans).

    Accuracy p = the share of the comparisons both judged where the member's label (A wins, tie, B wins) equals
    the reference's; the weight is the log-odds of a symmetric K-label voter, ``log((K − 1)·p / (1 − p))`` with
    K = 3 (the optimal weighted vote of independent voters, Nitzan & Paroush 1982), p clipped to [0.01, 0.99] and
    the weight to ≥ 0 (a member at or below chance, p ≤ 1/3, gets no vote). Returns (weights, accuracies);
    a member sharing no comparison with the reference gets weight 0 and accuracy NaN.
    """
    accuracy = {str(m): member_agreement(judgments, [str(m), reference]) for m in members}
    k = len(LABELS)
    weights = {m: (0.0 if not np.isfinite(p) else
                   max(0.0, float(np.log((k - 1) * np.clip(p, 0.01, 0.99) / (1 - np.clip(p, 0.01, 0.99))))))
               for m, p in accuracy.items()}
    return weights, accuracy


def member_agreement(judgments: pd.DataFrame, pair) -> float:
    """The share of the comparisons two judges both judged on which they gave the same label (NaN: none)."""
    comparison, member, outcome, uniques, _ = ballots(judgments, list(pair))
    labels = np.full((len(uniques), 2), -1)
    labels[comparison, member] = vote_labels(outcome)
    both = (labels >= 0).all(axis=1)
    return float((labels[both, 0] == labels[both, 1]).mean()) if both.any() else float("nan")
