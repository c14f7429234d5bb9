"""The run pipeline: answer orders, the model_a view of stored verdicts, order averaging and swap consistency,
store keys, the run config (designs, validation) and the dry run."""

from __future__ import annotations

import asyncio
import hashlib

import pandas as pd
import pytest

from judgewise.errors import ConfigError, InputError
from judgewise.judges.base import Comparison, Game, JudgeResult, Verdict
from judgewise.pipeline import build_job, load_config
from judgewise.judges.estimate import estimate_run
from judgewise.judges.openai_backend import Prices
from judgewise.judges.runner import (RunSettings, arun_judging, average_orders, canonical_json, game_key, plan_games,
                                     run_judging, swap_consistency)
from judgewise.judges.scheduler import RetryPolicy
from judgewise.store.judgments import JudgmentStore

from tests.support.fault_server import FaultServer
from tests.support.judging import comparisons, llm_judge, write_responses

LABELS = {2: "A>>B", 0: "A=B", -2: "B>>A"}


class FirstShownWins:
    """A maximally position-biased judge: the response shown first always wins, strongly."""

    identity = {"name": "first-shown-wins"}

    async def judge(self, game: Game) -> JudgeResult:
        return JudgeResult(verdict=Verdict(outcome=1.0, verdict5=2, label=LABELS[2]), raw="[[A>>B]]")


def test_one_order_per_comparison_is_a_seeded_coin():
    comps = comparisons(200)
    picks = [g.swapped for g in plan_games(comps, orders="one", seed=1)]
    assert picks == [g.swapped for g in plan_games(comps, orders="one", seed=1)]
    assert picks != [g.swapped for g in plan_games(comps, orders="one", seed=2)]
    assert 60 < sum(picks) < 140  # a fair coin over 200 comparisons
    both = plan_games(comps, orders="both")
    assert len(both) == 400 and sum(g.swapped for g in both) == 200
    with pytest.raises(ConfigError, match="orders"):
        plan_games(comps, orders="random")


def test_stored_verdicts_are_in_model_a_view_whichever_response_was_shown_first(tmp_path):
    result = run_judging(comparisons(5), FirstShownWins(), tmp_path / "s.sqlite")
    j = result.judgments
    shown_a = j[~j["swapped"]]
    shown_b = j[j["swapped"]]
    assert (shown_a["outcome"] == 1.0).all() and (shown_a["verdict"] == 2).all() and (shown_a["first"] == "alpha").all()
    assert (shown_b["outcome"] == 0.0).all() and (shown_b["verdict"] == -2).all() and (shown_b["first"] == "beta").all()
    assert result.swap_consistency == 0.0  # a purely positional judge never agrees with itself across orders
    assert (result.by_comparison()["outcome"] == 0.5).all()


def test_run_results_add_up_every_counter_and_hold_each_game_once(tmp_path):
    import dataclasses

    from judgewise.judges.runner import RunResult

    comps = comparisons(6)
    first = run_judging(comps[:4], FirstShownWins(), tmp_path / "s.sqlite")
    second = run_judging(comps[2:], FirstShownWins(), tmp_path / "s.sqlite")  # 2 comparisons stored already
    total = first + second
    counters = [f.name for f in dataclasses.fields(RunResult) if f.name not in ("judgments", "stopped")]
    assert {n: getattr(total, n) for n in counters} == {n: getattr(first, n) + getattr(second, n) for n in counters}
    assert (total.n_games, total.judged, total.cached) == (16, 12, 4)  # 4 + 4 comparisons in both orders
    assert len(total.judgments) == 12 and total.judgments["judgment_id"].is_unique
    assert total.ok_total == 12 and total.failed_total == 0
    assert RunResult.combine([first, second]).summary() == total.summary()
    assert RunResult.combine([]).counts() == dict.fromkeys(first.counts(), 0)


def test_run_settings_given_as_an_object_or_as_keywords_judge_the_same_games(tmp_path):
    settings = RunSettings(orders="one", seed=3, concurrency=2)
    by_object = run_judging(comparisons(6), FirstShownWins(), tmp_path / "a.sqlite", settings).judgments
    by_keywords = run_judging(comparisons(6), FirstShownWins(), tmp_path / "b.sqlite", orders="one", seed=3).judgments
    overridden = run_judging(comparisons(6), FirstShownWins(), tmp_path / "c.sqlite", settings, orders="both")
    drop = ["created_at", "latency_s"]
    pd.testing.assert_frame_equal(by_object.drop(columns=drop), by_keywords.drop(columns=drop))
    assert len(by_object) == 6 and overridden.n_games == 12
    assert RunSettings.of(settings, seed=4) == RunSettings(orders="one", seed=4, concurrency=2)
    with pytest.raises(TypeError, match="concurency"):
        run_judging(comparisons(1), FirstShownWins(), tmp_path / "d.sqlite", concurency=4)


def test_average_orders_and_swap_consistency_on_known_cases():
    rows = [  # (prompt, outcome, status): x agrees, y disagrees, z ties twice, w has one failed order
        ("x", 1.0, "ok"), ("x", 0.75, "ok"), ("y", 1.0, "ok"), ("y", 0.0, "ok"),
        ("z", 0.5, "ok"), ("z", 0.5, "ok"), ("w", 1.0, "ok"), ("w", None, "failed")]
    frame = pd.DataFrame([{"prompt_id": p, "model_a": "a", "model_b": "b", "judge": "j", "outcome": o,
                           "status": s} for p, o, s in rows])
    avg = average_orders(frame).set_index("prompt_id")
    assert avg.loc["x", "outcome"] == 0.875 and avg.loc["y", "outcome"] == 0.5 and avg.loc["w", "outcome"] == 1.0
    assert bool(avg.loc["x", "consistent"]) and not bool(avg.loc["y", "consistent"])
    assert bool(avg.loc["z", "consistent"]) and pd.isna(avg.loc["w", "consistent"])
    assert avg.loc["w", "n_failed"] == 1 and avg.loc["w", "n_judged"] == 1
    assert swap_consistency(frame) == pytest.approx(2 / 3)


def test_store_key_depends_on_judge_identity_order_and_content():
    c = comparisons(2)
    base = game_key({"model": "m", "template": "t", "template_version": "1"}, Game(c[0]))
    assert base == game_key({"template_version": "1", "template": "t", "model": "m"}, Game(c[0]))
    assert base != game_key({"model": "m", "template": "t", "template_version": "2"}, Game(c[0]))
    assert base != game_key({"model": "m", "template": "t", "template_version": "1"}, Game(c[0], swapped=True))
    assert base != game_key({"model": "m", "template": "t", "template_version": "1"}, Game(c[1]))


def test_a_store_key_is_the_hash_of_the_games_canonical_json_as_stores_already_hold_it():
    """Keys stored by earlier versions must still be found: sha256 of canonical_json of the whole payload, the
    identity under "judge", however the key is put together (the identity's JSON given or not)."""
    identity = {"model": "m", "template": "t", "params": {"temperature": 0.0}, "name": "é"}
    turns = (("q1", "a1", "b1", None),)
    for comp in [*comparisons(2), Comparison("p", "x", "a", "b", "ra", "rb", reference="ref", turns=turns)]:
        for game in (Game(comp), Game(comp, swapped=True)):
            c = game.comparison
            payload = {"judge": identity, "prompt_id": c.prompt_id, "prompt": c.prompt, "reference": c.reference,
                       "model_a": c.model_a, "model_b": c.model_b, "response_a": c.response_a,
                       "response_b": c.response_b, "swapped": game.swapped}
            if c.turns:
                payload["turns"] = [list(t) for t in c.turns]
            expected = hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()
            assert game_key(identity, game) == expected == game_key(identity, game, None, canonical_json(identity))


def _config(tmp_path, **extra) -> dict:
    write_responses(tmp_path, 3, ["m1", "m2", "m3", "m4"])
    return {"responses": str(tmp_path / "responses.jsonl"), "store": str(tmp_path / "s.sqlite"),
            "judge": {"backend": "openai", "model": "judge-model", "base_url": "http://127.0.0.1:9/v1"}, **extra}


def test_config_designs_give_the_expected_number_of_comparisons(tmp_path):
    assert len(build_job(_config(tmp_path)).comparisons) == 3 * 6  # all pairs of 4 models on 3 prompts
    anchor = build_job(_config(tmp_path, design={"name": "anchor", "anchor": "m2"}))
    assert len(anchor.comparisons) == 3 * 3 and all(c.model_b == "m2" for c in anchor.comparisons)
    with pytest.raises(ConfigError, match="anchor"):
        build_job(_config(tmp_path, design={"name": "anchor", "anchor": "nobody"}))


def test_missing_responses_are_counted_not_dropped_silently(tmp_path):
    cfg = _config(tmp_path)
    frame = pd.read_json(cfg["responses"], lines=True)
    frame[~((frame["model"] == "m4") & (frame["prompt_id"] == "p0"))].to_json(cfg["responses"], orient="records",
                                                                            lines=True)
    job = build_job(cfg)
    assert len(job.comparisons) == 18 - 3 and len(job.skipped) == 3
    assert all("no response from ['m4']" in s for s in job.skipped)


def test_config_rejects_unknown_keys_and_names_them(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['judg'\]"):
        load_config({"responses": "r.jsonl", "judge": {}, "judg": {}})
    with pytest.raises(ConfigError, match=r"\['concurency'\] in limits"):
        load_config({"responses": "r.jsonl", "judge": {}, "limits": {"concurency": 3}})
    with pytest.raises(ConfigError, match="JW_NOT_SET_ANYWHERE"):
        build_job(_config(tmp_path, judge={"backend": "openai", "model": "m", "api_key_env": "JW_NOT_SET_ANYWHERE"}))


@pytest.mark.parametrize("bad", [0, -1, 2.5, "3"])
def test_max_prompts_must_be_a_positive_integer(tmp_path, bad):
    with pytest.raises(ConfigError, match="max_prompts"):  # -1 used to drop the last prompt, 0 to keep all
        build_job(_config(tmp_path, max_prompts=bad))


def test_an_unreadable_prompts_file_is_an_input_error_naming_it(tmp_path):
    (tmp_path / "broken.jsonl").write_text('{"prompt_id": "p0", "prompt": \n', encoding="utf-8")
    for name in ("missing.jsonl", "broken.jsonl"):
        with pytest.raises(InputError, match=name):
            build_job(_config(tmp_path, prompts=str(tmp_path / name)))


def test_a_prompts_table_is_read_as_rank_by_reads_it(tmp_path):
    from judgewise.commands.grouping import read_prompts

    # CSV ids are text (as the responses keep them), the id field is any of io.prompts.ID_FIELDS
    (tmp_path / "prompts.csv").write_text("question_id,prompt\np0,Say zero.\np1,Say one.\np2,Say two.\n",
                                          encoding="utf-8")
    job = build_job(_config(tmp_path, prompts=str(tmp_path / "prompts.csv")))
    assert {c.prompt_id: c.prompt for c in job.comparisons} == {"p0": "Say zero.", "p1": "Say one.", "p2": "Say two."}
    (tmp_path / "prompts.txt").write_text("p0\n", encoding="utf-8")
    with pytest.raises(InputError) as judged:
        build_job(_config(tmp_path, prompts=str(tmp_path / "prompts.txt")))
    with pytest.raises(InputError) as grouped:
        read_prompts(tmp_path / "prompts.txt")
    assert str(judged.value) == str(grouped.value) == (f"{tmp_path / 'prompts.txt'}: expected a .jsonl, .json, .csv "
                                                       "or .parquet table, found '.txt'")


def test_an_endpoint_setting_without_base_url_is_an_error_not_a_silent_local_judge():
    from judgewise.pipeline import build_judge

    with pytest.raises(ConfigError, match=r"\['model', 'api_key_env'\].*backend: openai"):
        build_judge({"model": "gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"})


def test_dry_run_counts_calls_and_prices_them_before_any_call(tmp_path):
    comps = comparisons(10)
    with FaultServer() as srv:
        judge = llm_judge(srv.url, prices=Prices(input_per_mtok=1.0, output_per_mtok=4.0))
        with JudgmentStore(tmp_path / "s.sqlite") as store:
            est = estimate_run(comps, judge, store, concurrency=4)
            assert sum(srv.requests.values()) == 0  # nothing was called
            assert (est.games, est.calls, est.cached) == (20, 20, 0)
            assert est.cost == pytest.approx((est.tokens_in * 1.0 + est.tokens_out * 4.0) / 1e6)
            run_judging(comps, judge, store)
            again = estimate_run(comps, judge, store)
    assert (again.calls, again.cached, again.cost) == (0, 20, 0.0)


def test_dry_run_with_retry_failed_counts_the_failed_games_it_will_judge_again(tmp_path):
    comps = comparisons(5)
    with FaultServer(fault_fn=lambda messages, seen: "500") as srv:  # every game ends failed
        run_judging(comps, llm_judge(srv.url), tmp_path / "s.sqlite", retry=RetryPolicy(max_attempts=1))
    with FaultServer() as srv, JudgmentStore(tmp_path / "s.sqlite") as store:
        judge = llm_judge(srv.url)
        assert estimate_run(comps, judge, store).calls == 0
        est = estimate_run(comps, judge, store, retry_failed=True)
        assert (est.calls, est.cached) == (10, 0)
        assert run_judging(comps, judge, store, retry_failed=True).calls_made == est.calls


def test_a_tournament_asks_the_engine_round_by_round_and_a_rerun_pays_nothing(tmp_path):
    import numpy as np

    from judgewise.designs import make_design
    from judgewise.pipeline import build_judge, load_pool
    from judgewise.judges.engine_verdicts import EngineVerdicts

    cfg = load_config(_config(tmp_path, design={"name": "tournament"}))
    pool = load_pool(cfg)
    judge = build_judge({"backend": "simulated", "ratings": {"m1": 900, "m2": 1000, "m3": 1100, "m4": 1200}})
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        first = EngineVerdicts(pool, judge, store)
        run = make_design("tournament").run(pool.models, pool.prompt_ids, first, np.random.default_rng(0))
        again = EngineVerdicts(pool, judge, store)
        make_design("tournament").run(pool.models, pool.prompt_ids, again, np.random.default_rng(0))
    assert run.n_calls == (4 - 1) * 3  # (n - 1) matches per prompt (Arena-lite Alg. 1)
    assert first.summary()["judged"] == 2 * run.n_calls and first.summary()["rounds"] >= 2
    assert again.summary()["judged"] == 0 and again.summary()["cached"] == 2 * run.n_calls


def test_soft_preference_from_logprobs_is_stored_in_model_a_view(tmp_path):
    from judgewise.judges.llm_judge import LLMJudge
    from judgewise.judges.openai_backend import OpenAIBackend

    answer = lambda messages: "Output (a)"  # noqa: E731
    with FaultServer(answer=answer, candidates={"a": {"a": 0.7, "b": 0.3}}) as srv:
        judge = LLMJudge(OpenAIBackend("judge-model", base_urls=srv.url, logprobs=True), "llmbar_binary",
                         want_logprobs=True)
        j = run_judging(comparisons(3), judge, tmp_path / "s.sqlite").judgments
    assert j.loc[~j["swapped"], "soft"].round(6).tolist() == [0.7] * 3  # P(shown first better) = p(a)
    assert j.loc[j["swapped"], "soft"].round(6).tolist() == [0.3] * 3   # model_a was shown second
    assert j.loc[~j["swapped"], "outcome"].tolist() == [1.0] * 3 and j.loc[j["swapped"], "outcome"].tolist() == [0.0] * 3


class BreaksOnThirdGame:
    """A judge that takes a moment per game and raises an unexpected error on its third game."""

    identity = {"name": "breaks-on-third"}

    def __init__(self):
        self.started = 0

    async def judge(self, game: Game) -> JudgeResult:
        self.started += 1
        if self.started == 3:
            raise ValueError("judge bug")
        await asyncio.sleep(0.02)
        return JudgeResult(verdict=Verdict(outcome=1.0, verdict5=2, label=LABELS[2]), raw="[[A>>B]]")


def test_an_unexpected_judge_error_stops_every_worker_and_releases_their_claims(tmp_path):
    judge, path = BreaksOnThirdGame(), tmp_path / "s.sqlite"

    async def caller():  # an application's event loop that lives on after the failed run
        with pytest.raises(ValueError, match="judge bug"):
            await arun_judging(comparisons(20), judge, path, concurrency=4)
        started = judge.started
        await asyncio.sleep(0.3)
        return started

    started = asyncio.run(caller())
    assert judge.started == started < 40  # no worker went on judging after the run raised
    with JudgmentStore(path) as store:
        assert store.stats()["in_flight_claims"] == 0


def test_a_local_judge_from_config_is_the_embedded_judge_with_its_defaults():
    from judgewise.pipeline import build_judge
    from judgewise.judges.local_backend import embedded_judge

    from_config, embedded = build_judge({"backend": "local"}), embedded_judge()
    assert from_config.identity == embedded.identity  # same template, grammar and backend: same store keys
    assert from_config.template.name == "llmbar_binary" and from_config.use_grammar
    assert build_judge({"template": "clb_confidence", "max_tokens": 16}).identity == \
        embedded_judge("clb_confidence", max_tokens=16).identity


def test_repeated_comparisons_are_judged_once_and_counted(tmp_path):
    comps = comparisons(3)
    result = run_judging([*comps, comps[0]], FirstShownWins(), tmp_path / "s.sqlite")
    summary = result.summary()
    assert summary["games"] == 8 and summary["duplicates"] == 2 and len(result.judgments) == 6
    assert summary["judged"] + summary["failed"] + summary["cached"] + summary["duplicates"] == summary["games"]
