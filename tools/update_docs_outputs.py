"""Refresh the expected output of every console example in README.md and docs/*.md from real runs.

    python tools/update_docs_outputs.py                 # every page, slow blocks included
    python tools/update_docs_outputs.py docs/ratings.md # some pages
    python tools/update_docs_outputs.py --check         # report what differs, change nothing (exit 1 if any)

Lines that match the page (its ``...`` wildcards included) keep their form; lines that differ are replaced by what
the command printed (durations and file sizes written as ``...``), so hand-made elisions survive a refresh. Doctest (``>>>``) blocks are checked, not rewritten.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import os  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]
# child processes (the fork server the commands run from) import this checkout too, not an installed copy
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH")) if p)

from tools.docs_examples import PAGES, REPO, describe, refreshed_page, run_page  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path, help="pages to refresh (default: README.md and docs/*.md)")
    parser.add_argument("--check", action="store_true", help="only report the differences")
    parser.add_argument("--no-slow", action="store_true", help="leave out blocks marked <!-- docs: slow -->")
    parser.add_argument("--report-slower-than", type=float, default=10.0, metavar="S",
                        help="list the commands that took at least S seconds (default 10)")
    args = parser.parse_args(argv)
    pages = [p.resolve() for p in args.pages] or PAGES
    failed = 0
    for page in pages:
        before = page.read_text(encoding="utf-8")
        outcomes = run_page(page, slow=not args.no_slow)
        if page.read_text(encoding="utf-8") != before:
            print(f"{page.relative_to(REPO)} changed while its examples ran; run again", file=sys.stderr)
            failed += 1
            continue
        for outcome in outcomes:
            if outcome.skipped:
                print(f"{page.relative_to(REPO)} line {outcome.block.line}: not run: {outcome.message}")
        bad = [o for o in outcomes if not o.ok]
        failed += len(bad)
        for outcome in bad:
            print(describe(outcome) if args.check or outcome.step is None else
                  f"{page.relative_to(REPO)} line {outcome.block.line}: refreshed $ {outcome.step.command}")
        if not args.check and any(o.step is not None and not o.ok for o in outcomes):
            page.write_text(refreshed_page(page, outcomes), encoding="utf-8")
        for outcome in outcomes:
            if outcome.seconds >= args.report_slower_than:
                print(f"  {outcome.seconds:6.1f}s line {outcome.block.line}: $ {outcome.step.command}")
        total = sum(o.seconds for o in outcomes)
        print(f"{page.relative_to(REPO)}: {len(outcomes)} examples run in {total:.0f}s, {len(bad)} differed")
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
