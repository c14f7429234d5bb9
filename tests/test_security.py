"""Hostile input meets the parts that touch the world: file writes, the judge CLI with a shared template,
the Markdown/HTML reports and the explorer's HTTP server."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from judgewise.errors import InputError
from judgewise.io.atomic import atomic_target, write_text_atomic

from tests.conftest import run_cli


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask():
    """Set the process umask for one test and restore it afterwards."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda value: os.umask(value)
    os.umask(old)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o755])
def test_an_atomic_rewrite_keeps_the_existing_files_mode(tmp_path, mode):
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    target.chmod(mode)
    write_text_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "new" and _mode(target) == mode


def test_an_atomic_rewrite_of_a_read_only_file_keeps_it_read_only(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o444)
    write_text_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "new" and _mode(target) == 0o444


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_a_new_atomic_file_gets_the_usual_umask_mode(tmp_path, umask, mask, expected):
    umask(mask)
    target = write_text_atomic(tmp_path / "new.txt", "x")
    assert _mode(target) == expected


def test_an_atomic_write_to_a_directory_is_an_input_error_naming_it(tmp_path):
    folder = tmp_path / "report.html"
    folder.mkdir()
    (folder / "keep").write_text("k", encoding="utf-8")
    with pytest.raises(InputError, match=r"report\.html.*is a directory"):
        write_text_atomic(folder, "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    assert [p.name for p in folder.iterdir()] == ["keep"]


def test_an_atomic_write_under_a_file_or_missing_folder_is_an_input_error(tmp_path):
    (tmp_path / "plain").write_text("p", encoding="utf-8")
    with pytest.raises(InputError, match="not a directory"):
        write_text_atomic(tmp_path / "plain" / "out.txt", "x")
    with pytest.raises(InputError, match="does not exist"):
        write_text_atomic(tmp_path / "missing" / "out.txt", "x")


def test_a_failed_atomic_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError):
        with atomic_target(target) as tmp:
            tmp.write_text("half", encoding="utf-8")
            raise RuntimeError("writer crashed")
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"] and target.read_text(encoding="utf-8") == "old"
