"""The package top exports the public API, loads it lazily, and every advertised name resolves."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import judgewise
from tests.support import REPO


def test_every_public_name_resolves():
    for name in judgewise.__all__:
        assert getattr(judgewise, name) is not None, name


def test_import_judgewise_loads_no_heavy_module():
    code = "import sys, judgewise; print(sorted(m for m in ('pandas', 'numpy', 'openai') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_rank_from_the_top_level_returns_a_frame_best_first():
    table = judgewise.read_judgments(REPO / "examples" / "alpacaeval")
    ranking = judgewise.rank(table.frame, "winrate", anchor="gpt4_1106_preview")
    frame = ranking.to_frame()
    assert list(frame.columns[:6]) == ["model", "score", "ci_low", "ci_high", "rank", "n"]
    assert frame["score"].is_monotonic_decreasing
    assert set(frame["model"]) == set(ranking.models)


def test_an_unknown_name_is_an_attribute_error():
    try:
        judgewise.not_a_thing  # noqa: B018
    except AttributeError as exc:
        assert "not_a_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "numba", "openai")


@pytest.mark.parametrize("args", [["--help"], ["rank", "--help"], ["judge", "--help"], ["store", "stats", "--help"]])
def test_cli_help_loads_no_heavy_module(args):
    code = ("import sys\nfrom judgewise.cli.app import main\nsys.argv = ['judgewise', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert res.stderr.strip().splitlines()[-1] == "[]" and "Usage" in res.stdout
