"""Every ``--json`` output is strict JSON (issue 32: ``judge --dry-run --json`` printed ``Infinity``): the commands
and the CLI write JSON only through :func:`judgewise.commands.text.json_text` or ``json.dumps(allow_nan=False)``."""

from __future__ import annotations

import ast
import math

import pytest

from judgewise.commands.text import json_text
from tests.support import REPO

FOLDERS = ("cli", "commands")


def _loose_dumps() -> list[str]:
    """``json.dumps`` / ``json.dump`` calls under FOLDERS without ``allow_nan=False``, as file:line."""
    found = []
    for folder in FOLDERS:
        for path in sorted((REPO / "src" / "judgewise" / folder).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in ("dumps", "dump") and getattr(node.func.value, "id", "") == "json"
                        and not any(k.arg == "allow_nan" and getattr(k.value, "value", True) is False
                                    for k in node.keywords)):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_no_command_writes_json_that_may_hold_nan_or_infinity():
    assert _loose_dumps() == []


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_json_text_writes_a_non_finite_number_as_null(value):
    assert json_text({"cost": value, "nested": [value]}, indent=None) == '{"cost": null, "nested": [null]}'
