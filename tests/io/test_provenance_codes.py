"""The judge-provenance keys found on factorized codes (no per-row text) equal the per-row definition — judge,
then template, then the store identity when there is one — for plain, categorical and null-holding columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgewise.io.provenance import _key_codes, judge_groups


def per_row_keys(frame: pd.DataFrame) -> list[str]:
    """The oracle: each row's key text built row by row."""
    def text(value):
        return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)

    out = []
    for _, row in frame.iterrows():
        key = text(row["judge"]) if "judge" in frame.columns else ""
        if "template" in frame.columns:
            key += "\x00" + text(row["template"])
        if "judge_identity" in frame.columns and text(row["judge_identity"]):
            key += "\x00" + text(row["judge_identity"])
        out.append(key)
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("columns", [("judge",), ("judge", "template"), ("judge", "template", "judge_identity"),
                                     ("template",), ("judge", "judge_identity")])
def test_keys_on_codes_equal_the_per_row_keys(seed, columns):
    rng = np.random.default_rng(seed)
    n = 300
    values = {"judge": ["j1", "j2", None, "j 3"], "template": ["t@1", "t@2", None],
              "judge_identity": ['{"template_sha": "abc"}', "", None, '{"model": "m"}']}
    frame = pd.DataFrame({c: rng.choice(np.array(values[c], dtype=object), n) for c in columns})
    if seed % 2 and "judge" in columns:
        frame["judge"] = frame["judge"].astype("category")
    elif seed % 3 == 0 and "judge" in columns:
        frame["judge"] = frame["judge"].astype("str")  # Arrow-backed text, nulls kept
    codes, keys = _key_codes(frame)
    assert [keys[c] for c in codes] == per_row_keys(frame)
    assert list(keys) == sorted(set(keys))


@pytest.mark.parametrize("values", [["j"] * 4, ["j", "j", None, "j"], ["j", "k", "j", "j"]])
@pytest.mark.parametrize("dtype", ["str", object, "category"])
def test_a_judge_column_of_one_value_or_nearly_is_keyed_as_row_by_row(values, dtype):
    frame = pd.DataFrame({"judge": pd.Series(values, dtype=dtype)})
    codes, keys = _key_codes(frame)
    assert [keys[c] for c in codes] == per_row_keys(frame)


def test_no_judge_column_is_one_judge_and_groups_count_rows():
    frame = pd.DataFrame({"judge": pd.array(["a"] * 5 + ["b"] * 3, dtype="str")})
    groups, codes = judge_groups(frame)
    assert [(g.label, g.rows) for g in groups] == [("a", 5), ("b", 3)]
    assert codes.tolist() == [0] * 5 + [1] * 3
    codes, keys = _key_codes(pd.DataFrame({"x": [1, 2]}))
    assert codes.tolist() == [0, 0] and list(keys) == [""]
