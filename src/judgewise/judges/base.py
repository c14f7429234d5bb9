"""The contracts between judging stages: comparison, completion, backend, template and verdict.

The engine is a chain (alpaca_eval style) — comparison → prompt (template) → call (backend) → parse
(parser) → store — each stage a small object looked up by name in a registry a user can extend.
Position convention: inside the engine, "A" is the response *shown first* and "B" the one shown second;
the scheduler maps a verdict back to the canonical ``model_a`` view when it writes judgments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from judgewise.redaction import scrub


@dataclass(frozen=True)
class Comparison:
    """One thing to judge: a prompt and two models' responses to it (canonical model_a/model_b order)."""

    prompt_id: str
    prompt: str
    model_a: str
    model_b: str
    response_a: str
    response_b: str
    reference: str | None = None  # optional reference answer some templates show
    #: a multi-turn conversation: (question, answer_a, answer_b, reference) per turn up to the judged one, whose
    #: question and answers are ``prompt``/``response_a``/``response_b`` (empty: a single-turn comparison)
    turns: tuple = ()


class MessagesJson:
    """``encode(messages)`` for a list of chat messages, made from each message's ``encode`` joined as JSON's default
    separators join a list's items; a system message's text is kept (a template's system prompt, a few kilobytes, is
    the same every call: encoded once, not for the request body and the call key of every call). ``encode``: a
    ``json.dumps`` with its options, at most :attr:`MAX_KEPT` system messages kept."""

    MAX_KEPT = 64

    def __init__(self, encode: Any) -> None:
        self.encode = encode
        self.kept: dict[tuple, str] = {}

    def __call__(self, messages: Any) -> str:
        if type(messages) is not list:
            return self.encode(messages)
        parts = []
        for m in messages:
            if type(m) is dict and len(m) == 2 and m.get("role") == "system" and type(m.get("content")) is str:
                key = (tuple(m), m["content"])  # its key order too: JSON without sort_keys keeps it
                text = self.kept.get(key)
                if text is None:
                    text = self.encode(m)
                    if len(self.kept) < self.MAX_KEPT:
                        self.kept[key] = text
                parts.append(text)
            else:
                parts.append(self.encode(m))
        return f"[{', '.join(parts)}]"


@dataclass
class Completion:
    """What a backend returned for one call (no secrets, ever)."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cost: float = 0.0
    tokens_cached: int = 0  # of tokens_in, read from the server's prompt cache (billed at the cached-input price)
    # token -> logprob of the candidates at the verdict position, when the backend returns logprobs
    top_logprobs: list[dict[str, float]] | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class Verdict:
    """A parsed verdict from the view of the response shown first ("A").

    ``outcome`` in [0, 1] is A's result (1 win, 0.5 tie, 0 loss, fractional when soft); ``verdict5`` in
    {-2..2} when the template has a 5-way scale; ``label`` the literal token (e.g. ``A>>B``, ``1``, ``correct``).
    """

    outcome: float | None
    verdict5: int | None = None
    label: str | None = None
    soft: float | None = None  # P(A better) renormalised over verdict tokens from logprobs
    score: float | None = None  # a pointwise rating (e.g. MT-bench's 1–10), when the parser reads one


class RetryableCallError(Exception):
    """A call failed in a way that retrying may fix (429, 5xx, timeout, dropped connection, malformed body).

    ``maybe_charged`` is True when the request was sent and the client gave up waiting (a timeout): the
    server may still have answered, and billed, a call whose answer never arrived.
    """

    def __init__(self, message: str, *, retry_after: float | None = None, status: int | None = None,
                 maybe_charged: bool = False):
        super().__init__(scrub(message))
        self.retry_after, self.status, self.maybe_charged = retry_after, status, maybe_charged


class AnswerRefusedError(RetryableCallError):
    """A whole answer came and cannot be used (larger than the answer cap): a failed game at once, never retried
    (asking again would pay for the same answer again), stored with this reason."""


class MalformedResponseError(RetryableCallError):
    """An HTTP 200 whose body is not a chat completion (HTML, invalid or truncated JSON, an empty body, a
    JSON array or scalar, an object without ``choices``, wrong types inside): a failed attempt, retried."""


class FatalCallError(Exception):
    """A call failed in a way retries cannot fix (400, 401, 404): the run must stop with this message."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(scrub(message))
        self.status = status


@runtime_checkable
class Backend(Protocol):
    """Something that answers chat messages. ``identity`` is JSON-serialisable, secret-free, and part of
    every store key (backend kind, model, sampling parameters)."""

    identity: dict

    async def complete(self, messages: list[dict], *, max_tokens: int | None = None,
                       want_logprobs: bool = False, grammar: str | None = None) -> Completion: ...


@dataclass(frozen=True)
class Game:
    """One judge call's subject: a comparison shown in one order (``swapped`` = model_b shown first)."""

    comparison: Comparison
    swapped: bool = False

    @property
    def first_model(self) -> str:
        return self.comparison.model_b if self.swapped else self.comparison.model_a

    @property
    def shown(self) -> tuple[str, str]:
        """(first response text, second response text) as the judge sees them."""
        c = self.comparison
        return (c.response_b, c.response_a) if self.swapped else (c.response_a, c.response_b)

    def shown_turns(self) -> list[dict]:
        """The conversation's turns as the judge sees them: ``{question, answer_a, answer_b, reference}``, answer_a
        being the response shown first."""
        out = []
        for question, a, b, reference in self.comparison.turns:
            first, second = (b, a) if self.swapped else (a, b)
            out.append({"question": question, "answer_a": first, "answer_b": second, "reference": reference})
        return out


def games_per_comparison(orders: str) -> int:
    """Judge calls one comparison costs in ``orders`` (:data:`judgewise.judges.game_keys.ORDERS`): 2 for "both"
    (each shown first once), 1 for "one"."""
    return 2 if orders == "both" else 1


@dataclass
class JudgeResult:
    """The outcome of judging one game: parsed verdict (shown-first view) or an error, plus call stats."""

    verdict: Verdict | None
    raw: str = ""
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cost: float = 0.0
    n_calls: int = 1  # 2 when the judge was re-asked for a verdict
    tokens_cached: int = 0  # of tokens_in, read from the prompt cache


@runtime_checkable
class Judge(Protocol):
    """Judges one game. LLM judges chain template → backend → parser; simulated/replay judges answer
    directly. ``identity`` (JSON-serialisable, secret-free) enters the store key."""

    identity: dict

    async def judge(self, game: Game) -> JudgeResult: ...
