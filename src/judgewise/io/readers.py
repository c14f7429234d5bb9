"""Public readers: ``read_any`` (detect the format, read a canonical Table) and per-table ``read_judgments`` etc.

Built-in formats, in detection order (see :mod:`judgewise.io.formats` to add your own):

==================== ===========================================================================================
``alpacaeval``        AlpacaEval results directory or one annotations.json (judgments + responses)
``autoarena``         AutoArena head-to-head CSV/Parquet ``prompt, model_a, model_b, response_a, response_b, winner``
``peereval``          PeerEval judgments JSONL (``peereval judge`` output; :mod:`.peereval`)
``arenahard-battles`` Arena-Hard / Chatbot Arena battles ``{question_id, model_a, model_b, winner}`` (judgments)
``arenahard-games``   Arena-Hard ``model_judgment`` files with 5-way ``games`` (judgments)
``mtbench``           MT-bench data folder: question.jsonl + model_answer/ (responses with turns; :mod:`.mtbench`)
``mtbench-judgments`` MT-bench ``model_judgment/*_single.jsonl`` (grades) / ``*_pair.jsonl`` (judgments)
``mtbench-answers``   FastChat ``model_answer/*.jsonl`` (responses with every turn in ``turns``)
``arenahard-answers`` Arena-Hard ``model_answer/*.jsonl`` (responses)
``judgebench``        JudgeBench judge outputs (judgments, or scores via ``read_scores``; :mod:`.judgebench`)
``jsonl``/``json``/``csv``/``parquet``  canonical tables; which table is inferred from the columns
==================== ===========================================================================================
"""

from __future__ import annotations

import inspect
from functools import partial

import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.io import alpacaeval, arenahard, autoarena, judgebench, mtbench, peereval
from judgewise.io.canonical import from_dataframe
from judgewise.io.columnar import read_canonical_fast
from judgewise.io.formats import Probe, detect_format, get_format, register_format
from judgewise.io.streams import read_once
from judgewise.io.tables import Table

CANONICAL_SUFFIXES = {"jsonl": (".jsonl", ".ndjson"), "json": (".json",), "csv": (".csv",),
                      "parquet": (".parquet", ".pq")}


def _read_judgebench(path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """JudgeBench games (judgments), or per-item scores of every judge plus the label when scores are wanted."""
    if kind == "scores":
        return judgebench.read_judgebench_scores(path, skip_invalid=skip_invalid)
    return judgebench.read_judgebench(path, skip_invalid=skip_invalid)


def _looks_like_judgebench(probe: Probe) -> bool:
    if probe.is_dir:
        return any(probe.path.glob("*judge_name-*.jsonl")) or any(probe.path.glob("outputs/*judge_name-*.jsonl"))
    return {"pair_id", "judgments"} <= probe.keys


def _register_builtins() -> None:
    register_format("alpacaeval", detect=alpacaeval.looks_like_alpacaeval, read=alpacaeval.read_alpacaeval,
                    description="AlpacaEval results dir (results/<model>/<annotator>/annotations.json)",
                    containers=("dir", "json"))
    register_format("autoarena", detect=autoarena.looks_like_autoarena, read=autoarena.read_autoarena,
                    description="AutoArena head-to-head {prompt, model_a, model_b, response_a, response_b, winner}",
                    containers=("csv", "parquet"))
    register_format("peereval", detect=peereval.looks_like_peereval, read=peereval.read_peereval,
                    description="PeerEval judgments JSONL {question_id, solver_left, solver_right, judgment}",
                    containers=("jsonl",))
    register_format("arenahard-battles", detect=arenahard.looks_like_battles, read=arenahard.read_battles,
                    description="Arena-Hard battles {question_id, model_a, model_b, winner}",
                    containers=("dir", "json", "jsonl", "parquet"))
    register_format("arenahard-games", detect=arenahard.looks_like_games, read=arenahard.read_games,
                    description="Arena-Hard model_judgment files with 5-way games", containers=("dir", "jsonl"))
    register_format("mtbench", detect=mtbench.looks_like_folder, read=mtbench.read_folder,
                    description="MT-bench data folder (question.jsonl + model_answer/, FastChat llm_judge layout)",
                    containers=("dir",))
    register_format("mtbench-judgments", detect=mtbench.looks_like_judgments, read=mtbench.read_judgments,
                    description="MT-bench model_judgment/*_single.jsonl (grades) or *_pair.jsonl (judgments)",
                    containers=("dir", "jsonl"))
    register_format("mtbench-answers", detect=mtbench.looks_like_answers, read=mtbench.read_answers,
                    description="MT-bench / FastChat model_answer/*.jsonl with every turn (responses)",
                    containers=("dir", "jsonl"))
    register_format("arenahard-answers", detect=arenahard.looks_like_answers, read=arenahard.read_answers,
                    description="Arena-Hard model_answer/*.jsonl (responses)", containers=("dir", "jsonl"))
    register_format("judgebench", detect=_looks_like_judgebench, read=_read_judgebench,
                    description="JudgeBench judge outputs (outputs/*judge_name-*.jsonl)", containers=("dir", "jsonl"))
    for container, suffixes in CANONICAL_SUFFIXES.items():
        register_format(container, detect=lambda p, c=container, s=suffixes: not p.is_dir and (
                            p.suffix in s or (not p.suffix and _sniffed(p) == c)),
                        read=partial(read_canonical_fast, container=container),
                        description=f"canonical table as {container}", containers=(container,))


def _sniffed(probe: Probe) -> str | None:
    """The canonical container a file without a suffix (``/dev/stdin``, ``<(...)``) holds, guessed from its first
    bytes: Parquet's magic number, a JSON list, a JSON object (JSONL); None otherwise."""
    head = probe.head.lstrip()
    if head.startswith("PAR1"):
        return "parquet"
    return {"[": "json", "{": "jsonl"}.get(head[:1])


_register_builtins()


def read_any(source, format: str | None = None, skip_invalid: bool = False, *, kind: str | None = None,
             options: dict | None = None) -> Table:
    """Read ``source`` (a path, or a pandas DataFrame) into a canonical Table, detecting the format unless given.

    Bad rows raise :class:`InputError` naming file, row, field, expected and found; with ``skip_invalid=True``
    they are skipped and counted in ``table.report``. ``kind`` (judgments/responses/scores) is a hint for
    canonical files. ``options``: reader options of the format (e.g. Arena-Hard games' ``baseline``); a format
    whose reader has no such option is a ConfigError.
    """
    options = {k: v for k, v in (options or {}).items() if v is not None}
    if isinstance(source, pd.DataFrame):
        _check_options(options, from_dataframe, "a DataFrame")
        return from_dataframe(source, kind=kind, skip_invalid=skip_invalid)
    path = read_once(source)  # a pipe: read once into a temporary copy that every reader below may reopen
    if format is not None and not path.exists():
        raise InputError("no such file or directory", file=str(path))
    fmt = get_format(format) if format else detect_format(path)
    _check_options(options, fmt.read, f"format {fmt.name}")
    return fmt.read(path, skip_invalid=skip_invalid, kind=kind, **options)


OPTION_FLAGS = {"baseline": "--baseline", "config": "--arena-hard-config"}
"""The command-line options that set a reader option (Arena-Hard games'), named in the error of a misplaced one."""


def _check_options(options: dict, reader, what: str) -> None:
    """ConfigError naming the reader options that ``reader`` does not take."""
    unknown = [k for k in options if k not in inspect.signature(reader).parameters]
    if unknown:
        named = [f"{k} ({OPTION_FLAGS[k]})" if k in OPTION_FLAGS else k for k in unknown]
        raise ConfigError(f"{what} takes no option {', '.join(named)} (it applies to another input format)")


def _read_kind(kind: str, source, format: str | None, skip_invalid: bool, options: dict | None = None) -> Table:
    table = read_any(source, format, skip_invalid, kind=kind, options=options)
    if table.kind == kind:
        return table
    extra = table.extras.get(kind)
    if isinstance(extra, Table):
        return extra
    raise InputError(f"holds a {table.kind} table, not {kind} (format {table.report.format})", file=str(
        "<DataFrame>" if isinstance(source, pd.DataFrame) else source))


def read_judgments(source, format: str | None = None, skip_invalid: bool = False, *,
                   options: dict | None = None) -> Table:
    """A canonical pairwise judgments table (``prompt_id, model_a, model_b, judge, outcome``) from any format;
    ``options`` go to the format's reader (:func:`read_any`)."""
    return _read_kind("judgments", source, format, skip_invalid, options)


def read_responses(source, format: str | None = None, skip_invalid: bool = False) -> Table:
    """A canonical responses table (``prompt_id, model, text``); AlpacaEval dirs give their model outputs."""
    return _read_kind("responses", source, format, skip_invalid)


def read_grades(source, format: str | None = None, skip_invalid: bool = False) -> Table:
    """A pointwise grades table (``prompt_id, model, judge, score``; e.g. MT-bench ``*_single.jsonl``)."""
    return _read_kind("grades", source, format, skip_invalid)


def read_scores(source, format: str | None = None, skip_invalid: bool = False) -> Table:
    """A canonical pointwise scores table (``item_id, rater, score``)."""
    return _read_kind("scores", source, format, skip_invalid)
