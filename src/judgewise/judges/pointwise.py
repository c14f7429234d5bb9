"""Pointwise (single-answer) grading: one model's answer → template → judge → rating, stored in the judging store.

MT-bench's single-answer grading (FastChat ``llm_judge``) is the model: every turn of every (question, model)
conversation is graded on its own — turn 1 shown alone, turn k with the conversation up to it — optionally against
a reference answer per turn (the ``mtbench_single`` template picks FastChat's single-v1 / single-math-v1 /
multi-turn prompts from what it is given). A grade is one store row (``mode`` single, ``model_b`` empty, ``score``
the rating, ``turn`` the turn graded), keyed by the judge's identity and the conversation, so a rerun pays for
nothing already stored and a grade with no parsable rating is stored as failed and counted, never dropped.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import pandas as pd

from judgewise.errors import ConfigError
from judgewise.judges import eventloop
from judgewise.judges.base import JudgeResult
from judgewise.judges.estimate import Estimate, costed_estimate, plan_label
from judgewise.judges.game_keys import canonical_json, judge_name, template_name
from judgewise.judges.llm_judge import NO_VERDICT_ERROR
from judgewise.judges.prompt_cache import cached_tokens_in_order, text_segments
from judgewise.judges.run_result import RunResult, RunSettings
from judgewise.judges.run_store import opened_store
from judgewise.judges.runner import arun_keyed, closing_backend
from judgewise.judges.scheduler import estimate_tokens
from judgewise.store.judgments import POINTWISE, GameRecord, export_grades
from judgewise.store.opening import Location
from judgewise.store.protocol import JudgmentStoreLike

DEFAULT_TEMPLATE = "mtbench_single"


@dataclass(frozen=True)
class Turn:
    """One exchange of a conversation: the user's question, the model's answer, and the reference answer if any."""

    question: str
    answer: str
    reference: str | None = None


@dataclass(frozen=True)
class GradeItem:
    """What one grade judges: ``model``'s conversation on ``prompt_id`` up to the graded turn (``turns[-1]``)."""

    prompt_id: str
    model: str
    turns: tuple[Turn, ...]

    @property
    def turn(self) -> int:
        """The graded turn, 1-based."""
        return len(self.turns)

    def variables(self) -> dict:
        """Template variables: ``instruction``/``response``/``reference`` of the graded turn and ``turns`` (a list of
        ``{question, answer, reference}``)."""
        last = self.turns[-1]
        return {"instruction": last.question, "response": last.answer, "reference": last.reference,
                "turns": [{"question": t.question, "answer": t.answer, "reference": t.reference} for t in self.turns]}


@dataclass
class BuiltGrades:
    """Grade items built from the tables, and what could not be graded (with the reason)."""

    items: list[GradeItem]
    skipped: list[str] = field(default_factory=list)


def _turn_list(value, fallback) -> list | None:
    if isinstance(value, (list, tuple)) and len(value):
        return [str(v) for v in value]
    if hasattr(value, "tolist") and len(value):  # a numpy array from parquet
        return [str(v) for v in value.tolist()]
    return None if fallback is None else [fallback]


def grade_items(responses: pd.DataFrame, questions: dict[str, list[str]], references: dict[str, list[str]],
                models: list[str], prompt_ids: list[str], *, first_turn_only: bool = False) -> BuiltGrades:
    """One item per (prompt, model, turn): ``questions`` maps prompt_id → user turns, ``references`` prompt_id →
    reference turns; a response's ``turns`` column (or its ``text``) gives its answers. A turn with no answer (or no
    question) is not graded and is listed in ``skipped``. ``first_turn_only`` grades only each conversation's first
    turn."""
    wanted_models, wanted_prompts = set(models), set(prompt_ids)
    has_turns = "turns" in responses.columns
    built = BuiltGrades([])
    for row in responses.itertuples(index=False):
        p, m = str(row.prompt_id), str(row.model)
        if m not in wanted_models or p not in wanted_prompts:
            continue
        asked = questions.get(p)
        if not asked:
            built.skipped.append(f"prompt {p!r}, {m!r}: no prompt text")
            continue
        answers = _turn_list(getattr(row, "turns") if has_turns else None, row.text)
        refs = references.get(p) or []
        n = min(len(asked), len(answers))
        if len(answers) < len(asked):
            built.skipped.append(f"prompt {p!r}, {m!r}: {len(answers)} answer turn(s) to {len(asked)} question turns; "
                                 f"turns {n + 1}..{len(asked)} not graded")
        turns = tuple(Turn(asked[t], answers[t], refs[t] if t < len(refs) else None) for t in range(n))
        for t in range(min(n, 1) if first_turn_only else n):
            built.items.append(GradeItem(p, m, turns[:t + 1]))
    return built


class PointwiseJudge:
    """An LLM judge with a pointwise template, grading :class:`GradeItem` s (the runner's ``judge(subject)``)."""

    def __init__(self, llm):
        template = getattr(llm, "template", None)
        if template is None or template.kind != "pointwise":
            shown = f"template {template.name!r} is {template.kind}" if template is not None else "it has no template"
            raise ConfigError(f"pointwise grading (judge.mode: single) needs an LLM judge with a pointwise template "
                              f"(e.g. {DEFAULT_TEMPLATE}, likert, direct_correctness); {shown}")
        self.llm = llm
        self.template = template
        self.identity = {**llm.identity, "mode": POINTWISE}

    @property
    def backend(self):
        return self.llm.backend

    @backend.setter
    def backend(self, value) -> None:  # the runner puts the backend under its scheduler for a run
        self.llm.backend = value

    async def judge(self, item: GradeItem) -> JudgeResult:
        v = item.variables()
        return await self.llm.grade(v.pop("instruction"), v.pop("response"), v.pop("reference"), **v)


def grade_key(identity: dict, item: GradeItem) -> str:
    """Content hash of (judge identity, prompt, model, the conversation up to the graded turn)."""
    payload = {"judge": identity, "mode": POINTWISE, "prompt_id": item.prompt_id, "model": item.model,
               "turns": [[t.question, t.answer, t.reference] for t in item.turns]}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def grade_record(key: str, item: GradeItem, identity: dict, result: JudgeResult) -> GameRecord:
    """A store row of one grade: ``score`` the rating (a categorical grade's outcome, e.g. correct 1 / incorrect 0;
    empty for ``not_attempted``), ``label`` as the judge wrote it, ``model_b`` empty."""
    v = result.verdict
    ok = v is not None and result.error is None
    score = None if v is None else (v.score if v.score is not None else v.outcome)
    return GameRecord(
        key=key, prompt_id=item.prompt_id, model_a=item.model, model_b="", first=item.model, swapped=False,
        judge=judge_name(identity), template=template_name(identity), judge_identity=canonical_json(identity),
        status="ok" if ok else "failed", raw=result.raw or "", label=v.label if v else None,
        score=score if ok else None, soft=v.soft if v else None, mode=POINTWISE, turn=item.turn,
        error=None if ok else (result.error or "judge returned no rating"), tokens_in=result.tokens_in,
        tokens_out=result.tokens_out, latency_s=result.latency_s, cost=result.cost, n_calls=result.n_calls,
        tokens_cached=result.tokens_cached)


def keyed_items(judge: PointwiseJudge, items: list[GradeItem]) -> dict[str, GradeItem]:
    identity = dict(judge.identity)
    return {grade_key(identity, item): item for item in items}


@dataclass
class GradingPlan:
    """What a grading run will do: grades planned and already stored, and the estimate (calls, tokens, cost, time)
    of the new ones (one call each; a re-ask adds one)."""

    grades: int
    cached: int
    n_prompts: int
    n_models: int
    max_turn: int
    estimate: Estimate

    @property
    def new(self) -> int:
        return self.grades - self.cached

    def as_dict(self) -> dict:
        e = self.estimate.as_dict()
        return {"mode": POINTWISE, "grades": self.grades, "cached": self.cached, "new": self.new,
                **{k: e[k] for k in ("calls", "tokens_in", "tokens_out", "cost", "seconds", "basis", "tokens_cached",
                                     "cost_cached", "cost_batch", "prices", "price_known")}}

    def line(self, dry_run: bool = True) -> str:
        e = self.estimate
        models = f"{self.n_models} model{'s' if self.n_models != 1 else ''}"
        turns = f" ({self.max_turn} turns each at most)" if self.max_turn > 1 else ""
        return (f"{plan_label(dry_run)} {e.calls} calls for {self.grades} single-answer grades of {models} on "
                f"{self.n_prompts} prompts{turns} ({self.cached} already stored); ~{e.tokens_in:,} tokens in, "
                f"~{e.tokens_out:,} out; ~${e.cost:.4f}{e.cost_note()}; ~{e.seconds:.0f}s ({e.basis}); a grade without "
                "a rating is re-asked once")


def plan_grading(items: list[GradeItem], judge: PointwiseJudge, store: JudgmentStoreLike, *,
                 retry_failed: bool = False, concurrency: int = 8, limits=None, expected_tokens_out: int | None = None,
                 expected_latency_s: float | None = None) -> GradingPlan:
    """The plan of grading ``items`` into ``store``: nothing is called; prompt tokens from rendering the template
    for every new grade, output tokens and latency as :mod:`judgewise.judges.estimate` takes them."""
    keyed = keyed_items(judge, items)
    stored = store.statuses(keyed)
    done = ("ok",) if retry_failed else ("ok", "failed")
    new = [item for key, item in keyed.items() if stored.get(key) not in done]
    messages = [judge.template.messages(**item.variables()) for item in new]
    tokens_in = sum(estimate_tokens(m) for m in messages)
    segments = [text_segments(m) for m in messages]
    total = sum(n for parts in segments for _, n in parts)
    share = sum(cached_tokens_in_order(segments)) / total if total else 0.0
    estimate = costed_estimate(judge, store, len(items), len(keyed), len(keyed) - len(new), len(new), tokens_in,
                               concurrency, limits, expected_tokens_out, expected_latency_s, cached_share=share)
    return GradingPlan(len(keyed), len(keyed) - len(new), len({i.prompt_id for i in items}),
                       len({i.model for i in items}), max((i.turn for i in items), default=0), estimate)


def grading_counts(grades: pd.DataFrame) -> dict:
    """What a grading run's summary adds: ``mode``, grades scored, grades without a parsable rating (after the
    re-ask: ``no_rating``, counted among the failed), and the mean score of the scored grades."""
    error = grades["error"].astype("string") if len(grades) else pd.Series(dtype="string")
    scores = pd.to_numeric(grades["score"], errors="coerce") if len(grades) else pd.Series(dtype=float)
    return {"mode": POINTWISE, "scored": int(scores.notna().sum()),
            "no_rating": int(error.str.startswith(NO_VERDICT_ERROR).fillna(False).sum()),
            "mean_score": float(scores.mean()) if scores.notna().any() else None}


async def arun_grading(items: list[GradeItem], judge: PointwiseJudge, store: JudgmentStoreLike | Location,
                       settings: RunSettings | None = None, *, progress=None, **options) -> RunResult:
    """Async form of :func:`run_grading`."""
    keyed = keyed_items(judge, items)  # (a grade has no answer order: ``orders`` is not read)
    with opened_store(store) as opened:
        return await arun_keyed(keyed, judge, opened, RunSettings.of(settings, **options), n_items=len(items),
                                n_planned=len(items), record=grade_record, export=export_grades, progress=progress)


def run_grading(items: list[GradeItem], judge: PointwiseJudge, store: JudgmentStoreLike | Location,
                settings: RunSettings | None = None, *, progress=None, **options) -> RunResult:
    """Grade every item not stored yet (the judging engine's scheduler, retries, limits, budget and store) and
    return the grades table (``export_grades``: ``prompt_id, model, judge, score, label, turn``, ...) with counts.
    Options as :func:`judgewise.judges.runner.run_judging` (``orders`` is ignored)."""
    return eventloop.run(closing_backend(arun_grading(items, judge, store, settings, progress=progress, **options),
                                         judge))
