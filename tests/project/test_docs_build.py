"""The docs site builds with `mkdocs build --strict` (no warning: broken links, missing API objects)."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tools.docs_examples import REPO

pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")
pytest.importorskip("mkdocstrings", reason="the docs extra is not installed (pip install -e '.[docs]')")


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path):
    site = tmp_path / "site"
    env = {"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NO_COLOR": "1", "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site / "index.html").exists() and (site / "api" / "index.html").exists()
    shutil.rmtree(site)
