"""Importer for AlpacaEval results directories (``results/<model>/<annotator>/annotations.json``).

AlpacaEval (tatsu-lab/alpaca_eval) compares every model with one anchor: in ``annotations.json`` the anchor is
``output_1``/``generator_1`` and ``preference`` ∈ [1, 2] (1 = anchor better, 2 = model better, 1.5 tie). Each
annotation becomes one canonical judgment row:

* ``model_a`` = the model (its **folder name**; a few files carry a stale ``generator_2``), ``model_b`` =
  ``generator_1`` (the anchor), ``judge`` = the annotator folder name, ``outcome`` = ``preference − 1``
  (the model's result; AlpacaEval's win rate is ``100 · mean(outcome)``), plus ``dataset``.
* ``prompt_id`` = ``"ae-"`` + the first 16 hex digits of SHA-1 of the UTF-8 instruction text. The instruction text
  is identical across models, so the same prompt has the same id in every model's file and in every
  ``model_outputs.json`` (that is what aligns judgments with responses and lets the bootstrap resample prompts).

Accepted paths: the data directory holding ``results/``, the ``results/`` directory itself, one model's directory,
one annotator's directory, or one annotations file (model = the folder above its annotator folder). Responses
(``results/<model>/model_outputs.json``, including the anchor's, which has no annotations) are attached as
``Table.extras["responses"]``; an anchor without ``model_outputs.json`` gets its texts from the annotations'
``output_1``. ``extras["anchor"]`` names the anchor when there is exactly one.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

from judgewise.io.containers import json_list_records
from judgewise.io.schema import detect_anchor, text_prompt_id
from judgewise.io.tables import ReadReport, Table
from judgewise.io.validate import (MISSING, Check, Validator, duplicate_field, name_text, not_text, number_field,
                                   prose_field, text_field)

ANNOTATIONS = "annotations.json"
OUTPUTS = "model_outputs.json"


@lru_cache(maxsize=1 << 16)  # every model's file repeats the same instructions
def prompt_id_of(instruction: str) -> str:
    """Stable id of an AlpacaEval instruction: ``"ae-"`` + SHA-1(UTF-8 text)[:16] (identical across models)."""
    return text_prompt_id(instruction, "ae-")


def annotation_files(path: str | Path) -> list[tuple[str, str, Path]]:
    """``(model, annotator, file)`` for every annotations.json under a data dir, results dir, model dir or
    annotator dir (or of one annotations file)."""
    root = Path(path)
    if root.is_file() or (root / ANNOTATIONS).is_file():  # one file, or one annotator's folder
        file = root if root.is_file() else root / ANNOTATIONS
        return [(file.parent.parent.name, file.parent.name, file)]
    for base in (root / "results", root):
        files = sorted(base.glob(f"*/*/{ANNOTATIONS}"))
        if files:
            return [(f.parent.parent.name, f.parent.name, f) for f in files]
    return [(root.name, f.parent.name, f) for f in sorted(root.glob(f"*/{ANNOTATIONS}"))]


def looks_like_alpacaeval(probe) -> bool:
    if probe.is_dir:
        return bool(annotation_files(probe.path))
    return probe.suffix == ".json" and {"instruction", "generator_1", "preference"} <= probe.keys


def _instruction_check() -> Check:
    """A non-empty string: the instruction's text is what its prompt id is hashed from."""
    return prose_field("instruction", "the instruction text")


ANNOTATION_CHECKS = [
    _instruction_check(),
    text_field("generator_1", "anchor name (AlpacaEval's output_1 model)"),
    number_field("preference", 1, 2, "AlpacaEval preference: 1 = anchor better, 2 = model better"),
]


def _column(records: list[dict], field: str, default=MISSING) -> list:
    return [r.get(field, default) for r in records]


def _read_annotations(model: str, annotator: str, file: Path, report: ReadReport,
                      skip_invalid: bool) -> pd.DataFrame:
    """One annotations.json as canonical judgment rows (validated; bad rows raise or are skipped and counted)."""
    v = Validator(str(file), report, skip_invalid)
    records, rows = json_list_records(file, v)
    raw = pd.DataFrame({f: _column(records, f) for f in ("instruction", "generator_1", "preference")})
    raw["dataset"], raw["output_1"] = _column(records, "dataset", None), _column(records, "output_1", None)
    not_itself = Check("generator_1", f"an anchor other than the judged model {model!r} (its folder name)",
                       lambda f: (f["generator_1"].astype(str) == model).to_numpy())
    raw, rows = v.apply(raw, rows, [*ANNOTATION_CHECKS, not_itself])
    return pd.DataFrame({
        "prompt_id": [prompt_id_of(text) for text in raw["instruction"]],
        "model_a": model,
        "model_b": name_text(raw["generator_1"]),
        "judge": annotator,
        "outcome": pd.to_numeric(raw["preference"]).to_numpy(dtype=float) - 1.0,
        "dataset": raw["dataset"],
        "instruction": raw["instruction"],
        "_anchor_text": raw["output_1"],
    })


def _read_outputs(model: str, file: Path, report: ReadReport, skip_invalid: bool) -> pd.DataFrame:
    """One model_outputs.json as canonical response rows (model = folder name)."""
    v = Validator(str(file), report, skip_invalid)
    records, rows = json_list_records(file, v)
    raw = pd.DataFrame({"instruction": _column(records, "instruction"), "output": _column(records, "output")})
    checks = [_instruction_check(),
              Check("output", "a string (the model's output)", lambda f: not_text(f["output"]))]
    raw, rows = v.apply(raw, rows, checks)
    frame = pd.DataFrame({"prompt_id": [prompt_id_of(t) for t in raw["instruction"]], "model": model,
                          "text": raw["output"], "instruction": raw["instruction"]})
    frame, rows = v.apply(frame, rows, [duplicate_field("prompt_id")])  # the same instruction twice
    return frame


def _responses(judgments: pd.DataFrame, results_dir: Path, skip_invalid: bool) -> Table | None:
    """Outputs of every judged model and anchor found beside them; anchors' texts fall back to output_1."""
    report = ReadReport(source=str(results_dir), format="alpacaeval-outputs")
    parts = []
    for model in pd.unique(pd.concat([judgments["model_a"], judgments["model_b"]])):
        file = results_dir / model / OUTPUTS
        if file.is_file():
            parts.append(_read_outputs(model, file, report, skip_invalid))
        elif model in set(judgments["model_b"]):
            parts.append(_anchor_from_annotations(model, judgments, report))
    parts = [p for p in parts if len(p)]
    if not parts:
        return None
    frame = pd.concat(parts, ignore_index=True)
    report.rows_used = len(frame)
    return Table("responses", frame, report)


def _anchor_from_annotations(anchor: str, judgments: pd.DataFrame, report: ReadReport) -> pd.DataFrame:
    rows = judgments[(judgments["model_b"] == anchor) & judgments["_anchor_text"].map(
        lambda x: isinstance(x, str))].drop_duplicates("prompt_id")
    report.rows_read += len(rows)
    return pd.DataFrame({"prompt_id": rows["prompt_id"], "model": anchor, "text": rows["_anchor_text"],
                         "instruction": rows["instruction"]})


def read_alpacaeval(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """Read an AlpacaEval results directory (or one annotations.json) as a judgments Table (see module doc)."""
    files = annotation_files(path)
    report = ReadReport(source=str(path), format="alpacaeval")
    if not files:
        v = Validator(str(path), report)
        raise v.error(f"no {ANNOTATIONS} found: expected results/<model>/<annotator>/{ANNOTATIONS} under the "
                      "data directory, the results directory, or one model's directory")
    parts = [_read_annotations(model, annotator, file, report, skip_invalid) for model, annotator, file in files]
    frame = pd.concat(parts, ignore_index=True)
    results_dir = files[0][2].parent.parent.parent
    responses = _responses(frame, results_dir, skip_invalid)
    anchor = detect_anchor(frame["model_a"], frame["model_b"], prefer_b=True)  # generator_1 is the reference
    frame = frame.drop(columns=["_anchor_text", "instruction"])
    report.rows_used = len(frame)
    if not len(frame):
        raise Validator(str(path), report).error(f"no valid rows: all {report.rows_read} rows were skipped")
    table = Table("judgments", frame, report)
    if responses is not None:
        table.extras["responses"] = responses
    if anchor is not None:
        table.extras["anchor"] = str(anchor)
    return table
