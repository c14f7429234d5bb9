"""Style-controlled and self-preference-controlled Bradley–Terry (contextual BT) and their features."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from judgewise.errors import ConfigError, InputError
from judgewise.ratings import rank
from judgewise.ratings.features import family_of, self_preference, style_counts

from tests.support.oracles import alpacaeval_judgments


def test_style_counts_headers_lists_and_bold_outside_code_blocks():
    text = "# Title\n\nSome **bold** and __also__.\n- one\n* two\n3. three\n```\n# not a header\n- nor a list\n```\n"
    assert style_counts(text) == (1, 3, 2)


def test_style_counts_are_arena_hards_per_level_counts_summed_on_real_answers(shared):
    """One definition: the style features are Arena-Hard's answer metadata (an independent re-implementation of its
    add_markdown_info.py, in tests/support/oracles.py) summed over levels, on every real answer and on the corner cases
    where a second regex would differ (a code block holding a backtick, bold nested in bold, a ``1.`` item)."""
    import json

    from judgewise.io.answer_files import arena_hard_record

    from tests.support.oracles import markdown_counts as arena_hard_counts

    texts = [json.loads(line)["messages"][-1]["content"]["answer"]
             for f in sorted((shared / "data/arenahard/model_answer").glob("*.jsonl")) for line in f.open()]
    texts += ["```py\nx = `a`\n# in code\n```\n# out\n", "__**nested**__ and **x**", "1. one\n2. two\n+ three"]
    for text in texts:
        expected = arena_hard_counts(text)
        assert style_counts(text) == tuple(sum(expected[k].values()) for k in ("header_count", "list_count",
                                                                                "bold_count"))
        meta = arena_hard_record("p", "m", ["q"], [text], answer_id="a", tstamp=0.0, token_len=1)["metadata"]
        assert {k: meta[k] for k in expected} == expected
    assert style_counts(texts[-3]) == (2, 0, 0) and style_counts(texts[-2]) == (0, 0, 3)


def test_family_rule_exact_then_longest_prefix_then_leading_letters():
    families = {"gpt": "openai", "gpt-4o-special": "custom", "o1": "openai", "claude": "anthropic"}
    assert family_of("gpt-4o-special", families) == "custom"
    assert family_of("GPT-4o", families) == "openai"
    assert family_of("o1-mini", families) == "openai"
    assert family_of("claude-3-haiku", families) == "anthropic"
    assert family_of("llama-3-8b") == "llama" and family_of("gpt4_1106_preview") == "gpt"


def test_self_preference_is_antisymmetric_and_zero_for_same_family_pairs():
    rows = pd.DataFrame({"model_a": ["gpt-4o", "claude-3", "gpt-4o", "claude-3"],
                         "model_b": ["claude-3", "gpt-4o", "gpt-4o-mini", "llama-3"],
                         "judge": ["gpt-4-turbo"] * 4})
    np.testing.assert_array_equal(self_preference(rows), [1.0, -1.0, 0.0, 0.0])


def simulate_self_preference(rng, n=20_000, bias=0.8, judges=("gpt-judge", "claude-judge")):
    """Two judges from different families, each adding ``bias`` log-odds to its own family's answers."""
    models = ["gpt-a", "gpt-b", "claude-a", "llama-a"]
    skill = np.array([0.4, -0.2, 0.5, -0.7])
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    judge = np.array(judges)[rng.integers(0, len(judges), n)]
    family = np.array([m.split("-")[0] for m in models])
    own_a = family[a] == np.char.partition(judge.astype(str), "-")[:, 0]
    own_b = family[b] == np.char.partition(judge.astype(str), "-")[:, 0]
    x = own_a.astype(float) - own_b.astype(float)
    outcome = (rng.random(n) < expit(skill[a] - skill[b] + bias * x)).astype(float)
    frame = pd.DataFrame({"prompt_id": np.arange(n).astype(str), "model_a": np.array(models)[a],
                          "model_b": np.array(models)[b], "judge": judge, "outcome": outcome})
    return frame, dict(zip(models, skill - skill.mean()))


def test_self_preference_control_recovers_the_bias_and_the_true_strengths():
    frame, truth = simulate_self_preference(np.random.default_rng(0))
    controlled = rank(frame, "bt", self_preference=True, scale="natural")
    plain = rank(frame, "bt", scale="natural", pool_judges=True)  # pooled on purpose: the bias to recover
    assert controlled.info["coefficients"]["self_preference"] == pytest.approx(0.8, abs=0.1)
    got = dict(zip(controlled.models, controlled.scores))
    biased = dict(zip(plain.models, plain.scores))
    for model, value in truth.items():
        assert got[model] == pytest.approx(value, abs=0.08)
    assert abs(biased["llama-a"] - truth["llama-a"]) > abs(got["llama-a"] - truth["llama-a"])


def test_self_preference_with_a_single_judge_is_reported_as_confounded():
    frame, _ = simulate_self_preference(np.random.default_rng(3), n=2000, judges=("gpt-judge",))
    with pytest.raises(ConfigError, match="confounded.*more than one family"):
        rank(frame, "bt", self_preference=True)


def test_contextual_bt_is_invariant_to_swapping_sides():
    frame, _ = simulate_self_preference(np.random.default_rng(1), n=3000)
    swapped = frame.assign(model_a=frame.model_b, model_b=frame.model_a, outcome=1 - frame.outcome)
    one = rank(frame, "bt", self_preference=True)
    two = rank(swapped, "bt", self_preference=True)
    np.testing.assert_allclose(pd.Series(one.scores, one.models).sort_index(),
                               pd.Series(two.scores, two.models).sort_index(), atol=1e-3)


def test_style_control_needs_responses_and_every_compared_response():
    frame, _ = simulate_self_preference(np.random.default_rng(2), n=50)
    with pytest.raises(ConfigError, match="responses"):
        rank(frame, "bt", style_control=True, pool_judges=True)  # the simulation has two judges
    responses = pd.DataFrame({"prompt_id": frame.prompt_id, "model": frame.model_a, "text": "hi"})
    with pytest.raises(InputError, match="no response text"):
        rank(frame, "bt", style_control=True, responses=responses, pool_judges=True)


def alpacaeval_responses(root) -> pd.DataFrame:
    frames = []
    for path in sorted((root / "results").glob("*/model_outputs.json")):
        raw = pd.read_json(path, dtype=False)
        frames.append(pd.DataFrame({"prompt_id": raw["instruction"], "model": path.parts[-2],
                                    "text": raw["output"].astype(str)}))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def alpaca_tables(shared):
    root = shared / "data" / "alpacaeval"
    return alpacaeval_judgments(root), alpacaeval_responses(root)


def test_style_control_on_alpacaeval_finds_length_bias_and_shrinks_the_verbose_gain(alpaca_tables):
    judgments, responses = alpaca_tables
    plain = dict(zip(*(lambda r: (r.models, r.scores))(rank(judgments, "bt"))))
    styled = rank(judgments, "bt", style_control=True, responses=responses)
    controlled = dict(zip(styled.models, styled.scores))
    assert styled.info["coefficients"]["length"] > 0
    assert set(styled.info["coefficients"]) == {"length", "headers", "lists", "bold"}
    gain = lambda s: s["alpaca-7b_verbose"] - s["alpaca-7b"]  # noqa: E731
    assert gain(controlled) < gain(plain)


def test_length_controlled_win_rate_moves_towards_alpacaeval_lc(alpaca_tables, shared):
    """Ours fits prompt difficulty on this table (AlpacaEval uses its own file), so it is not exact: it must rank
    like the published LC and sit closer to it than the raw win rate does."""
    from scipy import stats

    root = shared / "data" / "alpacaeval"
    board = pd.read_csv(root / "leaderboard.csv").set_index("model")
    judgments, responses = alpaca_tables
    ranking = rank(judgments, "lc_winrate", responses=responses)
    got = pd.DataFrame(ranking.to_records()).set_index("model").loc[board.index].drop("gpt4_1106_preview")
    published = board["length_controlled_winrate"].drop("gpt4_1106_preview")
    assert stats.spearmanr(got["score"], published).statistic > 0.9
    assert np.mean(np.abs(got["score"] - published)) < 0.8 * np.mean(np.abs(got["win_rate"] - published))
    assert ranking.scores[ranking.models.index("gpt4_1106_preview")] == 50.0
