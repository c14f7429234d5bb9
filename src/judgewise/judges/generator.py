"""A model answering prompts through a backend, one turn per call, run by the judging engine into the generation store.

The judging engine (:func:`judgewise.judges.runner.arun_keyed`) runs any subject whose caller has ``identity`` and
``async judge(subject) -> JudgeResult``: here the subject is an :class:`AnswerItem` (a prompt's user turns up to
the one to answer, and the model's own earlier answers), the caller a :class:`Generator`, and each result one
:class:`~judgewise.store.generations.AnswerRecord`. So generation has the engine's scheduler (concurrency,
RPM/TPM limits, per-call timeout, the one retry policy), budget, progress callback, claims and answer journal.
Turn k of a conversation is asked with the conversation so far: the user turns 1..k and the model's answers 1..k-1
(FastChat's ``gen_model_answer`` and Arena-Hard's ``gen_answer`` do the same).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from judgewise.judges.base import Backend, JudgeResult
from judgewise.store.generations import AnswerRecord, GenerationStore
from judgewise.judges.llm_judge import PromptTooLongError
from judgewise.judges.game_keys import canonical_json
from judgewise.judges.run_result import RunResult, RunSettings
from judgewise.judges.runner import arun_keyed

EMPTY_ANSWER = "the model returned an empty answer"


@dataclass(frozen=True)
class AnswerItem:
    """One answer to generate: ``model``'s turn ``len(questions)`` on ``prompt_id``, after its ``answers`` to the
    earlier turns."""

    prompt_id: str
    model: str
    questions: tuple[str, ...]
    answers: tuple[str, ...] = ()

    @property
    def turn(self) -> int:
        return len(self.questions)

    def messages(self, system: str | None = None) -> list[dict]:
        """The chat messages of this turn: the system prompt (if any), then user/assistant turns, ending with the
        user's turn to answer."""
        out = [{"role": "system", "content": system}] if system else []
        for question, answer in zip(self.questions, self.answers):
            out += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        return out + [{"role": "user", "content": self.questions[-1]}]


@dataclass
class AnswerResult(JudgeResult):
    """What the engine gets back for one answer: the text in ``raw`` and the backend's ``finish_reason``."""

    finish_reason: str | None = None


class Generator:
    """``name`` answering through ``backend`` (the engine puts it under its scheduler for a run) with an optional
    ``system`` prompt and a ``max_tokens`` cap per answer. ``identity`` (secret-free) is hashed into
    :attr:`settings`, which enters every answer's key: changing the model, a sampling parameter, the cap or the
    system prompt makes new answers; the label ``name`` does not change the settings."""

    def __init__(self, name: str, backend: Backend, *, system: str | None = None, max_tokens: int | None = None):
        self.name, self.backend, self.system, self.max_tokens = name, backend, system, max_tokens
        self.identity = {"kind": "generator", "backend": dict(backend.identity), "system": system,
                         "max_tokens": max_tokens}
        self.settings = settings_hash(self.identity)

    async def judge(self, item: AnswerItem) -> AnswerResult:
        """Answer one turn (the engine's name for the call)."""
        try:
            comp = await self.backend.complete(item.messages(self.system), max_tokens=self.max_tokens)
        except PromptTooLongError as exc:  # the conversation does not fit the model's context: this answer fails
            return AnswerResult(verdict=None, error=f"prompt too long for the model: {exc}", n_calls=0)
        finish = (comp.raw or {}).get("finish_reason")
        error = None if comp.text.strip() else f"{EMPTY_ANSWER} (finish_reason {finish})"
        return AnswerResult(verdict=None, raw=comp.text, error=error, tokens_in=comp.tokens_in,
                            tokens_out=comp.tokens_out, latency_s=comp.latency_s, cost=comp.cost, n_calls=1,
                            finish_reason=finish)


def settings_hash(identity: dict) -> str:
    """The short hash of a generator's settings (its identity), shown in outputs and part of every answer key."""
    return hashlib.sha256(canonical_json(identity).encode("utf-8")).hexdigest()[:16]


def answer_key(model: str, settings: str, prompt_id: str, questions: tuple[str, ...] | list[str]) -> str:
    """Content hash of (model label, settings hash, prompt id, turn, the user turns up to it)."""
    payload = {"model": model, "settings": settings, "prompt_id": prompt_id, "turn": len(questions),
               "questions": list(questions)}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def answer_record(key: str, item: AnswerItem, identity: dict, result: JudgeResult) -> AnswerRecord:
    """The store row of one answer (the engine's ``record``)."""
    ok = result.error is None
    return AnswerRecord(key=key, model=item.model, prompt_id=item.prompt_id, turn=item.turn,
                        settings=settings_hash(identity),
                        identity=canonical_json(identity), question=item.questions[-1],
                        status="ok" if ok else "failed", text=result.raw if ok else None,
                        error=None if ok else result.error, finish_reason=getattr(result, "finish_reason", None),
                        tokens_in=result.tokens_in, tokens_out=result.tokens_out, latency_s=result.latency_s,
                        cost=result.cost, n_calls=result.n_calls)


def _export(frame):
    """The engine's export: the store rows, ``key`` also as ``judgment_id`` (the engine orders rows by it)."""
    return frame.assign(judgment_id=frame["key"]).reset_index(drop=True)


async def agenerate(items: dict[str, AnswerItem], generator: Generator, store: GenerationStore,
                    settings: RunSettings | None = None, *, progress=None, **options) -> RunResult:
    """Generate every answer of ``items`` (key → item, as :func:`answer_key` makes them) not stored yet, through the
    judging engine: options as :func:`judgewise.judges.runner.run_judging` (``concurrency``, ``limits``,
    ``timeout_s``, ``retry``, ``budget``, ``retry_failed``, ``progress``, ...; ``orders`` is ignored). The result's
    ``judgments`` are the store rows of ``items``."""
    return await arun_keyed(items, generator, store, RunSettings.of(settings, **options), n_items=len(items),
                            n_planned=len(items), record=answer_record, export=_export, progress=progress)
