"""JSONL chunks (io.chunks): whole lines without copies, the line checks done on newline offsets, read-ahead.

Each check is compared with a plain per-line re-implementation in the test (split on newlines, strip, count),
and the fast path's promise is tested where it could break: a chunk is parsed by pyarrow only when its rows are
exactly the file's non-blank lines, one JSON object each, in valid UTF-8; anything else goes to the row reader.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgewise.io import read_judgments
from judgewise.io.chunks import (JsonlChunk, jsonl_chunks, nests_deeper_than, newline_offsets, object_lines,
                                 read_ahead)
from judgewise.io.tables import ReadReport
from judgewise.io.validate import Validator
from judgewise.errors import InputError

BATTLE = {"question_id": "q1", "model_a": "a", "model_b": "b", "winner": "model_a"}


def validator(path) -> Validator:
    return Validator(str(path), ReadReport(source=str(path), format="jsonl"))


def random_lines(rng, n: int) -> list[bytes]:
    """Battle lines of random lengths, with blank, whitespace-only, padded and CRLF lines among them."""
    lines = []
    for i in range(n):
        kind = rng.integers(0, 10)
        text = json.dumps({**BATTLE, "question_id": "q" * int(rng.integers(1, 300)), "i": i}).encode()
        lines.append({0: b"", 1: b"  \t", 2: b"  " + text + b" ", 3: text + b"\r"}.get(kind, text))
    return lines


@pytest.mark.parametrize("chunk_bytes", [64, 1000, 4096, 1 << 20])
def test_chunks_are_the_file_in_whole_lines_numbered_as_in_the_file(tmp_path, chunk_bytes):
    rng = np.random.default_rng(chunk_bytes)
    lines = random_lines(rng, 400)
    data = b"\n".join(lines)  # no newline at the end
    path = tmp_path / "b.jsonl"
    path.write_bytes(data)
    chunks = list(jsonl_chunks(path, validator(path), chunk_bytes))
    file_lines, covered = data.split(b"\n"), []
    for chunk in chunks:
        lines = bytes(chunk.data).split(b"\n")
        lines = lines[:-1] if lines[-1] == b"" else lines
        assert lines == file_lines[chunk.first_line - 1:chunk.first_line - 1 + len(lines)]
        covered += range(chunk.first_line, chunk.first_line + len(lines))
    assert len(covered) == len(set(covered))  # no line twice
    assert {i + 1 for i, line in enumerate(file_lines) if line.strip()} <= set(covered)  # none left out
    if chunk_bytes < 300:
        assert len(chunks) > 100  # lines longer than a chunk are read on to their end


def test_newline_offsets_are_those_of_every_newline():
    data = b"\n".join(random_lines(np.random.default_rng(1), 3000)) + b"\n"
    arr = np.frombuffer(data, dtype=np.uint8)
    expected = [i for i, byte in enumerate(data) if byte == 10]
    assert newline_offsets(arr, step=997).tolist() == expected
    assert newline_offsets(arr).tolist() == expected


def count_objects(data: bytes) -> int | None:
    """The oracle of object_lines: non-blank lines, None when one does not strip to {...}."""
    texts = [line.strip() for line in data.split(b"\n") if line.strip()]
    return len(texts) if all(t.startswith(b"{") and t.endswith(b"}") for t in texts) else None


@pytest.mark.parametrize("extra", [b"", b"\n[1, 2]\n", b"\n{\"a\":\n1}\n", b"\n  {} \r\n\n", b"\n\r\n", b"x"])
def test_object_lines_counts_lines_as_a_line_by_line_count_does(extra):
    data = b"\n".join(random_lines(np.random.default_rng(2), 500)) + extra
    arr = np.frombuffer(data, dtype=np.uint8)
    assert object_lines(arr, newline_offsets(arr)) == count_objects(data)


def max_depth_per_line(data: bytes) -> int:
    """The oracle of nests_deeper_than: brackets counted along each line."""
    deepest = 0
    for line in data.split(b"\n"):
        level = 0
        for byte in line:
            level += (byte in b"{[") - (byte in b"}]")
            deepest = max(deepest, level)
    return deepest


@pytest.mark.parametrize("seed", range(6))
def test_depth_check_agrees_with_a_per_line_count(seed):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(60):
        depth = int(rng.integers(0, 40))
        lines.append(b"[" * depth + b"1" + b"]" * depth + b"," + b"x" * int(rng.integers(0, 50)))
    data = b"\n".join(lines)
    for limit in (5, 20, 39):
        assert nests_deeper_than(data, limit) is (max_depth_per_line(data) > limit)


@pytest.mark.parametrize("bad", [b'{"model_a": "a\xff"}', b'{"a\xfe": 1}', b'{"t": {"u": ["\xc3\x28"]}}'])
def test_invalid_utf8_anywhere_leaves_the_chunk_to_the_row_reader(bad):
    good = json.dumps({**BATTLE, "note": "café ✓"}).encode() + b"\n"
    assert JsonlChunk(good * 3, 1).table().num_rows == 3  # valid non-ASCII text is parsed
    assert JsonlChunk(good + bad + b"\n" + good, 1).table() is None


def test_one_object_split_over_two_lines_and_two_on_one_line_are_not_parsed():
    """As many rows as lines, yet not one object per line: the row reader must see it."""
    line = json.dumps(BATTLE).encode()
    data = line + line + b"\n" + line[:20] + b"\n" + line[20:] + b"\n"
    assert JsonlChunk(data, 1).table() is None


def test_a_line_longer_than_pyarrows_default_block_is_parsed():
    long = json.dumps({**BATTLE, "conversation": "x" * (3 << 20)}).encode() + b"\n"
    table = JsonlChunk(long + json.dumps(BATTLE).encode() + b"\n", 1).table()
    assert table is not None and table.num_rows == 2


def test_read_ahead_keeps_the_order_and_passes_on_an_error():
    def chunks():
        for i in range(5):
            yield JsonlChunk(json.dumps({**BATTLE, "i": i}).encode() + b"\n", i + 1)
        raise InputError("the fifth chunk is unreadable")

    seen = []
    with pytest.raises(InputError, match="fifth"):
        for chunk in read_ahead(chunks()):
            seen.append(chunk.table()["i"][0].as_py())
    assert seen == [0, 1, 2, 3, 4]


def test_a_crlf_file_with_blank_lines_reads_as_the_lf_file(tmp_path):
    lines = [json.dumps({**BATTLE, "model_a": f"m{i % 7}", "model_b": f"n{i % 5}"}) for i in range(200)]
    lf, crlf = tmp_path / "lf.jsonl", tmp_path / "crlf.jsonl"
    lf.write_text("\n".join(lines) + "\n")
    crlf.write_bytes(("\r\n".join(lines) + "\r\n\r\n").encode())
    a, b = read_judgments(lf), read_judgments(crlf)
    assert a.frame.astype(str).equals(b.frame.astype(str))


def test_a_pipe_is_read_in_whole_lines_too(tmp_path):
    """A FIFO cannot seek back to the start of a block's last line: that line is read on to its end instead."""
    import os
    import threading

    data = b"\n".join(random_lines(np.random.default_rng(5), 300)) + b"\n"
    fifo = tmp_path / "battles.jsonl"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(data,))
    writer.start()
    chunks = list(jsonl_chunks(fifo, validator(fifo), 1000))
    writer.join()
    assert all(bytes(c.data).endswith(b"\n") for c in chunks) and len(chunks) > 10
    assert all(c.progress is None for c in chunks)
    file_lines = data.split(b"\n")
    for chunk in chunks:
        lines = bytes(chunk.data).split(b"\n")[:-1]
        assert lines == file_lines[chunk.first_line - 1:chunk.first_line - 1 + len(lines)]
