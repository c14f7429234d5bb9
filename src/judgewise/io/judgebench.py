"""Importer for JudgeBench judge outputs: games (judgments table), per-item "A is better" scores, objective labels.

JudgeBench (ScalerLab/JudgeBench) stores one JSONL file per judge,
``outputs/response_model-<m>__judge_name-<kind>__judge_model-<judge>.jsonl``. Each line is one response pair
``{pair_id, original_id, source, question, response_model, response_A, response_B, label ∈ {A>B, B>A}, judge_name,
judgments}`` where ``judgments`` holds one entry per answer order: entry 0 shows ``response_A`` first (original),
entry 1 shows ``response_B`` first (swapped). Each entry is ``{judgment: {judge_model, prompt, response[, scores]},
decision}``; ``decision`` and the ``[[A>B]]``-style verdicts in ``response`` refer to the *positions* shown to the
judge (in the swapped order "A" is ``response_B``). For reward models ``scores`` are the rewards of the two shown
responses in shown order. Everything this module returns is from ``response_A``'s point of view.

Model labels: both responses of a pair come from the same ``response_model``, so model names cannot tell them
apart. ``model_a``/``model_b`` are therefore the response slots ``"A"``/``"B"`` (``response_A``/``response_B``); the
generating model is kept in the ``response_model`` column. Which slot is correct is the ``label`` column.

Scores for reliability studies (Metric Match, Paper §3.1: one score per item and rater) are "A is better" scores on
one common scale so that agreement metrics that depend on scale (ICC, Krippendorff's α interval, MSE) compare like
with like:

* ``scale="probability"`` (default): an arena-hard judge's 5-way verdict v ∈ {-2..2} maps to (v + 2) / 4 and a reward
  model's reward difference Δ = r_A − r_B maps to σ(Δ) = 1 / (1 + e^−Δ) (the Bradley–Terry probability reward models
  are trained to output); both are averaged over the two answer orders, giving a value in [0, 1] like the label
  (1 = A>B, 0 = B>A).
* ``scale="raw"``: the verdict averaged over orders (in [-2, 2]) or the reward difference averaged over orders.

Rank metrics (ρ, τ) are the same on both scales. An order whose output cannot be parsed is left out of the average
(and counted); an item with no parseable order gets no score (counted in the read report, never dropped silently).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.errors import InputError
from judgewise.registry import Registry
from judgewise.io.containers import jsonl_records
from judgewise.io.schema import VERDICT5_TOKEN, normalise_label, verdict5, verdict_outcome
from judgewise.io.tables import ReadReport, Table
from judgewise.io.validate import Validator

log = logging.getLogger(__name__)

HUMAN_RATER = "human"
ORDERS = ("original", "swapped")
FIRST_SHOWN = {"original": "A", "swapped": "B"}
LABELS = {"A>B": 1.0, "B>A": 0.0}
FILE_PATTERN = re.compile(r"response_model-(?P<response_model>.+?)__judge_name-(?P<kind>.+?)"
                          r"__judge_model-(?P<judge>.+)\.jsonl$")
VERDICT_RE = re.compile(VERDICT5_TOKEN)  # the labels and their values are judgewise.io.schema's


# ---------------------------------------------------------------------------------------------------------------
# Parsing one judgment entry (registry: judge_name → parser). A parser returns (verdict, score_a, score_b, raw)
# from the *shown* order's point of view; it raises ValueError with a reason when the output is unparseable.
# ---------------------------------------------------------------------------------------------------------------

def parse_verdict(text: str) -> tuple[int, bool]:
    """The last ``[[A>>B]]``-style verdict in ``text`` as an integer in {-2..2} from shown-position A's view.

    Returns ``(verdict, conflicting)`` where ``conflicting`` says the text holds several *different* verdicts (some
    judges state one per assistant before the final one; JudgeBench's own parser gives up on those, we keep the last).
    Raises ValueError when the text has no verdict.
    """
    found = VERDICT_RE.findall(text or "")
    if not found:
        raise ValueError("no [[A>B]]-style verdict in the judge output")
    values = []
    for label in found:
        label = normalise_label(label)
        if label[0] == label[-1]:
            raise ValueError(f"verdict [[{label}]] compares a response with itself")
        values.append(verdict5(label))
    return values[-1], len(set(values)) > 1


def _parse_arena_hard(judgment: dict) -> dict:
    response = judgment.get("response")
    if not isinstance(response, str):
        raise ValueError(f'"judgment.response" is {type(response).__name__}, expected the judge\'s text')
    verdict, conflicting = parse_verdict(response)
    return {"verdict": verdict, "score_first": np.nan, "score_second": np.nan, "raw": response,
            "conflicting": conflicting}


def _parse_reward_model(judgment: dict) -> dict:
    scores = judgment.get("scores")
    if not isinstance(scores, list) or len(scores) != 2:
        raise ValueError(f'"judgment.scores" = {scores!r}, expected a list of two rewards')
    try:
        first, second = float(scores[0]), float(scores[1])
    except (TypeError, ValueError):
        raise ValueError(f'"judgment.scores" = {scores!r} holds a non-number') from None
    if not (np.isfinite(first) and np.isfinite(second)):
        raise ValueError(f'"judgment.scores" = {scores!r} holds a non-finite reward')
    return {"verdict": np.nan, "score_first": first, "score_second": second, "raw": json.dumps(scores),
            "conflicting": False}


JUDGMENT_PARSERS: Registry[Callable[[dict], dict]] = Registry("JudgeBench judge kind", {
    "arena_hard": _parse_arena_hard,
    "reward_model": _parse_reward_model,
})


# ---------------------------------------------------------------------------------------------------------------
# Reading files
# ---------------------------------------------------------------------------------------------------------------

def judgebench_files(path: str | Path) -> list[Path]:
    """The judge-output JSONL files at ``path``: the file itself, or every matching file in the folder (or in its
    ``outputs/`` subfolder when given the JudgeBench root)."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError("no such file or folder (expected a JudgeBench outputs file or folder)", file=str(path))
    folder = path / "outputs" if (path / "outputs").is_dir() else path
    files = sorted(p for p in folder.glob("*.jsonl") if FILE_PATTERN.search(p.name))
    if not files:
        raise InputError("no JudgeBench output files (…__judge_name-<kind>__judge_model-<judge>.jsonl) here",
                         file=str(folder))
    return files


def _records(file: Path, report: ReadReport, skip_invalid: bool) -> Iterable[tuple[int, dict]]:
    """(line number, object) of every non-blank line; a bad line (JSON, non-object, non-UTF-8) raises naming it,
    or with ``skip_invalid`` is counted in ``report`` as one row read and skipped."""
    lines = ReadReport(str(file), "judgebench")  # counts lines; the caller's report counts games
    records, rows = jsonl_records(file, Validator(str(file), lines, skip_invalid))
    report.rows_read += lines.rows_skipped
    for reason in lines.skipped_reasons:
        report.skip(reason)
    return zip(rows.tolist(), records)


def _require(record: dict, field: str, file: Path, row: int, expected: str):
    value = record.get(field)
    if value is None or value == "":
        raise InputError(f"missing; expected {expected}", file=str(file), row=row, field=field)
    return value


def _judge_kind(record: dict, file: Path, row: int) -> str:
    match = FILE_PATTERN.search(file.name)
    kind = record.get("judge_name") or (match["kind"] if match else None)
    if not isinstance(kind, str) or kind not in JUDGMENT_PARSERS:
        raise InputError(f"= {kind!r} is not a known JudgeBench judge kind (known: {sorted(JUDGMENT_PARSERS)})",
                         file=str(file), row=row, field="judge_name")
    return kind


def _judge_name(judgments: list, file: Path) -> str:
    for entry in judgments:
        name = (entry.get("judgment") or {}).get("judge_model") if isinstance(entry, dict) else None
        if name:
            return str(name)
    match = FILE_PATTERN.search(file.name)
    return match["judge"] if match else file.stem


def _game_rows(record: dict, file: Path, row: int) -> list[dict]:
    """The two canonical game rows (original and swapped order) of one JudgeBench record."""
    pair_id = str(_require(record, "pair_id", file, row, "the pair's id"))
    label = _require(record, "label", file, row, '"A>B" or "B>A"')
    if not isinstance(label, str) or label not in LABELS:
        raise InputError(f'= {label!r}, expected "A>B" or "B>A"', file=str(file), row=row, field="label")
    judgments = _require(record, "judgments", file, row, "a list with one entry per answer order")
    if not isinstance(judgments, list) or len(judgments) != 2:
        found = len(judgments) if isinstance(judgments, list) else type(judgments).__name__
        raise InputError(f"expected 2 entries (original and swapped order), found {found}", file=str(file),
                         row=row, field="judgments")
    kind, judge = _judge_kind(record, file, row), _judge_name(judgments, file)
    return [_game_row(entry, order, kind, judge, pair_id, label, record, file, row)
            for entry, order in zip(judgments, ORDERS)]


def _game_row(entry, order: str, kind: str, judge: str, pair_id: str, label: str, record: dict, file: Path,
              row: int) -> dict:
    base = {"prompt_id": pair_id, "model_a": "A", "model_b": "B", "judge": judge, "first": FIRST_SHOWN[order],
            "order": order, "label": label, "judge_kind": kind, "response_model": record.get("response_model"),
            "source": record.get("source"), "judgment_id": f"{pair_id}:{order}:{judge}", "file": file.name,
            "line": row}
    judgment = entry.get("judgment") if isinstance(entry, dict) else None
    base["decision_shown"] = entry.get("decision") if isinstance(entry, dict) else None
    try:
        if not isinstance(judgment, dict):
            raise ValueError(f'"judgment" is {type(judgment).__name__}, expected an object')
        parsed = JUDGMENT_PARSERS[kind](judgment)
    except ValueError as exc:
        return {**base, "outcome": np.nan, "verdict": np.nan, "score_a": np.nan, "score_b": np.nan,
                "raw": json.dumps(judgment)[:2000] if judgment is not None else None, "conflicting": False,
                "error": f"{file.name} row {row} {order} order: {exc}"}
    return {**base, **_a_view(parsed, order), "raw": parsed["raw"], "conflicting": parsed["conflicting"],
            "error": None}


def _a_view(parsed: dict, order: str) -> dict:
    """Turn a shown-order parse into response_A's view: verdict, rewards and the 0/0.5/1 outcome."""
    swapped = order == "swapped"
    verdict = -parsed["verdict"] if swapped else parsed["verdict"]
    score_a, score_b = ((parsed["score_second"], parsed["score_first"]) if swapped
                        else (parsed["score_first"], parsed["score_second"]))
    signal = verdict if np.isfinite(verdict) else score_a - score_b
    return {"verdict": float(verdict), "score_a": score_a, "score_b": score_b,
            "outcome": verdict_outcome(signal)}


def read_judgebench(path: str | Path, *, skip_invalid: bool = False) -> Table:
    """Read JudgeBench judge outputs (a file or a folder of them) as a canonical **judgments** table.

    One row per game (pair × answer order × judge). ``outcome`` is response_A's result (1 / 0.5 / 0), from the last
    5-way verdict (arena-hard judges; ``verdict`` column, A's view) or from the two rewards (reward models;
    ``score_a``/``score_b`` columns). Extra columns: ``label``, ``order`` (original/swapped), ``first`` ("A" when
    response_A was shown first), ``raw``, ``error`` (why a game could not be parsed; its outcome is NaN),
    ``conflicting`` (the text held several different verdicts; the last was used), ``decision_shown``
    (JudgeBench's own decision, in shown positions), ``judge_kind``, ``response_model``, ``source``.
    Unparseable games stay in the table with ``error`` set and are counted in ``report.rows_skipped``; with
    ``skip_invalid`` a malformed record (or line) is left out and counted there too, else it raises.
    ``extras["responses"]`` is a responses table (``prompt_id, model ∈ {A, B}, text``) of the pairs.
    """
    files = judgebench_files(path)
    report = ReadReport(source=str(path), format="judgebench")
    games, responses = [], {}
    for file in files:
        for row, record in _records(file, report, skip_invalid):
            try:
                rows = _game_rows(record, file, row)
            except InputError as exc:  # a malformed record (not an unparseable judge output: those are kept)
                if not skip_invalid:
                    raise
                report.rows_read += 1
                report.skip(str(exc))
                continue
            report.rows_read += len(rows)
            games.extend(rows)
            for game in rows:
                if game["error"]:
                    report.skip(game["error"])
            _collect_responses(record, responses)
    if not games:
        raise InputError(f"no valid rows: all {report.rows_read} rows were skipped "
                         f"(first reason: {report.skipped_reasons[:1]})", file=str(path))
    frame = pd.DataFrame(games)
    n_unparsed = int(frame["error"].notna().sum())
    report.rows_used = len(frame) - n_unparsed
    n_conflicting = int(frame["conflicting"].sum())
    if n_unparsed:
        log.warning("%s: %d of %d JudgeBench games could not be parsed (kept with an error, outcome NaN)",
                    path, n_unparsed, len(frame))
    if n_conflicting:
        log.debug("%s: %d judge outputs held several different verdicts; the last one was used", path, n_conflicting)
    resp = pd.DataFrame(list(responses.values()), columns=["prompt_id", "model", "text", "instruction"])
    resp_table = Table("responses", resp, ReadReport(str(path), "judgebench", len(resp), len(resp)))
    counts = {"games": len(frame), "errors": n_unparsed, "conflicting_verdicts": n_conflicting,
              "files": len(files)}
    games = Table("judgments", frame, report, extras={"responses": resp_table, "counts": counts})
    games.extras["scores"] = _scores_with_labels(games, "probability")  # so judgewise.io.read_scores works too
    return games


def _collect_responses(record: dict, responses: dict) -> None:
    pair_id = str(record["pair_id"])
    for slot in ("A", "B"):
        text = record.get(f"response_{slot}")
        if text is not None and (pair_id, slot) not in responses:
            responses[(pair_id, slot)] = {"prompt_id": pair_id, "model": slot, "text": text,
                                          "instruction": record.get("question")}


# ---------------------------------------------------------------------------------------------------------------
# Per-item scores and labels
# ---------------------------------------------------------------------------------------------------------------

def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


# scale name → function(games frame) → per-game "A is better" value (NaN for unparseable games)
SCORE_SCALES: dict[str, Callable[[pd.DataFrame], pd.Series]] = {
    "probability": lambda g: pd.Series(np.where(g["verdict"].notna(), (g["verdict"] + 2.0) / 4.0,
                                                _sigmoid(g["score_a"] - g["score_b"])), index=g.index),
    "raw": lambda g: pd.Series(np.where(g["verdict"].notna(), g["verdict"], g["score_a"] - g["score_b"]),
                               index=g.index),
}


def judgebench_scores_from_games(games: Table, scale: str = "probability") -> Table:
    """Collapse a JudgeBench judgments table to one "A is better" score per (pair, judge), averaged over orders."""
    if scale not in SCORE_SCALES:
        raise InputError(f"unknown score scale {scale!r}; known: {sorted(SCORE_SCALES)}")
    frame = games.frame
    per_game = frame.assign(value=SCORE_SCALES[scale](frame))
    grouped = per_game.groupby(["prompt_id", "judge"], sort=False)["value"]
    scores = grouped.mean().rename("score").reset_index()  # mean skips NaN (unparseable orders)
    scores["n_orders"] = grouped.count().to_numpy()
    report = ReadReport(source=games.report.source, format=f"judgebench-scores:{scale}",
                        rows_read=len(scores))
    for item, rater in scores.loc[scores["n_orders"] == 0, ["prompt_id", "judge"]].itertuples(index=False):
        report.skip(f"pair {item}, judge {rater}: no parseable answer order")
    scores = scores[scores["n_orders"] > 0].rename(columns={"prompt_id": "item_id", "judge": "rater"})
    report.rows_used = len(scores)
    return Table("scores", scores.reset_index(drop=True), report, extras={"scale": scale})


def judgebench_labels(games: Table) -> Table:
    """The objective label as a scores table: rater ``human``, score 1 for A>B and 0 for B>A (one row per pair).

    Raises InputError when two files disagree on a pair's label.
    """
    labels = games.frame[["prompt_id", "label", "file", "line"]].drop_duplicates(["prompt_id", "label"])
    clash = labels[labels["prompt_id"].duplicated(keep=False)]
    if len(clash):
        first = clash.iloc[0]
        raise InputError(f"pair {first['prompt_id']} has conflicting labels across files "
                         f"({sorted(clash[clash['prompt_id'] == first['prompt_id']]['label'])})",
                         file=str(first["file"]), row=int(first["line"]), field="label")
    frame = pd.DataFrame({"item_id": labels["prompt_id"].to_numpy(), "rater": HUMAN_RATER,
                          "score": labels["label"].map(LABELS).to_numpy()})
    report = ReadReport(games.report.source, "judgebench-labels", len(frame), len(frame))
    return Table("scores", frame, report)


def read_judgebench_scores(path_or_paths, *, scale: str = "probability", with_human: bool = True,
                           skip_invalid: bool = False) -> Table:
    """Per-item "A is better" scores of every judge in JudgeBench outputs, plus the label as rater ``human``.

    ``path_or_paths``: a file, a folder (or the JudgeBench root), or a list of those. See the module docstring for
    the two scales. The returned scores table has columns ``item_id`` (pair_id), ``rater`` (judge model),
    ``score``, ``n_orders`` (answer orders averaged, 1 or 2; the ``human`` rows have NaN).
    """
    paths = [path_or_paths] if isinstance(path_or_paths, (str, Path)) else list(path_or_paths)
    games = [read_judgebench(p, skip_invalid=skip_invalid) for p in paths]
    merged = Table("judgments", pd.concat([g.frame for g in games], ignore_index=True),
                   _merge_reports([g.report for g in games], "judgebench"))
    return _scores_with_labels(merged, scale) if with_human else judgebench_scores_from_games(merged, scale)


def _scores_with_labels(games: Table, scale: str) -> Table:
    scores = judgebench_scores_from_games(games, scale)
    labels = judgebench_labels(games)
    scores.frame = pd.concat([scores.frame, labels.frame], ignore_index=True)
    scores.report.rows_read += labels.report.rows_read
    scores.report.rows_used += labels.report.rows_used
    return scores


def _merge_reports(reports: list[ReadReport], fmt: str) -> ReadReport:
    merged = ReadReport(source=";".join(r.source for r in reports), format=fmt)
    for r in reports:
        merged.rows_read += r.rows_read
        merged.rows_used += r.rows_used
        merged.rows_skipped += r.rows_skipped
        merged.skipped_reasons.extend(r.skipped_reasons)
    return merged
