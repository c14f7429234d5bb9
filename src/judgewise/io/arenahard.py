"""Importers for Arena-Hard-Auto (lmarena/arena-hard-auto) files: battles, 5-way judgment games, model answers.

* **battles** (``{question_id, model_a, model_b, winner}``, JSONL or a JSON list, or a folder holding
  ``battles.jsonl`` and perhaps ``model_answer/``, attached as responses): ``winner`` ∈ model_a | model_b |
  tie, with Chatbot Arena's ``tie (bothbad)`` in any spelling (``tie(bothbad)``, ``tie_bothbad``, ``bothbad``)
  counted as a tie → ``outcome`` 1 / 0 / 0.5. ``prompt_id`` = ``question_id`` (or ``uid``); ``judge`` = the
  record's ``judge`` field when present, else ``"unknown"``.
* **games** (``model_judgment/<judge>/<model>.jsonl``: v0.1 ``{question_id, model, judge, games: [{score},
  {score}]}``, v2.0 the same with ``uid`` and ``category``): game 1 shows the baseline as A and the model as B,
  game 2 the reverse; ``score`` is the 5-way label (``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A``, and the
  spellings ``A<<B``, ``A<B``, ``B<A``, ``B<<A``, ``B=A`` that arena-hard-auto v2.0 ``show_result.py`` maps to the
  same results and weights; v0.1's ``show_result.py`` gave those spellings weight 0). One judgment row per game with ``model_a`` = the model, ``model_b`` = the baseline,
  ``verdict`` from the model's view, ``outcome`` win/tie/loss, ``first`` = the model shown first. The baseline of
  a record (:func:`record_baseline`): ``baseline=`` when given, else the record's ``baseline`` field, else the
  config's, else Arena-Hard's baseline of the record's ``category`` (``presets/arenahard.yaml``: v2.0 hard
  prompts → o3-mini-2025-01-31, creative writing → gemini-2.0-flash-001), else v0.1's ``gpt-4-0314``.
  A null score (the judge gave no label) is a failed game: kept with ``error``
  set, counted as skipped and never rated; in a v2.0 record (``uid``) its partner game fails with it, since v2.0's
  ``show_result.py`` drops the record (v0.1's dropped only the game). ``extras``: ``anchor`` (the one baseline),
  ``weighting`` = ``"arena_hard"`` (strong verdicts count 3 times), ``style_definition`` = ``"arena-hard"``,
  ``responses`` (the bench folder's ``model_answer/`` when found: the path's folder or its parents).
* **answers** (``model_answer/*.jsonl``): a responses table; ``prompt_id`` = ``question_id`` or ``uid``,
  ``model`` = ``model_id`` or ``model`` or the file stem, ``text`` = ``choices[0].turns[0].content`` or the
  assistant message's ``content.answer`` (or ``content`` when it is a plain string). Arena-Hard's style metadata
  (v2.0 ``metadata``, v0.1 ``conv_metadata``: ``token_len``, ``header_count``, ``list_count``, ``bold_count``, a
  count or a dict of counts that is summed, as arena-hard-auto ``utils_math.py`` does) becomes the columns
  ``n_tokens``, ``n_headers``, ``n_lists``, ``n_bold`` when every record of a file carries it.
* **config** (:func:`read_config`): Arena-Hard's judge config yaml (``judge_model``, ``bench_name``, v0.1's
  ``baseline_model``) as an :class:`ArenaHardConfig`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.io.arenahard_config import read_config, record_baseline
from judgewise.io.battles import (COLUMNAR_SUFFIXES, UNKNOWN_JUDGE, WINNER_OUTCOME, battle_frame,  # noqa: F401
                                  read_battles_columnar, winner_outcome)
from judgewise.io.battles import prompt_ids as _prompt_ids
from judgewise.io.canonical import checks_for, validate_table
from judgewise.io.containers import json_list_records, jsonl_records
from judgewise.io.formats import Probe
from judgewise.io.schema import VERDICT5, verdict5, verdict_outcome
from judgewise.io.tables import ReadReport, Table
from judgewise.io.validate import MISSING, Validator, show


def _records(path: Path, v: Validator) -> tuple[list[dict], np.ndarray]:
    return json_list_records(path, v) if path.suffix.lower() == ".json" else jsonl_records(path, v)


BATTLES_FILE = "battles.jsonl"


def looks_like_battles(probe) -> bool:
    if probe.is_dir:  # an Arena-Hard data folder holding battles.jsonl (and perhaps model_answer/)
        return (probe.path / BATTLES_FILE).is_file()
    keys = probe.keys  # a battle log lacking its winner column is still one (read_battles says what it lacks)
    return {"model_a", "model_b"} <= keys and bool({"winner", "question_id"} & keys) and "outcome" not in keys


def read_battles(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """Arena-Hard / Chatbot Arena battles as a canonical judgments table (see module doc). Given a folder, reads
    its ``battles.jsonl`` and attaches the folder's model answers (if any) as ``extras["responses"]``."""
    path = Path(path)
    if path.is_dir():
        table = read_battles(path / BATTLES_FILE, skip_invalid=skip_invalid)
        if answer_files(path) and path.joinpath("model_answer").is_dir():
            table.extras["responses"] = read_answers(path, skip_invalid=skip_invalid)
        return table
    v = Validator(str(path), ReadReport(source=str(path), format="arenahard-battles"), skip_invalid)
    if path.suffix.lower() in COLUMNAR_SUFFIXES:  # large battle logs: pyarrow, chunk by chunk (io.battles)
        return read_battles_columnar(path, v)
    frame, rows = battle_frame(*_records(path, v), v)
    return validate_table(frame, rows, "judgments", False, v)


def game_files(path: Path) -> list[Path]:
    """A judgment file, a judge's folder of them, ``model_judgment/`` holding one folder per judge, or the bench
    folder holding ``model_judgment/``."""
    if path.is_file():
        return [path]
    if (path / JUDGMENT_DIR).is_dir():
        path = path / JUDGMENT_DIR
    return sorted(path.glob("*.jsonl")) or sorted(path.glob("*/*.jsonl"))


JUDGMENT_DIR = "model_judgment"
FAILED_PARTNER = "its partner game failed (Arena-Hard v2.0 drops the whole record)"


def looks_like_games(probe) -> bool:
    if probe.is_dir:
        files = game_files(probe.path)
        return bool(files) and looks_like_games(Probe(files[0]))
    return {"model", "games"} <= probe.keys and bool({"question_id", "uid"} & probe.keys)


def _game_verdict(game, k: int, row: int, v: Validator):
    """(verdict from A's view, error): a 5-way label gives its verdict; a null label is the judge's failure (error
    text); anything else (unknown text, a list, a number) is rejected (None, None): Arena-Hard writes a label or null."""
    score = game.get("score") if isinstance(game, dict) else MISSING
    if score is None:
        return None, f"games[{k}].score is null: the judge gave no verdict"
    if not isinstance(score, str):
        v.reject(f"expected a 5-way label ({', '.join(VERDICT5)}) or null, found {show(score)}", row=row,
                 field=f"games[{k}].score")
        return None, None
    verdict = verdict5(score)
    if verdict is None:  # Arena-Hard's parser writes a label or null: any other text is not its output
        v.reject(f"expected a 5-way label ({', '.join(VERDICT5)}) or null, found {show(score)}", row=row,
                 field=f"games[{k}].score")
        return None, None
    return verdict, None


def _game_rows(record: dict, row: int, judge: str, baseline: str | None, config, v: Validator) -> list[dict]:
    """The judgment rows of one question's games (model's view; module doc)."""
    games = record.get("games")
    if not isinstance(games, list) or not 1 <= len(games) <= 2:
        v.reject(f"expected a list of one or two games (one per order), found {show(games)}", row=row,
                 field="games")
        return []
    base = record_baseline(record, baseline, config)
    if base is None:
        v.reject(f"category {show(record.get('category'))} has no known Arena-Hard baseline: pass --baseline NAME "
                 "or --arena-hard-config", row=row, field="category")
        return []
    parsed = [_game_verdict(game, k, row, v) for k, game in enumerate(games)]
    if any(verdict is None and error is None for verdict, error in parsed):
        return []  # rejected above
    if "uid" in record and any(error for _, error in parsed):  # v2.0 drops the record
        parsed = [(None, error or FAILED_PARTNER) for _, error in parsed]
    model, prompt = record.get("model"), record.get("question_id", record.get("uid"))
    out = []
    for k, (verdict, error) in enumerate(parsed):
        model_first = k % 2 == 1  # game 1: baseline is A; game 2: the model is A
        mine = np.nan if verdict is None else verdict * (1 if model_first else -1)
        out.append({"prompt_id": prompt, "model_a": model, "model_b": base,
                    "judge": record.get("judge", judge), "outcome": verdict_outcome(mine), "verdict": mine,
                    "first": model if model_first else base, "game": k + 1, "error": error, "_row": row})
    return out


def _key(record: dict, judge: str) -> tuple:
    return (str(record.get("question_id", record.get("uid"))), str(record.get("model")), record.get("judge", judge))


def _repeated(record, where: str, judge: str, seen: dict) -> bool:
    """Whether ``record`` repeats a (question, model, judge) already read; remembers where each was first."""
    if not isinstance(record, dict):
        return False
    key = _key(record, judge)
    if key in seen:
        return True
    seen[key] = where
    return False


def read_games(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None,
               baseline: str | None = None, config=None) -> Table:
    """Arena-Hard ``model_judgment`` files (a file, a judge's folder, ``model_judgment/`` or the bench folder) as
    judgments (see module doc). ``baseline``: the baseline of every game; ``config``: an Arena-Hard judge config
    (:class:`~judgewise.io.arenahard_config.ArenaHardConfig` or its yaml path) giving the baseline(s) and the
    judge of records that name none."""
    path = Path(path)
    config = read_config(config) if isinstance(config, (str, Path)) else config
    files = game_files(path)
    report = ReadReport(source=str(path), format="arenahard-games")
    rows_out, seen = [], {}
    for file in files:
        v = Validator(str(file), report, skip_invalid)
        records, rows = jsonl_records(file, v)
        judge = config.judge if config is not None and config.judge else file.parent.name
        for record, row in zip(records, rows):
            if _repeated(record, f"{file} row {row}", judge, seen):
                v.reject(f"a second record of model {show(record.get('model'))} on question "
                         f"{show(record.get('question_id', record.get('uid')))} (first: {seen[_key(record, judge)]}); "
                         "each question's games once per model", row=int(row), field="model")
                continue
            rows_out.extend({**game, "_file": str(file)}
                            for game in _game_rows(record, int(row), judge, baseline, config, v))
    report.rows_read = len(rows_out) + report.rows_skipped  # rows are games, not lines
    v = Validator(str(path), report, skip_invalid)
    if not rows_out:
        raise v.error("no valid games found")
    checked = [_check_file_games(games, Validator(file, report, skip_invalid))
               for file, games in pd.DataFrame(rows_out).groupby("_file", sort=False)]
    frame = pd.concat([f for f, _ in checked], ignore_index=True)
    table = validate_table(frame, np.concatenate([r for _, r in checked]), "judgments", False, v)
    table.extras.update(games_extras(table.frame, path))
    return table


def games_extras(frame: pd.DataFrame, path: Path) -> dict:
    """What Arena-Hard games imply for rating them: the baseline as anchor (when there is one), Arena-Hard's
    weighting and style definition, and the bench's model answers (when found) as responses."""
    baselines = sorted(frame["model_b"].astype(str).unique())
    extras = {"anchor": baselines[0] if len(baselines) == 1 else None, "baselines": baselines,
              "weighting": "arena_hard", "style_definition": "arena-hard", "pin_anchor": True}
    answers = bench_answers(path)
    if answers is not None:
        extras["responses"] = read_answers(answers)
    return extras


def bench_answers(path: Path) -> Path | None:
    """The ``model_answer/`` folder beside the ``model_judgment/`` folder that ``path`` is (in), or in the bench
    folder ``path`` (Arena-Hard's layout ``data/<bench>/{model_judgment,model_answer}``); None when absent."""
    path = path.resolve()
    if (path / JUDGMENT_DIR).is_dir():
        bench = path
    else:
        bench = next((p.parent for p in [path, *path.parents] if p.name == JUDGMENT_DIR), None)
    answers = bench / "model_answer" if bench is not None else None
    return answers if answers is not None and answers.is_dir() and answer_files(answers) else None


def _check_file_games(games: pd.DataFrame, v: Validator) -> tuple[pd.DataFrame, np.ndarray]:
    """The judgment row checks on one file's games, so that a bad row is named with its file (rows are its lines)."""
    games = games.drop(columns="_file").reset_index(drop=True)
    rows = games.pop("_row").to_numpy()
    failed = games["error"].notna().to_numpy()  # the judge's failures: counted by validate_table, not checked
    ok, ok_rows = v.apply(games[~failed].reset_index(drop=True), rows[~failed],
                          checks_for("judgments", games.columns))
    return pd.concat([ok, games[failed]], ignore_index=True), np.concatenate([ok_rows, rows[failed]])


def _answer_text(record: dict):
    """The answer text in either Arena-Hard layout (None when absent)."""
    choices = record.get("choices")
    if isinstance(choices, list) and choices:
        try:
            return choices[0]["turns"][0]["content"]
        except (KeyError, IndexError, TypeError):
            return None
    for message in record.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "assistant":
            content = message.get("content")
            return content.get("answer") if isinstance(content, dict) else content
    return None


STYLE_METADATA = {"n_tokens": "token_len", "n_headers": "header_count", "n_lists": "list_count",
                  "n_bold": "bold_count"}


def _metadata_count(value) -> float:
    """A metadata count: an integer, or a dict of counts summed (``{"h1": 0, "h2": 3, ...}``); NaN otherwise."""
    if isinstance(value, dict):
        value = sum(value.values()) if all(isinstance(x, (int, float)) for x in value.values()) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")


def style_metadata(records: list[dict]) -> dict[str, list[float]]:
    """Arena-Hard's style metadata of each answer as count columns (module doc); {} when a record lacks it."""
    metas = [r.get("metadata") if isinstance(r.get("metadata"), dict) else r.get("conv_metadata")
             for r in records]
    if not metas or not all(isinstance(m, dict) and set(STYLE_METADATA.values()) <= m.keys() for m in metas):
        return {}
    return {col: [_metadata_count(m[key]) for m in metas] for col, key in STYLE_METADATA.items()}


def answer_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    base = path / "model_answer" if (path / "model_answer").is_dir() else path
    return sorted(base.glob("*.jsonl"))


def looks_like_answers(probe) -> bool:
    if probe.is_dir:
        files = answer_files(probe.path)
        return bool(files) and looks_like_answers(Probe(files[0]))
    return bool({"messages", "choices"} & probe.keys) and bool({"uid", "question_id"} & probe.keys)


def read_answers(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """Arena-Hard model answers (a model_answer folder, its parent, or one file) as a responses table."""
    path = Path(path)
    report = ReadReport(source=str(path), format="arenahard-answers")
    parts = []
    for file in answer_files(path):
        v = Validator(str(file), report, skip_invalid)
        records, rows = jsonl_records(file, v)
        frame = pd.DataFrame({
            "prompt_id": _prompt_ids(records),
            "model": [r.get("model_id") or r.get("model") or file.stem for r in records],
            "text": [_answer_text(r) for r in records],
            **style_metadata(records),
        })
        part = validate_table(frame, rows, "responses", False, v)
        parts.append(part.frame)
    if not parts:
        raise Validator(str(path), report).error("no model answer files (*.jsonl) found")
    frame = pd.concat(parts, ignore_index=True)
    report.rows_used = len(frame)
    return Table("responses", frame, report)
