"""Deeply nested JSONL never reaches pyarrow's recursive parser (it crashes the process at ~20,000 levels)."""

from __future__ import annotations

import pytest

from judgewise.io.chunks import MAX_ARROW_DEPTH, JsonlChunk, nests_deeper_than

LINE = b'{"question_id": "q1", "model_a": "a", "model_b": "b", "winner": "model_a", "tags": [[1], {"x": [2]}]}\n'


def _deep(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("depth, expected", [(3, False), (MAX_ARROW_DEPTH, False), (MAX_ARROW_DEPTH + 1, True)])
def test_depth_is_measured_per_line(depth, expected):
    data = LINE * 50 + _deep(depth) + b"\n" + LINE * 50
    assert nests_deeper_than(data, MAX_ARROW_DEPTH) is expected


def test_many_shallow_lines_are_not_deep():
    """Brackets summed over lines (thousands) do not count as depth: each line closes what it opens."""
    assert nests_deeper_than(LINE * 20_000, MAX_ARROW_DEPTH) is False


def test_a_deep_chunk_is_left_to_the_row_parser():
    """The columnar path declines (None); pyarrow is never called on it (this would segfault)."""
    assert JsonlChunk(LINE + _deep(100_000) + b"\n", 1).table() is None
    plain = b'{"question_id": "q1", "model_a": "a", "model_b": "b", "winner": "model_a", "tags": [[1], [2, 3]]}\n'
    assert JsonlChunk(plain * 3, 1).table().num_rows == 3
