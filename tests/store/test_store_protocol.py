"""Every store satisfies its Protocol (store/protocol.py): each member present with a compatible signature, and
``isinstance`` true on real stores — a SQLite file, a PostgreSQL database (skipped, with the reason, where no server
can run), the generation store. ``make test`` checks the same statically (mypy on src/judgewise/store)."""

from __future__ import annotations

import inspect

import pytest

from judgewise.store.generations import GenerationStore
from judgewise.store.judgments import JudgmentStore
from judgewise.store.opening import open_store, open_store_for_planning, open_store_readonly
from judgewise.store.postgres import PgJudgmentStore
from judgewise.store.protocol import (AnswerJournal, BatchLedger, HumanLabelStore, JudgmentStoreLike, ResultStore,
                                      SharedQueue)

from tests.support.pg_server import pg_server, pg_url  # noqa: F401 (fixtures)

DUNDERS = ("__enter__", "__exit__")
CLASSES = [(JudgmentStore, JudgmentStoreLike), (PgJudgmentStore, JudgmentStoreLike), (GenerationStore, ResultStore),
           (PgJudgmentStore, SharedQueue), (JudgmentStore, HumanLabelStore), (PgJudgmentStore, HumanLabelStore),
           (JudgmentStore, BatchLedger), (PgJudgmentStore, BatchLedger), (GenerationStore, BatchLedger)]


def members(protocol: type) -> dict[str, object]:
    """name → the Protocol's declaration (a function or a property), over it and the Protocols it extends."""
    out: dict[str, object] = {}
    for cls in reversed(protocol.__mro__):
        if getattr(cls, "_is_protocol", False) and cls is not object:
            out.update({name: value for name, value in vars(cls).items()
                        if (not name.startswith("_") or name in DUNDERS) and (callable(value) or
                                                                             isinstance(value, property))})
    return out


def mismatches(cls: type, protocol: type) -> list[str]:
    """What ``cls`` lacks of ``protocol``: members missing, methods that are not methods, parameters missing or of
    another kind, defaults the Protocol has and the class not, and required parameters the Protocol does not pass."""
    found = []
    for name, declared in members(protocol).items():
        if isinstance(declared, property):
            continue  # an instance attribute: checked on real instances (hasattr, isinstance)
        have = inspect.getattr_static(cls, name, None)
        if have is None:
            found.append(f"{name}: missing")
            continue
        if isinstance(have, (classmethod, staticmethod)) or not callable(have):
            found.append(f"{name}: not a method")
            continue
        found += [f"{name}: {problem}" for problem in _signature_problems(inspect.signature(declared),
                                                                          inspect.signature(have))]
    return found


def _signature_problems(want: inspect.Signature, got: inspect.Signature) -> list[str]:
    problems = []
    params = dict(got.parameters)
    variadic = {p.kind for p in params.values() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    for p in want.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            if p.kind not in variadic:
                problems.append(f"takes no {'*' if p.kind == p.VAR_POSITIONAL else '**'}{p.name}")
            continue
        mine = params.pop(p.name, None)
        if mine is None:
            if not (p.kind == p.KEYWORD_ONLY and p.VAR_KEYWORD in variadic):
                problems.append(f"no parameter {p.name!r}")
            continue
        if mine.kind != p.kind and not (p.kind == p.KEYWORD_ONLY and mine.kind == p.POSITIONAL_OR_KEYWORD):
            problems.append(f"{p.name!r} is {mine.kind.description}, the Protocol's {p.kind.description}")
        if p.default is not p.empty and mine.default is p.empty:
            problems.append(f"{p.name!r} has no default")
    problems += [f"{p.name!r} is required" for p in params.values()
                 if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return problems


@pytest.mark.parametrize(("cls", "protocol"), CLASSES, ids=lambda x: x.__name__)
def test_each_store_class_has_every_member_of_its_protocol_with_a_compatible_signature(cls, protocol):
    assert members(protocol), protocol
    assert mismatches(cls, protocol) == []


def test_the_check_names_a_missing_member_and_an_incompatible_signature():
    class Broken(JudgmentStore):
        modes = 3  # type: ignore[assignment]

        def count(self, status, extra):  # type: ignore[override]
            return 0

        def claim(self, key, retry_failed=False):  # keyword-only in the Protocol: still accepted by keyword
            return "claimed"

        def stats(self, *, by):  # type: ignore[override]
            return {}

    assert mismatches(Broken, JudgmentStoreLike) == [
        "count: 'status' has no default", "count: 'extra' is required", "modes: not a method",
        "stats: 'by' is required"]
    assert "record: missing" in mismatches(object, ResultStore)


def test_a_sqlite_store_in_every_opening_is_a_judgment_store(tmp_path):
    path = tmp_path / "s.sqlite"
    with open_store(path) as store:
        assert isinstance(store, JudgmentStoreLike) and isinstance(store, ResultStore)
        assert isinstance(store, AnswerJournal) and not isinstance(store, SharedQueue)
    with open_store_readonly(path) as reader, open_store_for_planning(tmp_path / "new.sqlite") as empty:
        assert isinstance(reader, JudgmentStoreLike) and isinstance(empty, JudgmentStoreLike)
    assert not isinstance(object(), ResultStore)


def test_the_generation_store_is_what_the_engine_needs_and_not_a_judgment_store(tmp_path):
    with GenerationStore(tmp_path / "g.sqlite") as store:
        assert isinstance(store, ResultStore) and not isinstance(store, JudgmentStoreLike)


@pytest.mark.postgres
def test_a_postgresql_store_is_a_judgment_store_with_a_shared_queue(pg_url):
    with open_store(pg_url) as store:
        assert isinstance(store, PgJudgmentStore)
        assert isinstance(store, JudgmentStoreLike) and isinstance(store, SharedQueue)
    with open_store_readonly(pg_url) as reader:
        assert isinstance(reader, JudgmentStoreLike)
