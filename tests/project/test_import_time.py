"""Start-up stays light: ``import judgewise`` and the CLI's help load no heavy library, and ``rank`` only the ones
it needs (checked on ``sys.modules`` in a fresh interpreter, not timed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support import REPO

#: never loaded by ``import judgewise`` or by a help page
HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "numba", "openai")
#: never loaded by ``rank`` of a battles file: it reads, codes and fits, nothing else (scipy: only a bootstrap)
NOT_FOR_RANK = ("numba", "openai", "jinja2", "psycopg", "matplotlib", "ray", "scipy")


def _loaded_after(code: str, *args: str) -> tuple[list[str], subprocess.CompletedProcess]:
    """The heavy modules a fresh interpreter holds after running ``code`` (printed as its last stderr line)."""
    listing = f"\nprint(json.dumps(sorted(m for m in {HEAVY + NOT_FOR_RANK!r} if m in sys.modules)), file=sys.stderr)"
    res = subprocess.run([sys.executable, "-c", code + listing, *args], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    return json.loads(res.stderr.strip().splitlines()[-1]), res


#: the CLI run on this interpreter's arguments
CLI = ("import json, sys\nfrom judgewise.cli.app import main\nsys.argv = ['judgewise', *sys.argv[1:]]\n"
       "try:\n    main()\nexcept SystemExit:\n    pass")


def test_import_judgewise_loads_no_heavy_module():
    loaded, _ = _loaded_after("import json, sys, judgewise")
    assert loaded == []


@pytest.mark.parametrize("args", [["--help"], ["rank", "--help"], ["judge", "--help"], ["store", "stats", "--help"]])
def test_cli_help_loads_no_heavy_module(args):
    loaded, res = _loaded_after(CLI, *args)
    assert loaded == [] and "Usage" in res.stdout


def test_rank_of_a_battles_file_loads_only_what_it_needs(tmp_path):
    battles = tmp_path / "two.jsonl"
    battles.write_text('{"question_id": "q1", "model_a": "a", "model_b": "b", "winner": "model_a"}\n'
                       '{"question_id": "q2", "model_a": "b", "model_b": "a", "winner": "model_a"}\n')
    args = ["rank", str(battles), "--method", "bt", "--json"]
    loaded, res = _loaded_after(CLI, *args)
    assert '"model"' in res.stdout  # it ranked
    assert {"pandas", "pyarrow"} <= set(loaded) and not set(loaded) & set(NOT_FOR_RANK)
