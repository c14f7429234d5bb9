"""Comparisons from a responses table: the pool a design draws from and the join of comparisons with their texts.

Which comparisons to make is a design's business (:mod:`judgewise.designs`); here a list of
(prompt_id, model_a, model_b) triples becomes :class:`~judgewise.judges.base.Comparison` objects.
:func:`build_comparisons` joins the triples with the response and prompt texts, counting every triple it
cannot build (a missing response) instead of dropping it silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from judgewise.errors import ConfigError
from judgewise.judges.base import Comparison

Triple = tuple[str, str, str]
PROMPT_TEXT_COLUMNS = ("prompt", "instruction", "question")


@dataclass
class Pool:
    """The material a design draws from: responses, prompt texts (prompt_id → text), models and prompt ids."""

    responses: pd.DataFrame
    texts: dict[str, str]
    models: list[str]
    prompt_ids: list[str]
    turns: dict[str, list[str]] = field(default_factory=dict)  # prompt_id → user turns (multi-turn conversations)
    references: dict[str, list[str]] = field(default_factory=dict)  # prompt_id → reference answer turns (references:)
    every_turn: bool = False  # judge every turn of multi-turn prompts (run config turns: all), not only the first


@dataclass
class Built:
    """Comparisons built from a design, and the triples that could not be built (with the reason)."""

    comparisons: list[Comparison]
    skipped: list[str] = field(default_factory=list)


def prompt_texts(responses: pd.DataFrame, prompts: pd.DataFrame | None = None) -> dict[str, str]:
    """prompt_id → prompt text, from a prompts table or a prompt/instruction column of the responses."""
    for frame in (prompts, responses):
        if frame is None:
            continue
        col = next((c for c in PROMPT_TEXT_COLUMNS if c in frame.columns), None)
        if col is not None:
            rows = frame[frame[col].map(lambda x: isinstance(x, str))]
            return dict(zip(rows["prompt_id"].astype(str), rows[col]))
    first_turns = {p: t[0] for p, t in prompt_turns(responses, prompts).items()}
    if first_turns:  # MT-bench questions: {question_id, turns}
        return first_turns
    raise ConfigError("the judge needs each prompt's text: give `prompts:` (a table with prompt_id and one of "
                      f"{list(PROMPT_TEXT_COLUMNS)}) or responses with such a column")


def prompt_turns(responses: pd.DataFrame, prompts: pd.DataFrame | None = None) -> dict[str, list[str]]:
    """prompt_id → the user turns of a multi-turn prompt: a prompts table's ``turns`` column (MT-bench's
    question.jsonl) or the responses' ``prompt_turns`` (an MT-bench folder read by ``io.mtbench``); empty if none."""
    for frame, col in ((prompts, "turns"), (responses, "prompt_turns")):
        if frame is None or col not in frame.columns:
            continue
        turns = {}
        for p, value in zip(frame["prompt_id"].astype(str), frame[col]):
            value = value.tolist() if hasattr(value, "tolist") else value
            if isinstance(value, list) and value and all(isinstance(t, str) for t in value):
                turns.setdefault(p, value)
        if turns:
            return turns
    return {}


@dataclass(frozen=True)
class Answers:
    """Each (prompt_id, model)'s answer text and, for multi-turn prompts, its answers to every turn: the lookup
    :func:`build_comparisons` joins triples with, built once from a responses table (:meth:`of`) and kept by a
    caller that builds comparisons round after round (``judges.engine_verdicts``)."""

    texts: dict[tuple[str, str], str]
    turns: dict[tuple[str, str], list[str]]

    @classmethod
    def of(cls, responses: pd.DataFrame, every_turn: bool = True) -> "Answers":
        texts = dict(zip(zip(responses["prompt_id"].astype(str), responses["model"].astype(str)),
                         responses["text"]))
        return cls(texts, _answer_turns(responses) if every_turn else {})


def build_comparisons(responses: pd.DataFrame | Answers, triples: list[Triple], prompts: dict[str, str],
                      references: dict[str, list[str]] | None = None,
                      turns: dict[str, list[str]] | None = None) -> Built:
    """Join (prompt_id, model_a, model_b) triples with response and prompt texts (and the prompt's reference answer,
    which templates with a ``{% if reference %}`` slot show).

    With ``turns`` (prompt_id → user turns, given when every turn is to be judged) a multi-turn prompt whose two
    responses carry ``turns`` (their answers) becomes one comparison per turn: turn 1 as a single-turn comparison,
    turn k with the conversation up to it (``Comparison.turns``); a turn one model did not answer is skipped.
    ``responses``: the table, or its :class:`Answers` built once (``Answers.of(responses, bool(turns))``).
    """
    references = references or {}
    index = responses if isinstance(responses, Answers) else Answers.of(responses, bool(turns))
    texts, answers = index.texts, index.turns if turns else {}
    built = Built([])
    for p, a, b in triples:
        missing = [m for m in (a, b) if (p, m) not in texts]
        if missing or p not in prompts:
            why = f"no response from {missing}" if missing else "no prompt text"
            built.skipped.append(f"prompt {p!r}, {a!r} vs {b!r}: {why}")
            continue
        refs = references.get(p) or []
        refs = [refs] if isinstance(refs, str) else refs
        built.comparisons.append(Comparison(prompt_id=p, prompt=prompts[p], model_a=a, model_b=b,
                                            response_a=texts[(p, a)], response_b=texts[(p, b)],
                                            reference=refs[0] if refs else None))
        asked = (turns or {}).get(p) or []
        if len(asked) > 1:
            built.comparisons += _later_turns(p, a, b, asked, answers, refs, built.skipped)
    return built


def comparisons_per_pair(pool: Pool) -> int:
    """How many comparisons one pair of models (in one order) gives over the pool's prompts, as
    :func:`build_comparisons` builds them: one per prompt, or with ``pool.every_turn`` one per user turn of each
    multi-turn prompt (turns a model did not answer included: the most there can be)."""
    if not pool.every_turn:
        return len(pool.prompt_ids)
    return sum(max(1, len(pool.turns.get(p) or [])) for p in pool.prompt_ids)


def _answer_turns(responses: pd.DataFrame) -> dict[tuple[str, str], list[str]]:
    if "turns" not in responses.columns:
        return {}
    out = {}
    for p, m, value in zip(responses["prompt_id"], responses["model"], responses["turns"]):
        value = value.tolist() if hasattr(value, "tolist") else value
        if isinstance(value, list):
            out[(str(p), str(m))] = [str(v) for v in value]
    return out


def _later_turns(p: str, a: str, b: str, asked: list[str], answers: dict, refs: list, skipped: list) -> list:
    """Comparisons of turns 2.. of one conversation, each carrying the turns up to it."""
    ans_a, ans_b = answers.get((p, a), []), answers.get((p, b), [])
    n = min(len(asked), len(ans_a), len(ans_b))
    if n < len(asked):
        skipped.append(f"prompt {p!r}, {a!r} vs {b!r}: turns {max(n, 1) + 1}..{len(asked)} not answered by both")
    conversation = tuple((asked[i], ans_a[i], ans_b[i], refs[i] if i < len(refs) else None) for i in range(n))
    return [Comparison(prompt_id=p, prompt=asked[t], model_a=a, model_b=b, response_a=ans_a[t], response_b=ans_b[t],
                       reference=conversation[t][3], turns=conversation[:t + 1]) for t in range(1, n)]
