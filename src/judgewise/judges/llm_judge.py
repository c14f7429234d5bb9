"""The LLM judge: game → template (shown order) → backend call → parse, re-asking once on a parse failure.

Call errors (:class:`RetryableCallError`, :class:`FatalCallError`) propagate to the scheduler, which owns
the one retry policy; a failed result is made here only for a prompt that cannot fit the judge's context, or
for a re-ask whose retries ran out (so the first, paid call still counts in the game's calls, tokens and cost).
"""

from __future__ import annotations

from dataclasses import dataclass

from judgewise.errors import ConfigError
from judgewise.judges.base import Backend, Completion, Game, JudgeResult, RetryableCallError
from judgewise.judges.templates import JudgeTemplate, get_template

REASK_SEPARATOR = "\n\n--- re-asked for a verdict ---\n\n"
NO_VERDICT_ERROR = "no well-formed verdict"  # how a stored failure of parsing (after the re-ask) begins


class PromptTooLongError(Exception):
    """The rendered prompt does not fit the judge's context window (an item-level, non-retryable failure)."""


@dataclass
class _Exchange:
    """Running totals of the calls made for one judgment."""

    texts: list[str]
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cost: float = 0.0
    tokens_cached: int = 0

    def add(self, completion: Completion) -> None:
        self.texts.append(completion.text or "")
        self.tokens_in += completion.tokens_in
        self.tokens_out += completion.tokens_out
        self.tokens_cached += completion.tokens_cached
        self.latency_s += completion.latency_s
        self.cost += completion.cost

    def result(self, verdict, error: str | None = None) -> JudgeResult:
        return JudgeResult(verdict=verdict, raw=REASK_SEPARATOR.join(self.texts), error=error,
                           tokens_in=self.tokens_in, tokens_out=self.tokens_out, latency_s=self.latency_s,
                           cost=self.cost, n_calls=max(1, len(self.texts)), tokens_cached=self.tokens_cached)


class LLMJudge:
    """A judge that prompts a chat model through a :class:`Backend` with a :class:`JudgeTemplate`.

    ``use_grammar`` sends the template's GBNF grammar (local backends and llama.cpp servers honour it);
    ``want_logprobs`` asks for logprobs and fills ``Verdict.soft`` when the backend returns them.
    """

    def __init__(self, backend: Backend, template: str | JudgeTemplate = "arena_hard_5way", *,
                 use_grammar: bool = False, want_logprobs: bool = False, max_tokens: int | None = None):
        self.backend = backend
        self.template = get_template(template)
        self._grammar = self.template.grammar() if use_grammar else None  # rendered once, sent with every call
        self.use_grammar = self._grammar is not None
        self.want_logprobs = want_logprobs
        self.max_tokens = max_tokens if max_tokens is not None else self.template.max_tokens
        self.identity = {**backend.identity, "template": self.template.name,
                         "template_version": self.template.version, "template_sha": self.template.sha,
                         "grammar": self.use_grammar, "max_tokens": self.max_tokens}

    async def judge(self, game: Game) -> JudgeResult:
        """Judge one game (pairwise templates): the verdict is from the view of the response shown first."""
        if self.template.kind != "pairwise":
            raise ConfigError(f"template {self.template.name!r} is {self.template.kind}: use grade(), "
                              "or a pairwise template to judge games")
        first, second = game.shown
        c = game.comparison
        turns = {"turns": game.shown_turns()} if c.turns else {}  # a multi-turn conversation
        return await self._ask(self.template.pairwise_messages(c.prompt, first, second, c.reference, **turns))

    async def grade(self, instruction: str, response: str, reference: str | None = None,
                    **variables) -> JudgeResult:
        """Judge one response alone (pointwise templates: MT-bench single, direct correctness, Likert); other
        ``variables`` (e.g. ``turns`` of a conversation) are passed to the template."""
        if self.template.kind != "pointwise":
            raise ConfigError(f"template {self.template.name!r} is {self.template.kind}: use judge(game)")
        return await self._ask(self.template.pointwise_messages(instruction, response, reference, **variables))

    async def _ask(self, messages: list[dict]) -> JudgeResult:
        exchange = _Exchange(texts=[])
        try:
            completion = await self._call(messages)
            exchange.add(completion)
            verdict = self._parse(completion)
            if verdict is None:
                followup = [*messages, {"role": "assistant", "content": completion.text or ""},
                            {"role": "user", "content": self.template.reask()}]
                completion = await self._call(followup)
                exchange.add(completion)
                verdict = self._parse(completion)
        except PromptTooLongError as exc:
            return exchange.result(None, error=f"prompt too long for the judge: {exc}")
        except RetryableCallError as exc:
            if not exchange.texts:
                raise  # nothing paid yet: the runner records the failure
            return exchange.result(None, error=f"re-ask for a verdict failed: {exc}")  # keeps the paid first call
        if verdict is None:
            refused = getattr(self.template.parser, "refused", None)  # a rating off the scale says which
            why = refused(exchange.texts[-1]) if refused else ""
            return exchange.result(None, error=f"{NO_VERDICT_ERROR} ({self.template.parser.expected}) "
                                               f"after {len(exchange.texts)} call(s)" + (f"; {why}" if why else ""))
        return exchange.result(verdict)

    async def _call(self, messages: list[dict]) -> Completion:
        return await self.backend.complete(
            messages, max_tokens=self.max_tokens, want_logprobs=self.want_logprobs,
            grammar=self._grammar)

    def _parse(self, completion: Completion):
        verdict = self.template.parser.parse(completion.text)
        if verdict is not None and self.want_logprobs:
            verdict.soft = self.template.parser.soft(completion.top_logprobs)
        return verdict
