"""What the tests share: the repository and ../shared paths and the CLI runners (helpers in the modules beside)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("JUDGEWISE_SHARED", REPO.parent / "shared"))


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 600):
    """Run ``judgewise ARGS`` in its own process (forked from a preloaded server, :mod:`tests.support.forkrun`: the
    same entry point, exit code, stdout, stderr, folder and environment as ``python -m judgewise.cli.app ARGS``
    without ~1 s of start-up); returns CompletedProcess (text). Tests about the process itself (signals, SIGKILL,
    servers) use :func:`run_process` or ``subprocess.Popen``."""
    from tests.support import forkrun

    return forkrun.run(args, cwd=cwd, timeout=timeout, env=env)


def run_process(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 600):
    """Run ``python -m judgewise.cli.app ARGS`` in a new interpreter; returns CompletedProcess (text)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "judgewise.cli.app", *map(str, args)], cwd=cwd,
                          env=full_env, capture_output=True, text=True, timeout=timeout)


def cli_json(*args: str, **kw):
    """Run the CLI and parse stdout as JSON, failing the test with stderr when the command failed."""
    res = run_cli(*args, **kw)
    assert res.returncode == 0, f"exit {res.returncode}\nstderr:\n{res.stderr}\nstdout:\n{res.stdout[:2000]}"
    return json.loads(res.stdout)
