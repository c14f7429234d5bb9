"""Issue 26 item 3: the scrubber knows every spelling in which a secret can leave the process — as configured, trimmed
of whitespace, URL-encoded, JSON-escaped — and PostgreSQL URLs are masked in every message whatever the spelling of
their password (``?password=``, an ``@`` in it, libpq's own "could not resolve host" message). Each test runs the
commands with a known secret and greps every output stream, log, store file and export for every spelling of it."""

from __future__ import annotations

import secrets
from urllib.parse import quote, quote_plus

import pytest

from judgewise.redaction import REDACTED, register_secret, scrub, secret_forms
from judgewise.store.urls import libpq_url, masked
from tests.support import run_cli
from tests.support.fault_server import FaultServer
from tests.support.judging import write_config
from tests.support.pg_server import pg_server, pg_url  # noqa: F401 (fixtures)


def _spellings(secret: str) -> set[bytes]:
    """What must appear nowhere: the secret as configured, trimmed, URL-encoded both ways, and its last 12
    characters (not even a fragment)."""
    core = secret.strip()
    return {s.encode() for s in (core, quote(core, safe=""), quote_plus(core), core[-12:]) if s}


def _everything(folder, runs) -> bytes:
    files = [p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()]
    return b"\n".join(files + [(r.stdout + r.stderr).encode() for r in runs])


def _leaks(everything: bytes, secret: str) -> list[bytes]:
    return [s for s in _spellings(secret) if s in everything]


def test_every_spelling_of_a_registered_secret_is_scrubbed():
    key = "  sk-spell/" + secrets.token_hex(8) + "+x=y \n"
    register_secret(key)
    core = key.strip()
    for spelling in (key, core, quote(core, safe=""), quote_plus(core), quote(core), quote(core, safe="").lower()):
        assert scrub(f"<{spelling}>") == f"<{REDACTED}>", spelling
    assert {core, quote(core, safe=""), quote_plus(core)} <= secret_forms(key)
    register_secret("abc")  # too short to be told from ordinary words: not registered
    assert scrub("abc") == "abc"


def test_a_key_configured_with_whitespace_is_sent_trimmed_and_never_echoed_back_in_any_spelling(tmp_path):
    core = "sk-ws/" + secrets.token_hex(20) + "+="
    key = f"  {core}\t\n"  # as pasted into an environment variable
    echo = lambda messages: (f"I saw {core} and ?key={quote(core, safe='')} and {quote_plus(core)}. "  # noqa: E731
                             "My final verdict is [[A>B]].")
    with FaultServer(api_key=core, reflect_auth=True, answer=echo,
                     fault_fn=lambda m, seen: "500" if seen == 0 else None) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=3, models=["m1", "m2"],
                              judge={"api_key_env": "JW_SPACED_KEY"}, limits={"max_attempts": 3})
        runs = [run_cli("--verbose", "judge", "-c", config, "--no-progress", "-o", "out.jsonl", cwd=tmp_path,
                        env={"JW_SPACED_KEY": key}),
                run_cli("store", "export", "store.sqlite", "-o", "export.jsonl", cwd=tmp_path),
                run_cli("store", "stats", "store.sqlite", cwd=tmp_path)]
        assert srv.auth_seen[f"Bearer {core}"] > 0 and srv.events["500"] > 0  # sent trimmed; the echoes happened
    assert [r.returncode for r in runs] == [0, 0, 0], [r.stderr[-500:] for r in runs]
    everything = _everything(tmp_path, runs)
    assert REDACTED.encode() in everything and not _leaks(everything, key)


def test_postgresql_urls_are_masked_in_every_spelling():
    for url, words in [("postgresql://u@h:5432/db?sslmode=disable&password=Qp4ss-w0rd", ["Qp4ss-w0rd"]),
                       ("postgresql://u:p@ss-Wd7@h/db", ["p@ss-Wd7"]),
                       ("postgres://u:a%2Fb%40c-secret@h/db", ["a%2Fb%40c-secret", "a/b@c-secret"]),
                       ("postgresql://u:s3cret-v6@[::1/db", ["s3cret-v6"])]:
        shown = masked(url)
        assert "***" in shown and not any(w in shown for w in words), shown
        assert not any(w in scrub(f"libpq said: {url} {' '.join(words)}") for w in words)
    assert masked("postgresql://u:p@ss-Wd7@h/db") == "postgresql://u:***@h/db"  # no fragment: the LAST "@" ends it
    assert libpq_url("postgresql://u:p@ss-Wd7@h/db") == "postgresql://u:p%40ss-Wd7@h/db"  # libpq reads it whole


@pytest.mark.parametrize("spelling", ["query", "at_sign"])
def test_store_stats_copy_rank_and_judge_never_print_a_postgresql_password(pg_url, tmp_path, spelling):
    password = "pg-" + secrets.token_hex(10) + ("@x-" + secrets.token_hex(4) if spelling == "at_sign" else "")
    if spelling == "query":
        url = f"{pg_url}?password={quote(password, safe='')}"
    else:
        url = pg_url.replace("judgewise@", f"judgewise:{password}@")  # "@" unescaped, as users write it
    unresolvable = url.replace("127.0.0.1", "judgewise-no-such-host.invalid")
    with FaultServer() as srv:
        config = write_config(tmp_path, srv.url, n_prompts=2, models=["m1", "m2"])
        runs = [run_cli("judge", "-c", config, "--store", url, "--no-progress", "-o", "out.jsonl", cwd=tmp_path),
                run_cli("store", "stats", url, cwd=tmp_path),
                run_cli("store", "copy", url, "copy.sqlite", cwd=tmp_path),
                run_cli("store", "export", url, "-o", "export.jsonl", cwd=tmp_path),
                run_cli("rank", url, cwd=tmp_path)]
        failing = [run_cli("store", "stats", unresolvable, cwd=tmp_path),
                   run_cli("judge", "-c", config, "--store", unresolvable, "--no-progress", cwd=tmp_path),
                   run_cli("rank", unresolvable, cwd=tmp_path),
                   run_cli("store", "copy", "copy.sqlite", unresolvable, cwd=tmp_path)]
    assert [r.returncode for r in runs] == [0] * 5, [r.stderr[-500:] for r in runs]
    assert all(r.returncode != 0 and "error:" in r.stderr and "Traceback" not in r.stderr for r in failing), \
        [r.stderr[-300:] for r in failing]
    assert any("***" in r.stdout + r.stderr for r in runs + failing)  # the URL was shown, masked
    everything = _everything(tmp_path, runs + failing)
    fragments = {password, quote(password, safe=""), password.split("@")[-1]}
    assert not [f for f in fragments if f.encode() in everything]
