"""Servers for redirect tests: a recorder on another loopback address (127.0.0.2) that keeps the headers of every
request it gets, and a redirector that answers every request with a 3xx to it.

A credential must never reach the recorder: :func:`leaks` lists the headers of its requests that hold the key.
127.0.0.2 is another origin than 127.0.0.1 (another host), on the same machine (Linux routes all of 127/8 to lo).
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

OTHER_HOST = "127.0.0.2"


def other_host_binds() -> bool:
    """Whether a server can listen on :data:`OTHER_HOST` here (Linux: yes; macOS only with an lo0 alias)."""
    try:
        with socket.socket() as sock:
            sock.bind((OTHER_HOST, 0))
    except OSError:
        return False
    return True


class Recorder:
    """An HTTP server on ``host`` recording ``(method, path, headers)`` of every request; it answers 200 with
    ``body(path)`` (bytes, or None for a 404), or a ``redirect`` code to ``location + path`` when ``location`` is
    set and the path starts with ``redirect_only``. A context manager; ``url`` is its base URL."""

    def __init__(self, host: str = OTHER_HOST, *, body=lambda path: b"{}", location: str | None = None,
                 redirect: int = 302):
        self.body, self.location, self.redirect, self.redirect_only = body, location, redirect, ""
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, 0), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://{host}:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "Recorder":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def leaks(self, secret: str) -> list[str]:
        """``"name: value"`` of every header of every recorded request that holds ``secret``."""
        return leaks(self.requests, secret)


def leaks(requests: list[tuple[str, str, dict[str, str]]], secret: str) -> list[str]:
    """The headers of ``requests`` holding ``secret`` (as ``"name: value"``)."""
    return [f"{k}: {v}" for _, _, headers in requests for k, v in headers.items() if secret in v]


def _handler(rec: Recorder):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            with rec.lock:
                rec.requests.append((self.command, self.path, dict(self.headers.items())))
            path = urlsplit(self.path).path if "://" in self.path else self.path  # a proxy's absolute form
            if rec.location is not None and path.startswith(rec.redirect_only):
                self.send_response(rec.redirect)
                self.send_header("Location", rec.location + path)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = rec.body(self.path)
            self.send_response(200 if data is not None else 404)
            data = data if data is not None else b'{"error": {"message": "not found"}}'
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer
    return Handler
