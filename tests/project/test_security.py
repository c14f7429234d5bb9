"""Hostile input meets the parts that touch the world: file writes, the judge CLI with a shared template,
the Markdown/HTML reports and the explorer's HTTP server."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from judgewise.errors import InputError
from judgewise.io.atomic import atomic_target, write_text_atomic

from tests.support import run_cli


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask():
    """Set the process umask for one test and restore it afterwards."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda value: os.umask(value)
    os.umask(old)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o755])
def test_an_atomic_rewrite_keeps_the_existing_files_mode(tmp_path, mode):
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    target.chmod(mode)
    write_text_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "new" and _mode(target) == mode


def test_an_atomic_rewrite_of_a_read_only_file_keeps_it_read_only(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o444)
    write_text_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "new" and _mode(target) == 0o444


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_a_new_atomic_file_gets_the_usual_umask_mode(tmp_path, umask, mask, expected):
    umask(mask)
    target = write_text_atomic(tmp_path / "new.txt", "x")
    assert _mode(target) == expected


def test_an_atomic_write_to_a_directory_is_an_input_error_naming_it(tmp_path):
    folder = tmp_path / "report.html"
    folder.mkdir()
    (folder / "keep").write_text("k", encoding="utf-8")
    with pytest.raises(InputError, match=r"report\.html.*is a directory"):
        write_text_atomic(folder, "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    assert [p.name for p in folder.iterdir()] == ["keep"]


def test_an_atomic_write_under_a_file_or_missing_folder_is_an_input_error(tmp_path):
    (tmp_path / "plain").write_text("p", encoding="utf-8")
    with pytest.raises(InputError, match="not a directory"):
        write_text_atomic(tmp_path / "plain" / "out.txt", "x")
    with pytest.raises(InputError, match="does not exist"):
        write_text_atomic(tmp_path / "missing" / "out.txt", "x")


def test_a_failed_atomic_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError):
        with atomic_target(target) as tmp:
            tmp.write_text("half", encoding="utf-8")
            raise RuntimeError("writer crashed")
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"] and target.read_text(encoding="utf-8") == "old"


SHARED_TEMPLATE = """{#- judgewise-template
name: shared_judge
version: 1
kind: pairwise
parser: llmbar_binary
-#}
{% block user %}{{ cycler.__init__.__globals__.os.system('touch PWNED') }}
{{ instruction }} (a) {{ response_a }} (b) {{ response_b }}{% endblock %}
{% block reask %}Answer "Output (a)" or "Output (b)".{% endblock %}
"""


def test_judge_dry_run_with_a_hostile_template_runs_nothing_and_names_the_file(tmp_path):
    from tests.support.judging import write_config

    template = tmp_path / "shared_judge.j2"
    template.write_text(SHARED_TEMPLATE, encoding="utf-8")
    config = write_config(tmp_path, "http://127.0.0.1:9/v1", n_prompts=2, models=["m1", "m2"],
                          judge={"template": str(template)})
    res = run_cli("judge", "--config", config, "--dry-run", cwd=tmp_path, timeout=120)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert len(lines) == 1 and "shared_judge.j2" in lines[0] and "sandbox" in lines[0]
    assert not (tmp_path / "PWNED").exists()


HOSTILE_MODELS = ["[x](javascript:alert(1))", "![i](http://evil.example/p.png)", "`rm -rf` *bold* _em_",
                  "a|b <b onclick=x>html</b>", "https://evil.example/login", "www.evil.example",
                  "</script><script>alert(1)</script>", "\"'><svg onload=alert(1)>"]


def hostile_run(folder: Path, n_prompts: int = 12) -> Path:
    """All pairs of the hostile model names (and one plain model) on a few prompts, judge name hostile too."""
    import json
    import random

    rng = random.Random(0)
    models = ["plain-model", *HOSTILE_MODELS]
    rows = [{"prompt_id": f"p{p}", "model_a": a, "model_b": b, "judge": "[judge](javascript:x)",
             "outcome": rng.choice([0.0, 0.5, 1.0]), "instruction": "[click](javascript:steal()) <script>x</script>"}
            for p in range(n_prompts) for i, a in enumerate(models) for b in models[i + 1:]]
    path = folder / "judgments.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _visible_text(html: str) -> str:
    """The text a browser shows for ``html`` (tags dropped, entities decoded)."""
    from html import unescape

    return unescape(re.sub(r"<[^>]*>", "", html))


def _markdown_tokens(text: str):
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    flat = []
    for tok in md.parse(text):
        flat += [tok, *(tok.children or [])]
    return flat, md.render(text)


def test_markdown_report_shows_hostile_names_as_text_never_as_links_or_html(tmp_path):
    from judgewise.report import ReportOptions, write_report

    options = ReportOptions(bootstrap=10, title="[t](javascript:t) <i>x</i>", command="judgewise report x")
    md = write_report(hostile_run(tmp_path), tmp_path / "out", options, format="md")
    text = md.read_text(encoding="utf-8")
    tokens, html = _markdown_tokens(text)
    assert not [t for t in tokens if t.type == "link_open"]
    assert all(t.attrGet("src").startswith("figures/") for t in tokens if t.type == "image")
    assert {t.content for t in tokens if t.type.startswith("html")} <= {"<sub>", "</sub>"}
    assert "javascript:" not in " ".join(str(t.attrs) for t in tokens)
    shown = _visible_text(html)
    assert all(name in shown for name in HOSTILE_MODELS)  # shown, literally
    links = [t.attrGet("src") for t in tokens if t.type == "image"]
    assert links and all((md.parent / link).is_file() for link in links)


def test_markdown_figure_files_stay_inside_the_figures_folder(tmp_path):
    from judgewise.report.document import Figure, Section
    from judgewise.report.render import render_markdown

    section = Section(key="study", title="Study", figures=[Figure("study-../../escape", "c", "<svg/>")])
    text = render_markdown([section], title="t", out_dir=tmp_path / "out")
    written = [p for p in tmp_path.rglob("*.svg")]
    assert len(written) == 1 and written[0].parent == tmp_path / "out" / "figures"
    assert f"](figures/{written[0].name})" in text


def test_html_report_shows_hostile_names_as_text_and_runs_only_its_own_script(tmp_path):
    from judgewise.report import ReportOptions, write_report
    from tests.support.reports import parsed

    out = write_report(hostile_run(tmp_path), tmp_path / "r.html",
                       ReportOptions(bootstrap=10, title="</title><b>t</b>", command="judgewise report x"))
    html = out.read_text(encoding="utf-8")
    tags = parsed(html)
    assert not tags.handlers and tags.tags.count("script") == 1 and "alert" not in tags.scripts[0]
    assert not {"b", "i", "img", "iframe", "object", "embed"} & set(tags.tags)
    assert not re.search(r"(href|src)\s*=\s*[\"']?\s*javascript:", html, re.I)
    shown = _visible_text(html)
    assert all(name in shown for name in HOSTILE_MODELS)  # shown, literally


# --- the explorer: DNS rebinding, network exposure, a busy port ------------------------------------------------

@pytest.fixture(scope="module")
def explorer(tmp_path_factory):
    """A real explorer server on 127.0.0.1 (free port) over a small run; yields its port."""
    import threading

    from judgewise.report.options import ReportOptions
    from judgewise.report.explorer import make_explorer_server
    from judgewise.report.explorer_data import ExplorerData
    from judgewise.report.inputs import load_run

    run = load_run(hostile_run(tmp_path_factory.mktemp("explorer"), n_prompts=3))
    server = make_explorer_server(ExplorerData(run, ReportOptions(bootstrap=5)), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_port
    server.shutdown()
    server.server_close()


def raw_get(port: int, host_header: str | None, path: str = "/prompts") -> tuple[int, bytes]:
    """Send one raw HTTP request to 127.0.0.1:port with exactly this Host header (None: no Host, HTTP/1.0)."""
    import socket

    head = f"GET {path} HTTP/1.0\r\n" if host_header is None else f"GET {path} HTTP/1.1\r\nHost: {host_header}\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall((head + "Connection: close\r\n\r\n").encode("latin-1"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data.partition(b"\r\n\r\n")[2]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example:{port}",
                                  "localhost.evil.example", "rebind.attacker.test:80", "localhost:notaport",
                                  "", None])
def test_explorer_refuses_a_foreign_host_header(explorer, host):
    status, body = raw_get(explorer, None if host is None else host.format(port=explorer))
    assert status == 403 and b"p0" not in body and b"plain-model" not in body


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST", "[::1]:{port}",
                                  "127.0.0.1"])
def test_explorer_answers_its_own_host_names(explorer, host):
    status, body = raw_get(explorer, host.format(port=explorer))
    assert status == 200 and b"p0" in body


def _serve(*args: str):
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", "judgewise.cli.app", "serve", *args, "--bootstrap", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_serve_on_a_busy_port_is_one_line_naming_port_and_host(tmp_path):
    import socket

    data = hostile_run(tmp_path, n_prompts=2)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        res = run_cli("serve", data, "--port", str(port), timeout=120)
    lines = res.stderr.strip().splitlines()
    assert res.returncode != 0 and len(lines) == 1 and "Traceback" not in res.stderr
    assert f"port {port} on 127.0.0.1 is in use" in lines[0] and "--port" in lines[0]


@pytest.mark.parametrize("args, expected", [(["--port", "70000"], "not a TCP port"),
                                            (["--host", "no-such-host.invalid", "--port", "0"], "cannot listen")])
def test_serve_with_an_unusable_host_or_port_is_one_line(tmp_path, args, expected):
    res = run_cli("serve", hostile_run(tmp_path, n_prompts=2), *args, timeout=120)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert [line for line in res.stderr.splitlines() if line.startswith("error:")] == \
        [next(line for line in res.stderr.splitlines() if expected in line)]


def test_serve_on_every_interface_warns_that_the_network_can_read_it(tmp_path):
    proc = _serve(str(hostile_run(tmp_path, n_prompts=2)), "--host", "0.0.0.0", "--port", "0")
    try:
        line = proc.stdout.readline()
        port = int(re.search(r"http://0\.0\.0\.0:(\d+)/", line).group(1))
        assert raw_get(port, f"127.0.0.1:{port}")[0] == 200
        assert raw_get(port, f"evil.example:{port}")[0] == 403
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "network" in err and "0.0.0.0" in err and "--host 127.0.0.1" in err


def test_serve_on_loopback_prints_no_network_warning(tmp_path):
    proc = _serve(str(hostile_run(tmp_path, n_prompts=2)), "--port", "0")
    try:
        assert "127.0.0.1" in proc.stdout.readline()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "network" not in err


@pytest.mark.parametrize("header, ok", [("127.0.0.1:8765", True), ("localhost", True), ("LocalHost.:8765", True),
                                        ("[::1]:8765", True), ("192.168.1.20:8765", True), ("my-box:8765", True),
                                        ("evil.example", False), ("localhost.evil.example", False),
                                        ("127.0.0.1.nip.io:8765", False), ("[::1]x", False), ("[evil]:80", False),
                                        ("localhost:", False), ("localhost:99999", False), (None, False)])
def test_host_header_rule_accepts_ip_addresses_and_the_bound_names_only(header, ok):
    from judgewise.report.explorer import host_allowed

    assert host_allowed(header, frozenset({"localhost", "my-box"})) is ok


def test_explorer_binds_an_ipv6_loopback_and_checks_its_host_header(tmp_path):
    import socket
    import threading

    from judgewise.report.options import ReportOptions
    from judgewise.report.explorer import make_explorer_server
    from judgewise.report.explorer_data import ExplorerData
    from judgewise.report.inputs import load_run

    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        server = make_explorer_server(ExplorerData(load_run(hostile_run(tmp_path, n_prompts=2)),
                                                   ReportOptions(bootstrap=0)), "::1", 0)
    except Exception as exc:  # noqa: BLE001 — a machine without an IPv6 loopback
        pytest.skip(f"cannot bind ::1 here: {exc}")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for host, expected in ((f"[::1]:{server.server_port}", 200), ("evil.example", 403)):
            with socket.create_connection(("::1", server.server_port), timeout=30) as sock:
                sock.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
                assert sock.recv(64).split(b" ")[1] == str(expected).encode()
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("path", ["/", "/prompts?q=%3Cscript%3E", "/prompt?id=p0", "/diagnostics",
                                  "/versus?a=%3C%2Fscript%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E&b=plain-model",
                                  "/versus?a=%22%27%3E%3Csvg%20onload%3Dalert(1)%3E&b=www.evil.example",
                                  "/prompt?id=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E"])
def test_explorer_pages_show_hostile_names_and_queries_as_text(explorer, path):
    from tests.support.reports import parsed

    status, body = raw_get(explorer, f"127.0.0.1:{explorer}", path)
    html = body.decode("utf-8")
    tags = parsed(html)
    assert status in (200, 404) and not tags.handlers and "script" not in tags.tags
    assert not {"img", "iframe", "object", "embed"} & set(tags.tags)  # the pages use <b> themselves
    assert not re.search(r"(href|src)\s*=\s*[\"']?\s*javascript:", html, re.I)
