"""The MT-bench rating parser and the mtbench_single template, against FastChat's own prompts as the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.judges.parsing import make_parser
from judgewise.judges.templates import get_template

PROMPTS = Path("/work/shared/data/mtbench/judge_prompts.jsonl")
RATING = make_parser("rating")


@pytest.mark.parametrize("text, score", [
    ("Good answer. Rating: [[7]]", 7.0),
    ("[[7]]", 7.0),
    ("Rating: [[ 10 ]]", 10.0),
    ("Half way: [[7.5]]", 7.5),
    ('The format is "[[rating]]", e.g. "Rating: [[5]]". My rating: [[3]]', 3.0),  # the last rating, not the example
    ("Rating: [[9]] ... on reflection Rating: [[12]]", 9.0),  # outside 1–10 is not a rating
])
def test_rating_reads_the_last_in_scale_double_bracket_number(text, score):
    verdict = RATING.parse(text)
    assert verdict.score == score and verdict.label == f"{score:g}"
    assert verdict.outcome == pytest.approx((score - 1) / 9)


@pytest.mark.parametrize("text", ["", None, "Rating: 7", "[7]", "Rating: [[0]]", "Rating: [[11]]", "[[seven]]",
                                  "Rating: [[-3]]"])
def test_text_without_an_in_scale_rating_has_no_verdict(text):
    assert RATING.parse(text) is None


@settings(max_examples=80, deadline=None)
@given(k=st.integers(1, 10), before=st.text(alphabet=st.characters(blacklist_characters="[]"), max_size=60))
def test_any_rating_after_any_preamble_round_trips(k, before):
    assert RATING.parse(f"{before}\nRating: [[{k}]]").score == k


def test_custom_scale_and_bad_scale():
    assert make_parser("rating", low=0, high=5).parse("[[0]]").score == 0
    with pytest.raises(Exception, match="high must exceed low"):
        make_parser("rating", low=5, high=5)


def _fastchat(name: str, **values) -> list[dict]:
    prompt = next(p for p in map(json.loads, PROMPTS.read_text().splitlines()) if p["name"] == name)
    return [{"role": "system", "content": prompt["system_prompt"].strip()},
            {"role": "user", "content": prompt["prompt_template"].format(**values).strip()}]


def _turns(*triples):
    return [{"question": q, "answer": a, "reference": r} for q, a, r in triples]


Q1, Q2, A1, A2, R1, R2 = "What is 2+2?", "And 3+3?", "It is 4.\n\nSure.", "6, {braces} kept", "4", "6"


@pytest.mark.parametrize("name, variables, values", [
    ("single-v1", dict(instruction=Q1, response=A1, reference=None, turns=_turns((Q1, A1, None))),
     dict(question=Q1, answer=A1)),
    ("single-v1", dict(instruction=Q1, response=A1, reference=None), dict(question=Q1, answer=A1)),
    ("single-math-v1", dict(instruction=Q1, response=A1, reference=R1, turns=_turns((Q1, A1, R1))),
     dict(question=Q1, answer=A1, ref_answer_1=R1)),
    ("single-v1-multi-turn", dict(instruction=Q2, response=A2, reference=None,
                                  turns=_turns((Q1, A1, None), (Q2, A2, None))),
     dict(question_1=Q1, answer_1=A1, question_2=Q2, answer_2=A2)),
    ("single-math-v1-multi-turn", dict(instruction=Q2, response=A2, reference=R2,
                                       turns=_turns((Q1, A1, R1), (Q2, A2, R2))),
     dict(question_1=Q1, answer_1=A1, question_2=Q2, answer_2=A2, ref_answer_1=R1, ref_answer_2=R2)),
])
def test_mtbench_single_renders_fastchats_prompt_for_each_case(name, variables, values):
    """The template's messages equal FastChat's prompt filled in (ends stripped, as every template block is)."""
    assert get_template("mtbench_single").messages(**variables) == _fastchat(name, **values)


def test_mtbench_single_template_uses_the_rating_parser_and_a_grammar_of_ratings():
    template = get_template("mtbench_single")
    assert template.kind == "pointwise" and template.parser.name == "rating1-10"
    assert "Rating: [[k]]" in template.reask()
    assert '"10"' in template.grammar() and '"1"' in template.grammar()


@pytest.mark.parametrize("name, reference, values", [
    ("pair-v2", None, dict(question=Q1, answer_a=A1, answer_b=A2)),
    ("pair-math-v1", R1, dict(question=Q1, answer_a=A1, answer_b=A2, ref_answer_1=R1)),
])
def test_mtbench_pair_renders_fastchats_pairwise_prompt(name, reference, values):
    template = get_template("mtbench_pair")
    assert template.pairwise_messages(Q1, A1, A2, reference) == _fastchat(name, **values)


def test_mtbench_pair_verdicts_are_a_b_and_c_for_a_tie():
    parser = make_parser("mtbench_pair")
    assert [parser.parse(f"so [[{x}]]").outcome for x in "ABC"] == [1.0, 0.0, 0.5]
    assert parser.parse('format: "[[A]]" ... my verdict: [[B]]').label == "B"
    assert parser.parse("[[D]]") is None


@pytest.mark.parametrize("name, refs", [("pair-v2-multi-turn", (None, None)), ("pair-math-v1-multi-turn", (R1, R2))])
def test_mtbench_pair_renders_fastchats_multi_turn_prompts(name, refs):
    turns = [{"question": Q1, "answer_a": A1, "answer_b": "B one", "reference": refs[0]},
             {"question": Q2, "answer_a": A2, "answer_b": "B two", "reference": refs[1]}]
    values = dict(question_1=Q1, question_2=Q2, answer_a_1=A1, answer_a_2=A2, answer_b_1="B one", answer_b_2="B two",
                  ref_answer_1=R1, ref_answer_2=R2)
    ours = get_template("mtbench_pair").pairwise_messages(Q2, A2, "B two", refs[1], turns=turns)
    assert ours == _fastchat(name, **values)
