"""Issue 26 item 1: every answer is either stored or refused, once. A malicious OpenAI-compatible server on 127.0.0.1
(tests/support/fault_server.py, one mode per hostile value) answers with a lone surrogate escape or a NUL in the content,
usage counts of 400 digits or 2**63, logprobs of 800 or -1000; each answer is stored (escaped, refused per field,
said in the row) in a real SQLite file, and a rerun asks nothing again — through ``judge``, ``evaluate`` and
``generate``. Property tests (hypothesis) over generated hostile answers for the parser, the cost and the store."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgewise.errors import InputError
from judgewise.judges.base import MalformedResponseError
from judgewise.store.generations import AnswerRecord, GenerationStore
from judgewise.judges.llm_judge import LLMJudge
from judgewise.judges.openai_backend import MAX_TOKEN_COUNT, OpenAIBackend, Prices, parse_chat_body
from judgewise.judges.parsing import soft_from_logprobs
from judgewise.judges.runner import canonical_json, run_judging
from judgewise.store.judgments import GameRecord, JudgmentStore
from tests.support import run_cli
from tests.support.fault_server import HOSTILE_VALUES, FaultServer
from tests.support.generation import server as gen_server, write_gen_config, write_questions
from tests.support.judging import comparisons, llm_judge, write_config

SOFT_TOKENS = {"a": {"a": 0.7, "b": 0.3}}  # candidates at the verdict token "a", for the logprob modes


def _judge(url: str) -> LLMJudge:
    backend = OpenAIBackend("judge-model", base_urls=url, logprobs=True, prices=Prices(1.0, 2.0))
    return LLMJudge(backend, "llmbar_binary", want_logprobs=True)


def _stored(path) -> list[dict]:
    with sqlite3.connect(path) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM games ORDER BY key")]


@pytest.mark.parametrize("kind", HOSTILE_VALUES)
def test_a_hostile_answer_is_stored_once_and_a_rerun_asks_nothing(tmp_path, kind):
    store = tmp_path / "store.sqlite"
    with FaultServer(fault_fn=lambda m, seen: kind, answer=lambda m: "Output (a)", candidates=SOFT_TOKENS) as srv:
        first = run_judging(comparisons(3), _judge(srv.url), store)
        again = run_judging(comparisons(3), _judge(srv.url), store)
        assert srv.total_successes() == 6 and set(srv.successes.values()) == {1}  # each answer paid once
    assert first.judged == 6 and again.calls_made == 0 and again.cached == 6
    rows = _stored(store)
    assert [r["status"] for r in rows] == ["ok"] * 6 and all(r["outcome"] is not None for r in rows)
    if kind in ("lone_surrogate", "nul_char"):
        escaped = "\\ud800" if kind == "lone_surrogate" else "\\u0000"
        assert all(escaped in r["raw"] and "[judgewise: " in r["raw"] and "raw that UTF-8 cannot hold" in r["raw"]
                   for r in rows)
    if kind.startswith("usage"):  # refused per field: counted as 0, so the cost is 0, not an overflow
        assert all(r["tokens_in"] == 0 and r["tokens_out"] == 0 and r["cost"] == 0 for r in rows)
    if kind.startswith("logprobs"):  # every candidate the same logprob: the soft outcome is their plain mean
        assert [r["soft"] for r in rows] == [0.5] * 6
    else:
        assert sorted(round(r["soft"], 6) for r in rows) == [0.3] * 3 + [0.7] * 3


def test_the_judge_command_stores_hostile_answers_and_its_rerun_pays_nothing(tmp_path):
    kinds = iter(HOSTILE_VALUES * 10)
    with FaultServer(fault_fn=lambda m, seen: next(kinds), candidates=SOFT_TOKENS) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=4, models=["m1", "m2"], judge={"logprobs": True})
        runs = [run_cli("judge", "-c", config, "--no-progress", "-o", "out.jsonl", cwd=tmp_path) for _ in range(2)]
        assert set(srv.successes.values()) == {1}  # no answer was paid for twice
    assert [r.returncode for r in runs] == [0, 0], [r.stderr[-800:] for r in runs]
    assert "Traceback" not in runs[0].stderr + runs[1].stderr
    export = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(export) == 8 and any("\\ud800" in row["raw"] for row in export)


def test_evaluate_stores_hostile_answers_and_its_rerun_pays_nothing(tmp_path):
    kinds = iter(HOSTILE_VALUES * 200)
    with FaultServer(fault_fn=lambda m, seen: next(kinds)) as srv:
        write_config(tmp_path, srv.url, n_prompts=6, models=["m1", "m2", "m3"])
        cfg = yaml.safe_load((tmp_path / "run.yaml").read_text())
        cfg.update(design="all_pairs", orders="one")
        (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg))
        runs = [run_cli("evaluate", "-c", "run.yaml", "--json", "--bootstrap", "20", cwd=tmp_path, timeout=300)
                for _ in range(2)]
        assert set(srv.successes.values()) == {1}
    assert [r.returncode for r in runs] == [0, 0], [r.stderr[-800:] for r in runs]
    assert json.loads(runs[1].stdout)["trust"]["paid_calls_this_run"] == 0


def test_generate_stores_a_hostile_answer_once(tmp_path):
    write_questions(tmp_path, 2, turns=1)
    with gen_server(fault_fn=lambda m, seen: "lone_surrogate" if seen == 0 else "usage_400_digits") as srv:
        write_gen_config(tmp_path, srv.url)
        runs = [run_cli("generate", "-c", "gen.yaml", "--no-progress", cwd=tmp_path) for _ in range(2)]
        assert set(srv.successes.values()) == {1}
    assert [r.returncode for r in runs] == [0, 0], [r.stderr[-800:] for r in runs]
    with sqlite3.connect(tmp_path / "gens.sqlite") as db:
        rows = db.execute("SELECT status, text, error FROM generations").fetchall()
    assert len(rows) == 4 and {r[0] for r in rows} == {"ok"}
    assert all("\\ud800" in text and "text that UTF-8 cannot hold" in error for _, text, error in rows)


def test_a_row_the_database_refuses_is_stored_as_a_failed_game_and_not_asked_again(tmp_path, monkeypatch):
    """The last line of defence: whatever the store still refuses becomes a failed game with the reason."""
    from judgewise.judges import runner

    store = tmp_path / "store.sqlite"
    real = runner._record

    def unstorable(*args):
        rec = real(*args)
        rec.latency_s = object()  # a value no database takes: sqlite3 raises
        return rec
    monkeypatch.setattr(runner, "_record", unstorable)
    with FaultServer() as srv:
        first = run_judging(comparisons(2), llm_judge(srv.url), store)
        monkeypatch.setattr(runner, "_record", real)
        again = run_judging(comparisons(2), llm_judge(srv.url), store)
        assert srv.total_successes() == 4
    assert first.failed == 4 and again.calls_made == 0 and again.cached == 4
    rows = _stored(store)
    assert {r["status"] for r in rows} == {"failed"} and all("could not be stored" in r["error"] for r in rows)
    assert all(r["n_calls"] == 1 for r in rows)  # the paid call is counted


# -- property tests ----------------------------------------------------------------------------------------------------
hostile_text = st.text(st.characters(codec=None, categories=None), max_size=40) | st.sampled_from(
    ["\ud800", "a\udfffb", "\x00", "\ud83d", "sk-\u0000\ud800"])
hostile_number = st.one_of(st.integers(min_value=-(10 ** 400), max_value=10 ** 400), st.just(2 ** 63),
                           st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5), st.none(),
                           st.booleans())
candidate = st.dictionaries(st.sampled_from(["A>B", "B>A", "A=B", "x", " A>B"]),
                            st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10 ** 4, 10 ** 4),
                            max_size=4)


def _body(text, prompt_tokens, completion_tokens, logprob_rows) -> bytes:
    content = [{"token": t, "logprob": lp, "top_logprobs": [{"token": k, "logprob": v} for k, v in row.items()]}
               for row in logprob_rows for t, lp in list(row.items())[:1]]
    data = {"choices": [{"message": {"content": text}, "logprobs": {"content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}
    return json.dumps(data, allow_nan=True).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_text, hostile_number, hostile_number, st.lists(candidate, max_size=4))
def test_the_parser_and_the_cost_take_any_hostile_answer(text, prompt_tokens, completion_tokens, rows):
    try:
        body = parse_chat_body(_body(text, prompt_tokens, completion_tokens, rows))
    except MalformedResponseError:
        return  # refused with its reason: also an outcome
    assert body.text == text
    assert 0 <= body.tokens_in <= MAX_TOKEN_COUNT and 0 <= body.tokens_out <= MAX_TOKEN_COUNT
    cost = Prices(3.0, 15.0).cost(body.tokens_in, body.tokens_out)
    assert math.isfinite(cost) and cost >= 0
    assert all(math.isfinite(v) for row in body.top_logprobs or [] for v in row.values())
    soft = soft_from_logprobs(body.top_logprobs, {"a>b": 1.0, "b>a": 0.0, "a=b": 0.5})
    assert soft is None or 0.0 <= soft <= 1.0


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.dictionaries(st.sampled_from(["A>B", "B>A", "A=B"]),
                                st.floats(min_value=-1e6, max_value=1e6), min_size=1), min_size=1, max_size=3))
def test_soft_outcomes_are_computed_in_log_space(rows):
    """No overflow nor underflow at any logprob, and a shift of every logprob at a position changes nothing."""
    values = {"a>b": 1.0, "b>a": 0.0, "a=b": 0.5}
    soft = soft_from_logprobs(rows, values)
    shifted = soft_from_logprobs([{k: v - 1e3 for k, v in row.items()} for row in rows], values)
    assert soft is not None and 0.0 <= soft <= 1.0 and shifted == pytest.approx(soft, abs=1e-9)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=hostile_text, label=hostile_text, tokens=hostile_number, cost=hostile_number)
def test_the_stores_take_any_hostile_row(tmp_path_factory, raw, label, tokens, cost):
    folder = tmp_path_factory.mktemp("s")
    tokens = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0
    cost = cost if isinstance(cost, (int, float)) and not isinstance(cost, bool) else 0.0
    rec = GameRecord(key="k", prompt_id="p\ud800", model_a="a", model_b="b", first="a", swapped=False, judge="j",
                     template=None, judge_identity=canonical_json({}), status="ok", raw=raw, label=label,
                     outcome=1.0, tokens_in=tokens, cost=cost, n_calls=1)
    with JudgmentStore(folder / "s.sqlite") as store:
        store.hold_answer("k", "c", {"text": raw, "tokens_in": tokens if abs(tokens) < 2 ** 63 else 0})
        assert store.held_answer("c")["text"] == raw  # the journal keeps the answer exactly (ASCII JSON)
        store.record(rec)
        row = store.frame().iloc[0]
    assert row["status"] == "ok" and abs(row["tokens_in"]) < 2 ** 63 and math.isfinite(row["cost"])
    assert "\ud800" not in row["prompt_id"] and row["prompt_id"] == "p\\ud800"
    with GenerationStore(folder / "g.sqlite") as gens:
        gens.record(AnswerRecord(key="g", model="m", prompt_id="p", turn=1, settings="s", identity="{}",
                                 question="q", status="ok", text=raw, tokens_in=tokens, cost=cost))
        assert gens.count("ok") == 1


def test_a_store_refuses_nothing_but_says_what_it_changed(tmp_path):
    rec = GameRecord(key="k", prompt_id="p", model_a="a", model_b="b", first="a", swapped=False, judge="j",
                     template=None, judge_identity="{}", status="failed", raw="x\ud800", error="boom",
                     tokens_in=10 ** 400, latency_s=float("nan"), n_calls=1)
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        store.record(rec)
        row = store.frame().iloc[0]
    assert row["raw"] == "x\\ud800" and row["tokens_in"] == 0 and row["latency_s"] == 0
    assert row["error"].startswith("boom\n[judgewise: 1 character(s) of raw")
    assert "tokens_in = a 1329-bit integer is not storable" in row["error"] and "latency_s = nan" in row["error"]
    with pytest.raises(InputError):
        JudgmentStore.open_readonly(tmp_path / "missing.sqlite")
