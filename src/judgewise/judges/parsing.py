"""Verdict parsers: the last well-formed verdict in a judge's text, and soft scores from logprobs.

Each parser turns a completion into a :class:`~judgewise.judges.base.Verdict` from the view of the response
shown first ("A"), or ``None`` when the text holds no well-formed verdict (the judge then re-asks once).
Parsers live in ``PARSERS`` (name → factory) so a user can add one and name it in a template file.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from judgewise.errors import ConfigError
from judgewise.registry import Registry
from judgewise.io.schema import VERDICT5, VERDICT5_TOKEN, normalise_label, verdict_outcome
from judgewise.judges.base import Verdict

# Characters that surround a verdict token in a tokenizer's pieces ("▁a", " (a", "1)", "**2**").
_TOKEN_NOISE = " \t\n\r▁Ġ()[]*\"'`:.,"


def normalise_token(token: str) -> str:
    """A tokenizer piece reduced to its verdict content: no spaces, brackets or quotes, lower case."""
    return token.strip(_TOKEN_NOISE).lower()


def soft_from_logprobs(top_logprobs: list[dict[str, float]] | None,
                       token_values: Mapping[str, float]) -> float | None:
    """Expected outcome at the verdict position, renormalised over the verdict tokens.

    ``top_logprobs`` holds one ``{token: logprob}`` dict per generated position. The verdict position is
    the LAST one whose most likely token is a verdict token (so reasoning before the verdict is skipped).
    Probabilities of pieces that normalise to the same verdict token are summed, then renormalised over
    the verdict tokens present: ``sum_t p(t)·value(t) / sum_t p(t)``, computed in log space (each ``p(t)`` scaled by
    the largest, so that logprobs of 800 or -1000 — not probabilities, but what a server may send — neither
    overflow nor vanish); logprobs that are not finite count for nothing. ``None`` when no position qualifies.
    """
    if not top_logprobs or not token_values:
        return None
    for candidates in reversed(top_logprobs):
        if not candidates:
            continue
        best = max(candidates, key=candidates.get)
        if normalise_token(best) not in token_values:
            continue
        logs: dict[str, list[float]] = {}
        for token, logprob in candidates.items():
            key = normalise_token(token)
            if key in token_values and math.isfinite(logprob):
                logs.setdefault(key, []).append(logprob)
        if not logs:
            return None
        top = max(lp for lps in logs.values() for lp in lps)  # log-sum-exp: exp never overflows nor underflows
        mass = {k: sum(math.exp(lp - top) for lp in lps) for k, lps in logs.items()}  # the largest term is 1
        return sum(p * token_values[k] for k, p in mass.items()) / sum(mass.values())
    return None


@dataclass(frozen=True)
class RegexParser:
    """Finds every match of ``pattern`` in the text and maps the LAST one's label through ``verdicts``.

    ``normalise`` turns the matched group into a canonical label (e.g. ``"A < B"`` → ``"B>A"``);
    ``verdicts`` maps labels to Verdicts; ``token_values`` maps verdict tokens (normalised tokenizer pieces)
    to the outcome they stand for, for soft scores from logprobs (empty when the verdict spans tokens).
    """

    name: str
    pattern: re.Pattern
    verdicts: Mapping[str, Verdict]
    normalise: Callable[[str], str] = str
    token_values: Mapping[str, float] = field(default_factory=dict)
    expected: str = ""  # how a well-formed verdict looks, for error messages

    @property
    def labels(self) -> list[str]:
        return list(self.verdicts)

    def parse(self, text: str | None) -> Verdict | None:
        """The last well-formed verdict in ``text`` (as a fresh Verdict), or ``None``."""
        if not text:
            return None
        label = None
        for groups in reversed(self.pattern.findall(text)):  # found in C; the last well-formed one is looked for
            candidate = self.normalise(groups if isinstance(groups, str) else next((g for g in groups if g), ""))
            if candidate in self.verdicts:
                label = candidate
                break
        if label is None:
            return None
        v = self.verdicts[label]
        return Verdict(outcome=v.outcome, verdict5=v.verdict5, label=v.label, score=v.score)

    def soft(self, top_logprobs: list[dict[str, float]] | None) -> float | None:
        """Soft outcome from logprobs (see :func:`soft_from_logprobs`); ``None`` when unavailable."""
        return soft_from_logprobs(top_logprobs, self.token_values)


def binary_parser(name: str, pattern: re.Pattern, keys: tuple[str, str], *, labels: tuple[str, str] | None = None,
                  normalise: Callable[[str], str] = str, expected: str = "") -> RegexParser:
    """A two-verdict parser: the matched ``keys[0]`` is outcome 1 (the side shown first, or "yes"), ``keys[1]``
    outcome 0; ``labels`` are the literal tokens stored (default the keys); soft scores from the two keys."""
    first, second = keys
    shown = labels or keys
    return RegexParser(name=name, pattern=pattern,
                       verdicts={first: Verdict(outcome=1.0, label=shown[0]),
                                 second: Verdict(outcome=0.0, label=shown[1])},
                       normalise=normalise, token_values={first: 1.0, second: 0.0}, expected=expected)


# --- Arena-Hard 5-way: [[A>>B]] … [[B>>A]] (Anchor §2: v ∈ {-2..2}, collapsed to {0, .5, 1} for win rate; the
# labels, aliases and collapse are judgewise.io.schema's)

def arena_hard_5way() -> RegexParser:
    """Parser for Arena-Hard's ``[[A>>B]]``-style labels (last one wins; ``A<B`` spellings accepted)."""
    return RegexParser(
        name="arena_hard_5way",
        pattern=re.compile(VERDICT5_TOKEN, re.IGNORECASE),
        verdicts={k: Verdict(outcome=verdict_outcome(v), verdict5=v, label=k) for k, v in VERDICT5.items()},
        normalise=normalise_label,
        expected="one of " + ", ".join(f"[[{k}]]" for k in VERDICT5),
    )


def llmbar_binary() -> RegexParser:
    """Parser for LLMBar's ``Output (a)`` / ``Output (b)`` answer (Arena-lite §A.8)."""
    return binary_parser("llmbar_binary", re.compile(r"Output\s*\(\s*([ab])\s*\)", re.IGNORECASE), ("a", "b"),
                         labels=("Output (a)", "Output (b)"), normalise=str.lower,
                         expected='"Output (a)" or "Output (b)"')


def clb_confidence() -> RegexParser:
    """Parser for CLB §3.2.1's "which answer are you more confident in … 1 or 2?".

    Accepts ``Answer: 2`` / ``answer is **1**`` or a line that is only the digit; the last one is the
    verdict ("Answer 2 is wrong" is not a verdict). Answer 1 is the one shown first. The digit's line is matched
    within itself (spaces, ``*``, ``#``, ``>`` before; spaces, ``*``, ``.`` after, never a newline): letting those
    runs cross lines found the same digits but took time quadratic in the text (46 s for 2 MB of ``*`` lines).
    No two runs of spaces meet in a pattern here (two runs with only an optional colon between them make the
    engine try every split of a long run of spaces: quadratic too).
    """
    pattern = re.compile(r"\banswer\b(?:\s*:|\s+is\b:?)\s*(?:\*+\s*)?([12])\b"
                         r"|^(?:[^\S\n]|[*#>])*([12])(?:[^\S\n]|[*.])*$", re.IGNORECASE | re.MULTILINE)
    return binary_parser("clb_confidence", pattern, ("1", "2"), expected='"Answer: 1" or "Answer: 2"')


def direct_correctness() -> RegexParser:
    """Pointwise parser for CLB §3.2.2's direct judge: correct / incorrect / not_attempted.

    Reads ``Grade: <label>`` (last one wins) or a reply that is only the label. ``outcome`` is 1 for
    correct, 0 for incorrect, ``None`` for not_attempted (CLB reports "correct given attempted").
    """
    return RegexParser(
        name="direct_correctness",
        pattern=re.compile(r"(?:\bgrade\b\s*(?:[:=]\s*)?|\A\s*)(?:\*+\s*)?(not[_ \-]attempted|incorrect|correct)\b",
                           re.IGNORECASE),
        verdicts={"correct": Verdict(outcome=1.0, label="correct"),
                  "incorrect": Verdict(outcome=0.0, label="incorrect"),
                  "not_attempted": Verdict(outcome=None, label="not_attempted")},
        normalise=lambda s: re.sub(r"[ \-]", "_", s.lower()),
        token_values={"correct": 1.0, "incorrect": 0.0, "not": 0.0},
        expected='"Grade: correct", "Grade: incorrect" or "Grade: not_attempted"',
    )


def likert(scale: int = 5) -> RegexParser:
    """Pointwise parser for a 1..K rating written ``Rating: [[k]]`` (or ``[[k]]``); outcome (k-1)/(K-1)."""
    scale = int(scale)
    if scale < 2:
        raise ConfigError(f"likert parser: scale must be an integer >= 2, found {scale}")
    labels = [str(k) for k in range(1, scale + 1)]
    values = {s: (int(s) - 1) / (scale - 1) for s in labels}
    return RegexParser(
        name=f"likert{scale}",
        pattern=re.compile(r"(?:\[\[\s*|\brating\b\s*(?:[:=]\s*)?\**)(\d+)(?:\s*\]\]|(?![0-9.]))", re.IGNORECASE),
        verdicts={s: Verdict(outcome=values[s], label=s, score=float(s)) for s in labels},
        token_values=values,
        expected=f'"Rating: [[k]]" with k an integer from 1 to {scale}',
    )


def mtbench_pair() -> RegexParser:
    """Parser for MT-bench's pairwise verdict (FastChat pair-v2): ``[[A]]`` A better, ``[[B]]`` B better, ``[[C]]``
    tie; the last one wins (FastChat checks A, then B, then C)."""
    return RegexParser(
        name="mtbench_pair", pattern=re.compile(r"\[\[\s*([ABC])\s*\]\]", re.IGNORECASE),
        verdicts={"A": Verdict(outcome=1.0, label="A"), "B": Verdict(outcome=0.0, label="B"),
                  "C": Verdict(outcome=0.5, label="C")},
        normalise=str.upper, token_values={"a": 1.0, "b": 0.0, "c": 0.5}, expected='"[[A]]", "[[B]]" or "[[C]]"')


@dataclass(frozen=True)
class RatingParser:
    """A numeric rating written ``[[k]]`` / ``Rating: [[k]]`` (MT-bench's single-answer format; decimals such as
    ``[[7.5]]`` are read as FastChat reads them). The LAST rating in ``[low, high]`` is the verdict (package
    convention; FastChat takes the first); ``score`` is the rating, ``outcome`` it rescaled to [0, 1]. A text with
    no such rating, or only ratings outside the scale, has no verdict (the judge re-asks once, then the grade is
    stored as failed and counted)."""

    name: str
    low: float
    high: float
    pattern: re.Pattern = re.compile(r"\[\[\s*(\d+(?:\.\d+)?)\s*\]\]")
    token_values: Mapping[str, float] = field(default_factory=dict)
    expected: str = ""

    @property
    def labels(self) -> list[str]:
        return [str(k) for k in range(int(self.low), int(self.high) + 1)]

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """The whole-number ratings as labels → Verdicts (decimal ratings parse too)."""
        return {k: Verdict(outcome=(float(k) - self.low) / (self.high - self.low), label=k, score=float(k))
                for k in self.labels}

    def parse(self, text: str | None) -> Verdict | None:
        """The last in-scale ``[[k]]`` rating of ``text`` as a Verdict (``score`` = k), or ``None``."""
        ratings = [float(m.group(1)) for m in self.pattern.finditer(text or "")]
        ratings = [r for r in ratings if self.low <= r <= self.high]
        if not ratings:
            return None
        score = ratings[-1]
        label = f"{score:g}"
        return Verdict(outcome=(score - self.low) / (self.high - self.low), label=label, score=score)

    def refused(self, text: str | None) -> str:
        """Why ``text`` has no verdict when it holds ratings off the scale (``"rating 7 is outside 1-5"``), else
        "" — a grade outside a rubric's scale is a failed grade, and its error says so."""
        outside = [m.group(1) for m in self.pattern.finditer(text or "")
                   if not self.low <= float(m.group(1)) <= self.high]
        return f"rating {outside[-1]} is outside {self.low:g}-{self.high:g}" if outside else ""

    def soft(self, top_logprobs: list[dict[str, float]] | None) -> float | None:
        """Expected rescaled rating from logprobs at the rating position (single-token ratings only)."""
        return soft_from_logprobs(top_logprobs, self.token_values)


def rating(low: int = 1, high: int = 10) -> RatingParser:
    """Parser for MT-bench's single-answer grading: ``Rating: [[k]]`` with k in ``[low, high]`` (default 1–10)."""
    low, high = int(low), int(high)
    if high <= low:
        raise ConfigError(f"rating parser: high must exceed low, found low={low}, high={high}")
    values = {str(k): (k - low) / (high - low) for k in range(low, high + 1)}
    return RatingParser(name=f"rating{low}-{high}", low=low, high=high, token_values=values,
                        expected=f'"Rating: [[k]]" with k a number from {low} to {high}')


PARSERS: Registry[Callable[..., RegexParser]] = Registry("verdict parser", {
    "arena_hard_5way": arena_hard_5way,
    "llmbar_binary": llmbar_binary,
    "clb_confidence": clb_confidence,
    "direct_correctness": direct_correctness,
    "likert": likert,
    "rating": rating,
    "mtbench_pair": mtbench_pair,
})


def make_parser(name: str, **options) -> RegexParser:
    """Build the parser registered as ``name``; template metadata options it takes (e.g. ``scale``) are
    passed on, others ignored."""
    if name not in PARSERS:
        raise ConfigError(f"unknown verdict parser {name!r}; known: {', '.join(sorted(PARSERS))}")
    factory = PARSERS[name]
    accepted = inspect.signature(factory).parameters
    return factory(**{k: v for k, v in options.items() if k in accepted})
