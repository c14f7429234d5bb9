"""The labelling page's own script (assets/label.js) run by Node.js against a minimal DOM and scripted ``/state``
answers: an agreement that is not defined yet (JSON null) reads "not yet defined", never "NaN" or a dash, and an
answer that is no JSON (a proxy's or an old server's 500 page) is said in the status line instead of leaving the
page silent. The browser tests (test_label_browser.py) need Chromium; this needs only ``node``."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from judgewise.report.render import asset

NODE = shutil.which("node") or shutil.which("nodejs")

HARNESS = r"""
const els = {};
function mk(id) {
  if (!els[id]) els[id] = { id, textContent: "", className: "", dataset: {}, hidden: true, value: "", children: [],
    replaceChildren() { this.children = []; }, append(...c) { this.children.push(...c); },
    addEventListener(type, f) { this["on" + type] = f; }, classList: { add() {} } };
  return els[id];
}
let made = 0;
global.document = { querySelector: () => ({ content: "token" }), getElementById: mk,
  createElement: () => mk("element-" + made++), createTextNode: (t) => ({ t }), addEventListener() {},
  documentElement: { dataset: {} }, activeElement: { blur() {} } };
global.localStorage = { getItem: () => "", setItem() {} };
const answers = JSON.parse(process.env.ANSWERS);
global.fetch = async () => {
  const a = answers.shift();
  return { ok: a.status < 400, status: a.status, json: async () => JSON.parse(a.body) };
};
eval(process.env.SCRIPT);
mk("name").value = "ann";
mk("who").onsubmit({ preventDefault() {} });
setTimeout(() => console.log(JSON.stringify({ summary: mk("summary").textContent, status: mk("status").textContent,
  shown: !mk("main").hidden })), 100);
"""


def _state(agreement) -> str:
    return json.dumps({
        "labeller": "ann", "target": "judge-x", "scale": [1, 5],
        "items": [{"id": "item-00", "instruction": "q", "responses": ["a", "b"], "shown": "AB", "pairwise": True,
                   "key": 1}],
        "summary": {"labelled": 1, "items": 1, "reliability": None, "interval": None, "labels": 2,
                    "metric": "icc", "agreement": agreement, "stop_width": None, "enough": False}})


def _page(*answers: tuple[int, str]) -> dict:
    if NODE is None:
        pytest.skip("Node.js not found: the page's script is tested in Chromium only (test_label_browser.py)")
    env = {"ANSWERS": json.dumps([{"status": s, "body": b} for s, b in answers]), "SCRIPT": asset("assets/label.js"),
           "PATH": "/usr/bin:/bin"}
    res = subprocess.run([NODE, "-e", HARNESS], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_an_agreement_not_defined_yet_reads_not_yet_defined():
    kappa = {"statistic": "Cohen's kappa", "value": None, "n_items": 1, "labellers": 2}
    page = _page((200, _state(kappa)))
    assert "Cohen's kappa between 2 labellers = not yet defined" in page["summary"], page
    assert "NaN" not in page["summary"] and page["shown"]


def test_a_defined_agreement_reads_as_its_number():
    page = _page((200, _state({"statistic": "Cohen's kappa", "value": 0.25, "n_items": 4, "labellers": 2})))
    assert "Cohen's kappa between 2 labellers = 0.250 on 4 items" in page["summary"], page


def test_no_item_with_two_labels_shows_no_agreement():
    assert "labellers" not in _page((200, _state(None)))["summary"]


def test_an_answer_that_is_no_json_is_said_in_the_status_line():
    page = _page((500, "A server error occurred.  Please contact the administrator."))
    assert page["status"] == "HTTP 500" and not page["shown"], page
