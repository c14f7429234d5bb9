"""Every console and doctest example in README.md and docs/*.md runs and prints what its page shows."""
from __future__ import annotations

import pytest

from tools.docs_examples import PAGES, REPO, align, blocks_of, describe, line_matches, masked, run_page, steps_of

PAGES_WITH_SLOW = [p for p in PAGES if any(b.directive == "slow" for b in blocks_of(p))]


def _ids(pages):
    return [str(p.relative_to(REPO)) for p in pages]


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_page_examples_print_what_the_page_shows(page):
    failures = [describe(o) for o in run_page(page, slow=False) if not o.ok]
    assert not failures, "\n\n".join(failures)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES_WITH_SLOW, ids=_ids(PAGES_WITH_SLOW))
def test_page_examples_including_slow_ones_print_what_the_page_shows(page):
    failures = [describe(o) for o in run_page(page, slow=True) if not o.ok]
    assert not failures, "\n\n".join(failures)


def test_every_page_is_in_the_site_nav_and_readme_is_a_front_page():
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [p.name for p in PAGES if p.parent == REPO / "docs" and p.name not in nav]
    assert not missing, f"pages not in mkdocs.yml nav: {missing}"
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 400


def test_console_blocks_are_well_formed_and_skips_say_why():
    for page in PAGES:
        for block in blocks_of(page):
            if block.lang == "console":
                assert steps_of(block), f"{page.name} line {block.line}: a console block with no command"
            if block.directive == "skip":
                assert block.argument, f"{page.name} line {block.line}: <!-- docs: skip --> must give a reason"


def test_wildcards_match_what_they_should_and_nothing_else():
    assert line_matches("took ...s", "took 12.5s") and not line_matches("took ...s", "took 12.5 min")
    assert line_matches("a  ", "a") and not line_matches("a", "b")
    assert align(["x", "...", "z"], ["x", "1", "2", "z"])[0] == 0
    assert align(["x", "...", "z"], ["x", "z"])[0] == 0
    assert align(["x", "y"], ["x", "q"])[0] == 1


def test_a_refresh_keeps_the_wildcards_and_takes_the_changed_lines():
    template = ["head", "time ...s", "...", "old total"]
    actual = ["head", "time 3.1s", "a", "b", "new total"]
    cost, refreshed = align(template, actual)
    assert cost > 0 and refreshed == ["head", "time ...s", "...", "new total"]


def test_a_refresh_writes_durations_and_sizes_as_wildcards_that_still_match():
    line = "12 games: 12 calls, $0.0000, 3.1s; report written: r.html (44 KB); took 2.5 s"
    assert masked(line) == "12 games: 12 calls, $0.0000, ...s; report written: r.html (... KB); took ...s"
    assert line_matches(masked(line), line)
