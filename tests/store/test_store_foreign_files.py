"""Issue 10: store commands on files that are not judgewise stores — a SQLite database of something else, a
non-SQLite file, a store of a newer schema — refuse with one line naming the file and never write to it;
a new or empty file becomes a store."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from contextlib import closing

import pytest

from judgewise.errors import InputError
from judgewise.store.judgments import SCHEMA_VERSION, JudgmentStore

from tests.support import run_cli
from tests.support.judging import write_config


def _foreign_sqlite(path):
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE users (id INTEGER, name TEXT)")
        db.execute("INSERT INTO users VALUES (1, 'ada')")
    return path


def _text_file(path):
    path.write_text("id,name\n1,ada\n")
    return path


def _newer_store(path):
    JudgmentStore(path).close()
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE meta SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    return path


KINDS = {"foreign_sqlite": (_foreign_sqlite, "a SQLite database that is not a judgewise store (its tables: users)"),
         "text_file": (_text_file, "not a SQLite file"),
         "newer_schema": (_newer_store, f"schema version {SCHEMA_VERSION + 1}, newer than this judgewise reads")}


def _snapshot(folder):
    """Every file's content hash; SQLite's shared-memory index (-shm, rewritten by any reader) by name only."""
    return {p.name: p.name.endswith("-shm") or hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


def _one_error_line(res, path, expected: str) -> None:
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2, res.stderr
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert str(path) in lines[0] and expected in lines[0], lines[0]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("command", [["store", "export", "{f}", "-o", "out.jsonl"], ["store", "stats", "{f}"],
                                     ["store", "stats", "{f}", "--json"]])
def test_store_commands_refuse_a_file_that_is_not_a_store_without_writing_to_it(tmp_path, kind, command):
    make, expected = KINDS[kind]
    path = make(tmp_path / "data.sqlite")
    before = _snapshot(tmp_path)
    res = run_cli(*[a.format(f=path.name) for a in command], cwd=tmp_path)
    _one_error_line(res, path.name, expected)
    assert _snapshot(tmp_path) == before  # nothing written, no output, no -wal/-shm beside it


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_judge_refuses_a_store_path_that_is_not_a_store_without_writing_to_it(tmp_path, kind):
    make, expected = KINDS[kind]
    config = write_config(tmp_path, "http://127.0.0.1:9/v1", n_prompts=2, models=["m1", "m2"])
    path = make(tmp_path / "other.sqlite")
    before = _snapshot(tmp_path)
    res = run_cli("judge", "-c", config, "--store", path.name, "--no-progress", cwd=tmp_path)
    _one_error_line(res, path.name, expected)
    assert _snapshot(tmp_path) == before


def test_a_new_empty_file_or_empty_sqlite_database_becomes_a_store(tmp_path):
    (tmp_path / "empty.sqlite").write_bytes(b"")
    with closing(sqlite3.connect(tmp_path / "blank.sqlite")) as db:  # a valid SQLite file with no tables
        db.execute("PRAGMA user_version = 0")
        db.execute("VACUUM")
    for name in ("new.sqlite", "empty.sqlite", "blank.sqlite"):
        JudgmentStore(tmp_path / name).close()
        with JudgmentStore.open_readonly(tmp_path / name) as store:
            assert store.count() == 0 and store.stats()["games"] == 0


def test_open_readonly_never_writes_and_refuses_what_is_not_a_store(tmp_path):
    with pytest.raises(InputError, match="no such store file"):
        JudgmentStore.open_readonly(tmp_path / "missing.sqlite")
    (tmp_path / "d.sqlite").mkdir()
    with pytest.raises(InputError, match="d.sqlite: a directory, not a store file"):
        JudgmentStore.open_readonly(tmp_path / "d.sqlite")
    (tmp_path / "empty.sqlite").write_bytes(b"")
    with pytest.raises(InputError, match="empty.sqlite: empty, not a judgewise store"):
        JudgmentStore.open_readonly(tmp_path / "empty.sqlite")
    JudgmentStore(tmp_path / "s.sqlite").close()
    with JudgmentStore.open_readonly(tmp_path / "s.sqlite") as store:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.note_maybe_charged()  # logged and swallowed by design ...
            store._db.execute("DELETE FROM games")  # ... but the connection itself is read-only
    assert not (tmp_path / "missing.sqlite").exists()


@pytest.mark.parametrize("version", ["99", "x", None])
def test_generation_tables_of_a_newer_or_no_schema_version_are_refused_naming_the_file(tmp_path, version):
    from judgewise.store.generations import SCHEMA_VERSION as GENERATION_VERSION, GenerationStore

    path = tmp_path / "g.sqlite"
    GenerationStore(path).close()
    with closing(sqlite3.connect(path)) as db, db:
        if version is None:
            db.execute("DELETE FROM generation_meta")
        else:
            db.execute("UPDATE generation_meta SET value = ? WHERE name = 'schema_version'", (version,))
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    expected = (f"generation tables of schema version 99, newer than this judgewise reads ({GENERATION_VERSION})"
                if version == "99" else f"generation tables without a valid schema version (found {version!r})")
    for opening in (GenerationStore, GenerationStore.open_readonly):
        with pytest.raises(InputError, match=re.escape(expected)) as err:
            opening(path)
        assert str(path) in str(err.value)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
