"""One file under two names (a hard link, a symbolic link, ``./x``, an absolute path) is found by its inode:
``rank A B`` and ``store copy`` refuse it; ``store copy`` into a read-only or immutable place, onto a FIFO or a
device, and a store URL that cannot be split into parts, are one clean ``error:`` line."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.support.bad_inputs.inputs import jsonl, judgments, store
from tests.support import run_cli

SPELLINGS = ["hard", "soft", "dot", "absolute"]


def _other_name(tmp_path, name: str, how: str) -> str:
    """Another name of ``tmp_path / name``: a hard link, a symbolic link, ``./name`` or the absolute path."""
    if how == "hard":
        os.link(tmp_path / name, tmp_path / f"hard-{name}")
        return f"hard-{name}"
    if how == "soft":
        (tmp_path / f"soft-{name}").symlink_to(name)
        return f"soft-{name}"
    return f"./{name}" if how == "dot" else str(tmp_path / name)


@pytest.mark.parametrize("how", SPELLINGS)
def test_rank_refuses_one_judgments_file_given_under_two_names(tmp_path, how):
    (tmp_path / "j.jsonl").write_text(jsonl(judgments()))
    other = _other_name(tmp_path, "j.jsonl", how)
    res = run_cli("rank", "j.jsonl", other, cwd=tmp_path, timeout=60)
    assert res.returncode == 2, res.stdout
    assert res.stderr.strip() == (f"error: {os.path.normpath(other) if how == 'dot' else other}: given twice as an "
                                  "input (the same file as j.jsonl, under this or another name: a link, ./, an "
                                  "absolute path): its rows would count twice; give each input once")


def test_rank_still_ranks_two_files_with_equal_content(tmp_path):
    (tmp_path / "a.jsonl").write_text(jsonl(judgments()))
    shutil.copy(tmp_path / "a.jsonl", tmp_path / "b.jsonl")
    res = run_cli("rank", "a.jsonl", "b.jsonl", cwd=tmp_path, timeout=60)
    assert res.returncode == 0 and "from 2 inputs" in res.stdout, res.stderr


def test_rank_refuses_one_store_given_under_two_names(tmp_path):
    store(tmp_path)
    other = _other_name(tmp_path, "s.sqlite", "hard")
    res = run_cli("rank", "s.sqlite", other, cwd=tmp_path, timeout=60)
    assert res.returncode == 2 and "hard-s.sqlite: given twice as an input" in res.stderr, res.stderr


@pytest.mark.parametrize("how", SPELLINGS)
def test_store_copy_onto_itself_is_refused_whatever_the_spelling(tmp_path, how):
    path = store(tmp_path)
    before = path.read_bytes()
    other = _other_name(tmp_path, "s.sqlite", how)
    res = run_cli("store", "copy", "s.sqlite", other, cwd=tmp_path, timeout=60)
    assert res.returncode == 2 and "source and target are the same store" in res.stderr, res.stderr
    assert path.read_bytes() == before


def test_store_copy_into_a_read_only_place_is_a_clean_error(tmp_path):
    store(tmp_path)
    res = run_cli("store", "copy", "s.sqlite", "/proc/judgewise-copy.sqlite", cwd=tmp_path, timeout=60)
    assert res.returncode == 2 and res.stderr.strip().splitlines()[-1].startswith(
        "error: /proc/judgewise-copy.sqlite: cannot open the store for writing"), res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("what", ["file", "folder"])
def test_store_copy_onto_an_immutable_file_or_into_an_immutable_folder_is_a_clean_error(tmp_path, what):
    store(tmp_path)
    target = tmp_path / "locked"
    if what == "file":
        store(tmp_path, name="locked")
    else:
        target.mkdir()
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", target], capture_output=True).returncode:
        pytest.skip("chattr +i is not available here (needs root on a file system with attributes)")
    try:
        res = run_cli("store", "copy", "s.sqlite", "locked" if what == "file" else "locked/x.sqlite", cwd=tmp_path,
                      timeout=60)
    finally:
        subprocess.run(["chattr", "-i", target], check=True)
    assert res.returncode == 2 and "cannot open the store for writing" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("url", ["postgresql://u:secret@[::1/db", "postgresql://u:secret@[zz]:5432/db"])
@pytest.mark.parametrize("command", [["store", "stats"], ["rank"], ["store", "copy", "s.sqlite"]])
def test_a_malformed_ipv6_store_url_is_one_error_line_without_the_password(tmp_path, url, command):
    store(tmp_path)
    res = run_cli(*command, url, cwd=tmp_path, timeout=60)
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().startswith("error: the store URL postgresql://... is malformed"), res.stderr
    assert "secret" not in res.stderr + res.stdout and len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("target", ["fifo.sqlite", "/dev/null"])
def test_store_copy_onto_a_fifo_or_device_is_refused_without_blocking(tmp_path, target):
    store(tmp_path)
    os.mkfifo(tmp_path / "fifo.sqlite")
    res = run_cli("store", "copy", "s.sqlite", target, cwd=tmp_path, timeout=60)
    assert res.returncode == 2 and f"{target}: is a FIFO, device or socket, not a store file" in res.stderr, \
        res.stderr
