"""The read-only explorer over a real HTTP server on 127.0.0.1: pages, search, paging, escaping, no writes."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pandas as pd
import pytest

import judgewise
from judgewise.report.options import ReportOptions
from judgewise.report.explorer_data import ExplorerData
from judgewise.report.inputs import add_responses, load_run

from tests.support import run_cli
from tests.support.reports import XSS_MODEL, make_run, parsed, running


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, resp.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


@pytest.fixture(scope="module")
def explorer_url(tmp_path_factory):
    jpath, rpath = make_run(tmp_path_factory.mktemp("explorer"), n_prompts=120, with_round=True)
    run = load_run(jpath)
    add_responses(run, rpath)
    with running(ExplorerData(run, ReportOptions(bootstrap=20))) as url:
        yield url


def test_leaderboard_page_lists_every_model(explorer_url):
    status, html = get(explorer_url + "/")
    assert status == 200
    table = html[html.index('id="leaderboard"'):html.index("</table>")]
    assert table.count("<tr>") == 1 + 5  # header + five models
    assert "&lt;img src=x onerror" in table  # hostile model name shown as text


def test_prompt_search_and_paging(explorer_url):
    status, html = get(explorer_url + "/prompts")
    assert status == 200 and "page 1 of 3 (120 in all)" in html
    assert len(re.findall(r'href="/prompt\?id=', html)) == 50
    _, last = get(explorer_url + "/prompts?page=3")
    assert len(re.findall(r'href="/prompt\?id=', last)) == 20
    _, found = get(explorer_url + "/prompts?q=" + urllib.parse.quote("number 17?"))
    ids = re.findall(r'href="/prompt\?id=([^"]+)"', found)
    assert ids == ["p0017"]


def test_prompt_page_shows_responses_and_both_orders_escaped(explorer_url):
    status, html = get(explorer_url + "/prompt?id=p0000")
    assert status == 200
    tags = parsed(html)
    assert "img" not in tags.tags and "script" not in tags.tags and not tags.handlers
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in html  # response and rationale shown as text
    assert html.count('class="card response"') == 5
    assert html.count('class="card comparison"') == 10  # 5 models: 10 pairs, each in both orders
    assert html.count("shown first:") == 20
    assert "Tournament bracket" in html  # the run carries a round column


def test_versus_page_reports_the_pair_win_rate(explorer_url, tmp_path):
    status, html = get(explorer_url + "/versus?a=model-0&b=model-1")
    assert status == 200
    rate = float(re.search(r"against model-1: <b>([0-9.]+)</b> over (\d+) games", html).group(1))
    n = int(re.search(r"over (\d+) games", html).group(1))
    assert n == 240  # 120 prompts × both orders
    assert 0.0 <= rate <= 1.0


def test_unknown_pages_and_objects_are_404_and_writes_are_refused(explorer_url):
    assert get(explorer_url + "/nope")[0] == 404
    assert get(explorer_url + "/prompt?id=missing")[0] == 404
    assert get(explorer_url + "/versus?a=ghost&b=model-0")[0] == 404
    req = urllib.request.Request(explorer_url + "/", data=b"x=1", method="POST")
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10)
    assert info.value.code == 405


def test_pages_carry_a_policy_that_forbids_scripts(explorer_url):
    with urllib.request.urlopen(explorer_url + "/prompt?id=p0000", timeout=30) as resp:
        policy = resp.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy


def test_a_ten_thousand_prompt_run_pages_without_loading_everything(tmp_path):
    rng = np.random.default_rng(0)
    n = 10_000
    models = np.array(["a", "b", "c", "d"])
    pairs = rng.integers(0, 4, size=(n * 3, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    frame = pd.DataFrame({"prompt_id": [f"q{k:05d}" for k in rng.integers(0, n, len(pairs))],
                          "model_a": models[pairs[:, 0]], "model_b": models[pairs[:, 1]], "judge": "j",
                          "outcome": rng.integers(0, 3, len(pairs)) / 2})
    data = ExplorerData(load_run(frame), ReportOptions(bootstrap=0))
    with running(data) as url:
        status, html = get(url + "/prompts?page=150")
        assert status == 200 and "page 150 of" in html
        assert len(re.findall(r'href="/prompt\?id=', html)) == 50
        pid = re.findall(r'href="/prompt\?id=([^"]+)"', html)[0]
        status, page = get(url + "/prompt?id=" + pid)
        assert status == 200
        assert page.count("shown first:") == int((frame["prompt_id"] == pid).sum())


def test_serve_command_binds_localhost_and_answers(tmp_path):
    jpath, rpath = make_run(tmp_path, n_prompts=6)
    proc = subprocess.Popen([sys.executable, "-m", "judgewise.cli.app", "serve", str(jpath), "--responses",
                             str(rpath), "--port", "0", "--bootstrap", "10"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, f"no URL in {line!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"
        status, html = get(url.group(0) + "prompts")
        assert status == 200 and "p0005" in html
        assert XSS_MODEL not in get(url.group(0))[1]
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.parametrize("n_models", [3, 5, 8])
def test_bracket_rounds_inferred_from_a_tournament_run_match_the_design(n_models):
    from judgewise.designs import make_design
    from judgewise.designs.tournament import bracket

    rng = np.random.default_rng(n_models)
    models = [f"m{i}" for i in range(n_models)]
    prompts = [f"p{k}" for k in range(25)]
    verdicts = lambda p, a, b: rng.integers(0, 3, len(p)) / 2  # noqa: E731 — ties included
    run = make_design("tournament").run(models, prompts, verdicts, np.random.default_rng(0))
    heights = [h for _, _, h in bracket(n_models)]
    expected = np.concatenate([[h] * (heights.count(h) * len(prompts)) for h in sorted(set(heights))])
    data = ExplorerData(load_run(run.to_judgments()), ReportOptions(bootstrap=0))
    assert np.array_equal(data.rounds, expected)
    assert data.ctx.design == "tournament"


def test_an_anchor_run_is_not_mistaken_for_a_tournament(tmp_path):
    from judgewise.io import read_judgments

    jpath, _ = make_run(tmp_path, n_prompts=20, xss=False)
    df = read_judgments(jpath).frame
    star = df[(df.model_a == "model-2") | (df.model_b == "model-2")]
    data = ExplorerData(load_run(star), ReportOptions(bootstrap=0))
    assert data.rounds is None and data.ctx.design == "anchor"


def test_serve_refuses_a_run_mixing_judges_unless_one_is_chosen(tmp_path):
    jpath, _ = make_run(tmp_path, n_prompts=4, xss=False)
    frame = pd.read_json(jpath, lines=True)
    mixed = tmp_path / "mixed.jsonl"
    pd.concat([frame, frame.assign(judge="other-judge")]).to_json(mixed, orient="records", lines=True)
    res = run_cli("serve", mixed, "--port", "0", "--bootstrap", "0", timeout=120)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode != 0 and len(lines) == 1 and "--judge" in lines[0] and "other-judge" in lines[0]
    proc = subprocess.Popen([sys.executable, "-m", "judgewise.cli.app", "serve", str(mixed), "--judge", "sim-judge",
                             "--port", "0", "--bootstrap", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/", proc.stdout.readline()).group(0)
        status, html = get(url)
        assert status == 200 and "leaderboard failed" not in html and "other-judge" not in html
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_serve_panel_shows_the_panels_derived_verdicts_and_refuses_a_judge_beside_it(tmp_path):
    jpath, _ = make_run(tmp_path, n_prompts=6, xss=False)
    frame = pd.read_json(jpath, lines=True)
    flipped = frame.assign(judge="contrarian", outcome=1.0 - frame["outcome"])
    three = tmp_path / "three.jsonl"
    pd.concat([frame, frame.assign(judge="copy"), flipped]).to_json(three, orient="records", lines=True)
    res = run_cli("serve", three, "--panel", "sim-judge,copy,contrarian", "--judge", "copy", "--port", "0",
                  timeout=120)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1 and "excludes --judge" in lines[0]
    proc = subprocess.Popen([sys.executable, "-m", "judgewise.cli.app", "serve", str(three), "--panel",
                             "sim-judge,copy,contrarian", "--port", "0", "--bootstrap", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/", proc.stdout.readline()).group(0)
        status, html = get(url)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert status == 200 and "leaderboard failed" not in html
    assert "panel (majority of labels) of 3 judges" in html and "Fleiss" in html
    board = html[html.index('id="leaderboard"'):]  # two of three agree with sim-judge: its order is the panel's
    alone = judgewise.rank(frame, "bt")
    shown = sorted(alone.models, key=lambda m: board.index(f"<td>{m}</td>"))
    assert shown == [m for _, m in sorted(zip(-np.asarray(alone.scores), alone.models))]
