"""``judgewise rank --output x.json|x.csv|x.parquet``: the format follows the suffix, the file holds what ``--json``
prints (per group and model with ``--by``), and it is written atomically (a failed run leaves the old file)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.support import REPO, run_cli

SLICE = REPO / "examples" / "alpacaeval"
ARGS = ("--method", "winrate", "--bootstrap", "20", "--seed", "2")


def _json(res) -> object:
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _frame_equals_records(frame: pd.DataFrame, records: list[dict]) -> None:
    """Every record's fields equal the frame row's, in order (None ↔ NaN)."""
    assert len(frame) == len(records)
    for (_, row), rec in zip(frame.iterrows(), records):
        for key, value in rec.items():
            got = row[key]
            if value is None:
                assert pd.isna(got), key
            elif isinstance(value, str):
                assert got == value, key
            else:
                assert float(got) == pytest.approx(value, rel=1e-12, abs=1e-12), key


@pytest.mark.parametrize("suffix", [".json", ".csv", ".parquet"])
def test_output_suffix_chooses_the_format_and_holds_the_printed_leaderboard(tmp_path, suffix):
    out = tmp_path / f"ranking{suffix}"
    printed = _json(run_cli("rank", SLICE, *ARGS, "--json", "--output", out))
    if suffix == ".json":
        assert json.loads(out.read_text()) == printed
        return
    frame = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert list(frame.columns[:6]) == ["model", "score", "ci_low", "ci_high", "rank", "n"]
    _frame_equals_records(frame, printed)


@pytest.mark.parametrize("suffix", [".json", ".csv", ".parquet"])
def test_output_with_by_has_a_board_column_and_the_overall_last(tmp_path, suffix):
    out = tmp_path / f"groups{suffix}"
    printed = _json(run_cli("rank", SLICE, *ARGS, "--by", "dataset", "--json", "--output", out))
    assert set(printed) == {"by", "groups", "skipped_groups", "missing", "overall"} and printed["missing"] is None
    if suffix == ".json":
        assert json.loads(out.read_text()) == printed
        return
    frame = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert list(frame.columns[:3]) == ["by", "board", "group"] and set(frame["by"]) == {"dataset"}
    assert list(dict.fromkeys(frame["board"])) == ["group", "overall"]
    groups = frame[frame["board"] == "group"]
    assert list(dict.fromkeys(groups["group"])) == list(printed["groups"])
    assert frame[frame["board"] == "overall"]["group"].isna().all()
    for group in printed["groups"]:
        _frame_equals_records(groups[groups["group"] == group].drop(columns=["by", "board", "group"]),
                              printed["groups"][group])
    _frame_equals_records(frame[frame["board"] == "overall"].drop(columns=["by", "board", "group"]),
                          printed["overall"])


def test_output_with_an_unknown_suffix_is_refused_before_any_work(tmp_path):
    out = tmp_path / "ranking.txt"
    res = run_cli("rank", SLICE, "--output", out)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "the suffix chooses the format, one of .json, .csv, .parquet (found '.txt')" in res.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_failed_rank_leaves_an_existing_table_untouched(tmp_path, suffix):
    out = tmp_path / f"ranking{suffix}"
    out.write_bytes(b"previous results\n")
    res = run_cli("rank", SLICE, "--by", "no_such_column", "--output", out)
    assert res.returncode == 2
    assert out.read_bytes() == b"previous results\n" and sorted(p.name for p in tmp_path.iterdir()) == [out.name]


def test_parquet_output_keeps_numbers_as_numbers(tmp_path):
    out = tmp_path / "r.parquet"
    assert run_cli("rank", SLICE, *ARGS, "--output", out).returncode == 0
    frame = pd.read_parquet(out)
    assert frame["score"].dtype == np.float64 and frame["rank"].dtype == np.int64 and frame["n"].dtype == np.int64
