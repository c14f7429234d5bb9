"""A copy of the repository with docs/extending.md's changes made: following the page, checked by running it.

The page adds each toy (rating method, design, judge backend, input format) as a contributor would. A module is a
block marked ``<!-- docs: file examples/extending/NAME.py -->`` (the shipped file's content, checked by the docs
test), saved where the page's diff imports it from (``judgewise.ratings.NAME`` → ``src/judgewise/ratings/NAME.py``).
A registry entry is a ``diff`` block: ``+++ b/PATH`` names the file, each ``@@`` hunk's context and ``-`` lines
must occur in it exactly once and are replaced by its context and ``+`` lines (no line numbers: the hunk finds its
place). :func:`make_copy` copies src/, tests/, tools/ and pyproject.toml and makes every change;
tests/project/test_extending.py runs the registry-generated tests there and the page's ``<!-- docs: extended -->``
console blocks (:func:`tools.docs_examples.run_extended`).

    python tools/extending_copy.py          # refresh the extended blocks' outputs in the page
    python tools/extending_copy.py --check  # report what differs, change nothing (exit 1 if any)
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

if __name__ == "__main__":  # run as a script: this checkout's tools and package
    sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "src"), str(Path(__file__).resolve().parents[1])]

from tools.docs_examples import REPO, Block, blocks_of, describe, refreshed_page, run_extended  # noqa: E402

PAGE = REPO / "docs" / "extending.md"
TOYS = "examples/extending/"
COPIED = ("src", "tests", "tools")


@dataclass
class Hunk:
    """One ``@@`` hunk of a page's diff: the lines it expects in ``path`` and the lines that replace them."""

    path: str
    before: list[str]
    after: list[str]
    line: int  # the diff block's line in the page, for errors


def hunks_of(block: Block) -> list[Hunk]:
    """The hunks of a ``diff`` block (a unified diff without line numbers)."""
    hunks: list[Hunk] = []
    path = None
    for line in block.body:
        if line.startswith("+++ "):
            path = line[4:].strip().removeprefix("b/")
        elif line.startswith("--- "):
            continue
        elif line.startswith("@@"):
            if path is None:
                raise ValueError(f"{PAGE.name} line {block.line}: a hunk before any +++ line naming its file")
            hunks.append(Hunk(path, [], [], block.line))
        elif hunks:
            sign, text = line[:1], line[1:]
            if sign in (" ", "-"):
                hunks[-1].before.append(text)
            if sign in (" ", "+"):
                hunks[-1].after.append(text)
    return hunks


def page_changes(page: Path = PAGE) -> tuple[dict[str, str], list[Hunk]]:
    """(module name → its text, the diffs' hunks) of the page."""
    blocks = blocks_of(page)
    modules = {Path(b.argument).stem: "\n".join(b.body) + "\n" for b in blocks
               if b.directive == "file" and b.argument.startswith(TOYS) and b.argument.endswith(".py")}
    return modules, [h for b in blocks if b.lang == "diff" for h in hunks_of(b)]


def destination(name: str, hunks: list[Hunk]) -> str:
    """Where module ``name`` goes: the package a diff's added import names it in (``src/judgewise/PKG/NAME.py``)."""
    pattern = re.compile(rf"from judgewise\.(\w+)(?:\.{name} import | import .*\b{name}\b)")
    found = {m.group(1) for h in hunks for line in h.after if (m := pattern.search(line))}
    if len(found) != 1:
        raise ValueError(f"{PAGE.name}: module {name} is imported from {sorted(found) or 'no package'} by the diffs; "
                         "expected one `from judgewise.PKG.NAME import ...` (or `from judgewise.PKG import NAME`)")
    return f"src/judgewise/{found.pop()}/{name}.py"


def apply(root: Path, hunk: Hunk) -> None:
    """Replace the hunk's expected lines in its file under ``root`` (they must occur there exactly once)."""
    target = root / hunk.path
    text = target.read_text(encoding="utf-8")
    before, after = "\n".join(hunk.before) + "\n", "\n".join(hunk.after) + "\n"
    count = text.count(before)
    if count != 1:
        raise ValueError(f"{PAGE.name} line {hunk.line}: the hunk's lines occur {count} times in {hunk.path}, not "
                         f"once; the page's diff no longer matches the source:\n{before}")
    target.write_text(text.replace(before, after), encoding="utf-8")


def make_copy(root: Path, page: Path = PAGE) -> Path:
    """``root`` made a copy of this repository (src/, tests/, tools/, pyproject.toml; examples/ linked) with the
    page's modules saved and its diffs applied; returns ``root``."""
    for folder in COPIED:
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    (root / "examples").symlink_to(REPO / "examples")
    modules, hunks = page_changes(page)
    for name, text in modules.items():
        (root / destination(name, hunks)).write_text(text, encoding="utf-8")
    for hunk in hunks:
        apply(root, hunk)
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report the differences")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="judgewise-extended-") as tmp:
        outcomes = run_extended(PAGE, make_copy(Path(tmp)) / "src")
    bad = [o for o in outcomes if not o.ok]
    for outcome in bad:
        print(describe(outcome) if args.check else f"line {outcome.block.line}: refreshed $ {outcome.step.command}")
    if bad and not args.check:
        PAGE.write_text(refreshed_page(PAGE, outcomes), encoding="utf-8")
    print(f"{PAGE.relative_to(REPO)}: {len(outcomes)} extended examples run, {len(bad)} differed")
    return 1 if bad and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
