"""Issue 32 items 2-3: credentials stay with their host, and every download is bounded in time and size.

A redirect never carries the API key to another origin (a recorder on 127.0.0.2 keeps every header it gets): the
batch client follows a redirected output file without the key, the live client (both transports) follows no
redirect, and ``generate`` uses the same two. A batch output file sent one byte at a time stops at the download
deadline; one larger than the cap is refused naming the file and the cap; a file is read line by line as it
arrives (a line longer than an answer may be is unreadable, never held)."""

from __future__ import annotations

import json
import random
import sqlite3
import time

import pytest

from judgewise.judges.base import FatalCallError
from judgewise.judges.openai_backend import OpenAIBackend
from judgewise.judges.openai_batch import BatchClient, _chunks, origin, split_lines
from judgewise.redaction import register_secret
from tests.support import run_cli
from tests.support.batch_server import BatchServer
from tests.support.judging import completion_error, write_config
from tests.support.redirects import OTHER_HOST, Recorder, other_host_binds

KEY = "sk-test-redirect-0123456789abcdef"
ENV = {"JW_TEST_KEY": KEY}
MODELS = ["m1", "m2", "m3"]
N_PROMPTS = 2
N_GAMES = 3 * N_PROMPTS * 2
BATCH = {"batch": True, "batch_poll_s": 0.05, "api_key_env": "JW_TEST_KEY"}
needs_other_host = pytest.mark.skipif(not other_host_binds(), reason=f"cannot listen on {OTHER_HOST} here")


def _judge(tmp_path, srv, **judge):
    cfg = write_config(tmp_path, srv.url, n_prompts=N_PROMPTS, models=MODELS, judge={**BATCH, **judge})
    return run_cli("judge", "-c", cfg, "--no-progress", "--json", cwd=tmp_path, env=ENV, timeout=120)


def _stored(tmp_path) -> int:
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM games WHERE status = 'ok'").fetchone()[0]


def _open_batches(tmp_path) -> list:
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        return db.execute("SELECT state FROM batches WHERE state != 'ended'").fetchall()


# -- credentials stay with their host -------------------------------------------------------------------------------
@needs_other_host
def test_a_batch_output_file_redirected_to_another_host_is_read_without_the_key(tmp_path):
    with BatchServer(tmp_path / "state.json", polls=1) as srv, \
            Recorder(body=lambda path: srv.file_bytes(path.split("/")[2])) as other:
        srv.redirect_files = other.url
        res = _judge(tmp_path, srv)
    assert res.returncode == 0, res.stderr
    assert other.requests and {m for m, _, _ in other.requests} == {"GET"}  # the redirect was followed...
    assert other.leaks(KEY) == [] and not any(k.lower() == "authorization" for _, _, h in other.requests for k in h)
    assert _stored(tmp_path) == N_GAMES and json.loads(res.stdout)["batch"]["answered"] == N_GAMES  # ...and read


@needs_other_host
def test_a_redirect_within_the_origin_keeps_the_key_and_one_leaving_it_drops_it():
    register_secret(KEY)  # as the backend does with the key it reads: a header holding it is a credential
    with Recorder("127.0.0.1", body=lambda path: b'{"id": "x"}\n') as home, Recorder() as other:
        home.location, home.redirect_only = home.url + "/final", "/v1/files/same/"
        client = BatchClient(home.url + "/v1", {"Authorization": f"Bearer {KEY}", "X-Extra": f"k={KEY}"})
        assert list(client.lines("same", max_line=100)) == [b'{"id": "x"}']
        home.location, home.redirect_only = other.url, "/v1/files/"
        list(client.lines("away", max_line=100))
    assert [p for _, p, _ in home.requests] == ["/v1/files/same/content", "/final/v1/files/same/content",
                                                "/v1/files/away/content"]
    assert home.leaks(KEY) and len(home.leaks(KEY)) == 6  # both headers, on every request to its own origin
    assert [p for _, p, _ in other.requests] == ["/v1/files/away/content"] and other.leaks(KEY) == []


def test_an_origin_is_scheme_host_and_port_with_the_default_port_made_explicit():
    assert origin("https://API.openai.com/v1/files") == origin("https://api.openai.com:443/x") == \
        ("https", "api.openai.com", 443)
    assert origin("http://api.openai.com/v1") != origin("https://api.openai.com/v1")
    assert origin("http://127.0.0.1:8000/v1") != origin("http://127.0.0.1:8001/v1")
    assert origin("http://127.0.0.1:8000/v1") != origin("http://127.0.0.2:8000/v1")


@needs_other_host
def test_a_live_call_redirected_to_another_host_stops_the_run_and_sends_it_nothing(tmp_path):
    """The lean client follows no redirect (nor did it before issue 32): the run stops naming the address."""
    with BatchServer(tmp_path / "state.json") as srv, Recorder() as other:
        srv.redirect_live = other.url
        res = _judge(tmp_path, srv, batch=False)
    assert res.returncode != 0 and "redirected to " + other.url in res.stderr, res.stderr
    assert other.requests == [] and srv.state["live"] == 0


@needs_other_host
def test_through_a_proxy_a_live_redirect_is_not_followed_either(monkeypatch):
    """The openai client (used behind an environment proxy) followed redirects, to another host too; now a 3xx
    stops the call as it does on the lean client."""
    with Recorder() as other, Recorder("127.0.0.1") as proxy:
        proxy.location = other.url
        for name in ("ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.2")  # were the redirect followed, straight to the other host
        err = completion_error(OpenAIBackend("judge-model", base_urls="http://judge.invalid/v1", api_key=KEY))
    assert proxy.requests and proxy.leaks(KEY)  # the key went to the proxy (the configured route)...
    assert other.requests == []  # ...and nothing went where the redirect pointed
    assert isinstance(err, FatalCallError) and "302" in str(err), repr(err)


@needs_other_host
def test_generate_reads_a_redirected_batch_output_file_without_sending_the_key(tmp_path):
    from tests.support.generation import answer, write_gen_config, write_questions

    write_questions(tmp_path, 2, turns=1)
    with BatchServer(tmp_path / "state.json", answer=answer, polls=1) as srv, \
            Recorder(body=lambda path: srv.file_bytes(path.split("/")[2])) as other:
        srv.redirect_files = other.url
        cfg = write_gen_config(tmp_path, srv.url, model_options=BATCH)
        res = run_cli("generate", "-c", cfg, "--json", cwd=tmp_path, env=ENV, timeout=120)
    assert res.returncode == 0, res.stderr
    assert other.requests and other.leaks(KEY) == []
    assert json.loads(res.stdout)["batch"]["answered"] == 2 * 2


# -- every read bounded in time and size ----------------------------------------------------------------------------
def test_an_output_file_sent_one_byte_at_a_time_stops_at_the_download_deadline(tmp_path):
    with BatchServer(tmp_path / "state.json", polls=1, drip_s=0.05) as srv:
        started = time.monotonic()
        res = _judge(tmp_path, srv, batch_download_s=1)
        seconds = time.monotonic() - started
        output = next(b["output_file_id"] for b in srv.batches)
    assert res.returncode != 0 and seconds < 30, (seconds, res.stderr)
    error = res.stderr.strip().splitlines()[-1]
    assert f"file {output}" in error and "download deadline" in error and "batch_download_s" in error, error
    assert _stored(tmp_path) == 0 and _open_batches(tmp_path) == [("submitted",)]  # kept: a rerun reads it


def test_an_output_file_over_the_cap_is_refused_naming_the_file_and_the_cap(tmp_path):
    with BatchServer(tmp_path / "state.json", polls=1, huge_output=3 << 20) as srv:
        res = _judge(tmp_path, srv, batch_max_output_mb=1)
        output = next(b["output_file_id"] for b in srv.batches)
    error = res.stderr.strip().splitlines()[-1]
    assert res.returncode != 0 and "Traceback" not in res.stderr, res.stderr
    assert f"file {output}" in error and "1,048,576-byte cap" in error and "batch_max_output_mb" in error, error
    assert _stored(tmp_path) == 0 and _open_batches(tmp_path) == [("submitted",)]


def test_an_output_file_padded_with_huge_lines_is_read_line_by_line(tmp_path):
    """Filler lines of 1 MiB (no call's custom_id) after the answers: each read and counted unreadable, the
    answers stored; with an answer cap of 0.5 MB each of the 3 filler lines is longer than a line may be: dropped
    unread."""
    with BatchServer(tmp_path / "state.json", polls=1, huge_output=(3 << 20) + 100) as srv:
        res = _judge(tmp_path, srv, max_answer_mb=0.5)
    assert res.returncode == 0, res.stderr
    counts = json.loads(res.stdout)["batch"]
    assert counts["answered"] == N_GAMES and counts["unreadable"] == 3 and _stored(tmp_path) == N_GAMES


class _Response:
    """What :func:`_chunks` reads from: headers and ``read1``, here over bytes in memory."""

    def __init__(self, data: bytes, headers: dict | None = None, step: int = 7):
        self.data, self.headers, self.step = data, headers or {}, step

    def read1(self, n: int) -> bytes:
        chunk, self.data = self.data[:min(n, self.step)], self.data[min(n, self.step):]
        return chunk


def test_a_body_without_a_length_is_cut_at_the_cap_as_it_arrives():
    chunks = _chunks(_Response(b"x" * 100), "file file-9", 50, time.monotonic(), 60, "batch_max_output_mb")
    with pytest.raises(FatalCallError, match="file file-9 passes the 50-byte cap .batch_max_output_mb"):
        sum(len(c) for c in chunks)
    assert b"".join(_chunks(_Response(b"x" * 50), "f", 50, time.monotonic(), 60)) == b"x" * 50


def test_a_body_whose_length_passes_the_cap_is_refused_before_it_is_read():
    response = _Response(b"x" * 10, {"Content-Length": "51"})
    with pytest.raises(FatalCallError, match="is 51 bytes, more than the 50-byte cap"):
        next(_chunks(response, "file file-9", 50, time.monotonic(), 60))
    assert response.data == b"x" * 10


@pytest.mark.parametrize("seed", range(20))
def test_lines_split_from_any_chunking_are_the_lines_and_long_ones_are_none(seed):
    rng = random.Random(seed)
    lines = [bytes(rng.choice(b"ab{}") for _ in range(rng.choice([0, 1, 5, 9, 30]))) for _ in range(rng.randint(0, 12))]
    data = b"\n".join(lines) + rng.choice([b"", b"\n"])
    cuts = sorted(rng.sample(range(len(data) + 1), min(len(data) + 1, rng.randint(0, 6))))
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
    expected = [None if len(line) > 9 else line for line in data.split(b"\n")]
    if data.endswith(b"\n") or not data:
        expected = expected[:-1]
    assert list(split_lines(chunks, max_line=9)) == expected
