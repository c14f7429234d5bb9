"""The progress bar of large files read in chunks (io.progress, commands.progress): its final state is the file's
size; nothing is drawn off a terminal unless JUDGEWISE_PROGRESS=1, nor for small files, and JSON on stdout stays
clean."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console

from judgewise.cli import app
from judgewise.commands import progress as bar_module
from judgewise.commands.progress import ENV, read_progress
from judgewise.io import chunks, read_judgments
from judgewise.io.progress import listening


def battles(n: int = 3000) -> list[dict]:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 6, n)
    return [{"question_id": f"q{i % 97}", "model_a": f"m{x}", "model_b": f"m{(x + 1) % 6}",
             "winner": ["model_a", "model_b", "tie"][i % 3]} for i, x in enumerate(a)]


def write(path, rows):
    if path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    elif path.suffix == ".csv":
        outcome = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}
        pd.DataFrame([{"prompt_id": r["question_id"], "model_a": r["model_a"], "model_b": r["model_b"],
                       "judge": "j", "outcome": outcome[r["winner"]]} for r in rows]).to_csv(path, index=False)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 8 << 10)
    monkeypatch.setattr(chunks, "CHUNK_ROWS", 400)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_the_bar_ends_at_the_files_size_after_one_step_per_chunk(tmp_path, small_chunks, suffix):
    path = write(tmp_path / f"big{suffix}", battles())
    heard = []
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    with listening(lambda f, done, total: heard.append((f, done, total))):
        with read_progress(console, min_bytes=0, show=True) as bars:
            read_judgments(path)
    size = path.stat().st_size
    assert len(heard) > 5 and all(f == str(path) and total == size for f, _, total in heard)
    steps = [done for _, done, _ in heard]
    assert steps == sorted(steps) and steps[-1] == size
    bar, = bars
    task, = bar.tasks
    assert task.completed == task.total == size and task.description == path.name and task.finished
    assert "reading big" in console.file.getvalue()


def test_no_bar_off_a_terminal_or_for_a_small_file(tmp_path, small_chunks, monkeypatch):
    path = write(tmp_path / "b.jsonl", battles())
    monkeypatch.delenv(ENV, raising=False)
    plain = Console(file=io.StringIO(), force_terminal=False)
    with read_progress(plain, min_bytes=0) as bar:
        read_judgments(path)
    assert bar is None and plain.file.getvalue() == ""
    tty = Console(file=io.StringIO(), force_terminal=True)
    with read_progress(tty) as bars:  # 64 MB and more only
        read_judgments(path)
    assert bars == [] and tty.file.getvalue() == ""
    monkeypatch.setenv(ENV, "0")
    with read_progress(tty, min_bytes=0) as bar:
        read_judgments(path)
    assert bar is None


def test_the_command_line_draws_on_stderr_and_keeps_json_on_stdout_clean(tmp_path, small_chunks, monkeypatch,
                                                                           capsys):
    path = write(tmp_path / "b.jsonl", battles())
    monkeypatch.setenv(ENV, "1")
    monkeypatch.setattr(bar_module, "LARGE_BYTES", 0)
    app.main(["rank", str(path), "--method", "bt", "--json"])
    out, err = capsys.readouterr()
    assert {r["model"] for r in json.loads(out)} == {f"m{i}" for i in range(6)}
    assert "reading b.jsonl" in err
