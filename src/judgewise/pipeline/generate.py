"""``judgewise generate``: every configured model answers every prompt (every turn), stored as the answers arrive.

:func:`generate` is the library call behind the command (it replaces Arena-Hard-Auto's ``gen_answer.py`` and
FastChat's ``gen_model_answer.py``): read the questions (:func:`judgewise.io.prompts.read_prompts`), then for each
model and each turn run the judging engine (:func:`judgewise.judges.generator.agenerate`: the one scheduler, retry
policy, rate limits, budget, progress and claims) into the generation store, turn k asked with the model's own
answers to turns 1..k-1. A rerun pays for nothing stored; a killed run resumes where it stopped. The answers are then
written as a responses table (``prompt_id, model, text, turns, instruction, prompt_turns, ...``; ``text`` is the
first turn's answer, ``turns`` every turn's) or as Arena-Hard / FastChat ``model_answer`` files
(:mod:`judgewise.io.answer_files`). :func:`generated_responses` lets ``evaluate``/``judge`` take a generate config or
its store as ``responses:``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from judgewise.errors import BudgetExceeded, ConfigError, InputError, JudgeError
from judgewise.io.answer_files import arena_hard_record, fastchat_record, write_answer_files
from judgewise.io.atomic import check_output_file, check_output_folder
from judgewise.io.prompts import read_prompts
from judgewise.store.generations import GenerationStore, generation_tables
from judgewise.store.judgments import write_export
from judgewise.judges import eventloop
from judgewise.judges.batch import batch_settings
from judgewise.judges.generator import AnswerItem, Generator, agenerate, answer_key
from judgewise.judges.limits import Budget
from judgewise.judges.prices import check_cost_cap_priced, unpriced_fields
from judgewise.judges.scheduler import estimate_tokens
from judgewise.pipeline.generate_config import GenerateConfig, build_generator, load_generate_config

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Conversation:
    """One model's conversation on one prompt: its user turns and the store key of each turn's answer."""

    model: str
    prompt_id: str
    questions: tuple[str, ...]
    keys: tuple[str, ...]


@dataclass
class GenerateJob:
    """What a generate config asks for: the prompts, a generator per model and each model's conversations."""

    config: GenerateConfig
    prompts: pd.DataFrame
    generators: list[Generator]
    conversations: dict[str, list[Conversation]]

    def __post_init__(self):
        check_cost_cap_priced(self.config.budget.get("max_cost"), generator_prices(self), self.config.source)

    def keys(self) -> list[str]:
        return [k for convs in self.conversations.values() for c in convs for k in c.keys]


def build_generate_job(config: GenerateConfig | dict | str | Path) -> GenerateJob:
    """Read the questions and build each model's generator and conversations (nothing is called)."""
    cfg = config if isinstance(config, GenerateConfig) else load_generate_config(config)
    prompts = read_prompts(cfg.prompts)
    if cfg.max_prompts is not None:
        prompts = prompts.head(cfg.max_prompts)
    generators = [build_generator(entry) for entry in cfg.models]
    conversations = {}
    for gen in generators:
        convs = []
        for p, turns in zip(prompts["prompt_id"], prompts["turns"]):
            questions = tuple(turns[:1] if cfg.turns == "first" else turns)
            keys = tuple(answer_key(gen.name, gen.settings, p, questions[:t + 1]) for t in range(len(questions)))
            convs.append(Conversation(gen.name, p, questions, keys))
        conversations[gen.name] = convs
    return GenerateJob(cfg, prompts.reset_index(drop=True), generators, conversations)


# -- the plan -----------------------------------------------------------------------------------------------------
@dataclass
class GenerationPlan:
    """What a run will do: answers planned and already stored, and bounds on the new ones (one call each)."""

    answers: int
    cached: int
    n_prompts: int
    n_models: int
    max_turn: int
    tokens_in: int   # estimated prompt tokens of the new answers (earlier answers not stored yet at their cap)
    tokens_out: int  # at most: every new answer at its model's max_tokens
    cost: float      # at most, at the models' prices
    unpriced: dict = field(default_factory=dict)  # the models with no known price (prices.unpriced_fields)

    @property
    def new(self) -> int:
        return self.answers - self.cached

    def as_dict(self) -> dict:
        return {"answers": self.answers, "cached": self.cached, "new": self.new, "calls": self.new,
                "prompts": self.n_prompts, "models": self.n_models, "max_turn": self.max_turn,
                "tokens_in": self.tokens_in, "max_tokens_out": self.tokens_out, "max_cost": round(self.cost, 6),
                **self.unpriced}

    def line(self) -> str:
        turns = f", up to {self.max_turn} turns each" if self.max_turn > 1 else ""
        return (f"plan: {self.answers} answers of {self.n_models} model{'s' if self.n_models != 1 else ''} to "
                f"{self.n_prompts} prompts{turns} ({self.cached} already stored): {self.new} calls, ~"
                f"{self.tokens_in:,} tokens in, at most {self.tokens_out:,} out, at most ${self.cost:.4f}"
                f"{self.unpriced.get('price_note', '')}")


def plan_generation(job: GenerateJob, store: GenerationStore) -> GenerationPlan:
    """The plan of ``job`` against ``store`` (nothing is called)."""
    stored = store.statuses(job.keys())
    done = ("ok",) if job.config.retry_failed else ("ok", "failed")
    answers = cached = tokens_in = tokens_out = 0
    cost = 0.0
    for gen in job.generators:
        prices = getattr(gen.backend, "prices", None)
        cap = gen.max_tokens or 0
        for conv in job.conversations[gen.name]:
            for t, key in enumerate(conv.keys):
                answers += 1
                if stored.get(key) in done:
                    cached += 1
                    continue
                item = AnswerItem(conv.prompt_id, gen.name, conv.questions[:t + 1], ("x" * 4 * cap,) * t)
                n_in = estimate_tokens(item.messages(gen.system))
                tokens_in, tokens_out = tokens_in + n_in, tokens_out + cap
                cost += prices.cost(n_in, cap) if prices is not None else 0.0
    max_turn = max((len(c.questions) for convs in job.conversations.values() for c in convs), default=0)
    return GenerationPlan(answers, cached, len(job.prompts), len(job.generators), max_turn, tokens_in, tokens_out,
                          cost, unpriced_fields(generator_prices(job)))


def generator_prices(job: GenerateJob) -> dict:
    """``{model entry name: prices}`` of the job's models called through an API (the embedded model has none)."""
    return {gen.name: gen.backend.prices for gen in job.generators if getattr(gen.backend, "prices", None)}


# -- the run ---------------------------------------------------------------------------------------------------------
@dataclass
class GenProgress:
    """What a progress callback receives after every answer: done, total, failed, calls and cost so far."""

    total: int
    done: int = 0
    failed: int = 0
    calls: int = 0
    cost: float = 0.0


@dataclass
class _Totals:
    """Counts over the engine runs (one per model and turn) of one generate run."""

    progress: GenProgress
    callback: Callable[[GenProgress], None] | None = None
    generated: int = 0
    failed: int = 0
    cached: int = 0
    blocked: int = 0
    calls: int = 0
    retries: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    maybe_charged: int = 0
    reused: int = 0
    paid: int = 0  # live calls and batch lines paid (RunResult.paid_calls): what the call budget counts
    batch: Counter = field(default_factory=Counter)  # RunResult.batch_counts() summed over the engine runs
    stopped: str | None = None
    stop_kind: type = JudgeError  # BudgetExceeded when a cap stopped the run

    def wave(self) -> Callable:
        """The engine's progress callback for one run: this run's counts added to those before it."""
        base = (self.progress.done, self.progress.failed, self.progress.calls, self.progress.cost)

        def update(p) -> None:
            g = self.progress
            g.done, g.failed, g.calls, g.cost = base[0] + p.done, base[1] + p.failed, base[2] + p.calls, base[3] + p.cost
            if self.callback:
                self.callback(g)
        return update

    def add(self, result) -> None:
        self.generated += result.judged
        self.failed += result.failed
        self.cached += result.cached
        self.calls += result.calls_made
        self.retries += result.retries
        self.tokens_in += result.tokens_in
        self.tokens_out += result.tokens_out
        self.cost += result.cost
        self.maybe_charged += result.maybe_charged_timeouts
        self.reused += result.reused_answers
        self.paid += result.paid_calls
        self.batch.update(result.batch_counts())

    def remaining(self, budget: Budget) -> Budget:
        """The caps left for the next engine run."""
        return Budget(max_calls=None if budget.max_calls is None else max(0, budget.max_calls - self.paid),
                      max_cost=None if budget.max_cost is None else max(0.0, budget.max_cost - self.cost))


def _turn_items(convs: list[Conversation], turn: int, store: GenerationStore, totals: _Totals) -> dict:
    """key → AnswerItem of turn ``turn`` of each conversation whose earlier turns are all stored ok; a turn whose
    earlier answer is missing or failed is blocked (counted, and taken off the progress total)."""
    convs = [c for c in convs if len(c.questions) >= turn]
    earlier = store.answers([k for c in convs for k in c.keys[:turn - 1]])
    stored = store.statuses([c.keys[turn - 1] for c in convs])
    items = {}
    for c in convs:
        answers = tuple(earlier.get(k) for k in c.keys[:turn - 1])
        if None in answers:
            if stored.get(c.keys[turn - 1]) != "ok":
                totals.blocked += 1
                totals.progress.total -= 1
            continue
        items[c.keys[turn - 1]] = AnswerItem(c.prompt_id, c.model, c.questions[:turn], answers)
    return items


async def _agenerate_job(job: GenerateJob, store: GenerationStore, totals: _Totals) -> None:
    """Each model, turn by turn, through the engine; stops at a budget cap or a refused call (``totals.stopped``)."""
    options, budget = job.config.engine_options(), job.config.budget_caps()
    entries = {entry["name"]: entry for entry in job.config.models}
    for gen in job.generators:
        convs = job.conversations[gen.name]
        options["batch"] = batch_settings(entries.get(gen.name, {}))
        for turn in range(1, max((len(c.questions) for c in convs), default=0) + 1):
            items = _turn_items(convs, turn, store, totals)
            if not items:
                continue
            try:
                result = await agenerate(items, gen, store, budget=totals.remaining(budget), progress=totals.wave(),
                                         **options)
            except (BudgetExceeded, JudgeError) as exc:
                totals.add(exc.result)
                stop = getattr(exc, "stop", exc)
                why = stop if isinstance(stop, BudgetExceeded) else f"{gen.name}'s endpoint refused a call: {stop}"
                totals.stopped, totals.stop_kind = str(why), type(stop) if isinstance(stop, BudgetExceeded) else JudgeError
                totals.blocked += totals.progress.total - totals.progress.done
                return
            totals.add(result)


@dataclass
class GenerateResult:
    """A generate run: its plan, counts (``summary``), the responses table of the job's complete conversations,
    and the files written."""

    plan: GenerationPlan
    summary: dict | None = None
    responses: pd.DataFrame | None = None
    written: list[str] = field(default_factory=list)

    @property
    def dry_run(self) -> bool:
        return self.summary is None


def generate(config: GenerateConfig | dict | str | Path, *, dry_run: bool = False,
             on_plan: Callable[[GenerationPlan], None] | None = None,
             with_progress: Callable | None = None) -> GenerateResult:
    """Generate the answers a config asks for (module docstring); ``on_plan`` sees the plan before any call,
    ``with_progress(total, run)`` calls ``run(update)`` (``update(p)`` gets a :class:`GenProgress`). Raises
    :class:`BudgetExceeded` at a cap and :class:`JudgeError` when an endpoint refuses a call or every answer failed,
    each after storing every answer received (rerun to continue; ``exc.result`` is the :class:`GenerateResult`)."""
    job = build_generate_job(config)
    cfg = job.config
    check_output(cfg)
    opener = GenerationStore.open_for_planning if dry_run else GenerationStore
    with opener(cfg.store) as store:
        plan = plan_generation(job, store)
        (on_plan or (lambda p: None))(plan)
        if dry_run:
            return GenerateResult(plan)
        t0 = time.perf_counter()
        totals = _Totals(GenProgress(total=plan.new))

        def run(update):
            totals.callback = update
            eventloop.run(_agenerate_job(job, store, totals))
        (with_progress or (lambda total, fn: fn(None)))(plan.new, run)
        rows = store.frame(job.keys())
    responses, incomplete = conversations_frame(job, rows)
    result = GenerateResult(plan, _summary(job, totals, rows, incomplete, time.perf_counter() - t0), responses)
    _finish(result, totals, incomplete)
    return result


# -- the answers as tables and files ---------------------------------------------------------------------------------
RESPONSE_COLUMNS = ["prompt_id", "model", "text", "turns", "instruction", "prompt_turns", "category", "settings",
                    "n_tokens", "turn_tokens", "finish_reason", "answer_id", "answered_at"]
"""``text`` is turn 1's answer and ``n_tokens`` its completion tokens (as the server counted them); ``turns`` every
turn's answer and ``turn_tokens`` their tokens; ``finish_reason`` the last turn's; ``answer_id`` a stable id of the
conversation's answers; ``answered_at`` when its last answer was stored (Unix time)."""


def _conversation_row(conv: Conversation, got: list[dict], settings: str, category) -> dict:
    answers = [r["text"] for r in got]
    return {"prompt_id": conv.prompt_id, "model": conv.model, "text": answers[0], "turns": answers,
            "instruction": conv.questions[0], "prompt_turns": list(conv.questions), "category": category,
            "settings": settings, "n_tokens": int(got[0]["tokens_out"]),
            "turn_tokens": [int(r["tokens_out"]) for r in got], "finish_reason": got[-1]["finish_reason"],
            "answer_id": conv.keys[-1][:22], "answered_at": float(max(r["created_at"] for r in got))}


def conversations_frame(job: GenerateJob, rows: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The responses table of the job's conversations whose every turn is stored ok (:data:`RESPONSE_COLUMNS`), and
    one line per other conversation saying which turn is missing or failed (and why)."""
    by_key = {r["key"]: r for r in rows.to_dict(orient="records")}
    category = dict(zip(job.prompts["prompt_id"], job.prompts["category"]))
    out, incomplete = [], []
    for gen in job.generators:
        for conv in job.conversations[gen.name]:
            got = [by_key.get(k) for k in conv.keys]
            bad = next((t for t, r in enumerate(got) if r is None or r["status"] != "ok"), None)
            if bad is None:
                out.append(_conversation_row(conv, got, gen.settings, category.get(conv.prompt_id)))
                continue
            why = "not generated" if got[bad] is None else f"failed: {' '.join(str(got[bad]['error']).split())[:120]}"
            incomplete.append(f"{conv.model} on prompt {conv.prompt_id!r}, turn {bad + 1}: {why}")
    return pd.DataFrame(out, columns=RESPONSE_COLUMNS), incomplete


def check_output(cfg: GenerateConfig) -> None:
    """Fail before any call when the output cannot be written: a responses table needs a .jsonl/.json/.parquet
    name in an existing folder; the per-model formats need a folder that can be made or written into, not a file."""
    if cfg.output is None:
        return
    out = Path(cfg.output)
    if cfg.format == "responses":
        if out.suffix not in (".jsonl", ".json", ".parquet"):
            raise ConfigError(f"{cfg.source}: output = {cfg.output}: a responses table is written to a file ending in "
                              f".jsonl or .parquet, found '{out.suffix}' (format arena-hard or mtbench write a folder)")
        check_output_file(out)
    elif out.exists() and not out.is_dir():
        raise ConfigError(f"{cfg.source}: output = {cfg.output}: format {cfg.format} writes a folder of "
                          "<model>.jsonl files, and this is a file")
    else:
        check_output_folder(out)  # under a file, or where no folder can be made: refused before any call


def write_outputs(responses: pd.DataFrame, fmt: str, output: str | Path) -> list[str]:
    """Write the responses table (``fmt`` responses: one .jsonl/.parquet file) or one ``<model>.jsonl`` per model in
    the folder ``output`` (``fmt`` arena-hard or mtbench), atomically; returns the paths written."""
    if fmt == "responses":
        return [str(write_export(responses, output))]
    records: dict[str, list[dict]] = {}
    for r in responses.to_dict(orient="records"):
        if fmt == "arena-hard":
            rec = arena_hard_record(r["prompt_id"], r["model"], r["prompt_turns"], r["turns"],
                                    answer_id=r["answer_id"], tstamp=r["answered_at"], token_len=r["turn_tokens"][-1])
        else:
            rec = fastchat_record(r["prompt_id"], r["model"], r["turns"], answer_id=r["answer_id"],
                                  tstamp=r["answered_at"])
        records.setdefault(r["model"], []).append(rec)
    return [str(p) for p in write_answer_files(records, output)]


def _summary(job: GenerateJob, totals: _Totals, rows: pd.DataFrame, incomplete: list[str], elapsed: float) -> dict:
    cfg, status = job.config, rows["status"] if len(rows) else pd.Series(dtype=str)
    ok = rows[status == "ok"] if len(rows) else rows
    return {"answers": len(job.keys()), "generated": totals.generated, "failed": totals.failed,
            "cached": totals.cached, "blocked": totals.blocked, "calls_made": totals.calls,
            "retries": totals.retries, "tokens_in": totals.tokens_in, "tokens_out": totals.tokens_out,
            "cost": round(totals.cost, 6), "elapsed_s": round(elapsed, 3), "stored_ok": int((status == "ok").sum()),
            "stored_failed": int((status == "failed").sum()),
            "truncated": int((ok["finish_reason"] == "length").sum()) if len(ok) else 0,
            "conversations": sum(len(c) for c in job.conversations.values()),
            "complete": sum(len(c) for c in job.conversations.values()) - len(incomplete),
            "incomplete": len(incomplete), "first_incomplete": incomplete[:3],
            "maybe_charged_timeouts": totals.maybe_charged, "reused_answers": totals.reused,
            "stopped": totals.stopped, "store": cfg.store, "output": cfg.output, "format": cfg.format,
            **({"batch": dict(totals.batch)} if totals.batch["batches"] or totals.batch["resumed"] else {}),
            **unpriced_fields(generator_prices(job))}


def _finish(result: GenerateResult, totals: _Totals, incomplete: list[str]) -> None:
    """Write the outputs of a finished run; raise (after everything received is stored) for a stopped run or one
    where every answer failed; warn with the count when some conversations are incomplete."""
    s, cfg_output = result.summary, result.summary["output"]
    if totals.stopped:
        counts = (f"{s['generated']} generated, {s['failed']} failed, {s['cached']} already stored this run; every "
                  "answer received is stored — rerun to continue; no output written")
        exc = totals.stop_kind(f"generation stopped: {totals.stopped} ({counts})")
        exc.result = result
        raise exc
    if s["stored_failed"] and not s["stored_ok"]:
        exc = JudgeError(f"all {s['stored_failed']} answers of this job failed (first: {incomplete[0]}); they are "
                         "stored as failed — fix the model settings, then rerun with --retry-failed")
        exc.result = result
        raise exc
    if incomplete:
        log.warning("%d of %d conversations are incomplete and left out of the output (first: %s); rerun with "
                    "--retry-failed to generate failed answers again", len(incomplete), s["conversations"],
                    "; ".join(incomplete[:2]))
    if cfg_output and len(result.responses):
        result.written = write_outputs(result.responses, s["format"], cfg_output)


# -- generated answers as the responses of evaluate / judge ----------------------------------------------------------
def generated_responses(source) -> pd.DataFrame | None:
    """The responses table of generated answers when ``source`` is a generate config (a .yaml/.yml file: exactly
    its job's answers, all of which must be generated) or a generation store (every complete conversation in it);
    None for anything else (the caller reads it as a responses file)."""
    if not isinstance(source, (str, Path)):
        return None
    path = Path(source)
    if path.suffix.lower() in (".yaml", ".yml") and path.is_file():
        return config_responses(path)
    if path.is_file() and generation_tables(path, writing=False) is not None:  # a SQLite file holding answers
        return store_responses(path)
    return None


def config_responses(config: GenerateConfig | str | Path) -> pd.DataFrame:
    """The responses table of a generate config's job, read from its store (no call is made); an answer not
    generated yet is a ConfigError saying how to generate it, a failed one a warning (its conversation left out)."""
    job = build_generate_job(config)
    name = job.config.source
    if not Path(job.config.store).is_file():
        raise ConfigError(f"{name}: its store {job.config.store} does not exist yet; run `judgewise generate --config "
                          f"{name}` first")
    with GenerationStore.open_readonly(job.config.store) as store:
        rows = store.frame(job.keys())
    responses, incomplete = conversations_frame(job, rows)
    missing = [line for line in incomplete if line.endswith("not generated")]
    if missing:
        raise ConfigError(f"{name}: {len(missing)} conversations are not fully generated yet (first: {missing[0]}); "
                          f"run `judgewise generate --config {name}` first")
    if incomplete:
        log.warning("%s: %d conversations have a failed answer and are left out (first: %s)", name, len(incomplete),
                    incomplete[0])
    if not len(responses):
        raise ConfigError(f"{name}: no conversation has every answer generated ok (first: {incomplete[0]})")
    return responses


def store_responses(path: str | Path) -> pd.DataFrame:
    """Every complete conversation of a generation store (turns 1..k stored ok) as a responses table; a model with
    answers under two settings (or to two versions of a question) is an InputError: point at the config instead."""
    with GenerationStore.open_readonly(path) as store:
        rows = store.frame()
    ok = rows[rows["status"] == "ok"]
    twice = ok[ok.duplicated(["model", "prompt_id", "turn"], keep=False)]
    if len(twice):
        r = twice.iloc[0]
        raise InputError(f"model {r['model']!r} has several answers to prompt {r['prompt_id']!r} turn {r['turn']} "
                         "(under other settings, or to an edited question); give the generate config as responses: "
                         "instead, which names one", file=str(path))
    out = []
    for (model, prompt_id), conv in ok.sort_values("turn").groupby(["model", "prompt_id"], sort=False):
        turns = conv["turn"].tolist()
        n = next((i for i, t in enumerate(turns) if t != i + 1), len(turns))  # turns 1..n stored ok
        if n == 0:
            continue
        got = conv.head(n).to_dict(orient="records")
        c = Conversation(model, prompt_id, tuple(r["question"] for r in got), (got[-1]["key"],))
        out.append(_conversation_row(c, got, got[0]["settings"], None))
    if not out:
        raise InputError("no complete conversation among the generated answers (turn 1 stored ok)", file=str(path))
    return pd.DataFrame(out, columns=RESPONSE_COLUMNS).sort_values(["model", "prompt_id"], ignore_index=True)
