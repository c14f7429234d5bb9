"""Shared fixtures: the ../shared data folder (skipped with a visible reason when absent), AlpacaEval read once, the CLI
runner; tests that start a PostgreSQL server or Chromium belong to the slow set (`make test SLOW=1`, CI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import SHARED, run_cli


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """A test marked ``postgres`` starts a PostgreSQL server of its own (initdb, pg_ctl: seconds each), one marked
    ``browser`` a headless Chromium: they are end-to-end proofs, so they are also marked ``slow`` and run in
    `make test SLOW=1` (CI), not in the quick set. ``tryfirst``: the marks are added before ``-m "not slow"``
    deselects."""
    for item in items:
        if item.get_closest_marker("postgres") is not None or item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def shared() -> Path:
    """Path to ../shared (real data); skips the test with a reason when it is not beside the repo."""
    if not (SHARED / "data").is_dir():
        pytest.skip(f"../shared not found at {SHARED} (set JUDGEWISE_SHARED): real-data test skipped")
    return SHARED


@pytest.fixture(scope="session")
def alpacaeval_full(shared):
    """All 28 models of ../shared's AlpacaEval results as read by ``judgewise.read_judgments`` (judgments, responses,
    anchor), read once per session (per xdist worker): several modules check against it and none changes it."""
    from judgewise.io import read_judgments

    return read_judgments(shared / "data" / "alpacaeval")


@pytest.fixture
def cli():
    """Fixture form of :func:`tests.support.run_cli`."""
    return run_cli
