"""Run the real CLI entry point (``judgewise.cli.app.main``) in a fresh process forked from a preloaded server.

Starting Python and importing pandas/scipy/typer costs 1–3 s a process; the suite runs hundreds of commands.
A ``multiprocessing`` forkserver imports judgewise and its heavy dependencies once; each command is a new process
forked from it, with its own working folder, environment, stdout and stderr (file descriptors 1 and 2 redirected
to files) and exit code — the same as ``python -m judgewise.cli.app ARGS`` minus interpreter start-up: non-daemon
threads are joined and atexit handlers registered by the command run before the process exits, as at the end of
a real interpreter. ``JUDGEWISE_TEST_SUBPROCESS=1`` runs every command through
:func:`tests.support.run_process` (``python -m judgewise.cli.app``) instead.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

EXTRA_PRELOAD = ["pandas", "scipy.stats", "pyarrow.parquet", "openai", "httpx", "jinja2", "sqlite3", "asyncio"]


def preload() -> list[str]:
    """Every judgewise module and the heavy libraries the commands import (the optional extras — llama_cpp, ray,
    psycopg, playwright — are imported only inside the functions that use them, so they are not loaded here)."""
    import pkgutil

    import judgewise

    # "__main__" (multiprocessing's default): a script run as main (e.g. the `pytest` console script) is imported
    # once in the server, not again in every child
    return ["__main__", *(m.name for m in pkgutil.walk_packages(judgewise.__path__, "judgewise.")), *EXTRA_PRELOAD]


_CONTEXT = None
_LOCK = threading.Lock()


def _context():
    """The forkserver context, its preload set before any process starts (callers may be threads of a pool)."""
    global _CONTEXT
    with _LOCK:
        if _CONTEXT is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(preload())
            _CONTEXT = context
    return _CONTEXT


def _child(args: list[str], cwd: str, env: dict, out: str, err: str, code_file: str | None = None) -> None:
    """In the forked process: take the caller's environment and folder, redirect fds 1 and 2, run the CLI, exit
    with its code after what a real interpreter does at exit (join non-daemon threads, run atexit handlers). The
    code is also written to ``code_file``: the forkserver relays it through a pipe, and when that fails the parent
    sees 255 for a command that succeeded (seen once in a full run with both cores busy)."""
    import atexit
    import traceback

    atexit._clear()  # handlers the server's imports registered are not this command's
    os.environ.clear()
    os.environ.update(env)
    for fd, name in ((1, out), (2, err)):
        if name is None:  # stderr merged into stdout, line buffered: the order a terminal shows
            os.dup2(1, fd)
            sys.stdout.reconfigure(line_buffering=True)
            continue
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
    threading._shutdown()  # as the interpreter does at exit: threading's exit hooks, then join non-daemon threads
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    if code_file is not None:
        Path(code_file).write_text(str(code))
    os._exit(code)



def run_forked(target, target_args: tuple, args, timeout: float):
    """Run ``target(*target_args)`` in a process forked from the preloaded server; killed and
    ``subprocess.TimeoutExpired(args, timeout)`` after ``timeout`` seconds. Returns the finished process."""
    proc = _context().Process(target=target, args=target_args)
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        raise subprocess.TimeoutExpired(args, timeout)
    return proc


def run(args, cwd: Path | None = None, timeout: float = 600, env: dict | None = None
        ) -> subprocess.CompletedProcess:
    """Run ``judgewise ARGS`` in ``cwd`` (default: the current folder) with ``os.environ`` updated by ``env``;
    TimeoutExpired when it has not exited after ``timeout`` seconds (the process is killed)."""
    args = [str(a) for a in args]
    if os.environ.get("JUDGEWISE_TEST_SUBPROCESS") == "1":
        from tests.support import run_process

        return run_process(*args, cwd=cwd, env=env, timeout=timeout)
    full_env = {**os.environ, **(env or {})}
    with tempfile.TemporaryDirectory(prefix="judgewise-cli-io-") as io_dir:
        out, err, code = (os.path.join(io_dir, name) for name in ("out", "err", "code"))
        proc = run_forked(_child, (args, str(cwd or os.getcwd()), full_env, out, err, code), args, timeout)
        read = lambda p: Path(p).read_text(encoding="utf-8", errors="replace") if os.path.exists(p) else ""
        written = read(code).strip()
        exit_code = int(written) if written else proc.exitcode  # killed before exiting: the signal
        return subprocess.CompletedProcess(args, exit_code, read(out), read(err))


class Started:
    """A command left running (e.g. ``serve``): its process and what it has written so far; :meth:`stop` ends it."""

    def __init__(self, proc, io_dir: str):
        self.proc, self.io_dir = proc, io_dir

    def _read(self, name: str) -> str:
        path = os.path.join(self.io_dir, name)
        return Path(path).read_text(encoding="utf-8", errors="replace") if os.path.exists(path) else ""

    @property
    def stdout(self) -> str:
        return self._read("out")

    @property
    def stderr(self) -> str:
        return self._read("err")

    def stop(self, timeout: float = 20) -> None:
        """Terminate the command (SIGTERM, then SIGKILL after ``timeout``) and remove its output files."""
        import shutil

        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(timeout)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join()
        shutil.rmtree(self.io_dir, ignore_errors=True)


def start(args, cwd: Path | None = None, env: dict | None = None) -> Started:
    """Start ``judgewise ARGS`` forked from the preloaded server without waiting for it (as :func:`run`)."""
    args = [str(a) for a in args]
    io_dir = tempfile.mkdtemp(prefix="judgewise-cli-io-")
    out, err = os.path.join(io_dir, "out"), os.path.join(io_dir, "err")
    proc = _context().Process(target=_child, args=(args, str(cwd or os.getcwd()), {**os.environ, **(env or {})},
                                                   out, err))
    proc.start()
    return Started(proc, io_dir)
