"""Every command that reads judgments on every input kind judgewise accepts: the command × input matrix.

The rows are the inputs (``tests/support/matrix_inputs.py``: one per registered format and container, the Python API's
DataFrame, and the SQLite / PostgreSQL judging stores); the columns are ``JUDGMENT_COMMANDS`` of the CLI registry
(``judgewise.cli.app``) plus the Python API ``judgewise.rank``. ``EXPECTED`` declares each cell once:

* ``R``  — succeeds, and the ranking it shows (JSON, the report's or the explorer's leaderboard, the exported
  table ranked again) is the ranking ``judgewise rank`` gives on that input with the same method: same models in the
  same order, same scores (to the digits shown);
* ``ok`` — succeeds (exit 0, its output read back: JSON parsed, page served); for commands that print no ranking;
* ``E:key`` — stops with a non-zero exit and exactly one line, ``error: …`` containing ``ERRORS[key]``, no
  traceback;
* ``-`` — the cell does not apply (``NOT_APPLICABLE`` says why); nothing is run.

A format registered, or a command added to the CLI, without its cells fails ``test_every_cell_is_declared`` naming
the missing cells, so the matrix grows with the registries. Every registered rating method gets its own cells without
an edit here (``test_every_rating_method_...``: ``rank``, ``api`` and ``report`` with ``--method M`` on one input).
"""

from __future__ import annotations

import html as htmllib
import json
import re
import shutil
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
import typer

from judgewise.ratings import RATING_METHODS
from tests.support import forkrun, matrix_inputs
from tests.support import SHARED, run_cli
from tests.support.pg_server import pg_server  # noqa: F401 (fixture)

COMMANDS = ("rank", "api", "report", "diagnose", "anchors", "accuracy", "plan", "serve", "store-export",
            "store-stats", "evaluate")
"""The columns: the CLI's JUDGMENT_COMMANDS (spaces as dashes) and ``api`` (``judgewise.rank``)."""

EXPECTED = """
input              rank  api   report  diagnose  anchors  accuracy  plan     serve  store-export  store-stats  evaluate
canonical-jsonl    R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
canonical-json     R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
canonical-csv      R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
canonical-parquet  R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
dataframe          -     R     -       -         -        -         -        -      -             -            -
battles-jsonl      R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
battles-json       R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
battles-parquet    R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
alpacaeval-folder  R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
games-v0.1         R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
games-v2.0         R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
mtbench-pair       R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
mtbench-single     R     E:grd E:grd   E:grd     E:grd    E:grd     E:grd    E:grd  E:not-store   E:not-store  -
rubric-grades      R     E:grd E:grd   E:grd     E:grd    E:grd     E:grd    E:grd  E:not-store   E:not-store  -
mtbench-folder     R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
mtbench-answers    E:rsp E:rsp E:rsp   E:rsp     E:rsp    E:rsp     E:rsp    E:rsp  E:not-store   E:not-store  -
arenahard-answers  E:rsp E:rsp E:rsp   E:rsp     E:rsp    E:rsp     E:rsp    E:rsp  E:not-store   E:not-store  -
judgebench         R     R     R       ok        E:pilot  ok        E:pilot  R      E:not-store   E:not-store  -
autoarena-csv      R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
autoarena-parquet  R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
peereval           R     R     R       ok        ok       ok        ok       R      E:not-store   E:not-store  -
store-sqlite       R     R     R       ok        ok       ok        ok       R      R             ok           ok
store-postgresql   R     R     R       ok        ok       ok        ok       R      R             ok           ok
"""

ERRORS = {
    "not-store": "give a store file written by `judgewise judge`",  # store export|stats of a file or folder
    "grd": "grades table",  # MT-bench single / rubric grades: only `rank` (mean score, or pairs) reads them
    "rsp": "responses table",  # model answers hold no verdict
    "pilot": "a pilot needs all-pairs judgments of at least 3 models",  # JudgeBench: two "models" (A and B)
}

NOT_APPLICABLE = {
    "dataframe": "a DataFrame exists only in Python: the CLI commands read files, folders and stores",
    "evaluate": "evaluate --add-model reads the store its run config names, not a judgments file",
}


def table() -> dict[tuple[str, str], str]:
    """EXPECTED as {(input, command): code}."""
    lines = [line.split() for line in EXPECTED.strip().splitlines()]
    header, rows = lines[0][1:], lines[1:]
    return {(row[0], command): code for row in rows for command, code in zip(header, row[1:])}


CELLS = table()
INPUT_NAMES = list(dict.fromkeys(name for name, _ in CELLS))
STORES = ("store-sqlite", "store-postgresql")


# --- the registries: every format and command has its cells ------------------------------------------------------

def cli_commands() -> set[str]:
    """Every command of the Typer app, sub-commands as ``group sub``."""
    from judgewise.cli.app import build_app

    def walk(group, prefix=""):
        for name, cmd in group.commands.items():
            full = f"{prefix}{name}"
            if hasattr(cmd, "commands"):  # a group (typer may vendor its own click)
                yield from walk(cmd, full + " ")
            else:
                yield full
    return set(walk(typer.main.get_command(build_app())))


def test_every_cell_is_declared():
    """A registered format, a store kind or a command without its cells in EXPECTED fails here, named."""
    from judgewise.cli.app import JUDGMENT_COMMANDS, OTHER_COMMANDS
    from judgewise.io.formats import FORMATS

    unplaced = cli_commands() - set(JUDGMENT_COMMANDS) - set(OTHER_COMMANDS)
    assert not unplaced, (f"commands {sorted(unplaced)} are in neither JUDGMENT_COMMANDS nor OTHER_COMMANDS of "
                          "judgewise.cli.app: place each (a command reading judgments gets its matrix column)")
    columns = {c.replace(" ", "-") for c in JUDGMENT_COMMANDS} | {"api"}
    assert set(COMMANDS) == columns, f"matrix columns {sorted(set(COMMANDS) ^ columns)} differ from the registry"
    covered = {fmt for fmt, _ in matrix_inputs.builders(SHARED).values()}
    missing_formats = sorted(set(FORMATS) - covered)
    assert not missing_formats, (f"formats {missing_formats} are registered but no input of tests/support/matrix_inputs.py "
                                 "is one: add a builder and its row in EXPECTED")
    inputs = set(matrix_inputs.builders(SHARED)) | {"store-postgresql"}
    missing = sorted(f"{i} × {c}" for i in inputs for c in COMMANDS if (i, c) not in CELLS)
    assert not missing, f"cells not declared in EXPECTED: {missing}"
    assert not set(INPUT_NAMES) - inputs, f"EXPECTED rows without an input: {sorted(set(INPUT_NAMES) - inputs)}"
    bad = {k: v for k, v in CELLS.items() if v not in ("R", "ok", "-") and v.removeprefix("E:") not in ERRORS}
    assert not bad, f"cells with unknown codes: {bad}"


# --- the inputs ----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def inputs(tmp_path_factory, shared) -> dict[str, Path | str]:
    """Every input of the matrix but the PostgreSQL store, written once for the module."""
    base = tmp_path_factory.mktemp("matrix")
    made = {}
    for name, (_, build) in matrix_inputs.builders(shared).items():
        folder = base / name
        folder.mkdir()
        made[name] = build(folder)
    return made


def postgres_copy(inputs, server) -> str:
    """The SQLite store copied into a new database of the session's throwaway PostgreSQL server."""
    url = server.new_database()
    res = run_cli("store", "copy", inputs["store-sqlite"], url)
    assert res.returncode == 0, res.stderr
    return url


@pytest.fixture(scope="module")
def postgres_store(inputs, pg_server) -> str:
    """The PostgreSQL store the read-only cells share."""
    return postgres_copy(inputs, pg_server)


# --- what a cell does ---------------------------------------------------------------------------------------------

class Cell:
    """One command run on one input: exit code, stdout, stderr, and the ranking it showed (or None)."""

    def __init__(self, code: int, stdout: str = "", stderr: str = "", ranking: list | None = None,
                 method: str | None = "bt"):
        self.code, self.stdout, self.stderr, self.ranking, self.method = code, stdout, stderr, ranking, method

    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("error:")]

    def __repr__(self) -> str:
        return f"exit {self.code}\nstdout: {self.stdout[-1500:]}\nstderr: {self.stderr[-3000:]}"


def from_process(res, ranking=None, method: str | None = "bt") -> Cell:
    return Cell(res.returncode, res.stdout, res.stderr, ranking, method)


_REFERENCE: dict = {}


def reference(path, method: str, as_recorded: bool = False) -> list[tuple[str, float]]:
    """``judgewise rank PATH --json --method METHOD``: (model, score) best first; ``as_recorded``: with the ridge the
    run that wrote a store recorded for it (a report or the explorer of an evaluate store ranks as the evaluate did,
    issue 31)."""
    key = (str(path), method, as_recorded)
    if key not in _REFERENCE:
        ridge = recorded_ridge(path, method) if as_recorded else []
        res = run_cli("rank", path, "--json", "--method", method, *ridge)
        assert res.returncode == 0, f"rank failed on {path}: {res.stderr}"
        _REFERENCE[key] = [(r["model"], r["score"]) for r in json.loads(res.stdout)]
    return _REFERENCE[key]


def recorded_ridge(path, method: str) -> list[str]:
    """``["--l2", x]`` when ``path`` is a store whose run recorded BT settings with a ridge, else ``[]``."""
    from judgewise.errors import JudgewiseError
    from judgewise.store.opening import open_store_readonly
    from judgewise.store.run_settings import recorded_ranking_settings

    try:
        with open_store_readonly(path) as store:
            recorded = recorded_ranking_settings(store.meta()) or {}
    except (JudgewiseError, OSError, ValueError):
        return []  # not a store
    return ["--l2", repr(recorded["l2"])] if recorded.get("method") == method and "l2" in recorded else []


def method_args(method: str | None) -> list[str]:
    """``["--method", method]``, or nothing for the command's default."""
    return ["--method", method] if method else []


def run_rank(path, folder: Path, method: str | None = None) -> Cell:
    res = run_cli("rank", path, "--json", *method_args(method))
    ranking = [(r["model"], r["score"]) for r in json.loads(res.stdout)] if res.returncode == 0 else None
    return from_process(res, ranking, method=None)


def run_api(path, folder: Path, name: str, method: str = "bt") -> Cell:
    """The Python API: ``judgewise.rank(judgewise.read_judgments(source).frame, method, ...)`` with what the table
    says about rating it (Arena-Hard games: strong verdicts weigh 3 and the baseline is pinned, as ``rank`` does;
    the answers' texts, when it carries them)."""
    import judgewise

    src = pd.read_parquet(path) if name == "dataframe" else path
    try:
        table = judgewise.read_judgments(src)
        pinned = table.extras.get("anchor") if table.extras.get("pin_anchor") else None
        texts = table.extras["responses"].frame if table.extras.get("responses") is not None else None
        result = judgewise.rank(table.frame, method, weighting=table.extras.get("weighting"), anchor=pinned,
                                responses=texts)
    except judgewise.JudgewiseError as exc:
        return Cell(exc.exit_code, stderr=f"error: {exc}")
    return Cell(0, ranking=[(r["model"], r["score"]) for r in result.to_records()], method=method)


class _Tables(HTMLParser):
    """The rows of the first ``<table>`` after the element with id="leaderboard" (cell texts)."""

    def __init__(self):
        super().__init__()
        self.seen, self.depth, self.rows, self.cell = False, 0, [], None

    def handle_starttag(self, tag, attrs):
        if dict(attrs).get("id") == "leaderboard":
            self.seen = True
        if self.seen and tag == "table" and self.depth == 0:
            self.depth = 1
        elif self.depth and tag == "tr":
            self.rows.append([])
        elif self.depth and tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if self.depth and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(self.cell.strip())
            self.cell = None
        elif self.depth and tag == "table":
            self.depth, self.seen = 0, False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def leaderboard(page: str) -> list[tuple[str, str]]:
    """(model, score as shown) of a page's leaderboard table."""
    parser = _Tables()
    parser.feed(page)
    header, *rows = parser.rows or [[]]
    if "model" not in header:
        return []
    m, s = header.index("model"), header.index("score")
    return [(row[m], row[s]) for row in rows if len(row) > s]


def shown_method(page: str) -> str:
    """The rating method a report or explorer page says it used."""
    found = re.search(r"judgewise\.ratings\.rank\(method=(?:&#39;|')(\w+)", page) or \
        re.search(r"method (\w+)", page)
    return found.group(1) if found else "bt"


def run_report(path, folder: Path, method: str | None = None) -> Cell:
    out = folder / "report.html"
    res = run_cli("report", path, "-o", out, "--bootstrap", "0", *method_args(method))
    if res.returncode:
        return from_process(res)
    page = out.read_text(encoding="utf-8")
    failed = re.findall(r'id="(\w+)" data-status="failed"', page)
    assert not failed, f"report exited 0 with failed sections {failed}"
    return from_process(res, leaderboard(page), shown_method(page))


def run_serve(path, folder: Path, *extra) -> Cell:
    """``serve`` on ``path`` (``extra``: more flags): its leaderboard page read back (``Cell.page``)."""
    started = forkrun.start(["serve", path, "--port", "0", "--bootstrap", "0", *extra], cwd=folder)
    try:
        deadline = time.monotonic() + 300
        while not (url := re.search(r"http://127\.0\.0\.1:\d+/", started.stdout)):
            if not started.proc.is_alive() or time.monotonic() > deadline:
                started.proc.join(5)
                return Cell(started.proc.exitcode if started.proc.exitcode is not None else -1, started.stdout,
                            started.stderr)
            time.sleep(0.05)
        with urllib.request.urlopen(url.group(0), timeout=60) as resp:
            page = resp.read().decode("utf-8")
        with urllib.request.urlopen(url.group(0) + "prompts", timeout=60) as resp:
            assert resp.status == 200
        cell = Cell(0, started.stdout, started.stderr, leaderboard(page), shown_method(page))
        cell.page = page
        return cell
    finally:
        started.stop()


def _correctness(path, folder: Path) -> Path:
    """A correctness table (prompt_id, model, correct) for every judged prompt and model, or one dummy row."""
    from judgewise.store.reading import read_judgments_or_store

    try:
        frame = read_judgments_or_store(path).frame
        pairs = pd.concat([frame[["prompt_id", "model_a"]].set_axis(["prompt_id", "model"], axis=1),
                           frame[["prompt_id", "model_b"]].set_axis(["prompt_id", "model"], axis=1)])
        pairs = pairs.astype(str).drop_duplicates()
    except Exception:  # noqa: BLE001 — an input that holds no judgments: the command says so itself
        pairs = pd.DataFrame({"prompt_id": ["p0"], "model": ["m"]})
    pairs["correct"] = [hash((p, m)) % 2 for p, m in zip(pairs["prompt_id"], pairs["model"])]
    out = folder / "correct.jsonl"
    pairs.to_json(out, orient="records", lines=True)
    return out


def run_accuracy(path, folder: Path) -> Cell:
    res = run_cli("accuracy", path, "--correctness", _correctness(path, folder), "--bootstrap", "0", "--methods", "bt",
                  "--json")
    if res.returncode == 0:
        json.loads(res.stdout)
    return from_process(res)


def run_json(*args) -> Cell:
    res = run_cli(*args)
    if res.returncode == 0:
        json.loads(res.stdout)
    return from_process(res)


def run_store_export(path, folder: Path) -> Cell:
    out = folder / "export.jsonl"
    res = run_cli("store", "export", path, "-o", out)
    if res.returncode:
        return from_process(res)
    return from_process(res, [(m, s) for m, s in reference(out, "bt")])


def run_evaluate(path, folder: Path, store_sqlite: Path) -> Cell:
    """``evaluate --add-model`` on the run config that made the store (its store overridden for PostgreSQL)."""
    extra = ["--store", str(path)] if str(path).startswith("postgresql") else []
    work = folder / "evaluate"
    shutil.copytree(Path(store_sqlite).parent, work, dirs_exist_ok=True)
    res = run_cli("evaluate", "-c", work / "run.yaml", "--add-model", matrix_inputs.NEW_MODEL, "--bootstrap", "0",
                  "--json", *extra, cwd=work)
    if res.returncode == 0:
        placed = json.dumps(json.loads(res.stdout))
        assert matrix_inputs.NEW_MODEL in placed, f"--add-model did not place {matrix_inputs.NEW_MODEL}: {placed}"
    return from_process(res)


def run_cell(command: str, name: str, path, folder: Path, inputs: dict) -> Cell:
    if command == "rank":
        return run_rank(path, folder)
    if command == "api":
        return run_api(path, folder, name)
    if command == "report":
        return run_report(path, folder)
    if command == "serve":
        return run_serve(path, folder)
    if command == "accuracy":
        return run_accuracy(path, folder)
    if command == "store-export":
        return run_store_export(path, folder)
    if command == "evaluate":
        return run_evaluate(path, folder, inputs["store-sqlite"])
    args = {"diagnose": ("diagnose", path, "--json"), "anchors": ("anchors", path, "--json"),
            "plan": ("plan", path, "--json"), "store-stats": ("store", "stats", path, "--json")}[command]
    return run_json(*args)


# --- checking a cell against its declaration ------------------------------------------------------------------------

def same_ranking(cell: Cell, expected: list[tuple[str, float]]) -> None:
    """The cell's ranking equals ``expected``: same models, same order, same scores (to the digits a page shows)."""
    assert cell.ranking, f"no ranking found in the output\n{cell!r}"
    assert [m for m, _ in cell.ranking] == [m for m, _ in expected], f"order differs from rank's {expected}"
    for (model, got), (_, want) in zip(cell.ranking, expected):
        if isinstance(got, str):  # a page shows the score rounded: equal to the digits shown
            shown = htmllib.unescape(got).replace(",", "")
            decimals = len(shown.partition(".")[2])
            assert float(shown) == pytest.approx(want, abs=0.5 * 10 ** -decimals + 1e-12), \
                f"{model}: page shows {got}, rank computes {want}"
        else:
            assert got == pytest.approx(want, rel=1e-9, abs=1e-9), f"{model}: {got} ≠ rank's {want}"


def check(cell: Cell, code: str, path, name: str, command: str = "") -> None:
    if code.startswith("E:"):
        assert cell.code != 0, f"expected an error, the command succeeded\n{cell!r}"
        lines = cell.error_lines()
        assert len(lines) == 1 and "Traceback" not in cell.stderr, f"expected one error: line\n{cell!r}"
        assert ERRORS[code[2:]] in lines[0], f"expected {ERRORS[code[2:]]!r} in the error\n{cell!r}"
        return
    assert cell.code == 0, f"expected success\n{cell!r}"
    assert "Traceback" not in cell.stderr, f"a traceback on success\n{cell!r}"
    if code == "R":
        if cell.method is None:  # `rank` itself: the reference of the others
            assert cell.ranking, f"no ranking printed\n{cell!r}"
        else:
            same_ranking(cell, reference(path, cell.method, as_recorded=command in ("report", "serve")))


RUN = sorted((i, c) for (i, c), code in CELLS.items() if code != "-")
WORKERS = 2  # cells run two at a time (each in its own forked process): the matrix takes half the wall time


def _outcome(command: str, name: str, path, folder: Path, inputs: dict):
    """The Cell, or the exception the test's own code raised running it (re-raised by the cell's test)."""
    try:
        cell = run_cell(command, name, path, folder, inputs)
        if cell.code == 0 and CELLS[(name, command)] == "R" and cell.method is not None:
            reference(path, cell.method)  # warm the cache in the pool too
        return cell
    except Exception as exc:  # noqa: BLE001 — reported by the cell's own test
        return exc


@pytest.fixture(scope="module")
def outcomes(inputs, tmp_path_factory) -> dict:
    """Every cell but the PostgreSQL ones, run WORKERS at a time."""
    from concurrent.futures import ThreadPoolExecutor

    base = tmp_path_factory.mktemp("cells")
    todo = [(i, c) for i, c in RUN if i in inputs]
    for i, c in todo:
        (base / f"{i}-{c}").mkdir()
    with ThreadPoolExecutor(WORKERS) as pool:
        futures = {(i, c): pool.submit(_outcome, c, i, inputs[i], base / f"{i}-{c}", inputs) for i, c in todo}
    return {key: f.result() for key, f in futures.items()}


@pytest.mark.parametrize("name,command", [
    pytest.param(i, c, id=f"{c}-{i}", marks=[pytest.mark.postgres] if i == "store-postgresql" else [])
    for i, c in RUN])
def test_cell(name, command, inputs, request, tmp_path):
    """The cell does what EXPECTED declares (module doc)."""
    if name == "store-postgresql":  # evaluate --add-model writes: it gets a copy of its own
        path = postgres_copy(inputs, request.getfixturevalue("pg_server")) if command == "evaluate" else \
            request.getfixturevalue("postgres_store")
        outcome = _outcome(command, name, path, tmp_path, inputs)
    else:
        path, outcome = inputs[name], request.getfixturevalue("outcomes")[(name, command)]
    if isinstance(outcome, Exception):
        raise outcome
    check(outcome, CELLS[(name, command)], path, name, command)


# --- panels of judges (issue 33): rank --panel and the API on every input kind holding several judges --------------

PANEL_EXPECTED = """
input              rank-panel  api-panel  diagnose-panel  report-panel  serve-panel  evaluate-panel  rank      report    store-stats
canonical-jsonl    R           R          D               H             S            -               E:judges  E:judges  E:not-store
canonical-csv      R           R          D               H             S            -               E:judges  E:judges  E:not-store
canonical-parquet  R           R          D               H             S            -               E:judges  E:judges  E:not-store
dataframe          -           R          -               -             -            -               -         -         -
store-sqlite       R           R          D               H             S            V               E:judges  E:judges  ok
"""
PANEL_NOT_APPLICABLE = {
    "dataframe": "a DataFrame exists only in Python: the CLI commands read files, folders and stores",
    "evaluate-panel": "evaluate runs a panel config: of the inputs, only the store is what such a config made",
}
PANEL_CODES = ("R", "D", "H", "S", "V", "ok", "-")
"""R = the panel's ranking (JSON); D = diagnose's figures of the panel; H = the report's HTML; S = the explorer's
leaderboard; V = ``evaluate`` of the panel config that wrote the store (what it lacks judged; a rerun is free)."""
PANEL_ERRORS = {**ERRORS, "judges": "the judgments come from 3 different judges"}
PANEL_CELLS = {(row[0], command): code for row in [line.split() for line in PANEL_EXPECTED.strip().splitlines()[1:]]
               for command, code in zip(PANEL_EXPECTED.split("\n")[1].split()[1:], row[1:])}


@pytest.fixture(scope="module")
def panel_inputs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("panel-matrix")
    made = {}
    for name, build in matrix_inputs.panel_builders().items():
        (base / name).mkdir()
        made[name] = build(base / name)
    return made


def panel_reference(path) -> list[tuple[str, float]]:
    """The panel's ranking computed in this process: the input read, :func:`panel_verdicts`, ``judgewise.rank``."""
    import judgewise
    from judgewise.analysis.panel import panel_verdicts

    frame = judgewise.read_judgments(path).frame
    ranking = judgewise.rank(panel_verdicts(frame, list(matrix_inputs.PANEL_JUDGES)).judgments, "bt")
    return sorted(zip(ranking.models, ranking.scores), key=lambda r: -r[1])


@pytest.mark.parametrize("name,command", [(i, c) for (i, c), code in PANEL_CELLS.items() if code != "-"])
def test_panel_cell(name, command, panel_inputs, tmp_path):
    """A panel cell does what PANEL_EXPECTED declares: R = the panel's ranking, equal to :func:`panel_reference`;
    D = the bias figures of one judge, the panel, and its lines; H = one HTML report whose leaderboard is the
    panel's, with its lines; E:key = one ``error:`` line naming what to do (several judges ranked without --panel)."""
    path, code = panel_inputs[name], PANEL_CELLS[(name, command)]
    members = ",".join(matrix_inputs.PANEL_JUDGES)
    if command == "api-panel":
        import judgewise
        from judgewise.analysis.panel import panel_verdicts

        frame = pd.read_parquet(path) if name == "dataframe" else judgewise.read_judgments(path).frame
        ranking = judgewise.rank(panel_verdicts(frame, list(matrix_inputs.PANEL_JUDGES)).judgments, "bt")
        cli = json.loads(run_cli("rank", path, "--panel", members, "--json").stdout)  # the CLI on the same input
        assert len(cli) == len(matrix_inputs.MODELS)
        assert dict(zip(ranking.models, ranking.scores)) == pytest.approx({r["model"]: r["score"] for r in cli})
        return
    if code in ("S", "V"):
        check_panel_run(code, path, members, tmp_path)
        return
    args = {"rank-panel": ["rank", path, "--panel", members, "--json"], "rank": ["rank", path, "--json"],
            "diagnose-panel": ["diagnose", path, "--panel", members, "--json"],
            "report-panel": ["report", path, "--panel", members, "--bootstrap", "0", "-o", tmp_path / "r.html"],
            "report": ["report", path, "-o", tmp_path / "r.html"], "store-stats": ["store", "stats", path]}[command]
    res = run_cli(*args)
    if code in ("D", "H"):
        assert res.returncode == 0, res.stderr
        check_panel_output(code, res, path, tmp_path)
    elif code == "R":
        assert res.returncode == 0, res.stderr
        got = [(r["model"], r["score"]) for r in json.loads(res.stdout)]
        assert [m for m, _ in got] == [m for m, _ in panel_reference(path)]
        assert [s for _, s in got] == pytest.approx([s for _, s in panel_reference(path)])
        assert "members' agreement: Fleiss' κ" in res.stderr
    elif code == "ok":
        assert res.returncode == 0, res.stderr
        assert all(judge in res.stdout for judge in matrix_inputs.PANEL_JUDGES)
    else:
        errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
        assert res.returncode != 0 and len(errors) == 1 and PANEL_ERRORS[code[2:]] in errors[0], res.stderr
        assert "Traceback" not in res.stderr


def test_every_panel_cell_is_declared():
    """Each panel cell has a known code, and a "-" row or column says why it does not apply."""
    assert set(PANEL_CELLS.values()) <= set(PANEL_CODES) | {f"E:{k}" for k in PANEL_ERRORS}
    for (name, command), code in PANEL_CELLS.items():
        if code == "-":
            assert name in PANEL_NOT_APPLICABLE or command in PANEL_NOT_APPLICABLE, f"{name} × {command}: why not?"


def check_panel_run(code: str, path: Path, members: str, folder: Path) -> None:
    """S: ``serve --panel``'s explorer ranks the models as :func:`panel_reference` (to the digits it shows) and
    shows the panel's lines; V: ``evaluate`` of the panel config beside the store ranks every model, its trust block
    names the members, their κ and calls (the same for each), and a rerun pays no call and ranks the same."""
    if code == "S":
        cell = run_serve(path, folder, "--panel", members)
        assert cell.code == 0, cell
        same_ranking(cell, panel_reference(path))
        assert "panel (majority of labels) of 3 judges" in cell.page and "Fleiss" in cell.page
        return
    work = folder / "evaluate"
    shutil.copytree(Path(path).parent, work)
    runs = [run_cli("evaluate", "-c", work / "run.yaml", "--bootstrap", "0", "--json", cwd=work) for _ in range(2)]
    assert all(res.returncode == 0 for res in runs), runs[0].stderr + runs[1].stderr
    first, again = (json.loads(res.stdout) for res in runs)
    panel = first["trust"]["panel"]
    assert panel["members"] == list(matrix_inputs.PANEL_JUDGES) and panel["kappa"] is not None
    assert first["calls"] == sum(panel["member_calls"].values()) > 0 and len(set(panel["member_calls"].values())) == 1
    assert {r["model"] for r in first["ranking"]} == set(pd.read_json(work / "responses.jsonl", lines=True)["model"])
    assert again["trust"]["paid_calls_this_run"] == 0 and again["ranking"] == first["ranking"]


def check_panel_output(code: str, res, path: Path, folder: Path) -> None:
    """D: ``diagnose --panel --json`` names one judge, the panel, and its members; H: the report's one HTML file
    names the panel, shows its lines, and ranks the models in :func:`panel_reference`'s order."""
    name = f"panel(majority: {', '.join(matrix_inputs.PANEL_JUDGES)})"
    if code == "D":
        out = json.loads(res.stdout)
        assert [j["judge"] for j in out["judges"]] == [name]
        assert out["panel"]["members"] == list(matrix_inputs.PANEL_JUDGES) and out["panel"]["kappa"] is not None
        return
    assert [p.name for p in folder.iterdir()] == ["r.html"]
    html = (folder / "r.html").read_text(encoding="utf-8")
    assert name in html and "panel (majority of labels) of 3 judges" in html and "Fleiss" in html
    board = html[html.index('id="leaderboard"'):]
    shown = sorted(matrix_inputs.MODELS, key=lambda m: board.index(f"<td>{m}</td>"))
    assert shown == [m for m, _ in panel_reference(path)]


# --- every registered rating method --------------------------------------------------------------------------------
# Generated from RATING_METHODS: a method registered in ratings/ranking.py (docs/extending.md) gets its cells without
# an edit here. Each method runs on METHOD_INPUT, which every built-in method rates (an anchor in every row, the
# answers' texts): `rank --method M` prints a ranking, and the Python API and the report with M show that ranking.

METHOD_INPUT = "alpacaeval-folder"
METHOD_COMMANDS = {"rank": run_rank, "api": lambda path, folder, method: run_api(path, folder, METHOD_INPUT, method),
                   "report": run_report}


@pytest.fixture(scope="module")
def method_outcomes(inputs, tmp_path_factory):
    """``outcome(method, command)``: the Cell (or the test's own exception), the method's commands run together
    WORKERS at a time the first time one of them is asked for."""
    from concurrent.futures import ThreadPoolExecutor

    base, done = tmp_path_factory.mktemp("methods"), {}

    def run(method: str, command: str):
        folder = base / f"{method}-{command}"
        folder.mkdir()
        try:
            cell = METHOD_COMMANDS[command](inputs[METHOD_INPUT], folder, method)
            if cell.code == 0 and cell.method is not None:
                reference(inputs[METHOD_INPUT], cell.method)
            return cell
        except Exception as exc:  # noqa: BLE001 — reported by the cell's own test
            return exc

    def outcome(method: str, command: str):
        if method not in done:
            with ThreadPoolExecutor(WORKERS) as pool:
                done[method] = dict(zip(METHOD_COMMANDS, pool.map(lambda c: run(method, c), METHOD_COMMANDS)))
        return done[method][command]
    return outcome


METHOD_GAPS = {  # known failures, strict: the cell's test fails once it passes, to be taken off this list
    ("lc_winrate", "report"): "the report does not pass the input's answer texts to rank(): its leaderboard section "
                              "says the length-controlled win rate needs the responses table",
}


@pytest.mark.parametrize("method,command", [
    pytest.param(m, c, id=f"{c}-{m}", marks=[pytest.mark.xfail(strict=True, reason=METHOD_GAPS[m, c])]
                 if (m, c) in METHOD_GAPS else []) for m in RATING_METHODS.names() for c in METHOD_COMMANDS])
def test_every_rating_method_ranks_from_the_command_line_the_api_and_the_report_alike(method, command, inputs,
                                                                                      method_outcomes):
    """`R` for every registered method on METHOD_INPUT: `rank` prints a ranking of every model, the others show it."""
    outcome = method_outcomes(method, command)
    if isinstance(outcome, Exception):
        raise outcome
    check(outcome, "R", inputs[METHOD_INPUT], METHOD_INPUT, command)
    if command == "rank":
        assert len(outcome.ranking) == 4 and all(isinstance(score, float) for _, score in outcome.ranking), outcome


# --- human-anchored rankings (issue 35): rank --human on every input kind -------------------------------------------
# LABELS is a file of human votes (Chatbot Arena battles) on some of the input's own comparisons, a third of them
# against the judge: R = the rank-sets the library computes from the same input and labels; E:key = one error line.

HUMAN_EXPECTED = """
input              rank-human
canonical-jsonl    R
canonical-json     R
canonical-csv      R
canonical-parquet  R
dataframe          -
battles-jsonl      R
battles-json       R
battles-parquet    R
alpacaeval-folder  R
games-v0.1         R
games-v2.0         R
mtbench-pair       R
mtbench-single     E:hum
rubric-grades      E:hum
mtbench-folder     R
mtbench-answers    E:rsp
arenahard-answers  E:rsp
judgebench         R
autoarena-csv      R
autoarena-parquet  R
peereval           R
store-sqlite       R
store-postgresql   -
"""
HUMAN_ERRORS = {**ERRORS, "hum": "--human anchors pairwise judgments to human pairwise labels"}
HUMAN_CELLS = {line.split()[0]: line.split()[1] for line in HUMAN_EXPECTED.strip().splitlines()[1:]}
HUMAN_NOT_APPLICABLE = {"dataframe": NOT_APPLICABLE["dataframe"],
                        "store-postgresql": "a PostgreSQL store reads as the SQLite one (the main matrix's cells)"}


def human_votes(path, folder: Path) -> Path:
    """A battles file of human votes on up to 60 of ``path``'s comparisons (a dummy vote when it holds none)."""
    from judgewise.errors import JudgewiseError
    from judgewise.store.reading import read_rated

    try:
        frame = read_rated(path)[0].drop_duplicates(["prompt_id", "model_a", "model_b"]).head(60)
    except JudgewiseError:  # grades or answers: the command's own error is the cell's
        frame = pd.DataFrame({"prompt_id": ["q"], "model_a": ["a"], "model_b": ["b"], "outcome": [1.0]})
    names = {1.0: "model_a", 0.0: "model_b", 0.5: "tie"}
    with open(folder / "human.jsonl", "w", encoding="utf-8") as fh:
        for i, r in enumerate(frame.itertuples()):
            outcome = 1.0 - r.outcome if i % 3 == 0 else r.outcome  # a third against the judge
            fh.write(json.dumps({"question_id": str(r.prompt_id), "model_a": r.model_a, "model_b": r.model_b,
                                 "winner": names.get(round(float(outcome) * 2) / 2, "tie")}) + "\n")
    return folder / "human.jsonl"


@pytest.mark.parametrize("name", [n for n, code in HUMAN_CELLS.items() if code != "-"])
def test_human_cell(name, inputs, tmp_path):
    """A human-anchored cell does what HUMAN_EXPECTED declares (R: the library's rank-sets of the same input)."""
    from judgewise.analysis.human_anchored import human_anchored
    from judgewise.analysis.human_pairs import match_labels
    from judgewise.store.reading import read_rated

    path, code = inputs[name], HUMAN_CELLS[name]
    labels = human_votes(path, tmp_path)
    res = run_cli("rank", path, "--human", labels, "--bootstrap", "0", "--json")
    if code.startswith("E:"):
        errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
        assert res.returncode != 0 and len(errors) == 1 and HUMAN_ERRORS[code[2:]] in errors[0], res.stderr
        assert "Traceback" not in res.stderr
        return
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)["human_anchored"]
    matched = match_labels(read_rated(path)[0], read_rated(labels)[0])
    want = human_anchored(matched.labelled, matched.unlabelled, matched.models, 0.05)
    assert got["n_human"] == want.n_human > 0 and got["labels"]["unmatched"] == 0
    assert [m["model"] for m in got["models"]] == want.models
    assert [m["rank_set"] for m in got["models"]] == [[int(lo), int(hi)] for lo, hi in zip(want.lo, want.hi)]


def test_every_input_has_a_human_cell_and_every_dash_a_reason():
    assert set(HUMAN_CELLS) == set(matrix_inputs.builders(SHARED)) | {"dataframe", "store-postgresql"}
    assert {n for n, code in HUMAN_CELLS.items() if code == "-"} == set(HUMAN_NOT_APPLICABLE)
