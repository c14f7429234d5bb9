"""Issue 33 part 3: judging live through Anthropic's Messages API (a fake server written from its reference,
tests/support/anthropic_server.py) — every game stored once, the key sent as x-api-key only, prompt caching's
usage fields priced at the shipped table's cache-write and cache-hit prices, errors classified as for OpenAI."""

from __future__ import annotations

import json
import sqlite3

import pytest

from judgewise.judges.anthropic_backend import AnthropicBackend, parse_message_body
from judgewise.judges.base import FatalCallError, MalformedResponseError
from judgewise.judges.prices import resolve_prices
from tests.support import run_cli
from tests.support.anthropic_server import AnthropicServer
from tests.support.judging import complete_once, write_config

KEY = "sk-ant-test-0123456789abcdef"
MODELS = ["m1", "m2", "m3"]
N_GAMES = 3 * 4 * 2  # 3 pairs, 4 prompts, both orders


def judge_config(tmp_path, srv, **judge):
    return write_config(tmp_path, srv.url, n_prompts=4, models=MODELS,
                        judge={"backend": "anthropic", "model": "claude-sonnet-4-0", "api_key_env": "ANT_KEY",
                               **judge})


def run_judge(tmp_path, cfg):
    return run_cli("judge", "-c", cfg, "--no-progress", "--json", cwd=tmp_path, env={"ANT_KEY": KEY}, timeout=120)


def test_anthropic_judging_stores_every_game_once_and_prices_cache_writes_and_reads(tmp_path):
    with AnthropicServer(api_key=KEY, cache_min_tokens=20) as srv:
        res = run_judge(tmp_path, judge_config(tmp_path, srv))
        assert res.returncode == 0, res.stderr
        usage, billed, headers = list(srv.usage), srv.billed, list(srv.headers_seen)
    summary = json.loads(res.stdout)
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        games = db.execute("SELECT key, status, n_calls, tokens_in, cost FROM games").fetchall()
    assert len(games) == N_GAMES == len({g[0] for g in games}) and {g[1] for g in games} == {"ok"}
    assert set(billed.values()) == {1} and len(billed) == sum(g[2] for g in games)
    writes = sum(u["cache_creation_input_tokens"] for u in usage)
    reads = sum(u["cache_read_input_tokens"] for u in usage)
    assert writes > 0 and reads > writes  # the system prompt written once (or a few times at once), then read
    fresh, out = sum(u["input_tokens"] for u in usage), sum(u["output_tokens"] for u in usage)
    # the shipped table: $3 input, $3.75 cache writes, $0.30 cache hits, $15 output per million tokens
    expected = (fresh * 3.0 + writes * 3.75 + reads * 0.30 + out * 15.0) / 1e6
    assert sum(g[4] for g in games) == pytest.approx(expected, rel=1e-9)
    assert summary["cost"] == pytest.approx(expected, abs=1e-6)  # the summary rounds to a millionth
    assert sum(g[3] for g in games) == fresh + writes + reads  # a call's prompt: the three counts together
    assert all(h.get("x-api-key") == KEY and "authorization" not in h and h.get("anthropic-version")
               for h in headers)


def test_without_prompt_cache_the_system_prompt_is_not_marked_and_nothing_is_cached(tmp_path):
    with AnthropicServer(api_key=KEY, cache_min_tokens=20) as srv:
        res = run_judge(tmp_path, judge_config(tmp_path, srv, prompt_cache=False))
        assert res.returncode == 0, res.stderr
        usage = list(srv.usage)
    assert usage and all(u["cache_creation_input_tokens"] == u["cache_read_input_tokens"] == 0 for u in usage)


def test_a_wrong_key_stops_the_run_with_the_providers_message_and_never_shows_the_key(tmp_path):
    with AnthropicServer(api_key="another-key") as srv:
        res = run_judge(tmp_path, judge_config(tmp_path, srv))
    assert res.returncode != 0 and "401" in res.stderr and "invalid x-api-key" in res.stderr
    assert KEY not in res.stderr + res.stdout and "Traceback" not in res.stderr


def test_a_prompt_too_long_is_a_failed_game_not_a_stopped_run(tmp_path):
    with AnthropicServer(api_key=KEY, prompt_too_long=True) as srv:
        res = run_judge(tmp_path, judge_config(tmp_path, srv))
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        statuses = [s for (s,) in db.execute("SELECT status FROM games")]
    assert statuses == ["failed"] * N_GAMES  # every game asked and stored failed: the run did not stop at one
    assert res.returncode == 4 and "prompt too long for the judge" in res.stderr


def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else():
    from tests.support.redirects import Recorder, other_host_binds

    if not other_host_binds():
        pytest.skip("no second loopback address here")
    with Recorder() as sink, Recorder(host="127.0.0.1", location=sink.url, redirect=307) as redirector:
        backend = AnthropicBackend("claude-sonnet-4-0", base_urls=redirector.url, api_key=KEY)
        with pytest.raises(FatalCallError, match="307"):
            complete_once(backend)
        assert sink.requests == [] and redirector.requests


@pytest.mark.parametrize("body, why", [
    (b"", "empty body"), (b"<html>502</html>", "not JSON"), (b"[1]", "expected an object"),
    (b'{"id": "msg", "type": "message"}', "without 'content'"),
    (b'{"content": "text"}', "expected a list of blocks"),
    (b'{"content": [{"type": "text", "text": 7}]}', "not text")])
def test_a_body_that_is_not_a_message_is_malformed(body, why):
    with pytest.raises(MalformedResponseError, match=why):
        parse_message_body(body)


def test_a_message_reads_its_text_blocks_and_all_three_prompt_counts():
    body = json.dumps({"content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "[[A>B]]"}],
                       "stop_reason": "end_turn", "model": "claude-sonnet-4-0",
                       "usage": {"input_tokens": 10, "cache_creation_input_tokens": 2000,
                                 "cache_read_input_tokens": 0, "output_tokens": 5}}).encode()
    parsed = parse_message_body(body)
    assert (parsed.text, parsed.tokens_in, parsed.tokens_cached, parsed.tokens_cache_write) == ("[[A>B]]", 2010, 0,
                                                                                                  2000)
    prices = resolve_prices("claude-sonnet-4-20250514")  # a dated id: an alias in the shipped table
    assert prices.cost(2010, 5, cache_write_in=2000) == pytest.approx((10 * 3 + 2000 * 3.75 + 5 * 15) / 1e6)
    assert prices.cost(2010, 5, cached_in=2000) == pytest.approx((10 * 3 + 2000 * 0.30 + 5 * 15) / 1e6)


def test_through_a_proxy_from_the_environment_a_call_goes_by_httpx_with_the_same_headers(monkeypatch):
    with AnthropicServer(api_key=KEY) as proxy:
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "http_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        backend = AnthropicBackend("claude-sonnet-4-0", base_urls="http://anthropic.invalid", api_key=KEY)
        assert backend._endpoints == [None]  # the lean client is not used: httpx speaks to the proxy
        completion = complete_once(backend)
        assert proxy.paths_seen == ["http://anthropic.invalid/v1/messages"]
        assert proxy.headers_seen[0]["x-api-key"] == KEY and proxy.headers_seen[0]["anthropic-version"]
    assert "[[" in completion.text and completion.tokens_in > 0 and completion.cost > 0


def test_through_a_proxy_an_error_status_is_classified_as_on_the_lean_client(monkeypatch):
    with AnthropicServer(api_key="another") as proxy:
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "http_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        backend = AnthropicBackend("claude-sonnet-4-0", base_urls="http://anthropic.invalid", api_key=KEY)
        with pytest.raises(FatalCallError, match="401.*invalid x-api-key") as info:
            complete_once(backend)
    assert KEY not in str(info.value)
