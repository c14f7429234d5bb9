"""The informative labelling order (analysis.label_order): the jackknife width, the label's predictive distribution,
the expected width, the matching step, and the session-level next item (analysis.labelling.next_item)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.analysis.label_order import (MIN_LABELLED, check_order, expected_widths, jackknife_width,
                                            label_predictive, matching_gap, next_informative)
from judgewise.analysis.labelling import ENOUGH_MIN_LABELLED, LabelItem, LabelTask, label_summary, next_item
from judgewise.analysis.reliability import get_metric
from judgewise.analysis.selection import inter_model
from judgewise.errors import ConfigError
from judgewise.store.labels import labels_frame

ICC = get_metric("icc")


def _jackknife_by_hand(metric, x, y) -> float:
    """Efron's jackknife standard error written out with a loop over the left-out item, times 2·1.96."""
    m = len(x)
    theta = np.array([metric(np.delete(x, i), np.delete(y, i)) for i in range(m)])
    return 2 * 1.959963984540054 * np.sqrt((m - 1) / m * np.sum((theta - theta.mean()) ** 2))


def _data(n=12, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = (x + rng.normal(0, 0.3, n) > 0.5).astype(float)
    return x, y


@pytest.mark.parametrize("metric", ["icc", "rho", "alpha", "tau"])
def test_jackknife_width_matches_the_leave_one_out_loop(metric):
    fn = get_metric(metric)
    x, y = _data()
    batched = jackknife_width(fn, np.stack([x, x[::-1]]), np.stack([y, y]))
    assert batched[0] == pytest.approx(_jackknife_by_hand(fn, x, y), rel=1e-9)
    assert batched[1] == pytest.approx(_jackknife_by_hand(fn, x[::-1], y), rel=1e-9)


def test_the_predictive_distribution_follows_the_labels_of_nearby_judge_scores():
    x_done = np.array([0.0, 0.1, 0.2, 0.8, 0.9, 1.0])
    y_done = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    values, prob = label_predictive(x_done, y_done, np.array([0.05, 0.5, 0.95]))
    assert list(values) == [0.0, 1.0]
    assert np.allclose(prob.sum(axis=1), 1) and (prob > 0).all()  # the pseudo-count: no seen value impossible
    assert prob[0, 0] > 0.8 and prob[2, 1] > 0.8 and prob[1, 0] == pytest.approx(0.5, abs=0.05)


def test_the_expected_width_is_the_predictive_mean_of_the_widths_after_each_label():
    x, y = _data(14)
    done, todo = np.arange(10), np.arange(10, 14)
    got = expected_widths(ICC, x[done], y[done], x[todo])
    values, prob = label_predictive(x[done], y[done], x[todo])
    for k, j in enumerate(todo):
        want = sum(p * _jackknife_by_hand(ICC, np.append(x[done], x[j]), np.append(y[done], v))
                   for v, p in zip(values, prob[k]))
        assert got[k] == pytest.approx(want, rel=1e-9)


def test_an_outcome_that_leaves_the_metric_undefined_makes_the_expected_width_infinite():
    x_done, y_done = np.array([0.1, 0.5, 0.9]), np.array([1.0, 1.0, 1.0])  # every label the same: no ρ yet
    assert np.isinf(expected_widths(get_metric("rho"), x_done, y_done, np.array([0.2, 0.7]))).all()


def test_widths_equal_but_for_rounding_go_to_the_earlier_item():
    x = np.array([0.1, 0.5, 0.9, 0.3, 0.7, 0.2])
    labels = np.array([1.0, 1.0, 1.0, np.nan, np.nan, np.nan])  # ICC(3,k) of a constant label: 0, width ≈ 1e-15
    widths = expected_widths(ICC, x[:3], labels[:3], x[3:])
    assert (widths < 1e-12).all() and np.argmin(widths) != 0  # float noise would pick another
    assert next_informative(ICC, x, labels).position == 3


def test_the_matching_gap_is_the_distance_of_the_inter_model_metric_to_the_whole_selection():
    rng = np.random.default_rng(0)
    target, others = rng.random(15), rng.random((3, 15))
    done, todo = np.array([0, 1, 2, 3]), np.array([4, 9])
    gap = matching_gap(ICC, target, others, done, todo)
    whole = float(inter_model(ICC, target, others))
    for k, j in enumerate(todo):
        assert gap[k] == pytest.approx(abs(float(inter_model(ICC, target, others, np.append(done, j))) - whole))


def test_below_three_labels_the_selection_order_comes_first():
    x, _ = _data()
    labels = np.full(len(x), np.nan)
    labels[[0, 2]] = [1.0, 0.0]
    pick = next_informative(ICC, x, labels)
    assert MIN_LABELLED == 3 and pick.position == 1 and pick.rule == "selection"


def test_with_every_item_labelled_there_is_no_next_item():
    x, y = _data()
    assert next_informative(ICC, x, y).position is None


def test_without_other_judges_the_pick_is_the_smallest_expected_width_earliest_on_ties():
    x, y = _data(20)
    labels = y.copy()
    labels[8:] = np.nan
    pick = next_informative(ICC, x, labels)
    widths = expected_widths(ICC, x[:8], y[:8], x[8:])
    assert pick.rule == "informative" and pick.position == 8 + int(np.argmin(widths))
    assert np.allclose(pick.expected_width, widths)
    twins = np.append(x[:8], [x[9], x[9]]), np.append(labels[:8], [np.nan, np.nan])  # two equal candidates
    assert next_informative(ICC, *twins).position == 8


def test_with_other_judges_only_the_best_matched_candidates_compete():
    rng = np.random.default_rng(5)
    x, y = _data(40)
    others = np.clip(x + rng.normal(0, 0.2, (3, 40)), 0, 1)
    labels = y.copy()
    labels[12:] = np.nan
    pick = next_informative(ICC, x, labels, others, match_share=0.1)
    todo = np.arange(12, 40)
    gap = matching_gap(ICC, x, others, np.arange(12), todo)
    chosen = gap[list(todo).index(pick.position)]
    assert chosen <= np.quantile(gap, 0.1)
    kept = gap <= np.quantile(gap, 0.1)
    assert np.isinf(pick.expected_width[~kept]).all()
    assert pick.position == todo[kept][np.argmin(expected_widths(ICC, x[:12], y[:12], x[todo])[kept])]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(0, 20))
def test_the_next_item_is_always_an_unlabelled_one_and_the_same_on_every_call(seed, n_labelled):
    rng = np.random.default_rng(seed)
    x = rng.random(20).round(1)
    labels = np.where(np.arange(20) < n_labelled, rng.integers(0, 2, 20).astype(float), np.nan)
    labels = labels[rng.permutation(20)]
    others = rng.random((2, 20))
    first, again = next_informative(ICC, x, labels, others), next_informative(ICC, x, labels, others)
    assert first.position == again.position
    if n_labelled == 20:
        assert first.position is None
    else:
        assert np.isnan(labels[first.position])


def test_an_unknown_order_or_share_is_refused_naming_the_parameter():
    with pytest.raises(ConfigError, match="order=random"):
        check_order("random")
    with pytest.raises(ConfigError, match="match_share"):
        next_informative(ICC, np.arange(5.0), np.full(5, np.nan), match_share=0)


# --- the session: LabelTask + the labels in the store's shape ---------------------------------------------------

def _task(order="informative", n=16, stop_width=None) -> tuple[LabelTask, dict]:
    x, y = _data(n)
    ids = [f"i{k:02d}" for k in range(n)]
    rng = np.random.default_rng(1)
    others = np.clip(x + rng.normal(0, 0.2, (2, n)), 0, 1)
    task = LabelTask(store="", items=tuple(LabelItem(i, "", (("A", "a"), ("B", "b"))) for i in ids),
                     target="j", target_scores=dict(zip(ids, x.tolist())), order=order, stop_width=stop_width,
                     other_scores=dict(zip(ids, map(tuple, others.T.tolist()))))
    return task, dict(zip(ids, y.tolist()))


def _rows(labels: list[tuple[str, str, float]]) -> pd.DataFrame:
    return labels_frame([(k, "s", who, item, "j", "AB", value, "0") for k, (who, item, value) in enumerate(labels)])


def test_the_session_asks_the_criterion_with_every_labellers_labels():
    task, truth = _task()
    ids = list(truth)
    given_labels = [("ann", i, truth[i]) for i in ids[:5]] + [("bob", i, truth[i]) for i in ids[5:9]]
    x = np.array([task.target_scores[i] for i in ids])
    labels = np.array([truth[i] if k < 9 else np.nan for k, i in enumerate(ids)])
    others = np.array([task.other_scores[i] for i in ids]).T
    want = ids[next_informative(ICC, x, labels, others).position]
    assert next_item(task, _rows(given_labels), "ann") == want == next_item(task, _rows(given_labels), "carl")


def test_once_everyone_labelled_something_of_every_item_a_labeller_gets_their_first_unlabelled():
    task, truth = _task(n=12)
    ids = list(truth)
    rows = _rows([("bob", i, truth[i]) for i in ids] + [("ann", i, truth[i]) for i in ids[:4]])
    assert next_item(task, rows, "ann") == ids[4]
    assert next_item(task, rows, "bob") is None


def test_selection_order_leaves_the_next_item_to_the_page():
    task, truth = _task(order="selection")
    assert next_item(task, _rows([("ann", i, v) for i, v in list(truth.items())[:5]]), "ann") is None


def test_enough_needs_ten_labelled_items_however_narrow_the_interval():
    task, truth = _task(stop_width=1e9)
    ids = list(truth)
    few = label_summary(task, _rows([("ann", i, 1.0 - (k % 2)) for k, i in enumerate(ids[:ENOUGH_MIN_LABELLED - 1])]))
    enough = label_summary(task, _rows([("ann", i, 1.0 - (k % 2)) for k, i in enumerate(ids[:ENOUGH_MIN_LABELLED])]))
    assert few["interval"] is not None and few["enough"] is False
    assert enough["enough"] is True
