"""The group of each judgment for ``rank --by COLUMN``: a column of the judgments, or of their prompts.

A column is looked up, in order, in:

1. the judgments table itself (AlpacaEval's ``dataset``, a canonical table's extra columns, a store's ``judge``,
   ``template``, ...);
2. the prompts file given with ``--prompts`` (a table keyed by ``prompt_id``, ``question_id`` or ``uid``);
3. a prompts table the reader attached (``Table.extras["prompts"]``);
4. the benchmark's questions file found beside the input: ``question.jsonl`` in the input folder or up to three
   folders above it (Arena-Hard v0.1/v2.0 ``{uid, category, subcategory, cluster}``, MT-bench
   ``{question_id, category}``), so ``model_judgment/<judge>/<model>.jsonl`` finds its bench's questions;
5. the responses the input carries (``Table.extras["responses"]``), for a column constant within each prompt.

A prompt column must hold one value per prompt (a responses column that differs between the models' answers to
one prompt is refused). A column found nowhere is a ConfigError listing the columns that exist; judgments
whose prompt is missing from the prompts table (or whose value is empty) form the group of rows without a value
(:data:`judgewise.ratings.grouped.MISSING`), apart from any text value, counted and ranked like any group.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.io.mtbench import QUESTIONS_FILE
from judgewise.io.prompts import ID_FIELDS, read_prompt_table  # the prompt-id fields of questions files
from judgewise.io.tables import Table

LEVELS_UP = 3


def find_questions(path: Path) -> Path | None:
    """The ``question.jsonl`` of the benchmark ``path`` belongs to: in ``path`` (a folder) or up to
    :data:`LEVELS_UP` folders above it; None when there is none."""
    path = Path(path)
    start = path if path.is_dir() else path.parent
    for folder in [start, *start.parents][:LEVELS_UP + 1]:
        candidate = folder / QUESTIONS_FILE
        if candidate.is_file() and candidate != path:
            return candidate
    return None


def read_prompts(path: Path) -> pd.DataFrame:
    """A prompts table (JSONL, JSON list, CSV or Parquet; Arena-Hard/MT-bench ``question.jsonl`` included, or the
    responses file of a judging run, one row per prompt and model) as ``prompt_id`` plus its one-value-per-cell
    columns (lists such as MT-bench's ``turns`` are left out). A prompt may have several rows: the column grouped
    by must then agree between them (:func:`per_prompt`).

    Raises
    ------
    InputError
        A file without a ``prompt_id``/``question_id``/``uid`` field (:func:`judgewise.io.prompts.read_prompt_table`).
    """
    frame = read_prompt_table(path, id_fields=ID_FIELDS)
    scalar = [c for c in frame.columns if not frame[c].map(lambda v: isinstance(v, (list, dict))).any()]
    return frame[scalar]


def prompt_sources(table: Table, inputs: list[Path], prompts: Path | None) -> list[tuple[str, callable]]:
    """(name, loader) of each place a prompt column may come from, in lookup order (module docstring); loaders
    run only when a column is not in the judgments themselves."""
    sources = []
    if prompts is not None:
        sources.append((str(prompts), lambda: read_prompts(prompts)))
    attached = table.extras.get("prompts")
    if attached is not None:
        sources.append(("the input's prompts", lambda: getattr(attached, "frame", attached)))
    for found in dict.fromkeys(q for q in map(find_questions, inputs) if q is not None):
        sources.append((str(found), lambda f=found: read_prompts(f)))
    responses = table.extras.get("responses")
    if responses is not None:
        sources.append(("the input's responses", lambda: responses.frame))
    return sources


def per_prompt(frame: pd.DataFrame, column: str, source: str) -> pd.Series:
    """``prompt_id`` → the column's value; ConfigError when a prompt has two different values."""
    values = frame[["prompt_id", column]].dropna(subset=[column]).astype({"prompt_id": str})
    distinct = values.drop_duplicates()
    clash = distinct["prompt_id"].duplicated(keep=False)
    if clash.any():
        first = distinct[clash].iloc[:2]
        raise ConfigError(f"--by {column}: {source} gives prompt {first['prompt_id'].iloc[0]!r} several values "
                          f"({', '.join(map(repr, first[column]))}); --by needs one value per prompt")
    return distinct.set_index("prompt_id")[column]


def group_values(frame: pd.DataFrame, table: Table, column: str, *, inputs: list[Path],
                 prompts: Path | None = None) -> pd.Series:
    """Each row's value of ``column`` (module docstring), aligned with ``frame`` (NaN where a prompt has none).

    Parameters
    ----------
    frame : DataFrame
        The rows to rank (judgments or grades, with ``prompt_id``).
    table : Table
        The table they were read from (its ``extras`` may carry prompts or responses).
    column : str
        The column to group by.
    inputs : list of Path
        The input paths (where a benchmark's ``question.jsonl`` is looked for).
    prompts : Path, optional
        A prompts table given by the user (``--prompts``), searched before anything found by itself.

    Raises
    ------
    ConfigError
        The column is nowhere (listing the columns that exist), or differs within a prompt.
    InputError
        The prompts table shares no prompt with the judgments.
    """
    if column in frame.columns:
        return frame[column]
    seen = [f"the judgments: {', '.join(map(str, frame.columns))}"]
    for name, load in prompt_sources(table, inputs, prompts):
        source = load()
        if column not in source.columns:
            seen.append(f"{name}: {', '.join(c for c in map(str, source.columns) if c != 'prompt_id')}")
            continue
        mapping = per_prompt(source, column, name)
        values = frame["prompt_id"].astype(str).map(mapping)
        if len(frame) and values.isna().all():
            raise InputError(f"--by {column}: none of the {frame['prompt_id'].nunique():,} prompts of the judgments "
                             f"is in this prompts table (are they the same benchmark?)", file=name)
        return values
    raise ConfigError(f"--by {column}: no such column. Columns found in " + "; in ".join(seen)
                      + ("" if prompts else " (a prompts table with more columns can be given with --prompts FILE)"))
