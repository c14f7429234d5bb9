"""Echo (CLB App. F): repetition after the final answer — detection, correlation with wins, intervention.

Echo is "a failure mode in which a model, after producing its final answer, continues generating by
repeating sequences", as phrase repetition or as re-generated question–answer blocks (CLB App. F, §5.4).
The deterministic detector here looks, after the first final-answer statement (or, without one, at the
trailing part of the text), for (1) sentences/lines that repeat earlier ones, (2) new question–answer
blocks and (3) runs of repeated word n-grams. An optional LLM detector (CLB App. F.1) asks a backend.
The counterfactual intervention (CLB App. F.2) appends the question–answer sequence three times to one
side and re-judges; see :mod:`judgewise.analysis.echo_intervention`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from judgewise.analysis.bias import Proportion, proportion
from judgewise.io.schema import usable_mask

# Statements that give the final answer; the match that starts first ends the answer (name → regex).
_TO_SENTENCE_END = r"(?:[^\n.!?]|\.(?=\d))*[.!?]?"
ANSWER_MARKERS: dict[str, re.Pattern] = {
    "answer-is": re.compile(r"\b(?:the\s+)?(?:final\s+|correct\s+)?answer\s+is\b" + _TO_SENTENCE_END, re.I),
    "final-answer": re.compile(r"\bfinal\s+answer\s*[:：]" + _TO_SENTENCE_END, re.I),
    "boxed": re.compile(r"\\boxed\{[^{}]*\}[^\n]*"),
    "gsm8k": re.compile(r"^####\s*\S[^\n]*", re.M),
}
# Line-start markers of a question block and of an answer block (re-generated templates).
# the indent before a marker stays on its line ([^\S\n]): across blank lines it finds the same markers, in time
# quadratic in a run of them
QUESTION_MARK = re.compile(r"^[^\S\n]*(?:Q\d*|Question|Problem|Input|User|Human|Instruction)\s*[:：.]", re.I | re.M)
ANSWER_MARK = re.compile(r"^[^\S\n]*(?:A\d*|Answer|Output|Assistant|Response)\s*[:：]|\banswer\s+is\b", re.I | re.M)
_SEGMENT = re.compile(r"[^\n.!?]+[.!?]*")
_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_WORD = re.compile(r"\w+", re.U)


@dataclass
class EchoResult:
    """Whether ``text`` echoes; ``score`` ∈ [0, 1] the repeated share of its tail; ``kind`` which check
    fired (``repeated-sentences``, ``qa-blocks``, ``repeated-ngrams``, ``trailing-loop``); ``start`` the
    tail's char offset."""

    echo: bool
    score: float
    kind: str | None = None
    start: int | None = None


_NEXT_LINE = re.compile(r"\s*\n\s*[^\n]*")


def first_final_answer(text: str) -> re.Match | None:
    """The first final-answer statement of ``text``: of the :data:`ANSWER_MARKERS` matches, the one that starts
    first (on a tie, the first marker listed); None when there is none. A later match that ends earlier lies
    inside this statement ("\\boxed{5}. The answer is 5." is one statement, to the end of its line)."""
    found = [m for p in ANSWER_MARKERS.values() for m in [p.search(text)] if m]
    return min(found, key=lambda m: m.start()) if found else None


def final_answer_end(text: str) -> int | None:
    """Character offset where the first final-answer statement (:func:`first_final_answer`) ends, or None when
    there is none.

    A statement that ends with a colon ("The correct answer is:") continues on the next non-empty line.
    """
    first = first_final_answer(text)
    if first is None:
        return None
    end = first.end()
    if first.group().rstrip().endswith(":") or not first.group().strip(" *:\t"):
        follow = _NEXT_LINE.match(text, end)
        end = follow.end() if follow else end
    return end


def _norm(segment: str) -> str:
    return " ".join(_WORD.findall(segment.lower()))


def _segments(text: str) -> list[tuple[int, str]]:
    """(start offset, normalised text) of sentences/lines with at least 3 words."""
    out = []
    for m in _SEGMENT.finditer(text):
        norm = _norm(m.group())
        if len(norm.split()) >= 3:
            out.append((m.start(), norm))
    return out


def _tail_start(text: str, segments: list[tuple[int, str]], end: int | None) -> int | None:
    """Where to look for echo: after the final answer (``end``); else from the first copy of the last
    segment."""
    if end is not None:
        return end
    if not segments:
        return None
    last = segments[-1][1]
    first_copy = next(pos for pos, norm in segments if norm == last)
    return first_copy + 1 if first_copy < segments[-1][0] else None


def _trailing_loop(segments: list[tuple[int, str]], share: float = 0.75, min_copies: int = 3) -> int | None:
    """Start of a trailing loop: the longest suffix of segments that are mostly (``share``) repeats, holding
    at least ``min_copies`` repeats and a segment seen ``min_copies`` times. None when there is no loop."""
    seen: dict[str, int] = {}
    repeat = []
    for _, norm in segments:
        repeat.append(norm in seen)
        seen[norm] = seen.get(norm, 0) + 1
    best, count = None, 0
    for k in range(len(segments) - 1, -1, -1):
        count += repeat[k]
        if count >= share * (len(segments) - k):
            best = k
    if best is None:
        return None
    tail = [norm for _, norm in segments[best:]]
    if sum(repeat[best:]) < min_copies or max(seen[n] for n in tail) < min_copies:
        return None
    return segments[best][0]


def _tail_repeats(segments, start: int) -> tuple[int, int]:
    """(items at offset ≥ ``start`` that repeat an earlier item of the text, items at offset ≥ ``start``) for
    ``(offset, key)`` pairs in text order — sentence segments here, word n-grams in the n-gram share."""
    seen, repeats, tail = set(), 0, 0
    for pos, norm in segments:
        if pos >= start:
            tail += 1
            repeats += norm in seen
        seen.add(norm)
    return repeats, tail


def _blank_code(text: str) -> str:
    """Code blocks blanked out (same length, so offsets hold): repeated code lines are not echo."""
    return _CODE_FENCE.sub(lambda m: " " * len(m.group()), text)


def _ngram_repeat_share(text: str, start: int, n: int) -> tuple[float, int]:
    """Share of the tail's word n-grams already seen earlier in the text, and the tail's n-gram count."""
    words = [(m.start(), m.group().lower()) for m in _WORD.finditer(text)]
    grams = [(words[i][0], tuple(w for _, w in words[i:i + n])) for i in range(len(words) - n + 1)]
    repeated, tail = _tail_repeats(grams, start)
    return (repeated / tail if tail else 0.0), tail


def detect_echo(text: str, *, min_repeats: int = 2, repeat_share: float = 0.5, ngram: int = 5,
                ngram_share: float = 0.5, min_tail_ngrams: int = 10) -> EchoResult:
    """Deterministic echo detector (CLB App. F): repetition or new Q/A blocks after the final answer.

    The tail is the text after the first final-answer statement; without one, the text from the first copy
    of the last sentence, which must then consist of repeats only (so a song's returning chorus is not echo).
    Fenced code is ignored. Fires when the tail has ``min_repeats`` repeated sentences making up at least
    ``repeat_share`` of it, a new question–answer block, or mostly (``ngram_share``) repeated word n-grams;
    or, anywhere, when the text ends in a loop (a suffix of mostly repeated sentences, one seen 3+ times).
    """
    text = _blank_code(text or "")
    segments = _segments(text)
    answer_end = final_answer_end(text)
    start = _tail_start(text, segments, answer_end)
    loop = _trailing_loop(segments)
    if start is None and loop is None:
        return EchoResult(False, 0.0)
    start = start if start is not None else loop
    share, n_tail = _ngram_repeat_share(text, start, ngram)
    repeats, n_segments = _tail_repeats(segments, start)
    marker = answer_end is not None
    needed = repeat_share if marker else 1.0
    if repeats >= min_repeats and repeats >= needed * n_segments:
        return EchoResult(True, share, "repeated-sentences", start)
    tail = text[start:]
    question = QUESTION_MARK.search(tail) if marker else None
    if question and ANSWER_MARK.search(tail[question.end():]):
        return EchoResult(True, share, "qa-blocks", start)
    if marker and n_tail >= min_tail_ngrams and share >= ngram_share:
        return EchoResult(True, share, "repeated-ngrams", start)
    if loop is not None:
        return EchoResult(True, _ngram_repeat_share(text, loop, ngram)[0], "trailing-loop", loop)
    return EchoResult(False, share, None, start)


def echo_flags(responses: pd.DataFrame, detector=detect_echo) -> pd.DataFrame:
    """The responses table with ``echo`` (bool), ``echo_score`` and ``echo_kind`` columns added."""
    results = [detector(t) for t in responses["text"].fillna("").astype(str)]
    out = responses.copy()
    out["echo"] = [r.echo for r in results]
    out["echo_score"] = [r.score for r in results]
    out["echo_kind"] = [r.kind for r in results]
    return out


@dataclass
class EchoWins:
    """How echo relates to winning: Spearman ρ between (echo_a − echo_b) and outcome over all judgments,
    and P(the non-echoing side wins | exactly one side echoes) with its Wilson interval (CLB §5.4)."""

    spearman_rho: float
    spearman_pvalue: float
    clean_side_wins: Proportion
    n_judgments: int
    n_one_sided: int

    def as_dict(self) -> dict:
        return {"spearman_rho": self.spearman_rho, "spearman_pvalue": self.spearman_pvalue,
                "clean_side_wins": self.clean_side_wins.as_dict(), "n_judgments": self.n_judgments,
                "n_one_sided": self.n_one_sided}


def echo_win_correlation(judgments: pd.DataFrame, flagged: pd.DataFrame) -> EchoWins:
    """Correlate echo with judge preference (CLB App. F): ``flagged`` is :func:`echo_flags` output."""
    echo = flagged["echo"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)  # NA: no LLM verdict
    lookup = dict(zip(zip(flagged["prompt_id"].astype(str), flagged["model"].astype(str)), echo))
    d = judgments[usable_mask(judgments)]
    pid = d["prompt_id"].astype(str)
    ea = np.array([lookup.get(k, np.nan) for k in zip(pid, d["model_a"].astype(str))], dtype=float)
    eb = np.array([lookup.get(k, np.nan) for k in zip(pid, d["model_b"].astype(str))], dtype=float)
    ok = ~np.isnan(ea) & ~np.isnan(eb)
    diff, outcome = (ea - eb)[ok], d["outcome"].to_numpy(dtype=float)[ok]
    rho, p = (stats.spearmanr(diff, outcome) if len(diff) and np.ptp(diff) > 0 and np.ptp(outcome) > 0
              else (float("nan"), float("nan")))
    one = diff != 0
    clean_wins = np.where(diff[one] < 0, outcome[one], 1.0 - outcome[one])
    return EchoWins(float(rho), float(p), proportion(clean_wins), int(ok.sum()), int(one.sum()))
