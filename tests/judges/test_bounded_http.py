"""Issue 26 item 2: the hand-written HTTP client (judges/http11.py) is bounded against a malicious server on 127.0.0.1
(tests/support/fault_server.py, one mode per case): gzip and deflate bombs, chunked and connection-framed floods, a valid
JSON answer far above the cap and an HTTP/1.0 body of 1 GiB are refused at the answer cap while being read (a failed
game at once, never asked again); header values that are not ASCII digits are a clean error, never a traceback from
the event loop. The cap is the judge config's ``max_answer_mb``."""

from __future__ import annotations

import asyncio
import logging

import pytest

from judgewise.judges.base import AnswerRefusedError, RetryableCallError
from judgewise.judges.http11 import MAX_ANSWER_BYTES, ConnectionDropped, Endpoint, _Connection
from judgewise.judges.openai_backend import OpenAIBackend
from judgewise.judges.runner import run_judging
from tests.support import run_cli
from tests.support.fault_server import FLOOD_BYTES, HOSTILE_HTTP, FaultServer, bomb, default_answer
from tests.support.judging import complete_once, completion_error, comparisons, llm_judge, write_config

MESSAGES = [{"role": "user", "content": "Which answer is better?"}]
TOO_LARGE = ("gzip_bomb", "deflate_bomb", "chunked_flood", "tiny_chunk_flood", "close_flood", "huge_json")
NOT_HTTP = tuple(k for k in HOSTILE_HTTP if k not in TOO_LARGE)




@pytest.mark.parametrize("kind", TOO_LARGE)
def test_an_answer_above_the_cap_is_refused_while_it_is_read(kind):
    size = FLOOD_BYTES if kind in ("close_flood", "huge_json") else 64 << 20  # 1 GiB HTTP/1.0 body, 1 GiB JSON
    with FaultServer(fault_fn=lambda m, seen: kind, flood_bytes=size) as srv:
        err = completion_error(OpenAIBackend("judge-model", base_urls=srv.url, timeout_s=60))
        assert srv.events[kind] == 1
    assert type(err) is AnswerRefusedError, repr(err)
    assert f"larger than the {MAX_ANSWER_BYTES:,}-byte cap" in str(err) and "max_answer_mb" in str(err)


def test_one_byte_chunks_count_as_sent_and_a_valid_answer_in_them_is_read_whole():
    # 1 MB of JSON in one-byte chunks is 6 MB on the wire: under the 8 MB cap it is read whole, under 4 MB refused
    # (a list of a million one-byte chunks held ~0.7 GB per call before the cap counted the wire and the chunks
    # went into one buffer)
    with FaultServer(fault_fn=lambda m, seen: "tiny_chunk_flood", flood_bytes=1 << 20) as srv:
        read = complete_once(OpenAIBackend("judge-model", base_urls=srv.url, timeout_s=60))
        refused = completion_error(OpenAIBackend("judge-model", base_urls=srv.url, timeout_s=60, max_answer_mb=4))
    assert read.text == default_answer(MESSAGES)
    assert isinstance(refused, AnswerRefusedError) and "4,194,304-byte cap" in str(refused)


_LOOPS: list = []  # the event loops a test made for its futures, closed after it (an unclosed loop warns at GC)


def _new_loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    _LOOPS.append(loop)
    return loop


@pytest.fixture(autouse=True)
def _close_loops():
    yield
    while _LOOPS:
        _LOOPS.pop().close()


def _chunked(conn: _Connection, *pieces: bytes) -> asyncio.Future:
    """Feed a chunked answer to ``conn`` in ``pieces`` (as the network splits it); the call's future."""
    conn.transport = type("Transport", (), {"write": lambda self, data: None, "abort": lambda self: None})()
    waiter = conn.send(b"", _new_loop())
    conn.data_received(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    for piece in pieces:
        conn.data_received(piece)
    return waiter


@pytest.mark.parametrize("split", [1, 2, 3, 5, 7, 64])
def test_a_chunked_body_split_anywhere_by_the_network_is_read_whole(split):
    wire = b"3;ext=1\r\nabc\r\n 1 \r\nd\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n"
    waiter = _chunked(_Connection(), *(wire[i:i + split] for i in range(0, len(wire), split)))
    assert bytes(waiter.result().body) == b"abcd0123456789"


@pytest.mark.parametrize("wire,error", [
    (b"3\r\nabcd\r\n0\r\n\r\n", "a chunk longer than its size line says"),
    (b"+3\r\nabc\r\n0\r\n\r\n", "a malformed chunk size"),
    (b"3 x\r\nabc\r\n0\r\n\r\n", "a malformed chunk size"),
])
def test_a_chunk_that_is_not_what_its_size_line_says_is_a_clean_error(wire, error):
    waiter = _chunked(_Connection(), wire)
    assert isinstance(waiter.exception(), ConnectionDropped) and error in str(waiter.exception())


@pytest.mark.parametrize("kind", NOT_HTTP)
def test_header_values_that_are_not_ascii_digits_are_a_cleancompletion_error(kind, caplog):
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        with FaultServer(fault_fn=lambda m, seen: kind) as srv:
            err = completion_error(OpenAIBackend("judge-model", base_urls=srv.url, timeout_s=10))
    assert type(err) is RetryableCallError and "ConnectionDropped" in str(err), repr(err)
    assert not err.maybe_charged and "timed out" not in str(err)
    assert not [r for r in caplog.records if "data_received" in r.getMessage()]  # no protocol traceback


def test_a_server_looping_on_interim_answers_is_dropped_at_the_ninth():
    with FaultServer(fault_fn=lambda m, seen: "interim_flood") as srv:
        err = completion_error(OpenAIBackend("judge-model", base_urls=srv.url, timeout_s=10))
    assert "more than 8 interim (1xx) answers" in str(err), repr(err)


def test_the_cap_is_configurable_and_an_answer_under_it_is_read_whole():
    with FaultServer(fault_fn=lambda m, seen: "huge_json", flood_bytes=3 << 20) as srv:
        refused = completion_error(OpenAIBackend("judge-model", base_urls=srv.url, max_answer_mb=2))
        read = complete_once(OpenAIBackend("judge-model", base_urls=srv.url, max_answer_mb=4))
    assert isinstance(refused, AnswerRefusedError) and "2,097,152-byte cap" in str(refused)
    assert read.text == default_answer(MESSAGES)
    with FaultServer(fault_fn=lambda m, seen: "gzip_bomb", flood_bytes=3 << 20) as srv:  # decoded size counts
        assert isinstance(completion_error(OpenAIBackend("judge-model", base_urls=srv.url, max_answer_mb=2)), AnswerRefusedError)
        assert complete_once(OpenAIBackend("judge-model", base_urls=srv.url, max_answer_mb=4)).text.startswith("Both")


def test_inflating_stops_at_the_cap_and_keeps_a_truncated_body_ancompletion_error():
    conn = _Connection(max_answer_bytes=1 << 20)
    conn.headers, conn.status = {"content-encoding": "gzip"}, 200
    conn.waiter = _new_loop().create_future()
    conn._finish(bomb("gzip_bomb", 64 << 20))
    assert "decodes to more than 1,048,576 bytes" in str(conn.waiter.exception())
    conn.waiter = conn.waiter.get_loop().create_future()
    conn._finish(bomb("gzip_bomb", 512 << 10)[:-100])  # the stream ends early: does not decode
    assert isinstance(conn.waiter.exception(), ConnectionDropped)


def test_a_refused_answer_is_a_failed_game_asked_once_and_not_again_on_rerun(tmp_path):
    store = tmp_path / "store.sqlite"
    with FaultServer(fault_fn=lambda m, seen: "gzip_bomb", flood_bytes=64 << 20) as srv:
        first = run_judging(comparisons(2), llm_judge(srv.url), store)
        again = run_judging(comparisons(2), llm_judge(srv.url), store)
        assert sum(srv.requests.values()) == 4 and set(srv.requests.values()) == {1}  # no retry, no rerun
    assert first.failed == 4 and again.calls_made == 0 and again.cached == 4
    assert all("answer refused" in e for e in first.judgments["error"])


def test_max_answer_mb_in_the_judge_config_reaches_the_client(tmp_path):
    with FaultServer(fault_fn=lambda m, seen: "huge_json", flood_bytes=3 << 20) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=1, models=["m1", "m2"], judge={"max_answer_mb": 4})
        ok = run_cli("judge", "-c", config, "--no-progress", cwd=tmp_path)
        small = write_config(tmp_path, srv.url, n_prompts=1, models=["m1", "m2"], store="small.sqlite",
                             judge={"max_answer_mb": 1})
        refused = run_cli("judge", "-c", small, "--no-progress", cwd=tmp_path)
        bad = write_config(tmp_path, srv.url, n_prompts=1, models=["m1", "m2"], judge={"max_answer_mb": 0})
        invalid = run_cli("judge", "-c", bad, "--no-progress", cwd=tmp_path)
    assert ok.returncode == 0 and "2 judged" in ok.stdout + ok.stderr, ok.stderr[-500:]
    assert refused.returncode == 4 and "all 2 games of this job failed (first reason: answer refused" in refused.stderr
    assert invalid.returncode == 2 and "max_answer_mb" in invalid.stderr and "Traceback" not in invalid.stderr


def test_an_endpoint_refuses_a_content_length_above_the_cap_before_the_body():
    async def go():
        async def handle(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n{")  # then nothing more
            await writer.drain()
            await asyncio.sleep(5)
            writer.close()
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        endpoint = Endpoint(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", headers={},
                            connect_timeout_s=5, read_timeout_s=30, max_answer_bytes=1000)
        try:
            return await endpoint.post("/chat/completions", b"{}")
        finally:
            await endpoint.aclose()
            server.close()
    with pytest.raises(Exception, match="Content-Length 99,999,999,999"):
        asyncio.run(go())
