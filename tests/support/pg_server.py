"""A throwaway PostgreSQL server on 127.0.0.1 (initdb + pg_ctl in a temp dir, random port), and a TCP proxy to cut.

Binaries are looked up on PATH, then in /usr/local/bin and /usr/lib/postgresql/*/bin (Debian's ``postgresql``
package). PostgreSQL refuses to run as root: as root the server runs as the ``postgres`` user (Debian's package
makes it) or else ``nobody``, through ``runuser``, in a temp dir owned by that user. The cluster trusts local TCP
connections (no password) for the superuser ``judgewise``; fsync is off (a test server: speed over durability).
Used by the ``postgres`` tests' fixtures and by ``benchmarks/distributed_judging.py``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

BINARIES = ("initdb", "pg_ctl", "postgres")


def find_bin_dir() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, or None when PostgreSQL is not installed."""
    candidates = [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    candidates += [Path("/usr/local/bin")] + [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                                                                         reverse=True)]
    for folder in candidates:
        if all((folder / b).is_file() and os.access(folder / b, os.X_OK) for b in BINARIES):
            return folder
    return None


def _run_as() -> str | None:
    """The user to run the server as when we are root (PostgreSQL refuses root), else None (ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root and neither a 'postgres' nor a 'nobody' user exists to run PostgreSQL")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """``with PostgresServer() as pg: pg.url("db")`` — a fresh cluster, stopped and deleted on exit."""

    def __init__(self, bin_dir: Path | None = None):
        self.bin_dir = bin_dir or find_bin_dir()
        if self.bin_dir is None:
            raise RuntimeError("PostgreSQL binaries (initdb, pg_ctl) not found on PATH, in /usr/local/bin or in "
                               "/usr/lib/postgresql/*/bin: apt-get install postgresql")
        self.user = _run_as()
        self.root = Path(tempfile.mkdtemp(prefix="judgewise-pg-"))
        self.data, self.log = self.root / "data", self.root / "server.log"
        self.port = 0
        self._dbs = 0

    def _cmd(self, *args: str, **kw) -> subprocess.CompletedProcess:
        cmd = [str(self.bin_dir / args[0]), *args[1:]]
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(cmd, cwd=self.root, capture_output=True, text=True, **kw)

    def start(self) -> "PostgresServer":
        if self.user:
            info = pwd.getpwnam(self.user)
            os.chown(self.root, info.pw_uid, info.pw_gid)
        res = self._cmd("initdb", "-D", str(self.data), "-U", "judgewise", "--auth=trust", "-E", "UTF8",
                        "--no-locale", "--no-sync", timeout=120)
        if res.returncode:
            raise RuntimeError(f"initdb failed ({res.returncode}): {res.stderr[-2000:]}")
        for _ in range(5):  # a port taken between free_port() and the server's bind: try another
            self.port = free_port()
            opts = (f"-p {self.port} -h 127.0.0.1 -c unix_socket_directories='' -c fsync=off "
                    "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
            res = self._cmd("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", opts, "-w", "-t", "60",
                            "start", timeout=90)
            if res.returncode == 0:
                return self
        raise RuntimeError(f"pg_ctl start failed: {res.stdout[-1000:]} {res.stderr[-1000:]} "
                           f"{self.log.read_text()[-2000:] if self.log.exists() else ''}")

    def stop(self) -> None:
        if self.data.exists():
            self._cmd("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "PostgresServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def url(self, db: str = "postgres", port: int | None = None) -> str:
        return f"postgresql://judgewise@127.0.0.1:{port or self.port}/{db}"

    def new_database(self) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        self._dbs += 1
        name = f"t{self._dbs}_{os.getpid()}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def sql(self, url: str, statement: str, params=()) -> list[tuple]:
        """Run one statement on the database at ``url`` (search_path judgewise); the rows it returns."""
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SET search_path TO judgewise")
            cur = conn.execute(statement, params)
            return cur.fetchall() if cur.description else []


class TcpProxy:
    """Forward 127.0.0.1:<port> to ``target``; :meth:`cut` drops every open connection and refuses new ones until
    :meth:`restore` — a network drop between a worker and the database."""

    def __init__(self, target_port: int):
        self.target = ("127.0.0.1", target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open = threading.Event()
        self._open.set()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._open.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        """Close every connection through the proxy and refuse new ones."""
        self._open.clear()
        self.cuts += 1
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            for step in (lambda: s.shutdown(socket.SHUT_RDWR), s.close):  # shutdown wakes the pumping threads
                try:
                    step()
                except OSError:
                    pass

    def restore(self) -> None:
        self._open.set()

    def close(self) -> None:
        self.cut()
        self._listener.close()


def wait_port(port: int, timeout_s: float = 30.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


# -- pytest fixtures (import them into a test module: ``from tests.support.pg_server import pg_server, pg_url``) ----------
try:
    import pytest
except ImportError:  # the benchmark uses the server without pytest
    pytest = None

if pytest is not None:
    @pytest.fixture(scope="session")
    def pg_server():
        """One PostgreSQL server for the session; the test is skipped, with the reason, when it cannot exist here."""
        import importlib.util

        if importlib.util.find_spec("psycopg") is None or importlib.util.find_spec("psycopg_pool") is None:
            pytest.skip("psycopg / psycopg_pool not installed: pip install 'judgewise[postgres]'")
        if find_bin_dir() is None:
            pytest.skip("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH, in /usr/local/bin "
                        "or /usr/lib/postgresql/*/bin: apt-get install postgresql")
        with PostgresServer() as server:
            yield server

    @pytest.fixture
    def pg_url(pg_server) -> str:
        """The URL of a new, empty database on the session's server."""
        return pg_server.new_database()
