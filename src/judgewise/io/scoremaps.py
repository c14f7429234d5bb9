"""Reading a model → score map from a ``judgewise rank --json`` output or a plain ``{model: score}`` JSON object.

Accepted shapes: a JSON list of objects with ``model`` and ``score`` (what ``rank --json`` prints); a JSON object
``{model: score}``; or an object holding such a map under some key (e.g. a reference file with
``"bt_elo_scale": {...}``): the map under ``key`` when given, else the only one, else the one sharing most model
names with ``models``.
"""

from __future__ import annotations

import math
from pathlib import Path

from judgewise.io.containers import decode_utf8, parse_json, read_bytes
from judgewise.io.tables import ReadReport
from judgewise.io.validate import Validator, show


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _from_records(records: list, v: Validator) -> dict[str, float]:
    scores = {}
    for row, rec in enumerate(records, start=1):
        if not isinstance(rec, dict) or "model" not in rec:
            raise v.error(f"expected an object with model and score, found {show(rec)}", row=row, field="model")
        score = _number(rec.get("score"))
        if score is None:
            raise v.error(f"expected a finite number, found {show(rec.get('score'))}", row=row, field="score")
        if str(rec["model"]) in scores:
            raise v.error(f"expected each model once, found {show(rec['model'])} again", row=row, field="model")
        scores[str(rec["model"])] = score
    return scores


def _inner_map(data: dict, v: Validator, key: str | None, models) -> dict:
    """The {model: score} map itself, the one under ``key``, or the nested map sharing most names with
    ``models`` (ambiguity without ``models`` is an error asking for --key)."""
    if key is not None:
        if not isinstance(data.get(key), dict):
            raise v.error(f"expected an object of model → score under this key, found {show(data.get(key))}",
                          field=key)
        return data[key]
    if all(_number(x) is not None for x in data.values()):
        return data
    maps = [x for x in data.values() if isinstance(x, dict) and x and all(_number(y) is not None for y in x.values())]
    if len(maps) > 1 and models:
        overlap = [len(set(m) & set(models)) for m in maps]
        if overlap.count(max(overlap)) == 1 and max(overlap) > 0:
            maps = [maps[overlap.index(max(overlap))]]
    if len(maps) != 1:
        raise v.error(f"expected {{model: score}} or exactly one such map inside, found keys {list(data)[:8]}"
                      " (choose one with --key)")
    return maps[0]


def _from_map(data: dict, v: Validator, key: str | None, models=None) -> dict[str, float]:
    data = _inner_map(data, v, key, models)
    scores = {}
    for row, (model, value) in enumerate(data.items(), start=1):
        if _number(value) is None:
            raise v.error(f"expected a finite number, found {show(value)}", row=row, field=str(model))
        scores[str(model)] = float(value)
    return scores


def read_score_map(path: str | Path, key: str | None = None, models=None) -> dict[str, float]:
    """``{model: score}`` from a rank JSON output or a score map file (see module doc); ``models`` (names
    expected, e.g. the other file's) picks among several nested maps."""
    v = Validator(str(path), ReadReport(source=str(path), format="scores-map"))
    data = parse_json(decode_utf8(read_bytes(Path(path), v), v), v,
                      expected="a rank --json list or a {model: score} object")
    if isinstance(data, list) and key is None:
        return _from_records(data, v)
    if isinstance(data, dict):
        return _from_map(data, v, key, models)
    raise v.error(f"expected a JSON list of {{model, score}} objects or a {{model: score}} object, found "
                  f"{type(data).__name__}")
