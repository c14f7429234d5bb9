"""``judgewise label``: a local page where people label the items a judge is validated on, straight into the store.

One WSGI app on the explorer's server (:func:`judgewise.report.explorer.make_explorer_server`: 127.0.0.1 by default,
the same ``Host`` check against DNS rebinding). Routes: ``GET /`` the page (its own script only, by CSP hash),
``GET /state?labeller=NAME`` the items in that labeller's shown order with their labels so far and what the labels
say (:func:`judgewise.analysis.labelling.label_summary`) and, under ``--order informative``, ``next``: the item to
show next (:func:`judgewise.analysis.labelling.next_item`; null otherwise), ``POST /label`` and ``POST /undo`` (JSON). A write must pass
:func:`~judgewise.report.explorer.write_refusal` (Host, Origin, the per-session token of this server start) and
carry a value on the scale; it is committed to the store before the answer goes back, so the page shows the next
item only once the label is kept. Every text (instructions, responses, names) reaches the page as JSON and is put
in with ``textContent``: shown as text, never markup. A labeller name is data: stored as given, never a path.
"""

from __future__ import annotations

import json
import logging
import secrets
import unicodedata
from urllib.parse import parse_qs
from collections.abc import Callable

from judgewise.analysis.labelling import PAIRWISE_VALUES, LabelItem, LabelTask, label_summary, next_item
from judgewise.errors import InputError
from judgewise.report.explorer import (SECURITY_HEADERS, host_allowed, is_loopback, make_explorer_server,
                                      serve_until_interrupted, write_refusal)
from judgewise.report.render import asset, environment, script_hash
from judgewise.store.labels import HumanLabel, current_labels, label_text_problem
from judgewise.store.opening import open_store, store_label

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024
KEYS_OF_VALUE = {v: k for k, v in PAIRWISE_VALUES.items()}


class LabelApp:
    """The WSGI application of one labelling session (a new token each start: pages of an earlier start reload)."""

    def __init__(self, task: LabelTask, allowed_hosts: frozenset[str] = frozenset({"localhost"})):
        self.task, self.allowed_hosts = task, frozenset(h.lower() for h in allowed_hosts)
        self.token, self.session = secrets.token_urlsafe(24), secrets.token_hex(8)
        self.js = asset("assets/label.js")
        self.page = environment().get_template("label.html.j2").render(
            title=f"judgewise label · {task.target}", token=self.token, js=self.js, css=asset("assets/label.css"),
            target=task.target).encode("utf-8")
        self.csp = (f"default-src 'none'; script-src {script_hash(self.js)}; style-src 'unsafe-inline'; "
                    "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'")

    def __call__(self, environ, start_response):
        try:
            return self._route(environ, start_response)
        except Exception:  # a fault of this server, never of a request (those are 4xx): said as JSON, traceback logged
            log.exception("the labelling page failed on %s %s", environ.get("REQUEST_METHOD"),
                          environ.get("PATH_INFO"))
            return _reply(start_response, "500 Internal Server Error",
                          {"error": "the server failed on this request (its log says why); reload the page"})

    def _route(self, environ, start_response):
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "/") or "/"
        if not host_allowed(environ.get("HTTP_HOST"), self.allowed_hosts):
            return _reply(start_response, "403 Forbidden", {"error": "this Host header is not served"})
        if method == "POST" and path in ("/label", "/undo"):
            refusal = write_refusal(environ, self.allowed_hosts, self.token)
            if refusal:
                return _reply(start_response, "403 Forbidden", {"error": refusal})
            try:
                return _reply(start_response, "200 OK", self.write(path, _json_body(environ)))
            except InputError as exc:
                return _reply(start_response, "400 Bad Request", {"error": str(exc)})
        if method not in ("GET", "HEAD"):
            return _reply(start_response, "405 Method Not Allowed", {"error": "not allowed"})
        if path == "/":
            start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"), *self._headers()])
            return [b"" if method == "HEAD" else self.page]
        if path == "/state":
            name = (parse_qs(environ.get("QUERY_STRING", "")).get("labeller") or [""])[-1]
            try:
                return _reply(start_response, "200 OK", self.state(name))
            except InputError as exc:
                return _reply(start_response, "400 Bad Request", {"error": str(exc)})
        return _reply(start_response, "404 Not Found", {"error": f"no page at {path}"})

    def _headers(self) -> list[tuple[str, str]]:
        return [("Content-Security-Policy", self.csp), *SECURITY_HEADERS[1:], ("Cache-Control", "no-store")]

    def _rows(self):
        with open_store(self.task.store) as store:
            return store.labels()

    def state(self, labeller: str) -> dict:
        """The items as ``labeller`` sees them (shown order, their label so far as the key pressed) and the summary."""
        _check_name(labeller)
        rows = self._rows()
        labels = current_labels(rows)
        mine = labels[labels["labeller"] == labeller].set_index("item_id")["value"].to_dict() if len(labels) else {}
        items = [self._item_view(labeller, item, mine.get(item.item_id)) for item in self.task.items]
        return {"labeller": labeller, "target": self.task.target, "scale": list(self.task.scale), "items": items,
                "summary": label_summary(self.task, rows), "next": next_item(self.task, rows, labeller)}

    def _item_view(self, labeller: str, item: LabelItem, value) -> dict:
        shown = self.task.shown_order(labeller, item)
        texts = [t for _, t in item.responses]
        if shown == "BA":
            texts = texts[::-1]
        key = None
        if value is not None:
            key = KEYS_OF_VALUE.get(1.0 - value if shown == "BA" else value) if item.pairwise else int(value)
        return {"id": item.item_id, "instruction": item.instruction, "responses": texts, "shown": shown,
                "pairwise": item.pairwise, "key": key}

    def write(self, path: str, body: dict) -> dict:
        """Store one label (``/label``) or withdraw one (``/undo``); the summary after it."""
        labeller, item_id = body.get("labeller"), body.get("item")
        _check_name(labeller)
        item = self.task.item(item_id) if isinstance(item_id, str) else None
        if item is None:
            raise InputError(f"item {str(item_id)[:60]!r} is not one of this session's items", field="item")
        shown = self.task.shown_order(labeller, item)
        value = None
        if path == "/label":
            value = self.task.a_view_value(item, shown, body.get("value"))
        label = HumanLabel(self.session, labeller, item.item_id, value, shown=shown, target=self.task.target)
        with open_store(self.task.store) as store:
            store.add_label(label)
            rows = store.labels()
        return {"ok": True, "summary": label_summary(self.task, rows), "next": next_item(self.task, rows, labeller)}


def _check_name(name) -> None:
    """InputError unless ``name`` is a labeller name the store can hold (:func:`label_text_problem`) without
    control characters (a name is typed by a person: a tab or an escape in it comes from a script)."""
    problem = label_text_problem(name)
    if not problem and any(unicodedata.category(c) == "Cc" for c in name):
        problem = "a name without control characters"
    if problem:
        raise InputError(f"labeller must be {problem}", field="labeller")


def _json_body(environ) -> dict:
    try:
        size = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        size = -1
    if not 0 < size <= MAX_BODY:
        raise InputError(f"expected a JSON body of at most {MAX_BODY} bytes")
    if not (environ.get("CONTENT_TYPE") or "").startswith("application/json"):
        raise InputError("expected Content-Type: application/json")
    try:
        raw = environ["wsgi.input"].read(size)
    except OSError:  # the client stopped sending (the server's read timeout) or went away
        raise InputError(f"the body did not arrive: Content-Length says {size} bytes") from None
    if len(raw) < size:
        raise InputError(f"the body ended after {len(raw)} of the {size} bytes its Content-Length says")
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise InputError("the body is not JSON") from None
    except RecursionError:  # thousands of nested arrays: valid JSON no page sends, deeper than the parser goes
        raise InputError("the body nests too deeply: expected a flat JSON object") from None
    if not isinstance(body, dict):
        raise InputError("expected a JSON object")
    return body


def _reply(start_response, status: str, data: dict):
    text = json.dumps(data, ensure_ascii=True, allow_nan=False)
    body = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode()  # never markup
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                            *SECURITY_HEADERS, ("Cache-Control", "no-store")])
    return [body]


def make_label_server(task: LabelTask, host: str = "127.0.0.1", port: int = 8766):
    """A threaded server of the labelling page bound to ``host:port`` (0 = any free port); ``serve_forever()``."""
    server = make_explorer_server(None, host, port)
    server.set_app(LabelApp(task, allowed_hosts=server.allowed_hosts))
    return server


def serve_labels(task: LabelTask, *, host: str = "127.0.0.1", port: int = 8766,
                 ready: Callable[[str], None] | None = None) -> None:
    """Serve the labelling page until interrupted; ``ready(url)`` once listening. The host and port are bound
    first, so a port in use or a host not of this machine is refused before the store is created."""
    with make_label_server(task, host, port) as server:
        open_store(task.store).close()  # a place that cannot hold labels is refused before anything is served
        if not is_loopback(host):
            log.warning("the labelling page listens on %s, not on loopback: anyone who can reach this machine can "
                        "read the items and write labels; use --host 127.0.0.1", host or "every interface")
        log.info("labels go to %s (%d items)", store_label(task.store), len(task.items))
        serve_until_interrupted(server, host, ready, "labelling page")


__all__ = ["LabelApp", "make_label_server", "serve_labels"]
