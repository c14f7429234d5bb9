"""Multi-round designs run through the real judging engine (SQLite store) with the simulated judge."""

import numpy as np
import pandas as pd

from judgewise.designs import make_design
from judgewise.designs.engine import engine_verdicts
from judgewise.judges.simulated import SimulatedJudge
from judgewise.store.judgments import JudgmentStore


def responses(models, prompts):
    return pd.DataFrame([(p, m, f"{m} answers {p}") for p in prompts for m in models],
                        columns=["prompt_id", "model", "text"])


def test_tournament_through_the_engine_stores_n_minus_1_comparisons_per_prompt(tmp_path):
    models, prompts = [f"m{i}" for i in range(5)], [f"x{i}" for i in range(4)]
    judge = SimulatedJudge({m: 1400 - 100 * i for i, m in enumerate(models)}, p_judge=0.9, seed=1)
    store_path = tmp_path / "judgments.sqlite"
    verdicts = engine_verdicts(judge, str(store_path), responses(models, prompts), models, prompts, orders="one")
    run = make_design("tournament").run(models, prompts, verdicts, np.random.default_rng(0))
    assert run.n_calls == 4 * 4
    assert np.isfinite(run.outcome).all()
    with JudgmentStore(str(store_path)) as store:
        stored = store.frame()
    assert len(stored) == 16  # one game per comparison, every round durable in the store


def test_binary_insertion_through_the_engine_uses_stored_judgments(tmp_path):
    board, prompts = [f"m{i}" for i in range(4)], [f"x{i}" for i in range(40)]
    ratings = {m: 1600 - 200 * i for i, m in enumerate(board)} | {"new": 1300}
    judge = SimulatedJudge(ratings, p_judge=1.0, seed=2)
    pool = board + ["new"]
    verdicts = engine_verdicts(judge, str(tmp_path / "s.sqlite"), responses(pool, prompts), pool, prompts,
                               orders="both")
    run = make_design("insert-binary", leaderboard=board, new_model="new").run(pool, prompts, verdicts,
                                                                              np.random.default_rng(3))
    assert run.info["position"] == 2


def test_engine_verdicts_is_the_rounds_engine_and_rejects_a_missing_response(tmp_path):
    import pytest

    from judgewise.errors import InputError
    from judgewise.judges.engine_verdicts import EngineVerdicts
    models, prompts = ["m0", "m1", "m2"], ["x0", "x1"]
    judge = SimulatedJudge({"m0": 1400, "m1": 1300, "m2": 1200}, p_judge=0.9, seed=1)
    table = responses(models, prompts)
    verdicts = engine_verdicts(judge, str(tmp_path / "s.sqlite"), table[table.model != "m2"], models, prompts,
                               orders="one")
    assert isinstance(verdicts.engine, EngineVerdicts)
    assert np.isfinite(verdicts(np.array([0, 1]), np.array([0, 0]), np.array([1, 1]))).all()
    assert verdicts.engine.summary()["rounds"] == 1
    with pytest.raises(InputError, match="m2"):
        verdicts(np.array([0]), np.array([0]), np.array([2]))


def test_engine_verdicts_builds_its_answer_lookup_once_not_every_round(tmp_path):
    models, prompts = ["m0", "m1", "m2"], ["x0", "x1", "x2"]
    judge = SimulatedJudge({"m0": 1400, "m1": 1300, "m2": 1200}, p_judge=0.9, seed=1)
    verdicts = engine_verdicts(judge, str(tmp_path / "s.sqlite"), responses(models, prompts), models, prompts,
                               orders="one")
    verdicts(np.array([0]), np.array([0]), np.array([1]))
    lookup = verdicts.engine.answers
    assert lookup.texts[("x0", "m1")] == "m1 answers x0"
    second = verdicts(np.array([1, 2]), np.array([1, 0]), np.array([2, 2]))
    assert np.isfinite(second).all() and verdicts.engine.answers is lookup  # the same index, round after round
    assert verdicts.engine.summary()["rounds"] == 2
