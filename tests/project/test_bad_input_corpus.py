"""The bad-input corpus through the real CLI: every case exits non-zero with exactly one line ``error: …`` naming
the file, row, field or option at fault, no traceback, and no file created or changed (log lines before the
error line are allowed).

Cases live in ``tests/support/bad_inputs/cases_*.py`` (each a :class:`~tests.support.bad_inputs.inputs.Case`). They
run concurrently (a thread pool; each case its own process forked from a preloaded server, see
:mod:`tests.support.forkrun`), once per module; each parametrised test then checks one case's outcome (``-k`` runs
only the selected cases). Every case must pass: ``owner`` only records which area holds the fix.
``JUDGEWISE_CORPUS_TALLY=FILE`` writes each case's class (clean, traceback, silent, messy, timeout) to FILE as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.bad_inputs.cases_batch_ledger import BATCH_LEDGER_CASES
from tests.support.bad_inputs.cases_commands import COMMAND_CASES
from tests.support.bad_inputs.cases_downloads import DOWNLOAD_CASES
from tests.support.bad_inputs.cases_files import FILE_CASES
from tests.support.bad_inputs.cases_labelling import LABELLING_CASES
from tests.support.bad_inputs.cases_new_features import NEW_FEATURE_CASES
from tests.support.bad_inputs.cases_others import _HELD, OTHER_CASES
from tests.support.bad_inputs.cases_prices import PRICE_CASES
from tests.support.bad_inputs.cases_refuse_before_writing import REFUSE_CASES
from tests.support.bad_inputs.cases_rubrics import RUBRIC_CASES
from tests.support import forkrun
from tests.support.bad_inputs.inputs import Case
from tests.support.bad_inputs.outcomes import classify, snapshot

CASES: list[Case] = FILE_CASES + COMMAND_CASES + OTHER_CASES + NEW_FEATURE_CASES + DOWNLOAD_CASES + LABELLING_CASES + PRICE_CASES + REFUSE_CASES + BATCH_LEDGER_CASES + RUBRIC_CASES
WORKERS = int(os.environ.get("JUDGEWISE_CORPUS_WORKERS", "4"))


def _run(case: Case, root: Path):
    args = case.build(root)
    before = snapshot(root)
    started = time.monotonic()
    try:
        res = forkrun.run(args, root, case.timeout, env=case.extra.get("env"))  # a case's JUDGEWISE_* settings
    except subprocess.TimeoutExpired:
        res = None
    return res, before, snapshot(root), time.monotonic() - started


@pytest.fixture(scope="module")
def outcomes(request, tmp_path_factory):
    """Run every selected case once (WORKERS processes at a time); name → (result, before, after, seconds)."""
    selected = {item.callspec.params["case"].name for item in request.session.items  # this module's cases only
                if hasattr(item, "callspec") and isinstance(item.callspec.params.get("case"), Case)}
    chosen = [c for c in CASES if c.name in selected]
    # folders made here, one thread: pytest's tmp_path_factory is not thread-safe (concurrent mktemp calls raced
    # to create the base folder and failed "is not a normalized and relative path")
    folders = {c.name: tmp_path_factory.mktemp(c.name[:40]) for c in chosen}

    def one(case: Case):
        return case.name, _run(case, folders[case.name])

    try:
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            results = dict(pool.map(one, chosen))
    finally:
        for sock in _HELD:
            sock.close()
    tally = os.environ.get("JUDGEWISE_CORPUS_TALLY")
    if tally:
        rows = {name: [*classify(r, b, a), round(s, 1)] for name, (r, b, a, s) in results.items()}
        Path(tally).write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    return results


def _params():
    for case in CASES:
        yield pytest.param(case, id=case.name)


@pytest.mark.parametrize("case", list(_params()))
def test_bad_input_is_one_clear_error_line_and_writes_nothing(outcomes, case):
    res, before, after, _ = outcomes[case.name]
    kind, why = classify(res, before, after)
    assert kind == "clean", f"{case.name}: {kind}: {why}"
    line = why
    missing = [name for name in case.names if name not in line]
    assert not missing, f"{case.name}: the error line does not name {missing}: {line}"


def test_the_corpus_has_at_least_150_cases_with_unique_names():
    names = [c.name for c in CASES]
    assert len(names) >= 150 and len(set(names)) == len(names)
