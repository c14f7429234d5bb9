"""Inputs and outputs that are not regular files: pipes and FIFOs read once, devices refused, ``--output`` onto a
FIFO, a device or ``/dev/stdout`` refused, and ``--output`` hitting the file-size limit (EFBIG) leaves nothing."""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
import threading
from pathlib import Path

from tests.support.bad_inputs.inputs import csv_text, jsonl, judgments
from tests.support import REPO, run_cli

ROWS = judgments(n_prompts=6)
BATTLES = [{"question_id": r["prompt_id"], "model_a": r["model_a"], "model_b": r["model_b"],
            "winner": {1.0: "model_a", 0.0: "model_b"}.get(r["outcome"], "tie")} for r in ROWS]


def _scores(stdout: str) -> dict:
    return {row["model"]: row["score"] for row in json.loads(stdout)}


def _ranked(*args, cwd: Path) -> dict:
    res = run_cli("rank", *args, "--json", cwd=cwd, timeout=60)
    assert res.returncode == 0, res.stderr
    return _scores(res.stdout)


def _feed_fifo(path: Path, data: bytes) -> threading.Thread:
    """Write ``data`` into the FIFO ``path`` once a reader opens it (one reader only: a second open would block)."""
    os.mkfifo(path)

    def feed():
        with open(path, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return thread


def _piped(args: list[str], data: bytes, cwd: Path) -> subprocess.CompletedProcess:
    """``judgewise ARGS`` in a new interpreter with ``data`` on its standard input (a pipe)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "judgewise.cli.app", *args], input=data, cwd=cwd, env=env,
                          capture_output=True, timeout=120)


def test_a_fifo_named_as_a_jsonl_file_is_read_once_and_ranked_as_the_file(tmp_path):
    (tmp_path / "j.jsonl").write_text(jsonl(ROWS))
    feeder = _feed_fifo(tmp_path / "fifo.jsonl", jsonl(ROWS).encode())
    assert _ranked("fifo.jsonl", cwd=tmp_path) == _ranked("j.jsonl", cwd=tmp_path)
    feeder.join(5)
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo.jsonl").st_mode)


def test_a_fifo_of_arena_battles_is_detected_by_its_keys_and_read_whole(tmp_path):
    (tmp_path / "b.jsonl").write_text(jsonl(BATTLES))
    _feed_fifo(tmp_path / "fifo", jsonl(BATTLES).encode())  # no suffix: detection reads the first record
    assert _ranked("fifo", cwd=tmp_path) == _ranked("b.jsonl", cwd=tmp_path)


def test_canonical_jsonl_on_stdin_is_detected_and_ranked_as_the_file(tmp_path):
    (tmp_path / "j.jsonl").write_text(jsonl(ROWS))
    res = _piped(["rank", "/dev/stdin", "--json"], jsonl(ROWS).encode(), tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    assert _scores(res.stdout.decode()) == _ranked("j.jsonl", cwd=tmp_path)


def test_a_csv_on_stdin_read_with_format_csv_is_ranked_as_the_file(tmp_path):
    (tmp_path / "j.csv").write_text(csv_text(ROWS))
    res = _piped(["rank", "/dev/stdin", "--format", "csv", "--json"], csv_text(ROWS).encode(), tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    assert _scores(res.stdout.decode()) == _ranked("j.csv", cwd=tmp_path)


def test_a_bad_row_on_stdin_is_named_by_the_pipe_and_its_row(tmp_path):
    rows = [dict(r) for r in ROWS]
    rows[4]["outcome"] = "abc"
    res = _piped(["rank", "/dev/stdin"], jsonl(rows).encode(), tmp_path)
    err = res.stderr.decode().strip().splitlines()
    assert res.returncode == 2 and err[-1].startswith("error: /dev/stdin row 5") and '"outcome"' in err[-1], err


def test_a_device_as_input_is_refused_without_reading_it(tmp_path):
    res = run_cli("rank", "/dev/zero", cwd=tmp_path, timeout=30)
    assert res.returncode == 2 and res.stderr.strip() == (
        "error: /dev/zero: is a device, not a file: give a file, or pipe the data in "
        "(e.g. cat FILE | judgewise ... /dev/stdin)")


def test_output_onto_a_fifo_is_refused_and_the_fifo_kept(tmp_path):
    (tmp_path / "j.jsonl").write_text(jsonl(ROWS))
    os.mkfifo(tmp_path / "out.json")
    res = run_cli("rank", "j.jsonl", "--output", "out.json", cwd=tmp_path, timeout=30)
    assert res.returncode == 2 and "out.json: is a FIFO, not a regular file" in res.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "out.json").st_mode)


def test_output_onto_a_device_or_a_link_to_a_stream_is_refused(tmp_path):
    (tmp_path / "j.jsonl").write_text(jsonl(ROWS))
    res = run_cli("rank", "j.jsonl", "--output", "/dev/null", cwd=tmp_path, timeout=30)
    assert res.returncode == 2 and "/dev/null: is a device, not a regular file" in res.stderr
    (tmp_path / "stdout.json").symlink_to("/proc/self/fd/1")
    res = run_cli("rank", "j.jsonl", "--output", "stdout.json", cwd=tmp_path, timeout=30)
    assert res.returncode == 2 and "stdout.json: is a link to a stream" in res.stderr, res.stderr
    assert (tmp_path / "stdout.json").is_symlink()


def test_output_through_a_symlink_writes_the_file_it_points_to_and_keeps_the_link(tmp_path):
    (tmp_path / "j.jsonl").write_text(jsonl(ROWS))
    (tmp_path / "link.json").symlink_to("real.json")
    res = run_cli("rank", "j.jsonl", "--output", "link.json", cwd=tmp_path, timeout=30)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "link.json").is_symlink() and _scores((tmp_path / "real.json").read_text())


def test_output_hitting_the_file_size_limit_is_a_clean_error_and_keeps_the_old_file(tmp_path):
    (tmp_path / "j.jsonl").write_text(jsonl(ROWS))
    (tmp_path / "r.json").write_text("old\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))  # noqa: E731 (EFBIG past 64 bytes)
    res = subprocess.run([sys.executable, "-m", "judgewise.cli.app", "rank", "j.jsonl", "--output", "r.json"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert res.returncode == 2 and res.stderr.strip().splitlines()[-1] == \
        "error: r.json: cannot write (File too large); nothing was written"
    assert (tmp_path / "r.json").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.jsonl", "r.json"]
