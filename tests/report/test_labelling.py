"""``judgewise label``'s server over real HTTP on 127.0.0.1 and a real SQLite store: writes refused unless they come
from the page itself with the session's token and a value on the scale (nothing written then), labels read back by
``reliability``, agreement between labellers, the shown order undone before storing."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgewise.analysis.reliability import cohen_kappa, get_metric, krippendorff_alpha
from judgewise.commands.labels import label_task
from judgewise.io import read_judgments
from judgewise.report import build_report
from judgewise.report.document import OK, fmt_num
from judgewise.store.judgments import GameRecord, JudgmentStore
from judgewise.store.labels import HumanLabel, labels_as_scores
from judgewise.store.opening import open_store, open_store_readonly

from tests.support import run_cli
from tests.support.labelling import XSS, make_label_inputs, page_token, request, serving
from tests.support.pg_server import pg_server, pg_url  # noqa: F401 (fixtures)
from tests.support.reports import make_run


@pytest.fixture
def task(tmp_path):
    scores, responses, items = make_label_inputs(tmp_path)
    return label_task(scores, str(tmp_path / "labels.sqlite"), target="judge-x", items=items, responses=responses)


def _stored(task) -> int:
    """Label rows in the task's store (0 when no store file was made)."""
    if not Path(task.store).exists():
        return 0
    with open_store_readonly(task.store) as store:
        return len(store.labels())


ATTACKS = {
    "cross-origin": ({"Origin": "http://evil.example"}, {}),
    "same machine, other port": ({"Origin": "http://127.0.0.1:1"}, {}),
    "no origin": ({"Origin": None}, {}),
    "no token": ({"X-Judgewise-Token": None}, {}),
    "wrong token": ({"X-Judgewise-Token": "guess"}, {}),
    "foreign host": ({"Host": "evil.example"}, {}),
    "rebinding host with port": ({"Host": "evil.example:8766"}, {}),
    "off the scale": ({}, {"value": 4}),
    "zero": ({}, {"value": 0}),
    "a boolean": ({}, {"value": True}),
    "text": ({}, {"value": "1"}),
    "unknown item": ({}, {"item": "../../etc/passwd"}),
    "no labeller": ({}, {"labeller": ""}),
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_refused_write_stores_nothing(task, attack):
    headers, body = ATTACKS[attack]
    with serving(task) as (url, _):
        token = page_token(url)
        label = {"labeller": "ann", "item": task.items[0].item_id, "value": 1, **body}
        status, text = request(url, "POST", "/label", label, {"X-Judgewise-Token": token, **headers})
        assert status in (400, 403), text
        assert "error" in json.loads(text)
        assert _stored(task) == 0
        status, _ = request(url, "POST", "/label", {"labeller": "ann", "item": task.items[0].item_id, "value": 1},
                            {"X-Judgewise-Token": token})
        assert status == 200  # the same write from the page itself is stored
        assert _stored(task) == 1


def test_a_get_or_a_form_post_writes_nothing(task):
    with serving(task) as (url, _):
        token = page_token(url)
        assert request(url, "GET", f"/label?labeller=ann&item={task.items[0].item_id}&value=1")[0] == 404
        form = b"labeller=ann&item=item-00&value=1"
        status, _ = request(url, "POST", "/label", form, {"X-Judgewise-Token": token,
                                                           "Content-Type": "application/x-www-form-urlencoded"})
        assert status == 400
        assert request(url, "GET", "/", headers={"Host": "evil.example"})[0] == 403
    assert _stored(task) == 0


def test_item_texts_and_names_travel_as_json_data_never_in_the_page(task):
    with serving(task) as (url, _):
        status, page = request(url, "GET", "/")
        assert status == 200 and XSS not in page and "<script>window" not in page
        status, text = request(url, "GET", "/state?labeller=%3Cb%3Eann%3C%2Fb%3E")
        state = json.loads(text)
    assert state["labeller"] == "<b>ann</b>"
    assert XSS in state["items"][0]["responses"] and "<" not in text  # JSON escapes every <


def test_the_shown_order_is_undone_before_storing(task):
    with serving(task) as (url, _):
        token = page_token(url)
        state = json.loads(request(url, "GET", "/state?labeller=ann")[1])
        for item in state["items"][:8]:
            assert request(url, "POST", "/label", {"labeller": "ann", "item": item["id"], "value": 1},
                           {"X-Judgewise-Token": token})[0] == 200
    with open_store_readonly(task.store) as store:
        rows = store.labels()
    assert set(rows["shown"]) == {"AB", "BA"}  # both orders drawn over 8 items
    assert (rows["value"] == (rows["shown"] == "AB").astype(float)).all()  # first shown better, in A's view


def _label_all(url, token, labeller: str, pick) -> None:
    state = json.loads(request(url, "GET", f"/state?labeller={labeller}")[1])
    for k, item in enumerate(state["items"]):
        status, text = request(url, "POST", "/label", {"labeller": labeller, "item": item["id"],
                                                       "value": pick(k, item)}, {"X-Judgewise-Token": token})
        assert status == 200, text


def test_reliability_on_the_store_equals_reliability_on_the_labels_as_a_file(task, tmp_path):
    with serving(task) as (url, _):
        token = page_token(url)
        _label_all(url, token, "ann", lambda k, item: 1 + k % 2)
        _label_all(url, token, "bob", lambda k, item: 1 + (k % 3 == 0))
        summary = json.loads(request(url, "GET", "/state?labeller=ann")[1])["summary"]
    with open_store_readonly(task.store) as store:
        rows = store.labels()
    file = tmp_path / "human.csv"
    labels_as_scores(rows).to_csv(file, index=False)
    scores = tmp_path / "scores.csv"
    common = ["reliability", str(scores), "--target", "judge-x", "--metric", "icc,rho,tau", "--json"]
    from_store = json.loads(run_cli(*common, "--human", task.store).stdout)
    from_file = json.loads(run_cli(*common, "--human", str(file)).stdout)
    assert from_store == from_file and from_store["n_items"] == 20
    assert summary["reliability"] == pytest.approx(from_store["values"]["icc"], abs=1e-12)
    lo, hi = summary["interval"]
    assert lo <= summary["reliability"] <= hi


def test_agreement_is_kappa_for_two_labellers_and_alpha_for_three(task):
    picks = {"ann": lambda k, i: 1 + k % 2, "bob": lambda k, i: 1 + (k % 3 == 0), "cy": lambda k, i: 1 + (k < 10)}
    with serving(task) as (url, _):
        token = page_token(url)
        _label_all(url, token, "ann", picks["ann"])
        _label_all(url, token, "bob", picks["bob"])
        two = json.loads(request(url, "GET", "/state?labeller=ann")[1])["summary"]["agreement"]
        _label_all(url, token, "cy", picks["cy"])
        three = json.loads(request(url, "GET", "/state?labeller=ann")[1])["summary"]["agreement"]
    with open_store_readonly(task.store) as store:
        wide = store.labels().pivot(index="item_id", columns="labeller", values="value")
    assert two["statistic"] == "Cohen's kappa" and two["n_items"] == 20
    assert two["value"] == pytest.approx(cohen_kappa(wide["ann"], wide["bob"]))
    assert three["statistic"].startswith("Krippendorff") and three["labellers"] == 3
    assert three["value"] == pytest.approx(float(krippendorff_alpha(wide[["ann", "bob", "cy"]].to_numpy(),
                                                                    "nominal")))


def test_undo_withdraws_a_label_and_the_store_keeps_both_rows(task):
    with serving(task) as (url, _):
        token = page_token(url)
        item = task.items[3].item_id
        for path, body in (("/label", {"value": 2}), ("/undo", {})):
            assert request(url, "POST", path, {"labeller": "ann", "item": item, **body},
                           {"X-Judgewise-Token": token})[0] == 200
        state = json.loads(request(url, "GET", "/state?labeller=ann")[1])
    assert state["items"][3]["key"] is None and state["summary"]["labelled"] == 0
    with open_store_readonly(task.store) as store:
        assert store.labels()["value"].isna().tolist() == [False, True]


@pytest.mark.parametrize(("args", "message"), [
    (["--scale", "5-1"], "LOW < HIGH"),
    (["--target", "nobody"], "nobody"),
])
def test_label_refuses_bad_settings_before_serving(tmp_path, args, message):
    scores, responses, items = make_label_inputs(tmp_path)
    base = {"--target": "judge-x", "--scale": "1-5"}
    for flag, value in zip(args[::2], args[1::2]):
        base[flag] = value
    res = run_cli("label", str(scores), "--store", str(tmp_path / "s.sqlite"), "--items", str(items),
                  "--responses", str(responses), "--port", "0", *[x for kv in base.items() for x in kv], timeout=60)
    assert res.returncode != 0 and res.stderr.startswith("error:") and message in res.stderr, res.stderr
    assert not (tmp_path / "s.sqlite").exists()


def test_pandas_reads_the_items_order_as_given(task):
    assert [i.item_id for i in task.items] == [f"item-{k:02d}" for k in range(20)]
    assert isinstance(pd.Series(task.target_scores), pd.Series)


def test_a_pointwise_item_takes_a_score_on_the_scale_and_nothing_else(tmp_path):
    scores, _, items = make_label_inputs(tmp_path)
    one = tmp_path / "one-response.jsonl"
    one.write_text("".join(json.dumps({"prompt_id": f"item-{k:02d}", "model": "m", "text": f"<b>answer {k}</b>",
                                       "instruction": f"grade {k}"}) + "\n" for k in range(20)))
    task = label_task(scores, str(tmp_path / "grades.sqlite"), target="judge-x", items=items, responses=one,
                      scale=(1, 10))
    assert not task.items[0].pairwise
    with serving(task) as (url, _):
        token = page_token(url)
        state = json.loads(request(url, "GET", "/state?labeller=ann")[1])
        assert state["items"][0]["shown"] == "" and state["scale"] == [1, 10]
        for value in (0, 11, 3.5):
            assert request(url, "POST", "/label", {"labeller": "ann", "item": "item-00", "value": value},
                           {"X-Judgewise-Token": token})[0] == 400
        assert _stored(task) == 0
        for k, value in ((0, 1), (1, 10), (2, 7)):
            assert request(url, "POST", "/label", {"labeller": "ann", "item": f"item-{k:02d}", "value": value},
                           {"X-Judgewise-Token": token})[0] == 200
        state = json.loads(request(url, "GET", "/state?labeller=ann")[1])
    assert [i["key"] for i in state["items"][:4]] == [1, 10, 7, None]
    with open_store_readonly(task.store) as store:
        assert store.labels()["value"].tolist() == [1.0, 10.0, 7.0]


def test_labels_go_to_a_postgresql_store_through_the_page(tmp_path, pg_url):
    scores, responses, items = make_label_inputs(tmp_path)
    task = label_task(scores, pg_url, target="judge-x", items=items, responses=responses)
    with serving(task) as (url, _):
        token = page_token(url)
        _label_all(url, token, "ann", lambda k, item: 1 + k % 3)
        status, text = request(url, "POST", "/label", {"labeller": "ann", "item": "item-00", "value": 9},
                               {"X-Judgewise-Token": token})
        assert status == 400
    with open_store_readonly(pg_url) as store:
        rows = store.labels()
    assert len(rows) == 20 and rows["seq"].is_monotonic_increasing
    file = tmp_path / "human.csv"
    labels_as_scores(rows).to_csv(file, index=False)
    common = ["reliability", str(scores), "--target", "judge-x", "--metric", "icc,rho", "--json"]
    assert json.loads(run_cli(*common, "--human", pg_url).stdout) == json.loads(run_cli(*common, "--human",
                                                                                        str(file)).stdout)


def _store_of_run(folder: Path) -> tuple[Path, pd.DataFrame]:
    """A judging store holding a two-model run (every prompt judged in both orders), and its games."""

    df = read_judgments(make_run(folder, n_models=2, n_prompts=30, xss=False)[0]).frame
    path = folder / "store.sqlite"
    with JudgmentStore(path) as store:
        for k, r in enumerate(df.itertuples()):
            store.record(GameRecord(key=f"k{k}", prompt_id=r.prompt_id, model_a=r.model_a, model_b=r.model_b,
                                    first=r.first, swapped=r.first != r.model_a, judge="sim-judge", template="t@1",
                                    judge_identity="{}", status="ok", raw=r.raw, verdict5=int(r.verdict),
                                    outcome=r.outcome, n_calls=1))
    return path, df


def test_the_report_of_a_store_shows_its_labels_agreement_and_the_judges_reliability(tmp_path):

    path, df = _store_of_run(tmp_path)
    assert "human_labels" not in {s.key for s in build_report(path)}  # no labels: no section, not even a slot
    prompts = sorted(df["prompt_id"].unique())[:20]
    with open_store(path) as store:
        for who, pick in (("ann", lambda k: k % 2), ("bob", lambda k: k % 3 == 0)):
            for k, pid in enumerate(prompts):
                store.add_label(HumanLabel("s", who, pid, float(pick(k)), shown="AB"))
    section = {s.key: s for s in build_report(path)}["human_labels"]
    assert section.status == OK
    facts = dict(section.facts)
    assert facts["Labels"] == "40" and facts["Labellers"] == "2"
    first = sorted(set(df["model_a"]) | set(df["model_b"]))[0]
    judge = {pid: np.mean([o if a == first else 1 - o for a, o in zip(g["model_a"], g["outcome"])])
             for pid, g in df.groupby("prompt_id")}
    human = {pid: np.mean([k % 2, float(k % 3 == 0)]) for k, pid in enumerate(prompts)}
    icc = get_metric("icc")([judge[p] for p in prompts], [human[p] for p in prompts])
    assert facts["ICC(sim-judge, human)"].startswith(f"{fmt_num(icc, 3)} [")
    assert "on 20 items" in facts["ICC(sim-judge, human)"]
    assert "Cohen's kappa between labellers" in facts


def test_the_report_says_not_yet_defined_while_every_shared_label_is_the_same(tmp_path):
    path, df = _store_of_run(tmp_path)
    prompts = sorted(df["prompt_id"].unique())[:5]
    with open_store(path) as store:
        for who in ("ann", "bob"):
            for pid in prompts:
                store.add_label(HumanLabel("s", who, pid, 1.0, shown="AB"))
    facts = dict({s.key: s for s in build_report(path)}["human_labels"].facts)
    assert facts["Cohen's kappa between labellers"] == "not yet defined on 5 items"


@pytest.mark.parametrize("stop_width", [None, 1e9, 1e-9])
def test_the_page_says_enough_once_the_interval_is_as_narrow_as_asked(tmp_path, stop_width):
    scores, responses, items = make_label_inputs(tmp_path)
    task = label_task(scores, str(tmp_path / "l.sqlite"), target="judge-x", items=items, responses=responses,
                      stop_width=stop_width)
    with serving(task) as (url, _):
        token = page_token(url)
        _label_all(url, token, "ann", lambda k, item: 1 + k % 3)
        summary = json.loads(request(url, "GET", "/state?labeller=ann")[1])["summary"]
    width = summary["interval"][1] - summary["interval"][0]
    assert 0 < width < 1e9
    assert summary["enough"] is (stop_width is not None and width <= stop_width)


def test_the_page_runs_only_its_own_script_and_answers_json_as_data(task):
    with serving(task) as (url, _):
        page = urllib.request.urlopen(url + "/")
        csp = page.headers["Content-Security-Policy"]
        state = urllib.request.urlopen(url + "/state?labeller=ann")
    assert "script-src 'sha256-" in csp and "unsafe" not in csp.split("script-src")[1].split(";")[0]
    assert "connect-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert state.headers["Content-Type"] == "application/json"
    assert state.headers["X-Content-Type-Options"] == "nosniff"
