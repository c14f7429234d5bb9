"""Verdict parsers: the last well-formed verdict wins, malformed text is no verdict, logprobs renormalise."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.errors import ConfigError
from judgewise.judges.parsing import PARSERS, make_parser, soft_from_logprobs

ARENA = make_parser("arena_hard_5way")
LLMBAR = make_parser("llmbar_binary")
CLB = make_parser("clb_confidence")
CORRECT = make_parser("direct_correctness")

# How each parser's own labels are written by a judge that follows the template's instructions.
WRITTEN = {
    "arena_hard_5way": lambda label: f"[[{label}]]",
    "llmbar_binary": lambda label: label,
    "clb_confidence": lambda label: f"Answer: {label}",
    "direct_correctness": lambda label: f"Grade: {label}",
    "likert": lambda label: f"Rating: [[{label}]]",
    "rating": lambda label: f"Rating: [[{label}]]",
    "mtbench_pair": lambda label: f"[[{label}]]",
}


def test_arena_takes_the_last_verdict_not_the_example_in_the_reasoning():
    text = ('The prompt says to output e.g. "My final verdict is tie: [[A=B]]". Assistant B is wrong.\n'
            "My final verdict is: [[A>>B]]")
    v = ARENA.parse(text)
    assert (v.label, v.verdict5, v.outcome) == ("A>>B", 2, 1.0)


@pytest.mark.parametrize("written, label", [("[[ a > b ]]", "A>B"), ("[[A<<B]]", "B>>A"), ("[[B<A]]", "A>B"),
                                            ("[[B=A]]", "A=B"), ("[[b>>a]]", "B>>A")])
def test_arena_accepts_equivalent_spellings(written, label):
    assert ARENA.parse(f"verdict: {written}").label == label


@pytest.mark.parametrize("text", ["", None, "A>>B", "[[A>>>B]]", "[A>B]", "[[C>A]]", "no verdict here"])
def test_arena_malformed_text_is_no_verdict(text):
    assert ARENA.parse(text) is None


def test_arena_verdict_scale_is_antisymmetric_and_collapses_to_win_tie_loss():
    """Anchor §2: v ∈ {-2..2}; B>>A is the mirror of A>>B; the win-rate collapse is {0, .5, 1}."""
    mirror = {"A>>B": "B>>A", "A>B": "B>A", "A=B": "A=B"}
    for label, other in mirror.items():
        v, w = ARENA.parse(f"[[{label}]]"), ARENA.parse(f"[[{other}]]")
        assert v.verdict5 == -w.verdict5
        assert v.outcome == pytest.approx(1.0 - w.outcome)
        assert v.outcome == (0.5 if v.verdict5 == 0 else float(v.verdict5 > 0))


def test_llmbar_last_output_mention_wins_case_insensitively():
    assert LLMBAR.parse("Output (a) looks fine but output (B)").outcome == 0.0
    assert LLMBAR.parse("Output(a)").label == "Output (a)"
    assert LLMBAR.parse("Output (c)") is None


def test_clb_reads_the_answer_line_not_a_mention_of_an_answer():
    assert CLB.parse("Answer 2 is wrong because it divides by zero.\nAnswer: 1").label == "1"
    assert CLB.parse("Answer 1 is wrong.\n\n**2**").label == "2"
    assert CLB.parse("The answer is 2.").label == "2"
    assert CLB.parse("Answer 2 is wrong.") is None
    assert CLB.parse("I think 12 is right") is None


def test_direct_correctness_labels_and_not_attempted_has_no_outcome():
    assert CORRECT.parse("It says 5 but 2+2=4.\nGrade: incorrect").outcome == 0.0
    v = CORRECT.parse("The model declined.\nGrade: not attempted")
    assert (v.label, v.outcome) == ("not_attempted", None)
    assert CORRECT.parse("correct").label == "correct"
    assert CORRECT.parse("This is an interesting question.") is None


def test_likert_rejects_ratings_outside_the_scale_and_maps_to_unit_interval():
    p = make_parser("likert", scale=7)
    assert p.parse("Rating: [[9]]") is None
    assert p.parse("Rating: [[7]]").outcome == 1.0
    assert p.parse("ok [[3]] then Rating: [[1]]").outcome == 0.0
    assert p.parse("Rating: 4").outcome == pytest.approx(3 / 6)
    with pytest.raises(ConfigError):
        make_parser("likert", scale=1)


def test_unknown_parser_is_a_config_error_listing_known_ones():
    with pytest.raises(ConfigError, match="arena_hard_5way"):
        make_parser("nope")


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(PARSERS)), data=st.data(),
       prefix=st.text(alphabet=st.characters(blacklist_characters="[]()", codec="utf-8"), max_size=80))
def test_every_label_round_trips_through_its_written_form_after_any_preamble(name, data, prefix):
    parser = make_parser(name)
    label = data.draw(st.sampled_from(parser.labels))
    v = parser.parse(f"{prefix}\n{WRITTEN[name](parser.verdicts[label].label or label)}")
    assert v is not None and v.label == parser.verdicts[label].label


def test_soft_score_renormalises_over_verdict_tokens_at_the_last_verdict_position():
    logprobs = [
        {"Output": -0.01, "The": -5.0},
        {" (": -0.01},
        {"a": math.log(0.3), "b": math.log(0.1), " a": math.log(0.3), "c": math.log(0.3)},
        {")": -0.001},
    ]
    # "a" and " a" are one verdict token: P(a) = 0.6, P(b) = 0.1 → renormalised P(a) = 0.6 / 0.7
    assert LLMBAR.soft(logprobs) == pytest.approx(0.6 / 0.7)


def test_soft_score_is_none_without_a_verdict_position():
    assert LLMBAR.soft(None) is None
    assert LLMBAR.soft([{"hello": -0.1, "a": -3.0}]) is None
    assert ARENA.soft([{"A": -0.1}]) is None  # multi-token labels: no soft score


def test_likert_soft_score_is_the_expected_normalised_rating():
    p = make_parser("likert", scale=5)
    probs = {"1": 0.1, "3": 0.2, "5": 0.7}
    expected = sum(pr * (int(k) - 1) / 4 for k, pr in probs.items()) / sum(probs.values())
    got = soft_from_logprobs([{k: math.log(pr) for k, pr in probs.items()}], p.token_values)
    assert got == pytest.approx(expected)


# The patterns as they were before no two runs of spaces met in one and clb's digit line stayed within its line: they
# took time quadratic in an answer (46 s for clb on 2 MB of "*" lines; likert on "rating" + spaces, minutes). The
# patterns now must find the same verdict in any text (benchmarks/parser_worst_case.py measures the time).
QUADRATIC = {
    "clb_confidence": (r"\banswer\b(?:\s*:|\s+is\b:?)\s*\**\s*([12])\b|^[\s*#>]*([12])[\s*.]*$",
                       re.IGNORECASE | re.MULTILINE),
    "direct_correctness": (r"(?:\bgrade\b\s*[:=]?\s*\**|\A\s*\**)\s*(not[_ \-]attempted|incorrect|correct)\b",
                           re.IGNORECASE),
    "likert": (r"(?:\[\[\s*|\brating\b\s*[:=]?\s*\**)(\d+)(?:\s*\]\]|(?![0-9.]))", re.IGNORECASE),
}
PIECES = ["answer", "Answer", " is", ":", "=", " ", "  ", "\t", "\n", "\r\n", "*", "**", "#", ">", ".", "1", "2", "3",
          "grade", "Grade", "correct", "incorrect", "not attempted", "not_attempted", "rating", "Rating", "[[", "]]",
          "x", "\u00a0", "\x0b"]


@settings(max_examples=600, deadline=None)
@given(name=st.sampled_from(sorted(QUADRATIC)), text=st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_the_linear_patterns_find_the_verdict_the_quadratic_ones_found(name, text):
    parser = make_parser(name)
    before = dataclasses.replace(parser, pattern=re.compile(*QUADRATIC[name]))
    assert parser.parse(text) == before.parse(text)
