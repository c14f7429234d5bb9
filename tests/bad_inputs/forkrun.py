"""Run the real CLI entry point (``judgewise.cli.app.main``) in a fresh process forked from a preloaded server.

Starting Python and importing pandas/scipy/typer costs 1–3 s a process; the corpus runs hundreds of commands.
A ``multiprocessing`` forkserver imports judgewise once; each case is a new process forked from it, with its own
working folder, stdout and stderr (file descriptors 1 and 2 redirected to files) and exit code — the same as
``python -m judgewise.cli.app ARGS`` minus interpreter start-up. ``JUDGEWISE_CORPUS_SUBPROCESS=1`` runs every
case through :func:`tests.conftest.run_cli` instead.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PRELOAD = ["judgewise.cli.app", *[f"judgewise.cli.{m}_cmd" for m in ("rank", "judge", "design", "reliability",
                                                                    "diagnose", "report")],
           "judgewise.io", "judgewise.ratings", "pandas", "scipy.stats", "pyarrow.parquet"]
_CONTEXT = None


def _context():
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = multiprocessing.get_context("forkserver")
        _CONTEXT.set_forkserver_preload(PRELOAD)
    return _CONTEXT


def _child(args: list[str], cwd: str, out: str, err: str) -> None:
    """In the forked process: redirect fds 1 and 2, run the CLI, exit with its code."""
    import traceback

    for fd, name in ((1, out), (2, err)):
        handle = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(handle, fd)
        os.close(handle)
    os.chdir(cwd)
    code = 0
    try:
        from judgewise.cli.app import main

        main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    except BaseException:  # what an uncaught exception does at the top of a real process
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run(args, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    """Run ``judgewise ARGS`` in ``cwd``; TimeoutExpired when it has not exited after ``timeout`` seconds."""
    args = [str(a) for a in args]
    if os.environ.get("JUDGEWISE_CORPUS_SUBPROCESS") == "1":
        from tests.conftest import run_cli

        return run_cli(*args, cwd=cwd, timeout=timeout)
    with tempfile.TemporaryDirectory(prefix="corpus-io-") as io_dir:
        out, err = os.path.join(io_dir, "out"), os.path.join(io_dir, "err")
        proc = _context().Process(target=_child, args=(args, str(cwd), out, err))
        proc.start()
        proc.join(timeout)
        if proc.is_alive():
            proc.kill()
            proc.join()
            raise subprocess.TimeoutExpired(args, timeout)
        read = lambda p: Path(p).read_text(encoding="utf-8", errors="replace") if os.path.exists(p) else ""
        return subprocess.CompletedProcess(args, proc.exitcode, read(out), read(err))
