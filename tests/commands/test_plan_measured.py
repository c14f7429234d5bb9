"""``plan PATH`` when the judgments in PATH measure an anchor informativeness of 0 (every comparison through the
anchor a tie, e.g. a judge that always contradicts itself across the two orders): one clear error naming the file
and what to do, not the internal "anchor_informativeness must be in (0, 1], got 0.0"."""

from __future__ import annotations

import json

from tests.support import matrix_inputs
from tests.support import run_cli


def _contradicting(tmp_path):
    """All pairs on every prompt, each game won by the model shown first: every pair ties over its two orders."""
    rows = [{**r, "outcome": 1.0} for r in matrix_inputs.judgments().to_dict("records")]
    path = tmp_path / "j.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_plan_on_judgments_with_no_informative_anchor_says_so(tmp_path):
    path = _contradicting(tmp_path)
    res = run_cli("plan", path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    (line,) = [x for x in res.stderr.splitlines() if x.startswith("error:")]
    assert str(path) in line and "informativeness" in line and "--informativeness" in line
    assert "must be in (0, 1]" not in line


def test_plan_with_an_assumed_informativeness_uses_it(tmp_path):
    res = run_cli("plan", _contradicting(tmp_path), "--informativeness", "0.5", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["measured"]["n_models"] == len(matrix_inputs.MODELS)
