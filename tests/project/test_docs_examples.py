"""Every console and doctest example in README.md and docs/*.md runs and prints what its page shows."""
from __future__ import annotations

import pytest

from tools.docs_examples import PAGES, REPO, align, blocks_of, describe, line_matches, masked, run_page, steps_of

PAGES_WITH_SLOW = [p for p in PAGES if any(b.slow for b in blocks_of(p))]
# Pages whose examples take 15–50 s each at load 1–2 on the 2-core machine (README and evaluate run evaluate on the
# shipped replay config; judging runs judge, a panel's evaluate and batch examples; ratings bootstraps every method
# on AlpacaEval; papers, designs and diagnostics run many simulations or diagnose all of AlpacaEval): run with SLOW=1, as CI runs the suite, to keep `make test`
# short; the other pages (2–18 s each there) run in every one.
HEAVY_PAGES = {"README.md", "docs/papers.md", "docs/evaluate.md", "docs/designs.md", "docs/diagnostics.md",
               "docs/judging.md", "docs/ratings.md"}


def _ids(pages):
    return [str(p.relative_to(REPO)) for p in pages]


def _every_page():
    return [pytest.param(p, id=i, marks=[pytest.mark.slow] if i in HEAVY_PAGES else [])
            for p, i in zip(PAGES, _ids(PAGES))]


def _check(outcomes) -> None:
    """Fail on any example that differs; then skip, saying why, when some were left out (no embedded runtime)."""
    failures = [describe(o) for o in outcomes if not o.ok]
    assert not failures, "\n\n".join(failures)
    skipped = [o for o in outcomes if o.skipped]
    if skipped:
        lines = ", ".join(str(o.block.line) for o in skipped)
        pytest.skip(f"the other examples passed; the blocks at lines {lines} {skipped[0].message}")


@pytest.mark.parametrize("page", _every_page())
def test_page_examples_print_what_the_page_shows(page):
    _check(run_page(page, slow=False))


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES_WITH_SLOW, ids=_ids(PAGES_WITH_SLOW))
def test_page_examples_including_slow_ones_print_what_the_page_shows(page):
    _check(run_page(page, slow=True))


def test_the_heavy_pages_named_are_pages():
    assert HEAVY_PAGES <= set(_ids(PAGES))


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


def test_a_local_block_runs_only_with_the_embedded_runtime_and_counts_as_slow_when_marked(tmp_path, monkeypatch):
    from tools import docs_examples

    page = tmp_path / "p.md"
    page.write_text("<!-- docs: local -->\n\n```console\n$ echo hi\nhi\n```\n\n<!-- docs: local slow -->\n\n"
                    "```console\n$ echo slow\nslow\n```\n", encoding="utf-8")
    fast, slow = blocks_of(page)
    assert (fast.directive, fast.slow, slow.directive, slow.slow) == ("local", False, "local", True)
    monkeypatch.setattr(docs_examples, "LOCAL_MODULES", ("no_such_module_jw",))
    missing = run_page(page, slow=True)
    assert [o.skipped for o in missing] == [True, True] and "no_such_module_jw" in missing[0].message
    monkeypatch.setattr(docs_examples, "LOCAL_MODULES", ("json",))
    assert [(o.ok, o.skipped, o.actual) for o in run_page(page, slow=False)] == [(True, False, ["hi"])]
    assert len(run_page(page, slow=True)) == 2


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
