"""``judgewise rank`` on Arena-Hard-Auto games files reproduces Arena-Hard's own ``show_result.py`` from the CLI.

The oracles below are independent re-implementations, written for this test, of what lmarena/arena-hard-auto
computes (read from its ``show_result.py`` and ``utils_math.py``; FastChat's ``elo_analysis.py`` style control is
the same fit):

* v0.1 ``show_result.py``: each game becomes a battle baseline (model_a) vs model (model_b), repeated 3 times for a
  strong label; ``compute_mle_elo`` fits an unpenalised logistic regression on the battles written twice (a tie
  once as each side's win), columns ±ln 10, Elo = 400·coef + 1000 shifted so the baseline is 1000; the leaderboard
  score is the predicted win rate against the baseline.
* v2.0 ``show_result.py``: ``label_to_score`` (``A<<B`` = 0 three times, ``B<A`` = 1, ...), the score of a model is
  the mean of its scores (their printed figure is the mean of 100 unseeded bootstrap means, whose expectation this
  is).
* style control (``construct_style_matrices`` + ``fit_bt``): features (a − b)/(a + b + 1) of token_len and the
  summed header/list/bold counts of baseline (a) and model (b), z-scored (ddof 0) over the battles, fitted by
  scikit-learn's default ``LogisticRegression`` (L2, C = 1) on the same doubled battles.

The games files are rebuilt from ``../shared/data/arenahard/battles.jsonl``, which is show_result's own battle
output (each strong verdict written 3 times): the first test checks that the rebuilt games expand back to it.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from tests.support import cli_json
from tests.support.oracles import markdown_counts

BASELINE = "claude-3-haiku-20240307"
V2_BASELINE = "o3-mini-2025-01-31"  # v2.0's hard-prompt baseline (arena-hard-auto JUDGE_SETTINGS)
JUDGE = "gpt-4-1106-preview"
WEIGHT = 3

# Game 1 shows the baseline as A, game 2 the model as A; the battle's model_a is the baseline.
GAME1_LABEL = {("model_a", 1): "A>B", ("model_a", 3): "A>>B", ("model_b", 1): "B>A", ("model_b", 3): "B>>A",
               ("tie", 1): "A=B"}
GAME2_LABEL = {("model_b", 1): "A>B", ("model_b", 3): "A>>B", ("model_a", 1): "B>A", ("model_a", 3): "B>>A",
               ("tie", 1): "A=B"}
V2_SPELLING = {"B>>A": "A<<B", "B>A": "A<B", "A>B": "B<A", "A>>B": "B<<A"}  # same meaning, v2.0 accepts both


# --- building the games files ---------------------------------------------------------------------------------

def _split_games(winners: list[str]) -> tuple[list[str], list[str]]:
    """The two games behind one (question, model) run of battles: 1 or 3 rows each, game 1 first."""
    if len(winners) == 2:
        return winners[:1], winners[1:]
    if len(winners) == 6 or winners[0] == winners[1]:
        return winners[:3], winners[3:]
    return winners[:1], winners[1:]


def rebuilt_records(shared: Path) -> list[dict]:
    """v0.1 judgment records ``{question_id, model, judge, games}`` whose battles are battles.jsonl."""
    battles = [json.loads(line) for line in (shared / "data/arenahard/battles.jsonl").open()]
    records = []
    for (qid, model), run in itertools.groupby(battles, key=lambda b: (b["question_id"], b["model_b"])):
        game1, game2 = _split_games([b["winner"] for b in run])
        assert len(set(game1)) == 1 and len(set(game2)) == 1
        records.append({"question_id": qid, "model": model, "judge": JUDGE,
                        "games": [{"score": GAME1_LABEL[(game1[0], len(game1))]},
                                  {"score": GAME2_LABEL[(game2[0], len(game2))]}]})
    return records


def v2_records(records: list[dict]) -> list[dict]:
    """The same judgments in v2.0's layout: ``uid`` and ``category``, the other label spellings on odd rows."""
    out = []
    for i, rec in enumerate(records):
        games = [{"score": V2_SPELLING.get(g["score"], g["score"]) if i % 2 else g["score"]} for g in rec["games"]]
        out.append({"uid": f"q{rec['question_id']}", "category": "hard_prompt", "model": rec["model"],
                    "judge": "gpt-4.1", "games": games})
    return out


def write_judgments(folder: Path, records: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for model, recs in itertools.groupby(sorted(records, key=lambda r: r["model"]), key=lambda r: r["model"]):
        (folder / f"{model}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return folder


# --- the oracles ----------------------------------------------------------------------------------------------

def v01_battles(records: list[dict], baseline: str) -> list[dict]:
    """show_result v0.1: battles baseline vs model, a strong label repeated WEIGHT times, other labels dropped."""
    game1 = {"A=B": ("tie", 1), "A>B": ("model_a", 1), "A>>B": ("model_a", WEIGHT), "B>A": ("model_b", 1),
             "B>>A": ("model_b", WEIGHT)}
    game2 = {"A=B": ("tie", 1), "A>B": ("model_b", 1), "A>>B": ("model_b", WEIGHT), "B>A": ("model_a", 1),
             "B>>A": ("model_a", WEIGHT)}
    battles = []
    for rec in records:
        for table, game in zip((game1, game2), rec["games"]):
            winner, times = table.get(game["score"], (None, 0))
            battles += [{"question_id": rec["question_id"], "model_a": baseline, "model_b": rec["model"],
                         "winner": winner}] * times
    return battles


def doubled_design(battles: list[dict]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Models, X (±ln 10 columns) and Y of the battles written twice, a tie once as each side's win."""
    models = list(dict.fromkeys([b["model_a"] for b in battles] + [b["model_b"] for b in battles]))
    index = {m: i for i, m in enumerate(models)}
    n = len(battles)
    x = np.zeros((2 * n, len(models)))
    y = np.zeros(2 * n)
    for i, b in enumerate(battles):
        for row in (i, i + n):
            x[row, index[b["model_a"]]] = math.log(10)
            x[row, index[b["model_b"]]] = -math.log(10)
        y[i] = y[i + n] = b["winner"] == "model_a"
        if b["winner"] == "tie":
            y[i] = 1.0
    return models, x, y


def mle_elo(battles: list[dict], baseline: str) -> dict[str, float]:
    """compute_mle_elo: unpenalised logistic regression, 400·coef + 1000, the baseline moved to 1000."""
    models, x, y = doubled_design(battles)
    coef = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-10, max_iter=10_000).fit(x, y).coef_[0]
    elo = 400 * coef + 1000
    elo += 1000 - elo[models.index(baseline)]
    return dict(zip(models, elo))


def winrate_from_elo(elo: dict[str, float], baseline: str) -> dict[str, float]:
    """predict_win_rate against the baseline, in %."""
    return {m: 100 / (1 + 10 ** ((elo[baseline] - e) / 400)) for m, e in elo.items()}


def v2_scores(records: list[dict]) -> dict[str, float]:
    """show_result v2.0: label_to_score (weight 3 for strong labels), the model's mean score in %."""
    label = {"A>B": [1], "A>>B": [1] * WEIGHT, "A=B": [0.5], "A<<B": [0] * WEIGHT, "A<B": [0], "B>A": [0],
             "B>>A": [0] * WEIGHT, "B=A": [0.5], "B<<A": [1] * WEIGHT, "B<A": [1]}
    scores: dict[str, list[float]] = {}
    for rec in records:
        game1, game2 = (g["score"] for g in rec["games"])
        scores.setdefault(rec["model"], []).extend(label[game2] + [1 - s for s in label[game1]])
    return {m: 100 * float(np.mean(s)) for m, s in scores.items()}


# --- answers with Arena-Hard's style metadata -----------------------------------------------------------------

def write_answers(folder: Path, records: list[dict], shared: Path) -> dict:
    """model_answer/<model>.jsonl for every model of ``records`` with real answer texts of ../shared (each model a
    different source or question offset) and metadata; token_len is a word count standing in for tiktoken."""
    sources = [json.loads(line) for f in sorted((shared / "data/arenahard/model_answer").glob("*.jsonl"))
               for line in f.open()]
    texts = [r["messages"][-1]["content"]["answer"] for r in sources]
    models = sorted({r["model"] for r in records} | {BASELINE})
    questions = sorted({r["question_id"] for r in records})
    metadata: dict = {}
    folder.mkdir(parents=True, exist_ok=True)
    for k, model in enumerate(models):
        lines = []
        for j, qid in enumerate(questions):
            text = texts[(j * 7 + k * 311) % len(texts)]
            meta = {"token_len": len(text.split()), **markdown_counts(text)}
            metadata[(model, qid)] = meta
            lines.append(json.dumps({"question_id": qid, "model_id": model, "conv_metadata": meta,
                                     "choices": [{"turns": [{"content": text}]}]}))
        (folder / f"{model}.jsonl").write_text("\n".join(lines) + "\n")
    return metadata


def style_control_elo(battles: list[dict], metadata: dict, baseline: str) -> tuple[dict, np.ndarray]:
    """construct_style_matrices(add_one=True) + fit_bt: Elo (baseline moved to 1000) and the 4 coefficients."""
    models, x, y = doubled_design(battles)

    def counts(model, qid):
        meta = metadata[(model, qid)]
        return [meta["token_len"]] + [sum(meta[k].values()) for k in ("header_count", "list_count", "bold_count")]

    a = np.array([counts(b["model_a"], b["question_id"]) for b in battles], dtype=float)
    b = np.array([counts(b["model_b"], b["question_id"]) for b in battles], dtype=float)
    diff = np.vstack([(a - b) / (a + b + 1)] * 2)
    style = (diff - diff.mean(axis=0)) / diff.std(axis=0)
    fit = LogisticRegression(fit_intercept=False, tol=1e-10, max_iter=10_000).fit(np.hstack([x, style]), y)
    elo = 400 * fit.coef_[0][:len(models)] + 1000
    elo += 1000 - elo[models.index(baseline)]  # fit_bt pins the baseline at 1114; only differences matter here
    return dict(zip(models, elo)), fit.coef_[0][len(models):]


# --- helpers --------------------------------------------------------------------------------------------------

class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run_cli(*args) -> Result:
    """The console script's entry point (``judgewise.cli.app.main``: parsing, errors, exit codes) in this process,
    its output captured; one test below runs the real subprocess too."""
    import contextlib
    import io

    from judgewise.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return Result(code, out.getvalue(), err.getvalue())


def ranked(*args) -> dict[str, dict]:
    res = run_cli("rank", *args, "--json")
    assert res.returncode == 0, res.stderr
    return {r["model"]: r for r in json.loads(res.stdout)}


def assert_close(got: dict[str, dict], key: str, expected: dict[str, float], tol: float = 0.01) -> None:
    assert set(got) == set(expected)
    for model, value in expected.items():
        assert got[model][key] == pytest.approx(value, abs=tol), (model, key)


@pytest.fixture(scope="module")
def records(shared) -> list[dict]:
    return rebuilt_records(shared)


@pytest.fixture(scope="module")
def v01_bench(records, tmp_path_factory) -> Path:
    return write_judgments(tmp_path_factory.mktemp("v01") / "model_judgment" / JUDGE, records)


# --- tests ----------------------------------------------------------------------------------------------------

def test_rebuilt_games_expand_back_to_the_battles_file(shared, records):
    battles = [json.loads(line) for line in (shared / "data/arenahard/battles.jsonl").open()]
    assert v01_battles(records, BASELINE) == battles
    assert len(records) == 480 and {g["score"] for r in records for g in r["games"]} == set(GAME1_LABEL.values())


def test_v01_games_with_a_named_baseline_match_show_result_win_rate_and_elo(records, v01_bench):
    battles = v01_battles(records, BASELINE)
    elo = mle_elo(battles, BASELINE)
    winrate = winrate_from_elo(elo, BASELINE)
    bt = {r["model"]: r for r in cli_json("rank", v01_bench, "--baseline", BASELINE, "--weighting", "arena-hard",
                                          "--json")}  # the real console script, in a subprocess
    assert_close(bt, "score", elo)
    assert_close(bt, "winrate_vs_anchor", winrate)
    wr = ranked(v01_bench, "--baseline", BASELINE, "--weighting", "arena-hard", "--method", "winrate")
    assert_close(wr, "score", winrate)
    default = ranked(v01_bench, "--baseline", BASELINE)  # Arena-Hard games: weighting arena-hard by default
    assert_close(default, "score", elo)
    text = run_cli("rank", v01_bench, "--baseline", BASELINE).stdout
    assert "weighting: arena-hard" in text and f"Elo pinned at {BASELINE} = 1000" in text
    unweighted = ranked(v01_bench, "--baseline", BASELINE, "--weighting", "none", "--method", "winrate")
    once = list({id(b): b for b in battles}.values())  # each game once (v01_battles repeats one dict)
    assert_close(unweighted, "score", winrate_from_elo(mle_elo(once, BASELINE), BASELINE))
    assert max(abs(unweighted[m]["score"] - winrate[m]) for m in winrate) > 1  # the weighting matters here


def test_v20_records_with_uid_v2_labels_and_the_config_baseline_give_the_same_numbers(shared, records, tmp_path):
    v2 = v2_records(records)
    assert any(g["score"] in V2_SPELLING.values() for r in v2 for g in r["games"])
    folder = write_judgments(tmp_path / "arena-hard-v2.0" / "model_judgment" / "gpt-4.1", v2)
    config = shared / "data/arenahard/v2.0/arena-hard-v2.0.yaml"
    expected_wr = v2_scores(v2)
    elo = {m: e for m, e in mle_elo(v01_battles(records, V2_BASELINE), V2_BASELINE).items()}
    wr = ranked(folder, "--arena-hard-config", config, "--method", "winrate")
    assert_close({m: r for m, r in wr.items() if m != V2_BASELINE}, "score", expected_wr)
    assert wr[V2_BASELINE]["score"] == 50
    bt = ranked(folder, "--arena-hard-config", config)
    assert_close(bt, "score", elo)
    assert_close({m: r for m, r in bt.items() if m != V2_BASELINE}, "winrate_vs_anchor", expected_wr)
    no_config = ranked(folder, "--method", "winrate")  # category hard_prompt → o3-mini without the config too
    assert_close({m: r for m, r in no_config.items() if m != V2_BASELINE}, "score", expected_wr)


def test_style_control_on_arena_hard_data_matches_arena_hard_fit(shared, records, tmp_path):
    bench = tmp_path / "arena-hard-v0.1"
    folder = write_judgments(bench / "model_judgment" / JUDGE, records)
    metadata = write_answers(bench / "model_answer", records, shared)
    elo, coefs = style_control_elo(v01_battles(records, BASELINE), metadata, BASELINE)
    res = run_cli("rank", folder, "--baseline", BASELINE, "--style-control", "--json")
    assert res.returncode == 0, res.stderr
    got = {r["model"]: r for r in json.loads(res.stdout)}
    assert_close(got, "score", elo)
    assert_close(got, "winrate_vs_anchor", winrate_from_elo(elo, BASELINE))
    plain = ranked(folder, "--baseline", BASELINE)
    assert max(abs(plain[m]["score"] - elo[m]) for m in elo) > 0.1  # style control moved the ratings
    from judgewise.commands.ranking import RankOptions, rank_path

    info = rank_path(folder, RankOptions(baseline=BASELINE, style_control=True)).ranking.info
    # judgewise's rows take the model's view (features model − baseline, P(model wins)), Arena-Hard's the
    # baseline's (baseline − model, P(baseline wins)): both signs flip, so the coefficients are the same
    assert np.allclose([info["coefficients"][k] for k in ("length", "headers", "lists", "bold")], coefs, atol=1e-4)
    assert info["style"]["definition"] == "arena-hard" and "metadata" in info["style"]["counts"]


def test_style_definition_judgewise_stays_available_and_differs(shared, records, tmp_path):
    bench = tmp_path / "arena-hard-v0.1"
    folder = write_judgments(bench / "model_judgment" / JUDGE, records)
    write_answers(bench / "model_answer", records, shared)
    from judgewise.commands.ranking import RankOptions, rank_path

    arena = rank_path(folder, RankOptions(baseline=BASELINE, style_control=True)).ranking
    mine = rank_path(folder, RankOptions(baseline=BASELINE, style_control=True, style_definition="judgewise")).ranking
    assert mine.info["style"]["definition"] == "judgewise" and "texts" in mine.info["style"]["counts"]
    assert mine.info["l2"] != arena.info["l2"]
    assert not np.allclose(mine.scores, arena.scores, atol=0.01)


def test_null_labels_are_failed_games_unknown_labels_bad_rows_and_v20_drops_the_partner(tmp_path):
    rows = [{"question_id": 1, "model": "m", "games": [{"score": None}, {"score": "A>B"}]},
            {"question_id": 2, "model": "m", "games": [{"score": "B>A"}, {"score": "B>A"}]},
            {"question_id": 3, "model": "m", "games": [{"score": "B>>A"}, {"score": "A=B"}]}]
    v1 = write_judgments(tmp_path / "v1" / "j", rows)
    got = ranked(v1, "--method", "winrate")
    assert got["m"]["n_games"] == 1 + 1 + 1 + 3 * 1 + 1  # games kept: A>B, B>A, B>A, B>>A (x3), A=B
    res = run_cli("rank", v1, "--method", "winrate")
    assert res.returncode == 0 and "skipped 1" in res.stdout and "no verdict" in res.stdout + res.stderr
    v2 = write_judgments(tmp_path / "v2" / "j", [{**{k: v for k, v in r.items() if k != "question_id"},
                                                  "uid": str(r["question_id"]), "category": "arena-hard-v0.1"}
                                                 for r in rows])
    got2 = ranked(v2, "--method", "winrate")
    assert got2["m"]["n_games"] == 1 + 1 + 3 + 1  # questions 2 and 3: v2.0 drops a record with a failed game
    assert "gpt-4-0314" in got2  # the v0.1 category's baseline
    # a label Arena-Hard's parser cannot write is bad input: an error by row and field, or skipped and counted
    bad = write_judgments(tmp_path / "bad" / "j", [rows[0], {**rows[1], "games": [{"score": "A>>>B"},
                                                                                  {"score": "B>A"}]}, rows[2]])
    res = run_cli("rank", bad, "--method", "winrate")
    assert res.returncode == 2 and "row 2" in res.stderr and "games[0].score" in res.stderr and "A>>>B" in res.stderr
    res = run_cli("rank", bad, "--method", "winrate", "--skip-invalid")
    assert res.returncode == 0 and "skipped" in res.stdout


def test_unknown_category_and_misplaced_options_are_clear_errors(tmp_path):
    folder = write_judgments(tmp_path / "j", [{"uid": "1", "category": "poetry", "model": "m",
                                               "games": [{"score": "A>B"}, {"score": "B>A"}]}])
    res = run_cli("rank", folder)
    assert res.returncode != 0 and "poetry" in res.stderr and "--baseline" in res.stderr
    assert ranked(folder, "--baseline", "base")["base"]["score"] is not None
    battles = tmp_path / "battles.jsonl"
    battles.write_text(json.dumps({"question_id": 1, "model_a": "a", "model_b": "b", "winner": "model_a"}) + "\n")
    res = run_cli("rank", battles, "--baseline", "x")
    assert res.returncode != 0 and "baseline" in res.stderr
    res = run_cli("rank", folder, "--baseline", "b", "--weighting", "triple")
    assert res.returncode != 0 and "--weighting" in res.stderr


def test_style_control_needs_the_bench_answers_and_the_bench_folder_reads_as_its_judgments(shared, records,
                                                                                           v01_bench, tmp_path):
    res = run_cli("rank", v01_bench, "--baseline", BASELINE, "--style-control")
    assert res.returncode != 0 and "model_answer" in res.stderr
    bench = tmp_path / "arena-hard-v0.1"
    write_judgments(bench / "model_judgment" / JUDGE, records)
    write_answers(bench / "model_answer", records, shared)
    from_bench = ranked(bench, "--baseline", BASELINE, "--style-control")
    from_judge = ranked(bench / "model_judgment" / JUDGE, "--baseline", BASELINE, "--style-control")
    assert {m: r["score"] for m, r in from_bench.items()} == {m: r["score"] for m, r in from_judge.items()}


def test_v20_answer_metadata_becomes_the_style_counts(shared):
    from judgewise.io.arenahard import read_answers
    from judgewise.ratings.features import has_style_metadata, response_style

    folder = shared / "data/arenahard/v2.0"
    table = read_answers(folder)
    raw = [json.loads(line) for line in (folder / "model_answer/o3-mini-2025-01-31.jsonl").open()]
    assert has_style_metadata(table.frame) and len(table.frame) == len(raw) == 750
    style = response_style(table.frame, use_metadata=True)
    for rec in raw[:50]:
        meta = rec["metadata"]
        expected = [meta["token_len"]] + [sum(meta[k].values()) for k in ("header_count", "list_count", "bold_count")]
        assert style.loc[(rec["uid"], "o3-mini-2025-01-31")].tolist() == expected
    assert not has_style_metadata(read_answers(shared / "data/arenahard").frame)  # v0.1 files carry none
