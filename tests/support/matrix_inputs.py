"""Small inputs of every kind judgewise reads, written at test time for the command × input matrix.

Each builder writes one input into a folder and returns its path. The judgments behind the made-up formats come
from one seeded generator (4 models, all pairs, a few prompts, verdicts drawn from fixed strengths); AlpacaEval,
JudgeBench and Arena-Hard answers are slices of the real files in ``../shared/data``. ``INPUTS`` maps an input
name to ``(format, builder)``: ``format`` is the name it has in the format registry (``judgewise.io.formats``),
``dataframe`` (the Python API only) or ``store-sqlite`` / ``store-postgresql`` (a judging store).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

MODELS = ["gpt-4-0314", "model-b", "model-c", "model-d"]  # the first is Arena-Hard v0.1's baseline
STRENGTH = {"gpt-4-0314": 0.0, "model-b": 1.0, "model-c": -0.5, "model-d": 0.6}
N_PROMPTS = 8
V2_BASELINE = "o3-mini-2025-01-31"  # Arena-Hard v2.0's hard_prompt baseline
NEW_MODEL = "model-new"  # answered but left out of the evaluated store's models: evaluate --add-model places it
JUDGEBENCH_FILE = ("response_model-claude-3-5-sonnet-20240620__judge_name-arena_hard__"
                   "judge_model-claude-3-haiku-20240307.jsonl")


def judgments(seed: int = 7) -> pd.DataFrame:
    """All pairs of MODELS on N_PROMPTS prompts, both orders, verdicts drawn from STRENGTH (ties possible)."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(N_PROMPTS):
        for i, a in enumerate(MODELS):
            for b in MODELS[i + 1:]:
                for first, second in ((a, b), (b, a)):
                    pa = 1 / (1 + np.exp(STRENGTH[second] - STRENGTH[first]))
                    u = rng.random()
                    outcome = 0.5 if abs(u - pa) < 0.08 else float(u < pa)
                    rows.append({"prompt_id": f"p{p}", "model_a": first, "model_b": second, "judge": "sim-judge",
                                 "outcome": outcome})
    return pd.DataFrame(rows)


def responses(models=MODELS) -> pd.DataFrame:
    return pd.DataFrame([{"prompt_id": f"p{p}", "model": m, "text": f"{m} answers question {p}" + " well" * (p % 3),
                          "instruction": f"Question {p}?"} for p in range(N_PROMPTS) for m in models])


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def canonical(container: str) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        frame, path = judgments(), folder / f"judgments.{container}"
        if container == "jsonl":
            frame.to_json(path, orient="records", lines=True)
        elif container == "json":
            frame.to_json(path, orient="records")
        elif container == "csv":
            frame.to_csv(path, index=False)
        else:
            frame.to_parquet(path)
        return path
    return build


WINNER = {1.0: "model_a", 0.0: "model_b", 0.5: "tie"}


def battles(container: str) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        frame = judgments().rename(columns={"prompt_id": "question_id"})
        frame["winner"] = frame.pop("outcome").map(WINNER)
        path = folder / f"battles.{container}"
        if container == "jsonl":
            frame.to_json(path, orient="records", lines=True)
        elif container == "json":
            frame.to_json(path, orient="records")
        else:
            frame.to_parquet(path)
        return path
    return build


LABEL = {1.0: "A>B", 0.0: "B>A", 0.5: "A=B"}  # the baseline shown first (game 1) from A's view


def _games(baseline: str) -> list[tuple[int, str, list[dict]]]:
    """(prompt, model, two games) against ``baseline``: game 1 shows the baseline first, game 2 the model."""
    rng = np.random.default_rng(3)
    out = []
    for p in range(N_PROMPTS):
        for m in MODELS[1:]:
            pa = 1 / (1 + np.exp(STRENGTH[m]))  # the baseline's chance, as STRENGTH["gpt-4-0314"] = 0
            g1 = float(rng.random() < pa)
            g2 = float(rng.random() > pa)  # the model shown first wins with the model's chance
            strong = "A>>B" if p % 4 == 0 else None
            out.append((p, m, [{"score": strong if strong and g1 == 1.0 else LABEL[g1]}, {"score": LABEL[g2]}]))
    return out


def games_v01(folder: Path) -> Path:
    rows = [{"question_id": f"q{p}", "model": m, "judge": "gpt-4-1106-preview", "games": g}
            for p, m, g in _games(MODELS[0])]
    return _jsonl(folder / "model_judgment" / "gpt-4-1106-preview" / "games.jsonl", rows)


def games_v20(folder: Path) -> Path:
    rows = [{"uid": f"u{p}", "category": "hard_prompt", "model": m, "judge": "gpt-4.1", "games": g}
            for p, m, g in _games(V2_BASELINE)]
    return _jsonl(folder / "model_judgment" / "gpt-4.1" / "games.jsonl", rows)


PAIR_WINNER = {1.0: "model_1", 0.0: "model_2", 0.5: "tie"}


def mtbench_pair(folder: Path) -> Path:
    frame = judgments()
    once = frame.drop_duplicates(["prompt_id", "model_a", "model_b"]).iloc[::2]  # one record per pair and prompt
    rows = [{"question_id": 81 + int(r.prompt_id[1:]), "model_1": r.model_a, "model_2": r.model_b,
             "g1_winner": PAIR_WINNER[r.outcome], "g2_winner": PAIR_WINNER[r.outcome],
             "judge": ["gpt-4", "pair-v2"], "g1_judgment": "[[A]]", "g2_judgment": "[[B]]", "turn": 1}
            for r in once.itertuples()]
    return _jsonl(folder / "model_judgment" / "gpt-4_pair.jsonl", rows)


def mtbench_single(folder: Path) -> Path:
    rows = [{"question_id": 81 + p, "model": m, "judge": ["gpt-4", "single-v1"], "user_prompt": "...",
             "judgment": "Rating: [[x]]", "score": int(5 + 2 * STRENGTH[m] + p % 3), "turn": 1, "tstamp": 1.0}
            for p in range(N_PROMPTS) for m in MODELS]
    return _jsonl(folder / "model_judgment" / "gpt-4_single.jsonl", rows)


def rubric_grades(folder: Path) -> Path:
    """The grades table a rubric run writes (``output: grades.jsonl``): 1-5 grades of every turn, one failed grade
    (a rating off the rubric's scale)."""
    rows = [{"prompt_id": str(81 + p), "model": m, "judge": "judge|rubric-helpfulness@1.1", "turn": t,
             "score": float(min(5, max(1, round(3 + 1.5 * STRENGTH[m] + (p + t) % 2)))), "error": None}
            for p in range(N_PROMPTS) for m in MODELS for t in (1, 2)]
    rows[-1] = {**rows[-1], "score": None, "error": "no well-formed verdict after 2 call(s); rating 7 is outside 1-5"}
    return _jsonl(folder / "grades.jsonl", rows)


def _mtbench_answers(folder: Path) -> None:
    for m in MODELS:
        _jsonl(folder / "model_answer" / f"{m}.jsonl", [
            {"question_id": 81 + p, "answer_id": f"{m}{p}", "model_id": m,
             "choices": [{"index": 0, "turns": [f"{m} t1 {p}", f"{m} t2 {p}"]}], "tstamp": 1.0}
            for p in range(N_PROMPTS)])


def mtbench_folder(folder: Path) -> Path:
    _jsonl(folder / "question.jsonl", [{"question_id": 81 + p, "category": "writing", "turns": [f"Q{p}", "More."]}
                                       for p in range(N_PROMPTS)])
    _mtbench_answers(folder)
    mtbench_pair(folder)
    return folder


def mtbench_answers(folder: Path) -> Path:
    _mtbench_answers(folder)
    return folder / "model_answer" / f"{MODELS[1]}.jsonl"


def arenahard_answers(shared: Path) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        lines = (shared / "data/arenahard/model_answer/gpt-4-0613.jsonl").read_text(encoding="utf-8").splitlines()
        out = folder / "model_answer" / "gpt-4-0613.jsonl"
        out.parent.mkdir(parents=True)
        out.write_text("\n".join(lines[:N_PROMPTS]) + "\n", encoding="utf-8")
        return out
    return build


def alpacaeval(shared: Path) -> Callable[[Path], Path]:
    """Three models' AlpacaEval results (and the anchor's outputs) on the first 20 instructions."""
    def build(folder: Path) -> Path:
        src = shared / "data/alpacaeval/results"
        for model in ("gpt4_1106_preview", "alpaca-7b", "claude-2", "vicuna-7b-v1.5"):
            for file in sorted((src / model).rglob("*.json")):
                out = folder / "results" / file.relative_to(src)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(json.loads(file.read_text(encoding="utf-8"))[:20]), encoding="utf-8")
        return folder / "results"
    return build


def judgebench(shared: Path) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        lines = (shared / "data/judgebench/outputs" / JUDGEBENCH_FILE).read_text(encoding="utf-8").splitlines()
        out = folder / "outputs" / JUDGEBENCH_FILE
        out.parent.mkdir(parents=True)
        out.write_text("\n".join(lines[:40]) + "\n", encoding="utf-8")
        return out
    return build


AUTOARENA_WINNER = {1.0: "A", 0.0: "B", 0.5: "-"}


def autoarena(container: str) -> Callable[[Path], Path]:
    """AutoArena's head-to-head rows (as its README and export describe them) from the generated judgments."""
    def build(folder: Path) -> Path:
        frame = judgments()
        texts = responses().set_index(["prompt_id", "model"])["text"]
        h2h = pd.DataFrame({
            "prompt": [f"Question {p[1:]}?" for p in frame["prompt_id"]],
            "model_a": frame["model_a"], "model_b": frame["model_b"],
            "response_a": [texts[(p, m)] for p, m in zip(frame["prompt_id"], frame["model_a"])],
            "response_b": [texts[(p, m)] for p, m in zip(frame["prompt_id"], frame["model_b"])],
            "winner": frame["outcome"].map(AUTOARENA_WINNER), "judge": frame["judge"]})
        path = folder / f"h2h.{container}"
        h2h.to_csv(path, index=False) if container == "csv" else h2h.to_parquet(path)
        return path
    return build


PEEREVAL_WINNER = {1.0: "A", 0.0: "B", 0.5: "tie"}


def peereval(folder: Path) -> Path:
    """PeerEval judgments (its documented layout): each pair judged in both display orders."""
    rows = []
    for r in judgments().itertuples():
        left, right = sorted((r.model_a, r.model_b))
        rows.append({"dataset": "matrix", "question_id": r.prompt_id, "solver_left": left, "solver_right": right,
                     "response_a_model": r.model_a, "response_b_model": r.model_b, "judge_model": r.judge,
                     "position": "AB" if r.model_a == left else "BA",
                     "judgment": {"winner": PEEREVAL_WINNER[r.outcome], "confidence": 0.7, "reason": "…"}})
    return _jsonl(folder / "judgments.jsonl", rows)


def evaluated_store(folder: Path) -> Path:
    """A SQLite store written by ``judgewise.evaluate`` (simulated judge) whose run config leaves NEW_MODEL out."""
    import judgewise

    models = MODELS + [NEW_MODEL]
    responses(models).to_json(folder / "responses.jsonl", orient="records", lines=True)
    ratings = {m: 1000 + 200 * STRENGTH.get(m, 0.3) for m in models}
    cfg = {"responses": "responses.jsonl", "store": "store.sqlite", "models": MODELS, "orders": "one",
           "judge": {"backend": "simulated", "ratings": ratings, "seed": 1}, "target": {"kendall_tau": 0.9}}
    (folder / "run.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    judgewise.evaluate(folder / "run.yaml", bootstrap=0)
    return folder / "store.sqlite"


def builders(shared: Path) -> dict[str, tuple[str, Callable[[Path], Path]]]:
    """input name → (format name, builder); the PostgreSQL store is made by the test from the SQLite one."""
    return {
        "canonical-jsonl": ("jsonl", canonical("jsonl")),
        "canonical-json": ("json", canonical("json")),
        "canonical-csv": ("csv", canonical("csv")),
        "canonical-parquet": ("parquet", canonical("parquet")),
        "dataframe": ("dataframe", canonical("parquet")),  # read back as a DataFrame by the API cell
        "battles-jsonl": ("arenahard-battles", battles("jsonl")),
        "battles-json": ("arenahard-battles", battles("json")),
        "battles-parquet": ("arenahard-battles", battles("parquet")),
        "alpacaeval-folder": ("alpacaeval", alpacaeval(shared)),
        "games-v0.1": ("arenahard-games", games_v01),
        "games-v2.0": ("arenahard-games", games_v20),
        "mtbench-pair": ("mtbench-judgments", mtbench_pair),
        "mtbench-single": ("mtbench-judgments", mtbench_single),
        "rubric-grades": ("jsonl", rubric_grades),
        "mtbench-folder": ("mtbench", mtbench_folder),
        "mtbench-answers": ("mtbench-answers", mtbench_answers),
        "arenahard-answers": ("arenahard-answers", arenahard_answers(shared)),
        "judgebench": ("judgebench", judgebench(shared)),
        "autoarena-csv": ("autoarena", autoarena("csv")),
        "autoarena-parquet": ("autoarena", autoarena("parquet")),
        "peereval": ("peereval", peereval),
        "store-sqlite": ("store-sqlite", evaluated_store),
    }


# --- panels of judges (issue 33): inputs holding three judges' verdicts on the same comparisons ---------------------

PANEL_JUDGES = ("judge-x", "judge-y", "judge-z")


def panel_judgments(seed: int = 11) -> pd.DataFrame:
    """:func:`judgments` made by each of PANEL_JUDGES, each flipping its own seeded 30% of the verdicts."""
    rng, base, frames = np.random.default_rng(seed), judgments(), []
    for judge in PANEL_JUDGES:
        frame = base.assign(judge=judge)
        flip = rng.random(len(frame)) < 0.3
        frame.loc[flip, "outcome"] = 1.0 - frame.loc[flip, "outcome"]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def panel_canonical(container: str) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        frame, path = panel_judgments(), folder / f"panel.{container}"
        {"jsonl": lambda: frame.to_json(path, orient="records", lines=True), "csv": lambda: frame.to_csv(path, index=False),
         "parquet": lambda: frame.to_parquet(path)}[container]()
        return path
    return build


def panel_store(folder: Path) -> Path:
    """A SQLite store written by ``judgewise judge`` with a panel of three simulated judges (judge-x, -y, -z)."""
    from judgewise.pipeline.run import run_config

    responses().to_json(folder / "responses.jsonl", orient="records", lines=True)
    ratings = {m: 1000 + 200 * STRENGTH[m] for m in MODELS}
    members = [{"backend": "simulated", "name": judge, "ratings": ratings, "seed": k + 1, "p_judge": 0.7}
               for k, judge in enumerate(PANEL_JUDGES)]
    cfg = {"responses": "responses.jsonl", "store": "store.sqlite", "judge": {"panel": members}}
    (folder / "run.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    run_config(folder / "run.yaml")
    return folder / "store.sqlite"


def panel_builders() -> dict[str, Callable[[Path], Path]]:
    """The panel matrix's inputs: input name → builder (``dataframe`` is the parquet file, read back by the API)."""
    return {"canonical-jsonl": panel_canonical("jsonl"), "canonical-csv": panel_canonical("csv"),
            "canonical-parquet": panel_canonical("parquet"), "dataframe": panel_canonical("parquet"),
            "store-sqlite": panel_store}
