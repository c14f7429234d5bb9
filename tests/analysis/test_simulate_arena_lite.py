"""``simulate`` runs Arena-lite's own comparison: the tournament against the baseline-mediated method (win rate
against an external reference model, §4.2 step 5) and both insertion designs (§5.3, App. A.6)."""

from __future__ import annotations

import numpy as np
import pytest

from judgewise.designs.catalog import make_design
from tests.support import cli_json


@pytest.mark.slow
def test_the_tournament_beats_the_external_reference_baseline_at_every_judge_accuracy():
    # the direction of Arena-lite Fig. 2, from the CLI, on common random truths
    rows = cli_json("simulate", "--designs", "tournament,baseline", "--n-model", "12", "--prompts", "50",
                    "--p-judge", "0.6,0.7,0.8,0.9", "--trials", "24", "--executor", "serial", "--json")
    by = {(r["label"], r["p_judge"]): r for r in rows}
    for p in (0.6, 0.7, 0.8, 0.9):
        assert by[("tournament", p)]["spearman"] > by[("baseline", p)]["spearman"], p
        assert by[("tournament", p)]["calls"] == 11 * 50 and by[("baseline", p)]["calls"] == 12 * 50


def test_both_insertion_designs_run_from_simulate_and_place_the_newcomer():
    rows = cli_json("simulate", "--designs", "insert-binary,insert-anchor", "--n-model", "6", "--prompts", "400",
                    "--p-judge", "1.0", "--trials", "12", "--executor", "serial", "--json")
    by = {r["label"]: r for r in rows}
    assert by["insert-anchor"]["calls"] == 400  # |X| calls against one anchor
    assert by["insert-binary"]["calls"] <= 2 * 400
    for r in rows:
        assert 0 <= r["placement_error"] < 1.0 and r["placed_exactly"] >= 0.5 and r["spearman"] > 0.9


def test_binary_insertion_does_not_flag_a_tie_where_the_newcomer_never_played():
    # Alg. 2 with |L| = 4, |X| = 4: 2 matches per probe, 8 prompts in the queue (4 probes). The probe at L1 ties
    # three times, then loses: the next probe (L2) has no prompts left. Before, that was "a tie at L2".
    board = ["L0", "L1", "L2", "L3"]
    script = iter([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    played = []

    def verdicts(prompt, a, b):
        played.append(int(b[0]))
        return np.array(next(script))

    run = make_design("insert-binary", leaderboard=board, new_model="new").run(
        board + ["new"], [f"x{i}" for i in range(4)], verdicts, np.random.default_rng(0))
    assert played == [1, 1, 1, 1]
    assert run.info["tie"] is False and run.info["prompts_exhausted"] is True
    assert run.info["position"] == 2  # below L1, which it lost to; never compared with L2


def test_judge_prints_the_designs_own_information_in_text_and_json(tmp_path):
    import json

    import yaml

    from tests.support import run_cli
    from tests.support.judging import simulated_pool as _simulated_pool

    cfg = {**_simulated_pool(tmp_path, 5, 12), "design": {"name": "tournament"}}
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    res = run_cli("judge", "--config", tmp_path / "t.yaml", "--no-progress", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    counts = out["design_info"]["champion_counts"]
    assert set(counts) == {f"m{i}" for i in range(5)} and sum(counts.values()) == 12  # one champion per prompt
    assert out["games"] == 2 * (5 - 1) * 12  # (n − 1)·|X| comparisons, each in both orders by default
    ins = {**_simulated_pool(tmp_path, 5, 12), "store": str(tmp_path / "i.sqlite"),
           "design": {"name": "insert-binary", "leaderboard": ["m4", "m3", "m2", "m1"], "new_model": "m0"}}
    (tmp_path / "i.yaml").write_text(yaml.safe_dump(ins), encoding="utf-8")
    text = run_cli("judge", "--config", tmp_path / "i.yaml", "--no-progress", cwd=tmp_path)
    data = json.loads(run_cli("judge", "--config", tmp_path / "i.yaml", "--no-progress", "--json",
                              cwd=tmp_path).stdout)
    probes = data["design_info"]["probes"]
    assert probes and all({"against", "wins", "matches"} <= set(p) for p in probes)
    assert sum(line.strip().startswith("probe ") for line in text.stdout.splitlines()) == len(probes)


def test_simulate_says_why_adaptive_shows_more_prompts_than_asked():
    from tests.support import run_cli

    args = ["simulate", "--designs", "tournament,adaptive", "--n-model", "4", "--prompts", "20", "--trials", "1",
            "--executor", "serial"]
    res = run_cli(*args)
    assert res.returncode == 0, res.stderr
    rows = {line.split()[0]: line.split() for line in res.stdout.splitlines() if line.split()[:1] in (["tournament"], ["adaptive"])}
    assert rows["tournament"][2] == "20" and rows["adaptive"][2] == "500" and rows["adaptive"][4] == rows["tournament"][4]
    assert "adaptive: n_prompts is the pool it chooses from" in res.stdout
    alone = run_cli(*args[:2], "tournament", *args[3:])
    assert alone.returncode == 0 and "pool it chooses" not in alone.stdout
