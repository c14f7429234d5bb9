"""Make the small example files the docs run on, from ../shared/data (public data) and seeded generators.

    python examples/make_examples.py [--shared ../shared]

Writes (and overwrites) everything under examples/ except alpacaeval/ (its own README says how it was cut):

- arenahard/battles.jsonl: Arena-Hard-Auto v0.1's 2,136 judged battles, as published (Apache-2.0).
- arenahard/v0.1/: the 480 judgment records those battles came from, in v0.1's layout
  (model_judgment/gpt-4-1106-preview/<model>.jsonl), and model_answer/<model>.jsonl with real Arena-Hard answer
  texts (cut to 1,500 characters) and their markdown metadata, for style control.
- arenahard/v2.0/: the same records in v2.0's layout (uid, category, the A<<B spellings) and v2.0's judge config.
- arenahard/v2.0-by-category/: 90 real v2.0 questions (30 coding, 30 math, 30 creative writing) judged by a seeded
  synthetic judge under which mA is strong on hard prompts and mB on creative writing.
- judgebench/outputs/: the first 100 GPT-4o pairs of JudgeBench with the six judges that judged them (texts cut to
  200 characters; verdicts and scores as published).
- mtbench/: MT-bench's question.jsonl and GPT-4 reference answers (FastChat, Apache-2.0), as published.
- synthetic/responses.jsonl: 8 models m0..m7 and a late model `new` × 100 prompts of template answers, for the simulated judge.
- synthetic/clb_judgments.jsonl, clb_correctness.csv: a seeded correct-looks-better setting (below);
  synthetic/separated.jsonl: a table where one model won every game (the BT MLE does not exist); synthetic/soft.jsonl:
  hard verdicts with the judge's soft preference (a `soft` column, as a store export of a logprobs judge has);
  synthetic/ties.jsonl: two models that end level (ties share a rank).
- panels/three-judges.jsonl: three simulated judges (position-, length-biased and hedging, each right 65%) on all
  pairs of 8 models on 6 prompts, and panels/truth.json the true ratings (``benchmarks/panel.py``'s simulation).
- peers/h2h.csv: an AutoArena head-to-head file (model_a, model_b, prompt, response_a, response_b, winner A/B/-, the
  shape of AutoArena's documentation) and peers/peereval.jsonl: PeerEval judgments (one verdict per pair and display
  order, its documented layout): 3 models on 8 prompts, verdicts from a seeded judge.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from judgewise.io.markdown import markdown_counts  # noqa: E402
from tests.ratings.test_arenahard_cli import BASELINE, rebuilt_records, v2_records, write_judgments  # noqa: E402
from tests.commands.test_rank_by_group import write_bench  # noqa: E402

TEXT_CHARS = 1500
JUDGEBENCH_PAIRS = 100
JUDGEBENCH_TEXT = 200


def jsonl(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def arena_hard(shared: Path, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    shutil.copy(shared / "data/arenahard/battles.jsonl", out / "battles.jsonl")
    records = rebuilt_records(shared)
    write_judgments(out / "v0.1/model_judgment/gpt-4-1106-preview", records)
    write_judgments(out / "v2.0/model_judgment/gpt-4.1", v2_records(records))
    shutil.copy(shared / "data/arenahard/v2.0/arena-hard-v2.0.yaml", out / "v2.0/arena-hard-v2.0.yaml")
    sources = [json.loads(line) for f in sorted((shared / "data/arenahard/model_answer").glob("*.jsonl"))
               for line in f.open()]
    texts = [r["messages"][-1]["content"]["answer"][:TEXT_CHARS] for r in sources]
    models = sorted({r["model"] for r in records} | {BASELINE})
    questions = sorted({r["question_id"] for r in records})
    for k, model in enumerate(models):
        rows = []
        for j, qid in enumerate(questions):
            text = texts[(j * 7 + k * 311) % len(texts)]
            rows.append({"question_id": qid, "model_id": model,
                         "conv_metadata": {"token_len": len(text.split()), **markdown_counts(text)},
                         "choices": [{"turns": [{"content": text}]}]})
        jsonl(out / f"v0.1/model_answer/{model}.jsonl", rows)
    questions2 = [json.loads(line) for line in (shared / "data/arenahard/v2.0/question.jsonl").open()]
    picked = [q for sub in ("coding", "math", "creative_writing")
              for q in [q for q in questions2 if q["subcategory"] == sub][:30]]
    for q in picked:
        q["prompt"] = q["prompt"][:300]
    write_bench(out / "v2.0-by-category", picked)


def judgebench(shared: Path, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    for src in sorted((shared / "data/judgebench/outputs").glob("response_model-gpt-4o*.jsonl")):
        rows = []
        for line in itertools.islice(src.open(encoding="utf-8"), JUDGEBENCH_PAIRS):
            row = json.loads(line)
            for key in ("question", "response_A", "response_B"):
                row[key] = row[key][:JUDGEBENCH_TEXT]
            rows.append(row)
        jsonl(out / "outputs" / src.name, rows)


def mtbench(shared: Path, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    (out / "reference_answer").mkdir(parents=True)
    shutil.copy(shared / "data/mtbench/question.jsonl", out / "question.jsonl")
    shutil.copy(shared / "data/mtbench/reference_answer/gpt-4.jsonl", out / "reference_answer/gpt-4.jsonl")


def synthetic(out: Path, seed: int = 0) -> None:
    """Template answers of m0..m7 to 100 prompts (the simulated judge reads no text), and a seeded CLB setting:
    5 models of true accuracy 0.3..0.8 answer 40 questions; a judge that prefers a correct answer 80% of the time
    (and the first shown 10% more) compares all pairs in both orders."""
    rng = random.Random(seed)
    shutil.rmtree(out, ignore_errors=True)
    topics = ["writing", "coding", "math", "reasoning"]
    jsonl(out / "responses.jsonl", [
        {"prompt_id": f"p{p:03d}", "model": f"m{i}", "text": f"Answer of m{i} to prompt {p}." + " more" * (i + p % 5),
         "instruction": f"Question {p}: explain thing {p}.", "topic": topics[p % 4]}
        for p in range(100) for i in range(8)] + [
        {"prompt_id": f"p{p:03d}", "model": "new", "text": f"Answer of new to prompt {p}.",
         "instruction": f"Question {p}: explain thing {p}.", "topic": topics[p % 4]} for p in range(100)])
    accuracy = {f"c{i}": 0.3 + 0.1 * i for i in range(6)}
    correct = {(m, q): rng.random() < a for m, a in accuracy.items() for q in range(40)}
    (out / "clb_correctness.csv").write_text(
        "prompt_id,model,correct\n" + "".join(f"q{q:02d},{m},{int(correct[m, q])}\n" for m, q in sorted(correct)))
    rows = []
    for q in range(40):
        for a, b in itertools.permutations(sorted(accuracy), 2):
            edge = 0.3 * (correct[a, q] - correct[b, q])
            p_a = min(1.0, max(0.0, 0.5 + edge + 0.05))
            u = rng.random()
            outcome = 1.0 if u < p_a - 0.05 else 0.5 if u < p_a + 0.05 else 0.0
            rows.append({"prompt_id": f"q{q:02d}", "model_a": a, "model_b": b, "judge": "sim-judge",
                         "outcome": outcome, "first": a})
    jsonl(out / "clb_judgments.jsonl", rows)
    # separated data: "top" wins every game it plays, so the Bradley–Terry MLE does not exist
    sep = [{"prompt_id": f"s{k}", "model_a": "top", "model_b": "mid" if k % 3 else "low", "judge": "j", "outcome": 1.0}
           for k in range(15)]
    sep += [{"prompt_id": f"t{k}", "model_a": "mid", "model_b": "low", "judge": "j", "outcome": float(k % 4 == 0)}
            for k in range(20)]
    jsonl(out / "separated.jsonl", sep)
    # a store export's shape with soft preferences: hard verdicts plus the judge's expected outcome from logprobs
    strength = {"m1": 0.0, "m2": 0.4, "m3": 0.8, "m4": 1.0}
    soft = []
    for p in range(40):
        for a, b in itertools.combinations(sorted(strength, reverse=True), 2):
            p_a = 1 / (1 + math.exp(strength[b] - strength[a]))
            soft.append({"prompt_id": f"p{p:02d}", "model_a": a, "model_b": b, "judge": "logprob-judge",
                         "outcome": float(rng.random() < p_a), "soft": round(min(1.0, max(0.0, rng.gauss(p_a, 0.1))), 3)})
    jsonl(out / "soft.jsonl", soft)
    # ties: "left" and "right" each beat "base" 3 times in 4 and split their 4 games, so they end level
    tie = [{"prompt_id": f"q{k}", "model_a": side, "model_b": "base", "judge": "j", "outcome": float(k != 3)}
           for side in ("left", "right") for k in range(4)]
    tie += [{"prompt_id": f"q{k}", "model_a": "left", "model_b": "right", "judge": "j", "outcome": float(k % 2)}
            for k in range(4)]
    jsonl(out / "ties.jsonl", tie)


PEER_STRENGTH = {"small-model": -0.6, "mid-model": 0.0, "large-model": 0.7}
PEER_TOPICS = ["a haiku about rain", "the water cycle", "binary search", "a polite refusal", "compound interest",
               "a packing list for a hike", "recursion", "a two-line apology"]


def _peer_verdict(rng: random.Random, a: str, b: str) -> str:
    """A seeded judge: A, B or a tie, the stronger model more often (Bradley–Terry in the strengths, 15% ties)."""
    if rng.random() < 0.15:
        return "-"
    return "A" if rng.random() < 1 / (1 + math.exp(PEER_STRENGTH[b] - PEER_STRENGTH[a])) else "B"


def peers(out: Path, seed: int = 0) -> None:
    """AutoArena's head-to-head CSV and PeerEval's judgments JSONL on the same 3 models and 8 prompts."""
    import csv

    rng = random.Random(seed)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    prompts = [f"Write about {t}." for t in PEER_TOPICS]
    answer = {(m, p): f"{m}'s answer: {p[len('Write about '):-1]}" + "." * (1 + len(m) % 3) for m in PEER_STRENGTH
              for p in prompts}
    with (out / "h2h.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["model_a", "model_b", "prompt", "response_a", "response_b", "winner"])
        for p in prompts:
            for a, b in itertools.combinations(PEER_STRENGTH, 2):
                writer.writerow([a, b, p, answer[a, p], answer[b, p], _peer_verdict(rng, a, b)])
    rows = []
    for q, p in enumerate(prompts):
        for left, right in itertools.combinations(PEER_STRENGTH, 2):
            for position in ("AB", "BA"):
                shown = (left, right) if position == "AB" else (right, left)
                won = _peer_verdict(rng, *shown)
                rows.append({"dataset": "peers-demo", "question_id": f"q{q}", "solver_left": left,
                             "solver_right": right, "response_a_model": shown[0], "response_b_model": shown[1],
                             "judge_model": "judge-x", "position": position,
                             "judgment": {"winner": {"-": "tie"}.get(won, won), "confidence": 0.8,
                                          "reason": "seeded verdict"}})
    jsonl(out / "peereval.jsonl", rows)


def panels(out: Path, seed: int = 2026) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from panel import ELO, MODELS, panel_example  # benchmarks/panel.py: the simulation its figures come from

    out.mkdir(parents=True, exist_ok=True)
    frame = panel_example(6, seed)
    frame["prompt_id"] = "p" + frame["prompt_id"]
    jsonl(out / "three-judges.jsonl", frame.to_dict(orient="records"))
    (out / "truth.json").write_text(json.dumps({m: float(e) for m, e in zip(MODELS, ELO)}, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    args = parser.parse_args()
    if not (args.shared / "data").is_dir():
        raise SystemExit(f"error: {args.shared}/data not found (pass --shared PATH)")
    arena_hard(args.shared, HERE / "arenahard")
    judgebench(args.shared, HERE / "judgebench")
    mtbench(args.shared, HERE / "mtbench")
    synthetic(HERE / "synthetic")
    peers(HERE / "peers")
    panels(HERE / "panels")
    print("examples written:", ", ".join(sorted(p.name for p in HERE.iterdir() if p.is_dir())))


if __name__ == "__main__":
    main()
