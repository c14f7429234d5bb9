"""``judgewise label`` in a real headless Chromium: two labellers label with the keyboard only, the server is killed
(SIGKILL) and started again midway, every label is in the store; JudgeBench's objective labels entered through the
page give ``reliability --items``'s figure; with ``--order informative`` the page shows the criterion's item each
time and says "enough" with the label the library says it; labels typed on the page anchor ``rank --human``.
Screenshots go to test-output/ (the docs' one is made from it)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

import pytest

from judgewise.analysis.labelling import label_summary, next_item
from judgewise.commands.human_validation import read_selection
from judgewise.commands.labels import label_task
from judgewise.io.readers import read_scores
from judgewise.store.labels import current_labels, labels_as_scores
from judgewise.store.opening import open_store_readonly

from tests.support import SHARED, cli_json, run_cli
from tests.support.labelling import XSS, make_label_inputs
from tests.support.browser import OUT, Watched, browser  # noqa: F401 (fixture)

pytestmark = pytest.mark.browser
JUDGEBENCH = SHARED / "data" / "judgebench"


def start(*args) -> tuple[subprocess.Popen, str]:
    """``judgewise label ARGS --port 0`` in its own process; (process, URL) once it listens."""
    proc = subprocess.Popen([sys.executable, "-m", "judgewise.cli.app", "label", *map(str, args), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    url = re.search(r"http://127\.0\.0\.1:\d+/", line)
    assert url, f"no URL in {line!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"
    return proc, url.group(0)


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=20)


def open_as(browser, url: str, name: str) -> Watched:
    w = Watched(browser)
    w.page.goto(url)
    w.page.fill("#name", name)
    w.page.press("#name", "Enter")
    w.page.wait_for_selector("#progress[data-done]")
    return w


def done(w: Watched) -> int:
    return int(w.page.get_attribute("#progress", "data-done"))


def press(w: Watched, key: str) -> None:
    """Press ``key`` and wait until the page shows the label kept (the store answered)."""
    before = done(w)
    w.page.keyboard.press(key)
    w.page.wait_for_selector(f"#progress[data-done='{before + 1}']")  # a selector: the page's CSP forbids eval


@pytest.mark.slow
def test_two_labellers_keyboard_only_survive_a_killed_server(browser, tmp_path):
    scores, responses, items = make_label_inputs(tmp_path)
    store = tmp_path / "labels.sqlite"
    args = [scores, "--store", store, "--target", "judge-x", "--items", items, "--responses", responses]
    proc, url = start(*args)
    try:
        ann, bob = open_as(browser, url, "ann"), open_as(browser, url, "<i>bob</i>")
        card = ann.page.locator(".card pre").all_inner_texts()
        assert XSS in card  # the <script> response shows as its text
        for k in range(10):
            press(ann, "1" if k % 2 else "2")
            press(bob, "3" if k % 3 == 0 else "1")
        bob.page.keyboard.press("u")  # undo bob's last label, then give it again
        bob.page.wait_for_selector("#progress[data-done='9']")
        press(bob, "2")
        ann.page.screenshot(path=str(OUT / "label-page.png"))
    finally:
        kill(proc)
    with open_store_readonly(store) as st:
        assert len(current_labels(st.labels())) == 20  # every answer the page showed as kept is kept
    proc, url = start(*args)
    try:
        ann, bob = open_as(browser, url, "ann"), open_as(browser, url, "<i>bob</i>")
        for w in (ann, bob):
            assert done(w) == 10 and w.page.get_attribute("#responses", "data-item") == "item-10"  # resumed
        for k in range(10, 20):
            press(ann, "1" if k % 2 else "2")
            press(bob, "3" if k % 3 == 0 else "1")
        bob.page.keyboard.press("ArrowLeft")
        assert bob.page.get_attribute("#responses", "data-item") == "item-18"
        assert "Cohen's kappa between 2 labellers" in ann.page.inner_text("#summary")
        for w in (ann, bob):
            w.assert_nothing_ran()
    finally:
        kill(proc)
    with open_store_readonly(store) as st:
        rows = st.labels()
    now = current_labels(rows)
    assert len(now) == 40 and set(now["labeller"]) == {"ann", "<i>bob</i>"}
    assert rows["value"].isna().sum() == 1  # the undo, kept as a row
    file = tmp_path / "human.csv"
    labels_as_scores(rows).to_csv(file, index=False)
    common = ["reliability", str(scores), "--target", "judge-x", "--metric", "icc,alpha,rho", "--json"]
    assert cli_json(*common, "--human", str(store)) == cli_json(*common, "--human", str(file))


@pytest.mark.slow
def test_judgebench_labels_entered_through_the_page_give_the_reliability_of_the_labels(browser, tmp_path):
    selection = tmp_path / "selection.json"
    res = run_cli("select", str(JUDGEBENCH), "--target", "o1-mini", "--budget", "30", "--output", str(selection))
    assert res.returncode == 0, res.stderr
    ids = read_selection(selection)[0]
    truth = read_scores(JUDGEBENCH).frame
    truth = dict(zip(truth.loc[truth["rater"] == "human", "item_id"], truth.loc[truth["rater"] == "human", "score"]))
    store = tmp_path / "labels.sqlite"
    proc, url = start(JUDGEBENCH, "--store", store, "--target", "o1-mini", "--items", selection)
    try:
        w = open_as(browser, url, "oracle")
        for k, _ in enumerate(ids):
            if k == 12:
                w.page.screenshot(path=str(OUT / "label-judgebench.png"))  # docs/label-page.png is one of these
            item, shown = w.page.get_attribute("#responses", "data-item"), w.page.get_attribute("#responses",
                                                                                                 "data-shown")
            a_better = truth[item] == 1.0
            press(w, "1" if a_better == (shown == "AB") else "2")
        w.assert_nothing_ran()
    finally:
        kill(proc)
    common = ["reliability", str(JUDGEBENCH), "--target", "o1-mini", "--metric", "icc,alpha,rho,tau", "--json",
              "--items", str(selection)]
    from_page = cli_json(*common, "--human", str(store))
    today = cli_json(*common)
    assert from_page == today and from_page["n_items"] == 30
    (OUT / "label-judgebench.json").write_text(json.dumps(today))


@pytest.mark.slow
def test_the_informative_order_shows_the_criterions_item_each_time_and_stores_every_label(browser, tmp_path):
    store = tmp_path / "labels.sqlite"
    args = dict(target="o1-mini", budget=20, order="informative", stop_width=0.6)
    task = label_task(JUDGEBENCH, str(store), **args)  # the session the server builds from the same flags
    truth = read_scores(JUDGEBENCH).frame
    truth = dict(zip(truth.loc[truth["rater"] == "human", "item_id"], truth.loc[truth["rater"] == "human", "score"]))
    proc, url = start(JUDGEBENCH, "--store", store, "--target", "o1-mini", "--budget", "20", "--order", "informative",
                      "--stop-width", "0.6")
    shown, enough_at = [], None
    try:
        w = open_as(browser, url, "oracle")
        for k in range(len(task.items)):
            item = w.page.get_attribute("#responses", "data-item")
            with open_store_readonly(store) as st:
                rows = st.labels()
            assert item == next_item(task, rows, "oracle"), f"label {k + 1}: the page shows {item}"
            shown.append(item)
            a_better = truth[item] == 1.0
            press(w, "1" if a_better == (w.page.get_attribute("#responses", "data-shown") == "AB") else "2")
            if enough_at is None and "enough labels" in w.page.inner_text("#status"):
                enough_at = k + 1
        w.assert_nothing_ran()
    finally:
        kill(proc)
    selection_order = [i.item_id for i in task.items]
    assert shown[0] == selection_order[0] and sorted(shown) == sorted(selection_order)
    assert shown != selection_order  # the criterion, not the selection, chose the order
    with open_store_readonly(store) as st:
        rows = st.labels()
    now = current_labels(rows)
    assert dict(zip(now["item_id"], now["value"])) == {i: truth[i] for i in shown}  # every label kept, as typed
    said = [k for k in range(1, len(rows) + 1) if label_summary(task, rows.iloc[:k])["enough"]]
    assert said and enough_at == said[0]  # the page said "enough" with the label that made the interval 0.6 wide


def test_labels_typed_on_the_page_anchor_rank_human_to_them(browser, tmp_path):
    """Issue 35 end to end: a judge that always prefers the first-named model, humans typing on the page that the
    other one is better; ``rank --human STORE`` uses every typed label and corrects the judge by what they typed."""
    models, n_items, typed = ["m0", "m1", "m2", "m3"], 24, 12
    pairs = [(a, b) for k, a in enumerate(models) for b in models[k + 1:]]
    items = [(f"p{k:02d}", *pairs[k % len(pairs)]) for k in range(n_items)]
    with open(tmp_path / "judgments.jsonl", "w") as fh:
        for pid, a, b in items:
            fh.write(json.dumps({"question_id": pid, "model_a": a, "model_b": b, "winner": "model_a"}) + "\n")
    with open(tmp_path / "responses.jsonl", "w") as fh:
        for pid, a, b in items:
            for m in (a, b):
                fh.write(json.dumps({"prompt_id": pid, "model": m, "text": f"{m} on {pid}",
                                     "instruction": f"question {pid}"}) + "\n")
    scores = tmp_path / "scores.csv"
    scores.write_text("item_id,rater,score\n" + "".join(f"{pid},{r},{s}\n" for pid, *_ in items
                                                         for r, s in (("judge-x", 1.0), ("judge-y", 0.6))))
    (tmp_path / "items.txt").write_text("".join(pid + "\n" for pid, *_ in items))
    store = tmp_path / "labels.sqlite"
    proc, url = start(scores, "--store", store, "--target", "judge-x", "--items", tmp_path / "items.txt",
                      "--responses", tmp_path / "responses.jsonl")
    try:
        w = open_as(browser, url, "ann")
        for _ in range(typed):  # response B (the second-named model) is better: key 2 when shown A first
            press(w, "2" if w.page.get_attribute("#responses", "data-shown") == "AB" else "1")
        w.assert_nothing_ran()
    finally:
        kill(proc)
    out = cli_json("rank", tmp_path / "judgments.jsonl", "--human", store, "--json")["human_anchored"]
    assert out["n_human"] == typed and out["labels"] == {"given": typed, "matched": typed, "unmatched": 0,
                                                         "unmatched_examples": []}
    labelled = items[:typed]  # selection order: the items file's
    for m in out["models"]:  # humans: the second-named wins; the judge: the first-named
        games = [(a, b) for _, a, b in labelled if m["model"] in (a, b)]
        human = sum(b == m["model"] for a, b in games) / len(games)
        judge = sum(a == m["model"] for a, b in games) / len(games)
        assert m["rectifier"] == pytest.approx(human - judge), m
    text = run_cli("rank", tmp_path / "judgments.jsonl", "--human", store)
    assert text.returncode == 0 and f"human labels used: {typed} (of {typed} given; 0 unmatched)" in text.stdout
