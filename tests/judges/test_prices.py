"""Prices as data (shipped table, user file, judge.prices) and cached prompt tokens: read, stored, priced."""

from __future__ import annotations

import itertools
import sqlite3

import pytest
import yaml

from judgewise.errors import ConfigError
from judgewise.judges.base import Comparison
from judgewise.judges.openai_backend import parse_chat_body
from judgewise.judges.prices import (MAX_PRICE_PER_MTOK, MAX_TOKEN_COUNT, Prices, price_note, resolve_prices,
                                     shipped_table, unpriced_fields)
from judgewise.judges.runner import plan_games, run_judging
from judgewise.pipeline import build_judge

from tests.support.fault_server import CACHE_BLOCK_TOKENS, CACHE_MIN_TOKENS, FaultServer
from tests.support.judging import llm_judge


def test_the_shipped_table_names_its_source_and_date_and_finds_dated_snapshots():
    table = shipped_table()
    assert "openai.com" in table.source and table.as_of.isoformat() in table.source
    snapshot = resolve_prices("gpt-4.1-2025-04-14")
    assert snapshot == table.models["gpt-4.1"] and snapshot != table.models["gpt-4.1-mini"]
    assert resolve_prices("a-local-model").cost(10**6, 10**6) == 0.0


def test_cached_tokens_cost_the_cached_rate_and_a_batch_the_discounted_price():
    p = Prices(input_per_mtok=2.0, output_per_mtok=8.0, cached_input_per_mtok=0.5, batch_discount=0.5)
    live = p.cost(10_000, 100)
    cached = p.cost(10_000, 100, cached_in=8_192)
    assert cached == pytest.approx((1_808 * 2.0 + 8_192 * 0.5 + 100 * 8.0) / 1e6) and cached < live
    assert p.cost(10_000, 100, cached_in=8_192, batch=True) == pytest.approx(cached / 2)
    assert Prices(1.0, 1.0).cost(100, 0, cached_in=100) == Prices(1.0, 1.0).cost(100, 0)  # no cached rate: input's


@pytest.mark.parametrize("cached_in", [-5, 10**400, 2**63, 501])
def test_hostile_cached_counts_are_clamped_to_the_prompt(cached_in):
    p = Prices(input_per_mtok=1.0, output_per_mtok=0.0, cached_input_per_mtok=0.0)
    cost = p.cost(500, 0, cached_in=cached_in)
    assert cost == (0.0 if cached_in > 0 else 500 / 1e6)
    assert p.cost(10**400, 10**400) == pytest.approx(MAX_TOKEN_COUNT / 1e6)


def test_a_user_file_overrides_the_shipped_prices_and_judge_prices_override_both(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text(yaml.safe_dump({"source": "our contract", "as_of": "2026-01-31", "batch_discount": 0.4,
                                    "models": {"gpt-4.1": {"input_per_mtok": 1.0, "output_per_mtok": 3.0}}}))
    path.write_text(path.read_text().replace("'2026-01-31'", "2026-01-31"))  # a YAML date, as a user writes it
    from_file = resolve_prices("gpt-4.1", {"file": str(path)})
    assert (from_file.input_per_mtok, from_file.batch_discount) == (1.0, 0.4)
    assert from_file.source == "our contract as of 2026-01-31"
    assert resolve_prices("gpt-4o", {"file": str(path)}) == shipped_table().models["gpt-4o"]  # not in the file
    given = resolve_prices("gpt-4.1", {"file": str(path), "output_per_mtok": 9.0})
    assert (given.input_per_mtok, given.output_per_mtok, given.source) == (1.0, 9.0, "judge.prices")


@pytest.mark.parametrize("content, message", [
    ({"source": "x", "models": {}}, "field 'as_of' = None is not a date"),
    ({"as_of": "2026-01-31", "models": {}}, "field 'as_of' = '2026-01-31' is not a date"),
    ({"as_of": None, "models": []}, "expected a mapping with 'source', 'as_of'"),
])
def test_a_bad_price_file_is_one_error_naming_the_file_and_field(tmp_path, content, message):
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(content))
    with pytest.raises(ConfigError, match=f"{path}: {message}".replace("[", r"\[").replace("(", r"\(")):
        resolve_prices("gpt-4.1", {"file": str(path)})


def test_a_negative_rate_in_a_price_file_names_the_model_and_field(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("as_of: 2026-01-31\nmodels:\n  m: {input_per_mtok: -1}\n")
    with pytest.raises(ConfigError, match=r"models\.m\.input_per_mtok = -1"):
        build_judge({"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                     "prices": {"file": str(path)}})


def test_cached_tokens_are_read_from_usage_and_hostile_ones_clamped():
    def body(details) -> bytes:
        return (b'{"choices": [{"message": {"content": "A"}}], "usage": {"prompt_tokens": 2000, '
                b'"completion_tokens": 3, "prompt_tokens_details": ' + details + b'}}')
    assert parse_chat_body(body(b'{"cached_tokens": 1536}')).tokens_cached == 1536
    for hostile in (b'{"cached_tokens": -1}', b'{"cached_tokens": "many"}', b'{"cached_tokens": ' + b"9" * 400 + b"}",
                    b'"not an object"', b'{"cached_tokens": 1.5e3}'):
        assert parse_chat_body(body(hostile)).tokens_cached == 0
    assert parse_chat_body(body(b'{"cached_tokens": 5000}')).tokens_cached == 2000  # never more than the prompt


def test_games_are_planned_prompt_by_prompt_and_same_first_answer_back_to_back():
    comps = [Comparison(f"p{p}", f"q{p}", a, b, a, b) for a, b in (("x", "y"), ("x", "z"), ("y", "z"))
             for p in range(3)]
    games = plan_games(comps, orders="both")
    prompts = [g.comparison.prompt_id for g in games]
    assert prompts == sorted(prompts) and len(games) == 18
    for p in range(3):
        firsts = [g.first_model for g in games if g.comparison.prompt_id == f"p{p}"]
        runs = [m for m, _ in itertools.groupby(firsts)]
        assert len(runs) == len(set(runs)) == 3  # each first answer's games adjacent


def test_cached_tokens_from_a_real_server_are_stored_per_game_and_priced_at_the_cached_rate(tmp_path):
    question = "Summarise this text. " + "lorem ipsum dolor sit amet " * 200  # > 1,024 tokens of 4 characters
    comps = [Comparison("p0", question, a, b, f"{a} answers.", f"{b} answers.") for a, b in
             (("m1", "m2"), ("m1", "m3"), ("m2", "m3"))]
    prices = Prices(input_per_mtok=2.0, output_per_mtok=8.0, cached_input_per_mtok=0.5)
    with FaultServer(prompt_cache=True) as srv:
        result = run_judging(comps, llm_judge(srv.url, prices=prices), tmp_path / "s.sqlite", concurrency=1)
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        rows = db.execute("SELECT tokens_in, tokens_out, tokens_cached, cost FROM games ORDER BY created_at").fetchall()
    assert len(rows) == 6 and rows[0][2] == 0  # the first request finds nothing cached
    assert all(c >= CACHE_MIN_TOKENS and c % CACHE_BLOCK_TOKENS == 0 and c <= n for n, _, c, _ in rows[1:])
    for n_in, n_out, n_cached, cost in rows:
        assert cost == pytest.approx(prices.cost(n_in, n_out, cached_in=n_cached))
    assert result.tokens_cached == sum(r[2] for r in rows) and result.cost < prices.cost(
        sum(r[0] for r in rows), sum(r[1] for r in rows))


def test_a_dry_run_prices_the_games_live_with_the_expected_cache_and_by_batch(tmp_path):
    from judgewise.judges.estimate import estimate_run
    from judgewise.store.judgments import JudgmentStore

    question = "Summarise this text. " + "lorem ipsum dolor sit amet " * 200
    comps = [Comparison(f"p{p}", f"{p} {question}", a, b, f"{a} answers.", f"{b} answers.") for p in range(2)
             for a, b in (("m1", "m2"), ("m1", "m3"), ("m2", "m3"))]
    prices = Prices(input_per_mtok=2.0, output_per_mtok=8.0, cached_input_per_mtok=0.5, source="test prices")
    with FaultServer(prompt_cache=True) as srv, JudgmentStore(tmp_path / "s.sqlite") as store:
        est = estimate_run(comps, llm_judge(srv.url, prices=prices), store)
        assert sum(srv.requests.values()) == 0
    # 12 games on 2 prompts: every game but each prompt's first finds its system prompt and instruction cached
    assert 0 < est.tokens_cached < est.tokens_in * 10 / 12
    assert est.cost_cached == pytest.approx(prices.cost(est.tokens_in, est.tokens_out, cached_in=est.tokens_cached))
    assert est.cost_batch == pytest.approx(est.cost_cached / 2) and est.cost_cached < est.cost
    line = est.line()
    assert f"~${est.cost_batch:.4f} by batch [prices: test prices]" in line and "with the prompt cache" in line


def test_evaluate_reports_the_cost_as_billed_with_cached_tokens_and_by_batch(tmp_path):
    import json

    from tests.support import cli_json
    from tests.support.judging import write_config

    models = ["m1", "m2", "m3"]
    with FaultServer(prompt_cache=True) as srv:
        config = write_config(tmp_path, srv.url, n_prompts=4, models=models, limits={"concurrency": 1},
                              judge={"prices": {"input_per_mtok": 2.0, "cached_input_per_mtok": 0.5,
                                                "output_per_mtok": 8.0, "batch_discount": 0.5}})
        long_instruction = "Explain this. " + "lorem ipsum dolor sit amet " * 200  # > 1,024 tokens
        rows = [json.loads(line) for line in (tmp_path / "responses.jsonl").read_text().splitlines()]
        (tmp_path / "responses.jsonl").write_text("".join(
            json.dumps({**r, "instruction": f"{r['prompt_id']} {long_instruction}"}) + "\n" for r in rows))
        out = cli_json("evaluate", "-c", str(config), "--json", "--bootstrap", "20", cwd=tmp_path, timeout=300)
    trust = out["trust"]
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        cached, cost = db.execute("SELECT SUM(tokens_cached), SUM(cost) FROM games").fetchone()
    assert trust["billed_tokens_cached"] == cached > 0 and trust["cost"] == pytest.approx(cost, abs=1e-6)
    assert trust["cost_if_batch"] == pytest.approx(trust["cost"] / 2, abs=1e-6)


# -- issue 32: the price table read with the run config's guards; prices bounded; no silent prefix match ----------
def _table(tmp_path, models: str, head: str = "as_of: 2026-01-31\nmodels:\n"):
    path = tmp_path / "p.yaml"
    path.write_text(head + models)
    return path


def test_a_price_table_of_yaml_aliases_is_refused_before_it_expands(tmp_path):
    import time

    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    path = _table(tmp_path, "  m: {input_per_mtok: 1.0}\n", head="as_of: 2026-01-31\n" + laughs + "models:\n")
    started = time.monotonic()
    with pytest.raises(ConfigError, match=f"{path}: refused: .*aliases"):
        resolve_prices("m", {"file": str(path)})
    assert time.monotonic() - started < 5


def test_a_price_table_over_the_config_cap_is_refused_without_reading_it_whole(tmp_path):
    path = tmp_path / "p.yaml"
    with path.open("wb") as fh:  # sparse: 200 MB that take no disk
        fh.truncate(200 * 1024 * 1024)
    with pytest.raises(ConfigError, match=f"{path}: larger than 1,000,000 bytes"):
        resolve_prices("m", {"file": str(path)})


def test_a_model_named_twice_in_a_price_table_is_refused_naming_the_line(tmp_path):
    path = _table(tmp_path, "  m: {input_per_mtok: 1.0}\n  m: {input_per_mtok: 9.0}\n")
    with pytest.raises(ConfigError, match=f"{path}: refused: line 4: key 'm' appears twice"):
        resolve_prices("m", {"file": str(path)})


@pytest.mark.parametrize("rate", ["1.0e+308", "10000.5", ".nan", "-.inf"])
def test_a_rate_beyond_the_documented_maximum_is_refused_naming_file_model_and_field(tmp_path, rate):
    path = _table(tmp_path, f"  m: {{input_per_mtok: 1.0, output_per_mtok: {rate}}}\n")
    with pytest.raises(ConfigError, match=rf"{path}: models\.m\.output_per_mtok = .*\[0, 10,000\]"):
        resolve_prices("m", {"file": str(path)})
    assert MAX_PRICE_PER_MTOK == 10_000


def test_inline_prices_beyond_the_maximum_are_refused_by_the_run_schema():
    from judgewise.pipeline import load_config

    cfg = {"responses": "r.jsonl", "judge": {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                                            "prices": {"output_per_mtok": 1e308}}}
    with pytest.raises(ConfigError, match=r"judge\.prices\.output_per_mtok = 1e\+308"):
        load_config(cfg)


def test_every_cost_at_the_largest_prices_and_counts_is_finite():
    import math

    top = Prices(MAX_PRICE_PER_MTOK, MAX_PRICE_PER_MTOK, MAX_PRICE_PER_MTOK)
    assert all(math.isfinite(c) for c in top.three_ways(10**400, 10**400, 10**400))


@pytest.mark.parametrize("model", ["o3-pro", "gpt-4o-2024-05-13", "gpt-5-chat-latest", "gpt-4.1-mini-fast"])
def test_a_model_the_table_does_not_name_has_no_price_rather_than_a_prefixs(model):
    prices = resolve_prices(model)
    assert not prices.known and prices.cost(10**6, 10**6) == 0.0 and f"no price known for {model}" in prices.source
    assert "no price known" in price_note(prices) and price_note(resolve_prices("o3")) == ""


def test_only_the_dated_snapshots_the_table_lists_are_aliases():
    table = shipped_table()
    assert table.aliases["gpt-4o-2024-08-06"] == "gpt-4o" and "gpt-4o-2024-05-13" not in table.aliases
    for alias, name in table.aliases.items():
        assert resolve_prices(alias) == table.models[name] and resolve_prices(alias).known


def test_a_users_table_pricing_a_model_prices_the_shipped_tables_aliases_of_it(tmp_path):
    path = _table(tmp_path, "  gpt-4.1: {input_per_mtok: 1.0, output_per_mtok: 3.0, aliases: [our-gpt]}\n")
    assert resolve_prices("gpt-4.1-2025-04-14", {"file": str(path)}).input_per_mtok == 1.0  # shipped alias
    assert resolve_prices("our-gpt", {"file": str(path)}).input_per_mtok == 1.0  # the user's own alias


@pytest.mark.parametrize("models, message", [
    ("  m: {input_per_mtok: 1, aliases: [x]}\n  n: {input_per_mtok: 2, aliases: [x]}\n",
     r"models\.n\.aliases: 'x' is already an alias of 'm'"),
    ("  m: {input_per_mtok: 1, aliases: [n]}\n  n: {input_per_mtok: 2}\n", r"models\.m\.aliases: 'n' is a model"),
    ("  m: {input_per_mtok: 1, aliases: x}\n", r"models\.m\.aliases = 'x': expected a list"),
])
def test_an_alias_names_one_model_the_table_does_not_list(tmp_path, models, message):
    path = _table(tmp_path, models)
    with pytest.raises(ConfigError, match=f"{path}: {message}"):
        resolve_prices("m", {"file": str(path)})


def test_unpriced_models_are_named_in_the_fields_a_summary_gains():
    fields = unpriced_fields({"judge": resolve_prices("o3-pro"), "other": resolve_prices("gpt-4o")})
    assert fields["no_price_known"] == ["judge"] and "no price known for judge" in fields["price_note"]
    assert unpriced_fields({"a": resolve_prices("gpt-4o"), "b": None}) == {}


@pytest.mark.parametrize("rates", [{"input_per_mtok": 1e308}, {"output_per_mtok": float("nan")},
                                   {"cached_input_per_mtok": -1.0}, {"batch_discount": 2.0}])
def test_prices_built_in_python_are_held_to_the_same_bounds(rates):
    with pytest.raises(ConfigError, match=rf"Prices\.{next(iter(rates))} = "):
        Prices(**rates)
