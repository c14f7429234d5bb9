"""``judgewise serve``: a local read-only web app over one run (stdlib WSGI server + Jinja2, autoescaped).

Pages: leaderboard (/), prompts with search and paging (/prompts), one prompt with every response and every
game in both orders, raw rationale and parsed verdict (/prompt?id=…; a bracket for tournament runs),
model-vs-model (/versus?a=…&b=…), judge diagnostics (/diagnostics). Only GET/HEAD are answered; nothing is
written. Model outputs and judge texts are untrusted and always rendered as escaped text. A request whose ``Host``
header names neither this machine's loopback, the bound host nor an IP address is refused (403), so a web page
cannot reach the explorer through DNS rebinding. Servers that write (``judgewise label``) also check each write
with :func:`write_refusal` (Origin and a per-session token).
"""

from __future__ import annotations

import dataclasses
import errno
import hmac
import ipaddress
import logging
import socket
import socketserver
import threading
from collections.abc import Callable
from functools import cached_property
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from judgewise.analysis.panel_text import PanelFlags, check_panel_options, panel_lines
from judgewise.errors import ConfigError
from judgewise.ratings.coverage import interval_line
from judgewise.report import charts
from judgewise.report.explorer_data import ExplorerData, bracket, group_comparisons, match_view, paginate
from judgewise.report.head_to_head import win_matrix
from judgewise.report.inputs import add_responses, load_run
from judgewise.report.document import fmt_num
from judgewise.report.render import asset, environment
from judgewise.report.sections import build_sections
from judgewise.report.options import ReportOptions
from judgewise.report.writer import choose_judge

log = logging.getLogger(__name__)

PAGE_SIZE = 50
SECURITY_HEADERS = [
    ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
]


class NotFound(Exception):
    """The page or the object it names does not exist."""


class Explorer:
    """The WSGI application: routes → view functions returning (template, context)."""

    def __init__(self, data: ExplorerData, title: str = "judgewise explorer",
                 allowed_hosts: frozenset[str] = frozenset({"localhost"})):
        self.data, self.title = data, title
        self.allowed_hosts = frozenset(h.lower() for h in allowed_hosts)
        self.env = environment()
        self.css = asset("assets/explorer.css")
        self.routes: dict[str, Callable[[dict], tuple[str, dict]]] = {
            "/": self.leaderboard, "/prompts": self.prompts, "/prompt": self.prompt,
            "/versus": self.versus, "/diagnostics": self.diagnostics,
        }

    def __call__(self, environ, start_response):
        if not host_allowed(environ.get("HTTP_HOST"), self.allowed_hosts):
            start_response("403 Forbidden", [("Content-Type", "text/plain; charset=utf-8"), *SECURITY_HEADERS])
            return [b"judgewise explorer: this Host header is not served (open the URL it printed)"]
        if environ["REQUEST_METHOD"] not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD"), *SECURITY_HEADERS])
            return [b"read-only explorer: only GET is allowed"]
        path = environ.get("PATH_INFO", "/") or "/"
        query = {k: v[-1] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        status = "200 OK"
        try:
            view = self.routes.get(path)
            if view is None:
                raise NotFound(f"no page at {path}")
            template, context = view(query)
        except NotFound as exc:
            status, template, context = "404 Not Found", "explorer_error.html.j2", {"message": str(exc)}
        body = self.env.get_template(template).render(title=self.title, css=self.css, **context).encode("utf-8")
        start_response(status, [("Content-Type", "text/html; charset=utf-8"),
                                ("Content-Length", str(len(body))), *SECURITY_HEADERS])
        return [b"" if environ["REQUEST_METHOD"] == "HEAD" else body]

    def warm_up(self) -> None:
        """Compute the slow pages' data (leaderboard bootstrap, diagnostics) ahead of the first visit."""
        try:
            self._leaderboard, self._diagnostics  # noqa: B018 — cached properties
        except Exception:  # noqa: BLE001 — the pages report their own failures
            log.debug("explorer warm-up failed", exc_info=True)

    # --- views ------------------------------------------------------------------------------------------
    @cached_property
    def _leaderboard(self) -> dict:
        ctx = self.data.ctx
        try:
            r = ctx.ranking
        except Exception as exc:  # noqa: BLE001 — show why instead of failing every page
            return {"error": f"{type(exc).__name__}: {exc}", "records": [], "chart": ""}
        records = r.to_records()
        chart = charts.interval_chart([x["model"] for x in records], [x["score"] for x in records],
                                      [_nan(x["ci_low"]) for x in records], [_nan(x["ci_high"]) for x in records],
                                      xlabel=f"{ctx.method} score", ranks=[x["rank"] for x in records])
        return {"error": None, "records": records, "chart": chart, "method": ctx.method,
                "level": f"{round(100 * r.ci_level)}%", "intervals": interval_line(r)}

    def leaderboard(self, q: dict) -> tuple[str, dict]:
        d = self.data
        facts = {"prompts": len(d.prompt_ids), "judgments": len(d.matches), "models": len(d.models),
                 "design": d.ctx.design, "anchor": d.ctx.anchor}
        panel = [line.strip() for line in panel_lines(d.run.panel)] if d.run.panel else []  # serve --panel
        return "explorer_leaderboard.html.j2", {**self._leaderboard, "facts": facts, "models": d.models,
                                                "fmt": fmt_num, "panel": panel}

    def prompts(self, q: dict) -> tuple[str, dict]:
        query = q.get("q", "")
        page = paginate(self.data.search_prompts(query), _int(q.get("page"), 1), PAGE_SIZE)
        rows = [(pid, _snippet(self.data.prompt_text(pid)), self.data.prompt_counts.get(pid, 0))
                for pid in page.items]
        return "explorer_prompts.html.j2", {"query": query, "page": page, "rows": rows}

    def prompt(self, q: dict) -> tuple[str, dict]:
        pid = q.get("id", "")
        if pid not in self.data.by_prompt:
            raise NotFound(f"no prompt with id {pid!r}")
        comparisons = group_comparisons(self.data.prompt_rows(pid))
        return "explorer_prompt.html.j2", {
            "pid": pid, "text": self.data.prompt_text(pid), "responses": self.data.responses.get(pid, []),
            "comparisons": comparisons, "bracket": bracket(comparisons), "fmt": fmt_num}

    def versus(self, q: dict) -> tuple[str, dict]:
        models = self.data.models
        a, b = q.get("a") or (models[0] if models else ""), q.get("b") or (models[1] if len(models) > 1 else "")
        for m in (a, b):
            if m not in models:
                raise NotFound(f"no model named {m!r}")
        rows = self.data.pair_rows(a, b)
        rates, counts = win_matrix(rows, [a, b])
        page = paginate(rows, _int(q.get("page"), 1), PAGE_SIZE)
        games = [match_view(r, viewer=a) for _, r in page.items.iterrows()] if len(rows) else []
        return "explorer_versus.html.j2", {"a": a, "b": b, "models": models, "rate": rates[0][1],
                                           "n": int(counts[0][1]), "page": page, "games": games, "fmt": fmt_num}

    @cached_property
    def _diagnostics(self) -> list:
        return build_sections(self.data.ctx, ["diagnostics", "head_to_head"])

    def diagnostics(self, q: dict) -> tuple[str, dict]:
        return "explorer_diagnostics.html.j2", {"sections": self._diagnostics}


def host_allowed(header: str | None, names: frozenset[str]) -> bool:
    """True when a ``Host`` header names an IP address or one of ``names`` (with any port). A DNS-rebinding page
    reaches the server under the attacker's domain name, which is in neither."""
    if not header:
        return False
    host = header.strip().lower()
    if host.startswith("["):  # [IPv6] or [IPv6]:port
        addr, _, rest = host[1:].partition("]")
        return _is_ip(addr) and (rest == "" or rest.startswith(":") and _is_port(rest[1:]))
    name, sep, port = host.rpartition(":")
    if not sep:
        name = host
    elif not _is_port(port):
        return False
    return _is_ip(name) or name.rstrip(".") in names


def write_refusal(environ: dict, names: frozenset[str], token: str) -> str | None:
    """Why a write (a POST) is refused, or None when it may go on: the ``Host`` check of every request
    (:func:`host_allowed`), an ``Origin`` header naming this very server (a page of another site, even one on this
    machine, cannot write) and the per-session ``token`` in the ``X-Judgewise-Token`` header (a page that did not
    load this server's own page cannot know it)."""
    host = environ.get("HTTP_HOST")
    if not host_allowed(host, names):
        return "this Host header is not served"
    origin = (environ.get("HTTP_ORIGIN") or "").strip().lower()
    if origin != f"http://{host.strip().lower()}":
        return "a write must come from this server's own page (Origin header)"
    given = environ.get("HTTP_X_JUDGEWISE_TOKEN") or ""
    if not token or not hmac.compare_digest(given.encode(), token.encode()):
        return "missing or stale session token: reload the page"
    return None


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _is_port(text: str) -> bool:
    return text.isdigit() and 0 < int(text) < 65536


def _nan(x):
    return float("nan") if x is None else float(x)


def _int(text, default: int) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        return default


def _snippet(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_port = False  # never share a port with another server: a busy port must be an error


class _ThreadingServer6(_ThreadingServer):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    timeout = 30.0  # seconds one socket read may wait: a client that stops sending mid-request frees its thread

    def log_message(self, format, *args):  # noqa: A002 — stdlib signature
        log.debug("%s - %s", self.address_string(), format % args)


def make_explorer_server(data: ExplorerData | None, host: str = "127.0.0.1", port: int = 8765):
    """A threaded WSGI server bound to ``host:port`` (port 0 = any free port); call ``serve_forever()``.

    It answers only requests whose ``Host`` is an IP address, ``localhost``, or the bound host (and this
    machine's names when bound to every interface). With ``data=None`` the socket is bound and the app set later
    (``server.set_app(Explorer(data, allowed_hosts=server.allowed_hosts))``). A port in use, a host that is not
    this machine's, or a bad port is a :class:`ConfigError`."""
    if not 0 <= port <= 65535:
        raise ConfigError(f"`port={port}` is not a TCP port: expected 0 (any free port) to 65535")
    try:
        server = make_server(host, port, None, server_class=_ThreadingServer6 if ":" in host else _ThreadingServer,
                             handler_class=_QuietHandler)
    except OSError as exc:
        raise ConfigError(_bind_error(host, port, exc)) from None
    server.allowed_hosts = allowed_host_names(host)
    if data is not None:
        server.set_app(Explorer(data, allowed_hosts=server.allowed_hosts))
    return server


def _bind_error(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} on {host} is in use; pass another `port` (0 picks a free one)"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"not allowed to listen on port {port} of {host} (ports below 1024 need privileges); pass `port`"
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return f"cannot listen on host {host!r}: not an address of this machine; pass `host` (e.g. 127.0.0.1)"
    return f"cannot listen on {host}:{port}: {exc.strerror or exc}"


def allowed_host_names(host: str) -> frozenset[str]:
    """Names a browser may use in ``Host`` for a server bound to ``host`` (IP addresses are always accepted)."""
    names = {"localhost", host.lower().strip("[]")}
    if host in ("", "0.0.0.0", "::"):
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(names)


def is_loopback(host: str) -> bool:
    """True when every address ``host`` names is a loopback address (only this machine can connect)."""
    try:
        infos = socket.getaddrinfo(host or None, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0].split("%")[0]).is_loopback for i in infos)


def serve(sources, *, host: str = "127.0.0.1", port: int = 8765, responses=None, bootstrap: int | None = None,
          seed: int | None = None, ready: Callable[[str], None] | None = None, judge: str | None = None,
          pool_judges: bool = False, panel: PanelFlags | None = None) -> None:
    """Load the run once and serve it until interrupted; ``ready(url)`` is called once listening.
    ``judge``/``pool_judges`` choose among several judges as for the report (a mixed run needs one of them);
    ``panel`` (:class:`~judgewise.analysis.panel_text.PanelFlags`: ``PanelFlags(panel="a,b,c")``) serves a
    panel's derived verdicts, as ``report --panel`` does.
    ``bootstrap``/``seed`` None: what the run recorded in its store (evaluate), else the report's defaults."""
    options = ReportOptions(bootstrap=bootstrap, seed=seed, judge=judge, pool_judges=pool_judges,
                            **dataclasses.asdict(panel or PanelFlags()))  # checked first
    if options.panel is not None:
        check_panel_options(options)  # before the port is bound or the run read
    with make_explorer_server(None, host, port) as server:  # bind first: a busy port fails before loading
        if not is_loopback(host):
            log.warning("the explorer listens on %s, not on loopback: anyone who can reach this machine on the "
                        "network can read the run (model outputs, judge texts); use --host 127.0.0.1 to keep it on "
                        "this machine", host or "every interface")
        run = load_run(sources)
        choose_judge(run, options)
        if responses:
            add_responses(run, responses)
        data = ExplorerData(run, options)
        server.set_app(Explorer(data, allowed_hosts=server.allowed_hosts))
        threading.Thread(target=server.get_app().warm_up, daemon=True).start()
        serve_until_interrupted(server, host, ready, "explorer")


def serve_until_interrupted(server, host: str, ready: Callable[[str], None] | None, what: str) -> None:
    """Serve ``server`` (listening on ``host``) until Ctrl-C; ``ready(url)`` first, once it listens."""
    url = f"http://{f'[{host}]' if ':' in host else host}:{server.server_port}/"
    if ready:
        ready(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        log.info("%s stopped", what)


__all__ = ["Explorer", "ExplorerData", "make_explorer_server", "serve"]
