"""Questions files for generating answers: prompt ids and the user turns of each prompt, from any common layout.

:func:`read_prompts` returns a frame ``prompt_id, turns, category`` (``turns`` a list of the user turns, one for a
single-turn prompt) from:

* **MT-bench** ``question.jsonl`` (``{question_id, category, turns: [t1, t2]}``): read by
  :func:`judgewise.io.mtbench.read_questions`;
* **Arena-Hard** ``question.jsonl``: v0.1 and v2.0 (``{uid, category, prompt, ...}``) and the older v0.1 layout
  (``{question_id, category, turns: [{content}]}``);
* **canonical prompts** (JSONL, JSON list, CSV or Parquet): an id column (``prompt_id``, ``question_id`` or ``uid``)
  and a text column (``prompt``, ``instruction`` or ``question``) or a ``turns`` list.

Every bad row is an :class:`InputError` naming the file, row and field (an id missing, repeated or not a name, a
prompt text missing or empty, turns that are not a list of texts); nothing is dropped.

:func:`read_prompt_table` reads a prompts table as it is (every column, a prompt on several rows allowed) keyed by
``prompt_id``: the prompts a judging run shows the judge, the columns ``rank --by`` groups by. Both readers take the
id fields to look for (``id_fields``, default :data:`ID_FIELDS`) and read files through
:func:`judgewise.io.containers.read_table`'s suffix table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.io import mtbench
from judgewise.errors import InputError
from judgewise.io.containers import CONTAINERS, TABLE_SUFFIXES, json_list_records, jsonl_records, read_table, \
    table_container
from judgewise.io.tables import ReadReport
from judgewise.io.validate import MISSING, Check, Validator, duplicate_field, name_text, show, text_field

ID_FIELDS = ("prompt_id", "question_id", "uid")  # a prompt's id: the first of these a file has
TEXT_FIELDS = ("prompt", "instruction", "question")  # as judges.pairs.PROMPT_TEXT_COLUMNS, in the same order


def _records(path: Path, v: Validator) -> tuple[list[dict], np.ndarray]:
    kind = table_container(path, v, f"expected a questions file ending in {', '.join(TABLE_SUFFIXES)}")
    if kind == "jsonl":
        return jsonl_records(path, v)
    if kind == "json":
        return json_list_records(path, v)
    frame, rows, _ = CONTAINERS[kind](path, v)
    records = [{k: (x.tolist() if isinstance(x, np.ndarray) else x) for k, x in r.items() if _present(x)}
               for r in frame.to_dict(orient="records")]
    return records, rows


def _present(value) -> bool:
    return value is not MISSING and not (isinstance(value, float) and np.isnan(value)) and value is not None


def _turn_text(turn):
    """A user turn: a string, or Arena-Hard's ``{content: ...}`` object."""
    return turn.get("content", MISSING) if isinstance(turn, dict) else turn


def _turns(record: dict):
    """The user turns of one record: its ``turns`` list, else its prompt text as the one turn (MISSING if none)."""
    if "turns" in record:
        turns = record["turns"]
        return [_turn_text(t) for t in turns] if isinstance(turns, list) else turns
    text = next((record[f] for f in TEXT_FIELDS if f in record), MISSING)
    return MISSING if text is MISSING else [text]


def _good_turns(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(t, str) and t.strip() for t in value)


def read_prompts(path: str | Path, *, id_fields: tuple[str, ...] = ID_FIELDS) -> pd.DataFrame:
    """The prompts of a questions file (module docstring) as ``prompt_id`` (text, from the first of ``id_fields``
    each record has), ``turns`` (list of the user turns) and ``category`` (or None), in the file's order."""
    path = Path(path)
    v = Validator(str(path), ReadReport(source=str(path), format="questions"))
    if not path.is_file():
        raise v.error("no such questions file" if not path.exists() else "not a file; expected a questions file")
    if path.suffix.lower() == ".jsonl" and mtbench.is_question_file(path):
        frame = mtbench.read_questions(path)
        return frame[["prompt_id", "turns", "category"]].reset_index(drop=True)
    records, rows = _records(path, v)
    frame = pd.DataFrame({
        "prompt_id": [next((r[f] for f in id_fields if f in r), MISSING) for r in records],
        "turns": [_turns(r) for r in records],
        "category": [r.get("category") for r in records],
    })
    ids = " or ".join(id_fields)
    turns = Check("turns", f"a prompt text ({' or '.join(TEXT_FIELDS)}) or a non-empty list of turns, each a "
                           "non-empty text", lambda f: ~f["turns"].map(_good_turns).to_numpy(bool),
                  lambda f, i, r: show(f["turns"].iloc[i]))
    frame, rows = v.apply(frame, rows, [text_field("prompt_id", f"prompt id ({ids})"), turns,
                                        duplicate_field("prompt_id")])
    if not len(frame):
        raise v.error("no prompts in the file")
    return frame.assign(prompt_id=frame["prompt_id"].astype(str).str.strip())


def read_prompt_table(source: str | Path | pd.DataFrame, *, id_fields: tuple[str, ...] = ID_FIELDS) -> pd.DataFrame:
    """A prompts table as it is (JSONL, JSON list, CSV or Parquet file, or a DataFrame), the first of ``id_fields``
    it has renamed ``prompt_id`` and kept as the tables keep ids (text: ``3.0`` is id ``"3"``).

    Raises
    ------
    InputError
        A file that cannot be read, or a table with none of ``id_fields`` (naming the file).
    """
    frame = source if isinstance(source, pd.DataFrame) else read_table(source)
    id_field = next((f for f in id_fields if f in frame.columns), None)
    if id_field is None:
        raise InputError(f"a prompts table needs one of the fields {list(id_fields)}, found "
                         f"{list(frame.columns)[:12]}",
                         file="the table given" if isinstance(source, pd.DataFrame) else str(source))
    frame = frame.rename(columns={id_field: "prompt_id"})
    return frame.assign(prompt_id=name_text(frame["prompt_id"]))
