"""The optional LLM echo detector (CLB App. F.1): a pointwise template through the judging engine.

The model is shown the question and one answer with a description of echo and examples (CLB App. G.2's
structure, our wording, in ``analysis/templates/echo_detect.j2``) and answers ``Echo: yes`` / ``Echo: no``.
Calls go through :class:`~judgewise.judges.llm_judge.LLMJudge` (one re-ask on a malformed reply) under the
engine's scheduler (:class:`~judgewise.judges.scheduler.ScheduledBackend`: concurrency, retries, timeouts).
"""

from __future__ import annotations

import asyncio
import re
from importlib import resources

import pandas as pd

from judgewise.judges import eventloop
from judgewise.judges.base import Backend
from judgewise.judges.llm_judge import LLMJudge
from judgewise.judges.parsing import PARSERS, RegexParser, binary_parser
from judgewise.judges.scheduler import ScheduledBackend
from judgewise.judges.templates import JudgeTemplate, parse_template

TEMPLATE_FILE = "echo_detect.j2"


def echo_presence() -> RegexParser:
    """Parser of ``Echo: yes`` / ``Echo: no`` (last one wins); outcome 1 = echo."""
    return binary_parser("echo_presence", re.compile(r"\becho\b\s*(?:[:=]\s*)?(?:\*+\s*)?(yes|no)\b", re.IGNORECASE),
                         ("yes", "no"), normalise=str.lower, expected='"Echo: yes" or "Echo: no"')


def echo_template() -> JudgeTemplate:
    """The echo-detection template (registers its parser in ``PARSERS`` on first use)."""
    PARSERS.setdefault("echo_presence", echo_presence)
    source = resources.files("judgewise.analysis").joinpath("templates", TEMPLATE_FILE).read_text("utf-8")
    return parse_template(source, f"judgewise/analysis/templates/{TEMPLATE_FILE}")


def echo_judge(backend: Backend, *, use_grammar: bool = True) -> LLMJudge:
    """An LLM judge that answers whether one response echoes."""
    return LLMJudge(backend, echo_template(), use_grammar=use_grammar)


async def _grade_all(judge: LLMJudge, prompts: list[str], texts: list[str]):
    return await asyncio.gather(*(judge.grade(p, t) for p, t in zip(prompts, texts)))


def llm_echo_flags(responses: pd.DataFrame, backend: Backend, *, prompts: dict[str, str] | None = None,
                   concurrency: int = 4, use_grammar: bool = True, seed: int = 0) -> pd.DataFrame:
    """The responses table with ``echo`` (True/False, NA when the model gave no verdict), ``echo_kind`` =
    "llm" and ``echo_error`` columns, from the LLM detector. ``prompts`` maps prompt_id → question (default:
    the ``instruction`` column when present, else empty)."""
    judge = echo_judge(ScheduledBackend(backend, concurrency=concurrency, seed=seed), use_grammar=use_grammar)
    if prompts is None and "instruction" in responses.columns:
        questions = responses["instruction"].fillna("").astype(str).tolist()
    else:
        questions = [(prompts or {}).get(str(p), "") for p in responses["prompt_id"]]
    results = eventloop.run(_grade_all(judge, questions, responses["text"].fillna("").astype(str).tolist()))
    out = responses.copy()
    out["echo"] = pd.array([None if r.verdict is None else r.verdict.outcome == 1.0 for r in results],
                           dtype="boolean")
    out["echo_kind"] = "llm"
    out["echo_error"] = [r.error for r in results]
    return out
