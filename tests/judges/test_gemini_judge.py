"""Issue 33 part 3: judging live through Gemini's generateContent (a fake server written from its reference,
tests/support/gemini_server.py) — every game stored once, the key in the x-goog-api-key header and never in the
URL, implicitly cached prompt tokens and thinking tokens priced from the shipped table."""

from __future__ import annotations

import json
import sqlite3

import pytest

from judgewise.judges.base import MalformedResponseError
from judgewise.judges.gemini_backend import parse_generate_body
from tests.support import run_cli
from tests.support.gemini_server import GeminiServer
from tests.support.judging import write_config

KEY = "AIza-test-0123456789abcdef"
MODELS = ["m1", "m2", "m3"]
N_GAMES = 3 * 4 * 2


def run_judge(tmp_path, srv, **judge):
    cfg = write_config(tmp_path, srv.url, n_prompts=4, models=MODELS,
                       judge={"backend": "gemini", "model": "gemini-2.5-flash", "api_key_env": "GEM_KEY", **judge})
    return run_cli("judge", "-c", cfg, "--no-progress", "--json", cwd=tmp_path, env={"GEM_KEY": KEY}, timeout=120)


def test_gemini_judging_stores_every_game_once_and_prices_cached_and_thinking_tokens(tmp_path):
    with GeminiServer(api_key=KEY, cache_min_tokens=20, thoughts=7, thought_part=True) as srv:
        res = run_judge(tmp_path, srv)
        assert res.returncode == 0, res.stderr
        usage, billed, headers, models = list(srv.usage), srv.billed, list(srv.headers_seen), set(srv.models)
    summary = json.loads(res.stdout)
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        games = db.execute("SELECT key, status, n_calls, tokens_in, tokens_out, cost FROM games").fetchall()
        raws = [r for (r,) in db.execute("SELECT raw FROM games")]
    assert len(games) == N_GAMES == len({g[0] for g in games}) and {g[1] for g in games} == {"ok"}
    assert set(billed.values()) == {1} and len(billed) == sum(g[2] for g in games)
    assert models == {"gemini-2.5-flash"} and all("Thinking about" not in r for r in raws)  # thoughts left out
    prompt = sum(u["promptTokenCount"] for u in usage)
    cached = sum(u.get("cachedContentTokenCount", 0) for u in usage)
    out = sum(u["candidatesTokenCount"] + u["thoughtsTokenCount"] for u in usage)
    assert cached > 0 and sum(g[3] for g in games) == prompt and sum(g[4] for g in games) == out
    # the shipped table: $0.30 input, $2.50 output (thinking included) per million tokens, and no confirmed
    # cached-input rate: cached tokens are priced at the input rate (an upper bound)
    expected = (prompt * 0.30 + out * 2.50) / 1e6
    assert sum(g[5] for g in games) == pytest.approx(expected, rel=1e-9)
    assert summary["cost"] == pytest.approx(expected, abs=1e-6)
    assert all(h.get("x-goog-api-key") == KEY and "authorization" not in h for h in headers)


def test_the_key_is_never_in_the_url_and_a_wrong_key_stops_the_run_without_showing_it(tmp_path):
    with GeminiServer(api_key="another") as srv:
        res = run_judge(tmp_path, srv)
    assert res.returncode != 0 and "API key not valid" in res.stderr and KEY not in res.stderr + res.stdout
    assert "Traceback" not in res.stderr


def test_sampling_params_go_into_the_generation_config(tmp_path):
    from judgewise.judges.gemini_backend import GeminiBackend

    backend = GeminiBackend("gemini-2.5-pro", base_urls="http://127.0.0.1:9", api_key=KEY,
                            params={"temperature": 0, "thinkingConfig": {"thinkingBudget": 128}})
    body = json.loads(backend.request_body([{"role": "system", "content": "Judge."},
                                            {"role": "user", "content": "A or B?"},
                                            {"role": "assistant", "content": "A"},
                                            {"role": "user", "content": "Say it as [[A>B]]"}], max_tokens=64))
    assert body["systemInstruction"] == {"parts": [{"text": "Judge."}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["generationConfig"] == {"maxOutputTokens": 64, "temperature": 0,
                                        "thinkingConfig": {"thinkingBudget": 128}}
    assert KEY not in backend.path() and "key=" not in backend.path()


@pytest.mark.parametrize("body, why", [
    (b"", "empty body"), (b"<html>", "not JSON"), (b'"x"', "expected an object"), (b'{"id": 1}', "'candidates'"),
    (b'{"candidates": "x"}', "not a list of objects"),
    (b'{"candidates": [{"content": {"parts": [{"text": 3}]}}]}', "not text")])
def test_a_body_that_is_not_a_generate_content_answer_is_malformed(body, why):
    with pytest.raises(MalformedResponseError, match=why):
        parse_generate_body(body)


def test_a_blocked_prompt_is_an_empty_answer_not_a_malformed_one():
    parsed = parse_generate_body(b'{"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": '
                                 b'{"promptTokenCount": 12}}')
    assert parsed.text == "" and parsed.tokens_in == 12 and parsed.tokens_out == 0
