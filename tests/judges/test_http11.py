"""Issue 16 item 5: the backend's lean HTTP/1.1 client (judges/http11.py). Each failure a server can produce is
classified as the scheduler needs it (retry, maybe charged, fatal, prompt too long, malformed), against the real fault
server; answers framed by chunks, by the end of the connection, gzip-encoded or after an interim 100 are read whole
from a raw socket server on 127.0.0.1; connections are reused; HTTPS is verified against SSL_CERT_FILE; an endpoint
behind an environment proxy goes through the proxy."""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import socket
import ssl
import subprocess

import pytest

from judgewise.judges.base import FatalCallError, MalformedResponseError, RetryableCallError
from judgewise.judges.http11 import ConnectError, ConnectionDropped, Endpoint
from judgewise.judges.llm_judge import PromptTooLongError
from judgewise.judges.openai_backend import OpenAIBackend

from tests.support.judging import complete_once, completion_error
from tests.support.fault_server import FaultServer, default_answer

MESSAGES = [{"role": "user", "content": "Which answer is better?"}]




@pytest.mark.parametrize("fault, kind, status, charged", [
    ("429", RetryableCallError, 429, False),
    ("500", RetryableCallError, 500, False),
    ("drop", RetryableCallError, None, False),
    ("timeout", RetryableCallError, None, True),
    ("too_long", PromptTooLongError, None, False),
    ("truncated_json", MalformedResponseError, None, False),
    ("html", MalformedResponseError, None, False),
])
def test_each_fault_of_the_server_is_classified_as_the_scheduler_needs_it(fault, kind, status, charged):
    with FaultServer(fault_fn=lambda messages, seen: fault, hang_s=3.0, retry_after_s=0.25) as srv:
        err = completion_error(OpenAIBackend("judge-model", base_urls=srv.url, timeout_s=0.5))
        assert srv.events[fault] == 1  # the server did produce this fault
    assert type(err) is kind, repr(err)
    if isinstance(err, RetryableCallError) and not isinstance(err, MalformedResponseError):
        assert err.status == status and err.maybe_charged is charged
    if fault == "429":  # the server's retry-after-ms wins over its Retry-After seconds, as the openai client reads it
        assert err.retry_after == pytest.approx(0.25)
        assert "Error code: 429 - rate limited" in str(err)


def test_a_wrong_key_and_an_unknown_model_stop_the_run_with_the_servers_words():
    with FaultServer(api_key="sk-right-key-1234") as srv:
        err = completion_error(OpenAIBackend("judge-model", base_urls=srv.url, api_key="sk-wrong-key-1234"))
        assert isinstance(err, FatalCallError) and err.status == 401 and "invalid api key" in str(err)
        assert "sk-wrong-key-1234" not in str(err)
        good = complete_once(OpenAIBackend("judge-model", base_urls=srv.url, api_key="sk-right-key-1234"))
        assert good.text == default_answer(MESSAGES)
    with FaultServer(model="another-model") as srv:
        err = completion_error(OpenAIBackend("judge-model", base_urls=srv.url))
    assert isinstance(err, FatalCallError) and err.status == 404 and "'judge-model' not found" in str(err)


def test_a_refused_connection_is_retried_and_not_counted_as_maybe_charged():
    with FaultServer() as srv:
        url = srv.url
    err = completion_error(OpenAIBackend("judge-model", base_urls=url))  # the server is gone: nothing listens there
    assert isinstance(err, RetryableCallError) and not err.maybe_charged and "ConnectError" in str(err)


def test_answers_tokens_logprobs_and_extra_body_options_come_through():
    seen = []

    def fault(messages, count):
        seen.append(messages)
        return None

    with FaultServer(fault_fn=fault, candidates={"A>B": {"A>B": 0.7, "B>A": 0.3}}) as srv:
        backend = OpenAIBackend("judge-model", base_urls=srv.url, logprobs=True, params={"temperature": 0.0})
        comp = complete_once(backend)
    text = default_answer(MESSAGES)
    assert comp.text == text and seen == [MESSAGES]
    assert comp.tokens_out == len(text) // 4 + 1 and comp.tokens_in == len(MESSAGES[0]["content"]) // 4
    assert comp.top_logprobs and all(isinstance(c, dict) for c in comp.top_logprobs)
    assert comp.raw == {"finish_reason": "stop", "model": "judge-model"}


# -- framing, against a raw socket server ---------------------------------------------------------------------------
def _raw_server(answers: list[bytes], log: list):
    """An asyncio server that reads each request (head + Content-Length body) and writes the next canned answer;
    b"CLOSE" closes the connection instead of answering, a canned answer ending in b"<close>" closes after it."""
    async def handle(reader, writer):
        log.append("connection")
        while answers:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            log.append(json.loads(await reader.readexactly(length)))
            answer = answers.pop(0)
            if answer == b"CLOSE":
                break
            writer.write(answer.removesuffix(b"<close>"))
            await writer.drain()
            if answer.endswith(b"<close>"):
                break
        writer.close()
    return asyncio.start_server(handle, "127.0.0.1", 0)


def _post_all(answers: list[bytes], n: int):
    log: list = []

    async def go():
        server = await _raw_server(list(answers), log)
        port = server.sockets[0].getsockname()[1]
        endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", headers={}, connect_timeout_s=5, read_timeout_s=5)
        out = []
        try:
            for i in range(n):
                try:
                    out.append(await endpoint.post("/chat/completions", json.dumps({"i": i}).encode()))
                except ConnectionDropped as exc:
                    out.append(exc)
        finally:
            await endpoint.aclose()
            server.close()
        return out
    return asyncio.run(go()), log


BODY = b'{"choices": [{"message": {"content": "[[A>B]]"}}]}'


def test_answers_framed_by_length_chunks_or_the_connection_end_are_read_whole_and_reused_when_allowed():
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"".join(
        b"%x\r\n%s\r\n" % (len(part), part) for part in (BODY[:7], BODY[7:30], BODY[30:])) + b"0\r\nX-T: 1\r\n\r\n"
    zipped = gzip.compress(BODY)
    answers = [
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY),
        chunked,
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
        % (len(zipped), zipped),
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + BODY + b"<close>",  # framed by the end
        b"HTTP/1.1 503 Busy\r\nRetry-After: 2\r\nConnection: close\r\nContent-Length: 4\r\n\r\nbusy",
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY),
    ]
    out, log = _post_all(answers, 6)
    assert [r.body for r in out[:4]] == [BODY] * 4 and out[5].body == BODY
    assert out[4].status == 503 and out[4].headers["retry-after"] == "2" and out[4].body == b"busy"
    assert [entry["i"] for entry in log if entry != "connection"] == list(range(6))
    # one connection for the first four (keep-alive), a new one after the end-framed answer and after "close"
    assert log.count("connection") == 3


def test_connections_opened_ahead_serve_the_calls_that_follow_and_no_more_are_opened():
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY)
    log: list = []

    async def go():
        server = await _raw_server([ok] * 6, log)
        port = server.sockets[0].getsockname()[1]
        endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", headers={}, connect_timeout_s=5, read_timeout_s=5)
        try:
            await endpoint.open_ahead(3)
            opened = len(endpoint._idle)
            await endpoint.open_ahead(3)  # already three idle: none more
            answers = await asyncio.gather(*(endpoint.post("/x", b"{}") for _ in range(3)))
            answers += await asyncio.gather(*(endpoint.post("/x", b"{}") for _ in range(3)))
        finally:
            await endpoint.aclose()
            server.close()
        return opened, answers
    opened, answers = asyncio.run(go())
    assert opened == 3 and [a.body for a in answers] == [BODY] * 6
    assert log.count("connection") == 3


def test_connections_that_fail_to_open_ahead_are_left_for_the_call_to_report():
    async def go():
        with socket.socket() as s:  # a port nothing listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", headers={}, connect_timeout_s=2, read_timeout_s=2)
        await endpoint.open_ahead(4)  # raises nothing
        with pytest.raises(ConnectError, match="could not connect"):
            await endpoint.post("/x", b"{}")
        return len(endpoint._idle)
    assert asyncio.run(go()) == 0


def test_a_connection_closed_mid_answer_or_without_one_is_a_dropped_connection():
    truncated = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + BODY[:20] + b"<close>"
    not_http = b"SSH-2.0-OpenSSH_9.6\r\n\r\n<close>"
    out, _ = _post_all([truncated, b"CLOSE", not_http], 3)
    assert all(isinstance(r, ConnectionDropped) for r in out), out
    assert "part of an answer" in str(out[0]) and "no answer" in str(out[1]) and "not an HTTP" in str(out[2])


def test_a_redirect_stops_the_run_naming_where_it_points():
    answers = [b"HTTP/1.1 308 Permanent Redirect\r\nLocation: https://judge.example/v1/chat/completions\r\n"
               b"Content-Length: 0\r\n\r\n"]
    log: list = []

    async def go():
        server = await _raw_server(answers, log)
        backend = OpenAIBackend("judge-model", base_urls=f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1")
        try:
            await backend.complete(MESSAGES)
        finally:
            await backend.aclose()
            server.close()
    with pytest.raises(FatalCallError, match="HTTP 308 .*redirected to https://judge.example/v1/chat/completions"):
        asyncio.run(go())


# -- TLS and proxies --------------------------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_https_is_verified_against_ssl_cert_file(tmp_path, monkeypatch):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    with FaultServer() as srv:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        srv._httpd.socket = context.wrap_socket(srv._httpd.socket, server_side=True)
        url = srv.url.replace("http://", "https://")
        err = completion_error(OpenAIBackend("judge-model", base_urls=url))  # a certificate no trusted root signed
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        comp = complete_once(OpenAIBackend("judge-model", base_urls=url))
    assert isinstance(err, RetryableCallError) and "CERTIFICATE_VERIFY_FAILED" in str(err)
    assert comp.text == default_answer(MESSAGES)


def test_an_endpoint_behind_an_environment_proxy_is_reached_through_the_proxy(monkeypatch):
    with FaultServer() as proxy:  # it answers the absolute-form request a client sends to a proxy
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/v1"))
        comp = complete_once(OpenAIBackend("judge-model", base_urls="http://judge.invalid/v1"))
        monkeypatch.setenv("NO_PROXY", "judge.invalid")  # not through the proxy: the name does not resolve
        err = completion_error(OpenAIBackend("judge-model", base_urls="http://judge.invalid/v1"))
        assert sum(proxy.successes.values()) == 1
    assert comp.text == default_answer(MESSAGES)
    assert isinstance(err, RetryableCallError) and "judge.invalid" in str(err)


@pytest.mark.parametrize("rate, kind", [(None, None), ("500", RetryableCallError), ("drop", RetryableCallError),
                                        ("truncated_json", MalformedResponseError)])
def test_the_fault_server_script_serves_answers_and_faults_from_its_own_process(rate, kind):
    """The script's asyncio server (what the throughput benchmark runs) answers as the threaded one does."""
    import sys

    from tests.support import REPO

    args = [f"--rate-{rate}", "1.0"] if rate else []
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "support" / "fault_server.py"), "--latency", "0.01", *args],
                            stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split()[1]
        backend = OpenAIBackend("judge-model", base_urls=url)
        if kind is None:
            assert complete_once(backend).text == default_answer(MESSAGES)
            unknown = completion_error(OpenAIBackend("other-model", base_urls=url))
            assert isinstance(unknown, FatalCallError) and "'other-model' not found" in str(unknown)
        else:
            err = completion_error(backend)
            assert type(err) is kind and (rate != "500" or err.status == 500), repr(err)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
