"""The report and the explorer in a real headless Chromium: leaderboard, rendered charts, navigation, XSS.

Screenshots go to test-output/ (gitignored). Skipped, with the reason shown, when Chromium or Playwright is
missing (`.ci/run` installs Debian's chromium; Playwright never downloads a browser here).
"""

from __future__ import annotations

import pytest

from judgewise.report import write_report
from judgewise.report.options import ReportOptions
from judgewise.report.explorer_data import ExplorerData
from judgewise.report.inputs import add_responses, load_run

from tests.support.browser import OUT, Watched, browser  # noqa: F401 (fixture)
from tests.support.reports import XSS_MODEL, make_run, running

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def run_files(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("browser"), n_prompts=40, with_round=True)


def test_report_renders_leaderboard_charts_and_navigation(browser, run_files, tmp_path):
    report = write_report(run_files[0], tmp_path / "report.html", ReportOptions(bootstrap=30), responses=run_files[1])
    w = Watched(browser)
    page = w.page
    page.goto(report.as_uri())
    page.wait_for_selector("html[data-report-ready='1']")
    rows = page.locator("table.leaderboard tbody tr")
    assert rows.count() == 5
    assert XSS_MODEL in rows.all_inner_texts()[-1] or XSS_MODEL in " ".join(rows.all_inner_texts())
    chart = page.locator("figure[data-figure='leaderboard'] svg")
    box = chart.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 60
    assert page.locator("figure[data-figure='leaderboard'] circle.point").count() == 5
    assert page.locator("figure[data-figure='head_to_head'] rect.cell").count() == 25
    page.click("nav.toc a[href='#diagnostics']")
    assert page.evaluate("location.hash") == "#diagnostics"
    top = page.evaluate("document.getElementById('diagnostics').getBoundingClientRect().top")
    assert abs(top) < 150  # scrolled to the section
    scores = _column(page, 2)
    page.click("table.leaderboard th:nth-child(3)")  # sort by score, ascending
    assert _column(page, 2) == sorted(scores)
    page.screenshot(path=str(OUT / "report.png"), full_page=True)
    page.emulate_media(media="print")
    assert page.locator("nav.toc").is_hidden()  # print CSS drops the navigation
    w.assert_nothing_ran()
    page.close()


def _column(page, index: int) -> list[float]:
    texts = page.locator(f"table.leaderboard tbody tr td:nth-child({index + 1})").all_inner_texts()
    return [float(t.replace(",", "")) for t in texts]


def test_explorer_pages_and_navigation_in_the_browser(browser, run_files):
    run = load_run(run_files[0])
    add_responses(run, run_files[1])
    with running(ExplorerData(run, ReportOptions(bootstrap=20))) as url:
        w = Watched(browser)
        page = w.page
        page.goto(url + "/")
        assert page.locator("#leaderboard tbody tr").count() == 5
        assert page.locator("svg.chart circle.point").count() == 5
        page.screenshot(path=str(OUT / "explorer-leaderboard.png"), full_page=True)
        page.click("#nav-prompts")
        page.fill("input[name=q]", "number 0?")
        page.click("form.search button")
        page.wait_for_url("**/prompts?q=*")
        links = page.locator("#prompts a")
        assert links.all_inner_texts() == ["p0000"]
        links.first.click()
        page.wait_for_url("**/prompt?id=p0000")
        assert page.locator(".card.response").count() == 5
        assert page.locator(".bracket .round").count() == 3
        page.locator("details summary").first.click()
        page.screenshot(path=str(OUT / "explorer-prompt.png"), full_page=True)
        page.locator(".comparison h3 a").first.click()
        page.wait_for_url("**/versus?*")
        assert "games" in page.locator("#winrate").inner_text()
        page.click("#nav-diagnostics")
        assert page.locator("section#diagnostics table").count() >= 1
        page.screenshot(path=str(OUT / "explorer-diagnostics.png"), full_page=True)
        w.assert_nothing_ran()
        page.close()


def test_hostile_response_and_rationale_are_shown_as_text_and_run_nothing(browser, run_files, tmp_path):
    run = load_run(run_files[0])
    add_responses(run, run_files[1])
    with running(ExplorerData(run, ReportOptions(bootstrap=0))) as url:
        w = Watched(browser)
        w.page.goto(url + "/prompt?id=p0000")
        first = w.page.locator(".card.response").first
        assert "<script>window.__xss = 1</script>" in first.inner_text()
        assert w.page.locator("main img, main script").count() == 0
        rationale = w.page.locator("pre.text", has_text="Rationale").first.text_content()
        assert '<img src=x onerror="window.__xss = 2">' in rationale
        w.page.wait_for_timeout(300)  # give any (wrongly) injected handler time to fire
        w.assert_nothing_ran()
        w.page.close()
    report = write_report(run_files[0], tmp_path / "r.html", ReportOptions(bootstrap=0), responses=run_files[1])
    w = Watched(browser)
    w.page.goto(report.as_uri())
    assert w.page.locator("main img").count() == 0
    assert XSS_MODEL in w.page.locator("table.leaderboard").inner_text()
    w.assert_nothing_ran()
    w.page.close()
