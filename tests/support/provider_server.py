"""What the fake native-provider servers share: a threaded JSON server on 127.0.0.1 routing by method and path,
counting the calls it bills by their messages (:func:`tests.support.fault_server.request_key`). Set as a plain-HTTP
proxy (``HTTP_PROXY``) it answers the absolute URLs a proxy is asked for as if they were its own paths."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.fault_server import request_key


class ProviderServer:
    """A context manager serving ``routes``: (method, path regex) → ``fn(match, headers, body) -> (status, payload,
    headers)``; ``url`` its base URL (no path). ``billed`` counts billed calls by their messages."""

    routes: list[tuple[str, str, str]] = []  # (method, path regex, name of the method answering it)

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.billed: Counter[str] = Counter()
        self.live = 0
        self.headers_seen: list[dict[str, str]] = []
        self.paths_seen: list[str] = []  # request targets as sent (absolute when the server is used as a proxy)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def bill(self, messages: list) -> None:
        with self.lock:
            self.billed[request_key(messages)] += 1

    def route(self, method: str, path: str, headers: dict, body: bytes) -> tuple[int, object, dict]:
        for verb, pattern, name in self.routes:
            match = re.fullmatch(pattern, path)
            if verb == method and match:
                return getattr(self, name)(match, headers, body)
        return 404, {"error": {"message": f"no route {method} {path}"}}, {}


def _handler(server: ProviderServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def _answer(self, method: str) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            with server.lock:
                server.headers_seen.append(headers)
            path = re.sub(r"^https?://[^/]+", "", self.path)  # as a plain-HTTP proxy is asked: an absolute URL
            with server.lock:
                server.paths_seen.append(self.path)
            status, payload, extra = server.route(method, path, headers, body)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            for k, v in {"Content-Type": "application/json", **extra}.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            self._answer("POST")

        def do_GET(self) -> None:
            self._answer("GET")
    return Handler
