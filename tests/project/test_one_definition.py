"""Each caller of a shared definition (win rate, swap consistency, percentile interval) equals the definition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgewise.ratings import winrate as wr


def _games(seed=0, n=300, models=5):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, models, n)
    b = (a + rng.integers(1, models, n)) % models
    outcome = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], n)
    return a, b, outcome


def _frame(a, b, outcome, names="mnopq"):
    return pd.DataFrame({"prompt_id": [f"p{i}" for i in range(len(a))], "model_a": [names[i] for i in a],
                         "model_b": [names[i] for i in b], "judge": "j", "outcome": outcome})


def test_simulator_anchor_win_rate_is_the_ratings_win_rate():
    from types import SimpleNamespace

    from judgewise.analysis.simulation import anchor_win_rate_scores

    a, b, outcome = _games()
    b = np.where(a == 0, b, 0)  # every row involves the anchor 0
    run = SimpleNamespace(pairs=SimpleNamespace(a=a, b=b, models=list("mnopq")), outcome=outcome)
    expected = wr.anchor_win_rates(a, b, outcome, 5, 0, anchor_score="complement") / 100.0
    np.testing.assert_allclose(anchor_win_rate_scores(run, 0), expected)
    # and the array definition is what rank(method="winrate") reports
    from judgewise.ratings import rank

    ranking = rank(_frame(a, b, outcome), "winrate", anchor="m", anchor_score="complement")
    got = dict(zip(ranking.models, ranking.scores))
    np.testing.assert_allclose([got[m] for m in "mnopq"], expected * 100.0)


def test_gaming_win_shares_are_the_ratings_share_won():
    from judgewise.analysis.gaming import win_rates_from

    a, b, outcome = _games(1)
    shares = win_rates_from(_frame(a, b, outcome))
    expected = wr.share_won(a, b, outcome, 5)
    assert shares == pytest.approx(dict(zip("mnopq", expected)))
    # by hand for one model: its outcomes from both sides
    won = np.concatenate([outcome[a == 2], 1 - outcome[b == 2]])
    assert shares["o"] == pytest.approx(won.mean())


def test_report_head_to_head_matrix_is_the_ratings_pairwise_win_rates():
    from judgewise.report.head_to_head import win_matrix

    a, b, outcome = _games(2)
    rates, counts = win_matrix(_frame(a, b, outcome), list("mnopq"))
    exp_rates, exp_counts = wr.pairwise_win_rates(a, b, outcome, 5)
    np.testing.assert_allclose(rates, exp_rates)
    np.testing.assert_allclose(counts, exp_counts)
    both = (a == 1) & (b == 3)
    back = (a == 3) & (b == 1)
    assert rates[1, 3] == pytest.approx(np.concatenate([outcome[both], 1 - outcome[back]]).mean())


def test_diagnosis_swap_consistency_is_the_runners_definition():
    from judgewise.analysis import bias
    from judgewise.judges.runner import swap_agreement, swap_consistency

    rng = np.random.default_rng(3)
    rows = []
    for p in range(60):
        for first in ("x", "y"):
            rows.append({"prompt_id": f"p{p}", "model_a": "x", "model_b": "y", "judge": "j", "first": first,
                         "outcome": float(rng.choice([0.0, 0.5, 1.0])), "status": "ok"})
    frame = pd.DataFrame(rows)
    assert bias.swap_consistency(frame).estimate == pytest.approx(swap_consistency(frame))
    assert bias.swap_consistency(frame).n == len(swap_agreement(frame)) == 60


def test_every_reported_bootstrap_interval_is_the_percentile_interval():
    from judgewise.analysis.echo_intervention import echo_contrast
    from judgewise.ratings.bootstrap import percentile_interval, summarise

    reps = np.random.default_rng(4).normal(size=(500, 3))
    low, high = percentile_interval(reps, 0.9)
    np.testing.assert_allclose(low, np.quantile(reps, 0.05, axis=0))
    np.testing.assert_allclose(high, np.quantile(reps, 0.95, axis=0))
    res = summarise(reps, 0.9, "prompt")
    np.testing.assert_allclose(res.ci_low, low) and np.testing.assert_allclose(res.ci_high, high)
    assert all(np.isnan(percentile_interval([], 0.95)))
    # echo's paired interval: the same draws through percentile_interval
    from judgewise.analysis.echo_intervention import CONDITIONS, SEPARATOR

    frame = pd.DataFrame([{"prompt_id": f"p{i}{SEPARATOR}{c}", "model_a": "x", "model_b": "y", "judge": "j",
                           "outcome": float((i * 7 + k) % 3) / 2}
                          for i in range(30) for k, c in enumerate(CONDITIONS)])
    res = echo_contrast(frame, bootstrap=200, level=0.8, seed=5)
    diff = res.per_base["echo_a"].to_numpy() - res.per_base["echo_b"].to_numpy()
    draws = diff[np.random.default_rng(5).integers(0, len(diff), size=(200, len(diff)))].mean(axis=1)
    assert (res.ci_low, res.ci_high) == pytest.approx(tuple(percentile_interval(draws, 0.8)))


@pytest.mark.parametrize("where, name", [
    ("judgewise.ratings.ranking", "RATING_METHODS"), ("judgewise.pipeline.backends", "JUDGE_BUILDERS"),
    ("judgewise.judges.parsing", "PARSERS"), ("judgewise.analysis.selection", "STRATEGIES"),
    ("judgewise.analysis.sweeps", "TRUTHS"), ("judgewise.executors", "EXECUTORS"),
    ("judgewise.io.judgebench", "JUDGMENT_PARSERS"), ("judgewise.designs.catalog", "DESIGNS"),
    ("judgewise.judges.templates", "TEMPLATES")])
def test_registries_are_one_mechanism_and_extend_like_a_dict(where, name):
    import importlib

    from judgewise.errors import ConfigError
    from judgewise.registry import Registry

    module = importlib.import_module(where)
    reg = getattr(module, name)
    if name == "TEMPLATES":
        module.available_templates()  # built-in templates are loaded on first use
    assert isinstance(reg, Registry)
    first = next(iter(reg))
    entry = reg[first]
    reg["zz_user_entry"] = entry  # user code written for the old dicts keeps working
    try:
        assert "zz_user_entry" in reg and reg.get("zz_user_entry") is entry and reg["zz_user_entry"] is entry
        assert reg.get("no such entry", None) is None and ["x"] not in reg
        with pytest.raises(ConfigError, match="no such entry"):
            reg["no such entry"]
    finally:
        del reg["zz_user_entry"]
    assert "zz_user_entry" not in reg


def test_diagnosis_markdown_count_is_the_style_features_markdown_count(shared):
    """The markdown-bias diagnostic counts markdown as style control does (io.markdown, Arena-Hard's rules)."""
    import json

    from judgewise.analysis.bias import markdown_count
    from judgewise.ratings.features import style_counts

    texts = [json.loads(line)["messages"][-1]["content"]["answer"]
             for f in sorted((shared / "data/arenahard/model_answer").glob("*.jsonl")) for line in f.open()]
    assert sum(markdown_count(t) > 0 for t in texts) > len(texts) // 2  # real markdown, not empty counts
    assert all(markdown_count(t) == sum(style_counts(t)) for t in texts)
    # by hand, Arena-Hard's rules: an indented '#' and a '1)' item are not markdown; a fenced block is skipped
    assert markdown_count("  ## indented\n1) item\n```\n# code\n```\n# head\n- a\n**b**") == 3
