"""Broken input files given to ``judgewise rank`` (and the readers every other command shares)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pandas as pd

from tests.support.bad_inputs.inputs import (DROP, Case, anchored, csv_text, deep_json, deep_object, foreign_sqlite,
                                     judgments, jsonl, store, with_row, write)

GOOD = judgments()
HEADER = "prompt_id,model_a,model_b,judge,outcome\n"


def rank_file(name: str, filename: str, content, *args, names=None, owner=None, file: bool = True) -> Case:
    """``judgewise rank FILE ARGS`` on a file holding ``content``; the error must name ``names`` and the file
    (unless ``file=False``: a fault of the data as a whole, such as a disconnected comparison graph)."""
    def build(root: Path) -> list:
        return ["rank", write(root, filename, content), *args]
    return Case(name, build, ((Path(filename).name,) if file else ()) + tuple(names or ()), owner)


def bad_row(name: str, row: int, field: str, value, *args, says: str | None = None) -> Case:
    """A canonical JSONL whose ``row`` (1-based) has ``field`` = ``value``."""
    rows = with_row(GOOD, row - 1, **{field: value})
    return rank_file(name, "j.jsonl", jsonl(rows), *args, names=(f"row {row}", f'"{field}"', *([says] if says else [])))


def bad_line(name: str, row: int, line: str, *args, says: str | None = None) -> Case:
    rows: list = list(GOOD)
    rows[row - 1] = line
    return rank_file(name, "j.jsonl", jsonl(rows), *args, names=(f"row {row}", *([says] if says else [])))


def _parquet(frame: pd.DataFrame) -> bytes:
    import io

    out = io.BytesIO()
    frame.to_parquet(out)
    return out.getvalue()


def _parquet_not_utf8(row: int) -> bytes:
    """GOOD as Parquet whose ``row`` (1-based) has a model_a of bytes that are not UTF-8 (pyarrow writes them)."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = pd.DataFrame(GOOD)
    names = [m.encode() for m in frame["model_a"]]
    names[row - 1] = b"m\xff"
    table = pa.Table.from_pandas(frame, preserve_index=False)
    column = pa.array(names, pa.binary()).view(pa.string())
    table = table.set_column(table.column_names.index("model_a"), "model_a", column)
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def _frame(**changes) -> pd.DataFrame:
    frame = pd.DataFrame(GOOD)
    for col, values in changes.items():
        frame[col] = values
    return frame


def _split_objects() -> str:
    """Each judgment spread over two lines, split after a field: joined with commas it is valid JSON."""
    lines = []
    for r in GOOD:
        text = json.dumps(r)
        cut = text.index(', "model_b"')
        lines += [text[:cut], text[cut + 2:]]
    return "\n".join(lines) + "\n"


def _split_and_joined() -> str:
    """Line 1 holds two objects, the third object is split over lines 2 and 3: as many lines as objects, so a
    parse of the lines joined with commas accepted it."""
    first = json.dumps(GOOD[0]) + ", " + json.dumps(GOOD[1])
    third = json.dumps(GOOD[2])
    cut = third.index(', "model_b"')
    return "\n".join([first, third[:cut], third[cut + 2:]] + [json.dumps(r) for r in GOOD[3:]]) + "\n"


def _alpacaeval(root: Path, rows, model: str = "my-model") -> Path:
    folder = root / "results" / model / "weighted_alpaca_eval_gpt4_turbo"
    folder.mkdir(parents=True)
    text = rows if isinstance(rows, str) else json.dumps(rows)
    (folder / "annotations.json").write_text(text)
    return root


def _annotation(i: int, pref=1.5) -> dict:
    return {"instruction": f"q{i}", "generator_1": "anchor", "generator_2": "my-model", "preference": pref}


def alpaca(name: str, rows, names=("annotations.json",)) -> Case:
    return Case(name, lambda root: ["rank", _alpacaeval(root, rows)], names)


def _battle(i: int, **changes) -> dict:
    return {"question_id": f"q{i}", "model_a": "x", "model_b": "y", "winner": "model_a", **changes}


def _games(**changes) -> str:
    record = {"question_id": 1, "model": "x", "judge": "j", "games": [{"score": "A>B"}, {"score": "B>A"}]}
    return jsonl([{**record, "question_id": 1}, {**record, "question_id": 2, **changes}])


JUDGEBENCH_FILE = "response_model-m__judge_name-arena_hard__judge_model-j.jsonl"
JB = {"pair_id": "p1", "label": "A>B", "judge_name": "arena_hard", "response_model": "m",
      "judgments": [{"judgment": {"judge_model": "j", "response": "[[A>B]]"}}] * 2}


def _directory_of(root: Path, *names: str) -> Path:
    folder = root / "in"
    folder.mkdir()
    for n in names:
        (folder / n).write_text("hello\n")
    return folder


def _disconnected() -> list[dict]:
    return judgments(models=("a1", "a2")) + judgments(models=("b1", "b2"))


def _symlink_loop(root: Path) -> list:
    (root / "loop1.jsonl").symlink_to(root / "loop2.jsonl")
    (root / "loop2.jsonl").symlink_to(root / "loop1.jsonl")
    return ["rank", root / "loop1.jsonl"]


def _output_dir(root: Path) -> list:
    (root / "out").mkdir()
    return ["rank", write(root, "j.jsonl", jsonl(GOOD)), "--output", root / "out"]


def _rank_store(rows, *args, name="s.sqlite"):
    return lambda root: ["rank", store(root, rows, name=name), *args]


FILE_CASES = [
    # empty and unreadable files
    rank_file("jsonl_zero_bytes", "j.jsonl", "", names=("empty",)),
    rank_file("jsonl_blank_lines_only", "j.jsonl", "\n  \n\t\n", names=("empty",)),
    rank_file("csv_zero_bytes", "j.csv", ""),
    rank_file("csv_header_only", "j.csv", HEADER, names=("no data rows",)),
    # a 200,000-character cell (Python's csv module stops at 131,072 by default) before a row with a cell too many:
    # the error is the row's, not the cell's length
    rank_file("csv_long_cell_then_a_cell_too_many", "j.csv",
              HEADER.replace("outcome", "outcome,raw") + 'p1,a,b,j,1,"' + "x" * 200_000 + '"\np2,a,b,j,0,ok,extra\n',
              names=("row 2", "found 7")),
    rank_file("json_zero_bytes", "j.json", ""),
    rank_file("json_empty_list", "j.json", "[]"),
    rank_file("json_object_not_list", "j.json", json.dumps(GOOD[0])),
    rank_file("json_scalar", "j.json", "42"),
    rank_file("json_list_of_numbers", "j.json", "[1, 2, 3]", names=("row 1",)),
    rank_file("parquet_zero_rows", "j.parquet", _parquet(pd.DataFrame(GOOD).head(0))),
    rank_file("parquet_that_is_text", "j.parquet", jsonl(GOOD)),
    rank_file("parquet_truncated", "j.parquet", _parquet(pd.DataFrame(GOOD))[:60]),
    rank_file("gzip_named_jsonl", "j.jsonl", gzip.compress(jsonl(GOOD).encode())),
    rank_file("random_bytes_jsonl", "j.jsonl", random.Random(1).randbytes(2000)),
    # encodings and BOMs
    rank_file("utf16_jsonl_with_bom", "j.jsonl", jsonl(GOOD).encode("utf-16"), names=("UTF-8",)),
    rank_file("utf16_csv_with_bom", "j.csv", csv_text(GOOD).encode("utf-16"), names=("UTF-8",)),
    rank_file("utf16_json_with_bom", "j.json", json.dumps(GOOD).encode("utf-16"), names=("UTF-8",)),
    rank_file("utf32_jsonl", "j.jsonl", jsonl(GOOD).encode("utf-32"), names=("UTF-8",)),
    rank_file("latin1_csv", "j.csv", csv_text(with_row(GOOD, 1, model_a="café")).encode("latin-1"),
              names=("line 3", "UTF-8")),
    rank_file("latin1_jsonl_line", "j.jsonl", jsonl(GOOD).encode() + '{"prompt_id": "é"}\n'.encode("latin-1"),
              names=(f"row {len(GOOD) + 1}", "UTF-8")),
    rank_file("bom_in_the_middle_of_jsonl", "j.jsonl", jsonl(GOOD[:2]) + "\ufeff" + jsonl(GOOD[2:]),
              names=("row 3",)),
    rank_file("nul_byte_in_jsonl", "j.jsonl", jsonl(GOOD[:1]) + "\x00" + jsonl(GOOD[1:]), names=("row 2",)),
    rank_file("nul_byte_in_csv_cell", "j.csv", csv_text(with_row(GOOD, 0, model_a="al\x00pha")),
              names=("row 1", "model_a")),
    # deep nesting (RecursionError)
    rank_file("json_nested_100k_deep", "j.json", deep_json(), names=("nested",)),
    rank_file("jsonl_first_line_nested_100k_deep", "j.jsonl", deep_object() + "\n" + jsonl(GOOD),
              names=("row 1", "nested")),
    rank_file("jsonl_later_line_nested_100k_deep", "j.jsonl", jsonl(GOOD[:2]) + deep_object() + "\n",
              names=("row 3", "nested")),
    rank_file("jsonl_field_nested_100k_deep", "j.jsonl",
              jsonl(GOOD[:1]) + '{"prompt_id": "p9", "outcome": ' + deep_json() + "}\n", names=("row 2", "nested")),
    rank_file("battles_nested_100k_deep", "battles.jsonl", jsonl([_battle(1)]) + deep_object() + "\n",
              names=("row 2",)),
    alpaca("alpacaeval_annotations_nested_100k_deep", deep_json(), names=("annotations.json", "nested")),
    # JSON Lines that are not one object per line
    rank_file("jsonl_objects_split_over_lines", "j.jsonl", _split_objects(), names=("row 1",)),
    rank_file("jsonl_pretty_printed", "j.jsonl", "".join(json.dumps(r, indent=2) + "\n" for r in GOOD),
              names=("row 1",)),
    rank_file("jsonl_split_and_joined_objects_same_line_count", "j.jsonl", _split_and_joined(), names=("row 1",)),
    rank_file("jsonl_two_objects_on_a_line", "j.jsonl", json.dumps(GOOD[0]) + ", " + jsonl(GOOD[1:]),
              names=("row 1",)),
    rank_file("jsonl_a_json_list_on_one_line", "j.jsonl", json.dumps(GOOD) + "\n", names=("row 1",)),
    rank_file("jsonl_trailing_commas", "j.jsonl", "".join(json.dumps(r) + ",\n" for r in GOOD), names=("row 1",)),
    bad_line("jsonl_truncated_last_line", len(GOOD), json.dumps(GOOD[-1])[:25]),
    bad_line("jsonl_line_is_a_string", 2, '"just text"'),
    bad_line("jsonl_line_is_null", 3, "null"),
    # a lone surrogate escape ("\ud800" without its pair): valid JSON text, but no character (pandas/pyarrow raised)
    bad_row("jsonl_lone_surrogate_in_a_name", 2, "model_a", "a\ud800", says="lone surrogate"),
    bad_line("jsonl_lone_surrogate_deep_inside", 2, json.dumps(GOOD[1])[:-1] + ', "raw": ' + "[" * 950 + '"x\\ud800"'
             + "]" * 950 + "}", says='"raw"'),
    rank_file("json_lone_surrogate_in_a_field", "j.json", json.dumps(with_row(GOOD, 2, judge="j\udc00")),
              names=("row 3", '"judge"', "lone surrogate")),
    rank_file("parquet_text_not_utf8", "j.parquet", _parquet_not_utf8(3), names=("row 3", '"model_a"', "not UTF-8")),
    # a key twice in one object: Python keeps the last value, pyarrow refuses the row; judgewise assumes neither
    bad_line("jsonl_key_twice_in_a_line", 2, json.dumps(GOOD[1])[:-1] + ', "outcome": 0.5}', says="'outcome'"),
    rank_file("json_key_twice_in_an_object", "j.json",
              json.dumps(GOOD).replace('"judge": "j"', '"judge": "j", "judge": "k"', 1), names=("'judge'",)),
    # numbers that are not numbers in [0, 1]
    bad_line("outcome_nan_literal", 2, json.dumps(GOOD[1])[:-1].rsplit('"outcome"', 1)[0] + '"outcome": NaN}',
             says="NaN"),
    bad_line("outcome_infinity_literal", 2,
             json.dumps(GOOD[1])[:-1].rsplit('"outcome"', 1)[0] + '"outcome": Infinity}'),
    bad_line("outcome_minus_infinity_literal", 2,
             json.dumps(GOOD[1])[:-1].rsplit('"outcome"', 1)[0] + '"outcome": -Infinity}'),
    bad_line("outcome_overflowing_1e400", 2, json.dumps(GOOD[1])[:-1].rsplit('"outcome"', 1)[0] + '"outcome": 1e400}'),
    bad_row("outcome_negative", 2, "outcome", -0.5),
    bad_row("outcome_boolean", 2, "outcome", True),
    bad_row("outcome_list", 2, "outcome", [1]),
    bad_row("outcome_object", 2, "outcome", {"value": 1}),
    bad_row("outcome_empty_string", 2, "outcome", ""),
    bad_row("outcome_hex_string", 2, "outcome", "0x1"),
    bad_row("outcome_percent_string", 2, "outcome", "100%"),
    bad_row("outcome_string_inf", 2, "outcome", "inf"),
    bad_row("outcome_missing", 2, "outcome", DROP, says="missing"),
    rank_file("csv_outcome_inf", "j.csv", csv_text(with_row(GOOD, 2, outcome="inf")), names=("row 3", '"outcome"')),
    rank_file("csv_outcome_word", "j.csv", csv_text(with_row(GOOD, 2, outcome="win")), names=("row 3", '"outcome"')),
    rank_file("csv_outcome_huge", "j.csv", csv_text(with_row(GOOD, 2, outcome="1" + "0" * 400)),
              names=("row 3", '"outcome"')),
    bad_row("verdict_out_of_set", 2, "verdict", 7),
    bad_row("verdict_fractional", 2, "verdict", 1.5),
    bad_row("verdict_text", 2, "verdict", "A>B"),
    # names and ids
    bad_row("model_a_a_list", 2, "model_a", ["alpha"]),
    bad_row("model_b_an_object", 2, "model_b", {"name": "beta"}),
    bad_row("model_a_boolean", 2, "model_a", True),
    bad_row("model_a_null", 2, "model_a", None),
    bad_row("prompt_id_a_list", 2, "prompt_id", ["p1"]),
    bad_row("judge_empty", 2, "judge", ""),
    bad_row("model_name_with_newline", 2, "model_a", "alp\nha"),
    bad_row("model_name_with_control_char", 2, "model_b", "be\x1bta"),
    rank_file("padded_name_plays_itself", "j.jsonl", jsonl(with_row(GOOD, 1, model_a="beta ", model_b="beta")),
              names=("row 2", '"model_b"')),
    bad_row("model_plays_itself", 2, "model_b", GOOD[1]["model_a"]),
    rank_file("all_rows_one_model", "j.jsonl", jsonl([{**r, "model_b": r["model_a"]} for r in GOOD]),
              names=("row 1",)),
    rank_file("duplicate_judgment_id", "j.jsonl", jsonl([{**r, "judgment_id": k % 3} for k, r in enumerate(GOOD)]),
              names=("row 4", '"judgment_id"')),
    rank_file("duplicate_judgment_id_int_and_text", "j.jsonl",
              jsonl([{**r, "judgment_id": k if k != 2 else "1"} for k, r in enumerate(GOOD)]),
              names=("row 3", '"judgment_id"')),
    # CSV shapes
    rank_file("csv_ragged_row", "j.csv", csv_text(GOOD) + "p9,alpha,beta,j,1,extra\n", names=(f"row {len(GOOD) + 1}",)),
    rank_file("csv_short_row", "j.csv", csv_text(GOOD) + "p9,alpha,beta\n", names=(f"row {len(GOOD) + 1}",)),
    rank_file("csv_unclosed_quote", "j.csv", csv_text(GOOD) + 'p9,"alpha,beta,j,1\n'),
    rank_file("csv_duplicate_header", "j.csv", "prompt_id,model_a,model_a,judge,outcome\np1,a,b,j,1\n"),
    rank_file("csv_empty_header_cell", "j.csv", "prompt_id,,model_b,judge,outcome\np1,a,b,j,1\n"),
    rank_file("csv_semicolons", "j.csv", csv_text(GOOD).replace(",", ";")),
    rank_file("csv_missing_outcome_column", "j.csv", "prompt_id,model_a,model_b,judge\np1,a,b,j\n",
              names=('"outcome"',)),
    # Parquet with wrong types
    rank_file("parquet_outcome_strings", "j.parquet", _parquet(_frame(outcome=["win"] * len(GOOD))),
              names=("row 1", '"outcome"')),
    rank_file("parquet_outcome_lists", "j.parquet", _parquet(_frame(outcome=[[1.0]] * len(GOOD))),
              names=("row 1", '"outcome"')),
    rank_file("parquet_outcome_booleans", "j.parquet", _parquet(_frame(outcome=[True] * len(GOOD))),
              names=("row 1", '"outcome"')),
    rank_file("parquet_outcome_infinite", "j.parquet", _parquet(_frame(outcome=[float("inf")] * len(GOOD))),
              names=("row 1", '"outcome"')),
    rank_file("parquet_outcome_nulls", "j.parquet", _parquet(_frame(outcome=[None] * len(GOOD))),
              names=("row 1", '"outcome"')),
    rank_file("parquet_model_a_bytes", "j.parquet", _parquet(_frame(model_a=[b"alpha"] * len(GOOD))),
              names=("row 1", '"model_a"')),
    rank_file("parquet_model_a_structs", "j.parquet", _parquet(_frame(model_a=[{"n": "alpha"}] * len(GOOD))),
              names=("row 1", '"model_a"')),
    rank_file("parquet_missing_judge_column", "j.parquet", _parquet(pd.DataFrame(GOOD).drop(columns="judge")),
              names=('"judge"',)),
    # foreign formats
    alpaca("alpacaeval_preference_nan", [_annotation(0), _annotation(1, float("nan"))]),
    alpaca("alpacaeval_preference_three", [_annotation(0), _annotation(1, 3)]),
    alpaca("alpacaeval_annotations_an_object", {"instruction": "q"}),
    alpaca("alpacaeval_annotations_empty_list", []),
    alpaca("alpacaeval_generator_missing", [_annotation(0), {**_annotation(1), "generator_1": None}]),
    Case("alpacaeval_results_folder_empty", lambda root: ["rank", (root / "results").mkdir() or root],
         ("no file of a known format",)),
    rank_file("battles_unknown_winner", "battles.jsonl", jsonl([_battle(1), _battle(2, winner="draw")]),
              names=("row 2", '"winner"')),
    rank_file("battles_winner_missing", "battles.jsonl", jsonl([_battle(1), _battle(2, winner=None)]),
              names=("row 2", '"winner"')),
    rank_file("battles_same_model", "battles.jsonl", jsonl([_battle(1), _battle(2, model_b="x")]), names=("row 2",)),
    rank_file("games_unknown_label", "x.jsonl", _games(games=[{"score": "A>>>B"}, {"score": "A>B"}]),
              names=("row 2",)),
    rank_file("games_not_a_list", "x.jsonl", _games(games={"score": "A>B"}), names=("row 2",)),
    rank_file("judgebench_label_unknown", JUDGEBENCH_FILE, jsonl([JB, {**JB, "pair_id": "p2", "label": "A=C"}]),
              names=("row 2",)),
    rank_file("judgebench_judgments_not_a_list", JUDGEBENCH_FILE, jsonl([{**JB, "judgments": "A>B"}]),
              names=("row 1",)),
    # paths
    Case("path_does_not_exist", lambda root: ["rank", root / "nope.jsonl"], ("nope.jsonl",)),
    Case("path_is_an_empty_directory", lambda root: ["rank", _directory_of(root)], ("in",)),
    Case("path_is_a_directory_of_text_files", lambda root: ["rank", _directory_of(root, "a.txt", "b.md")], ("in",)),
    Case("path_is_a_symlink_loop", _symlink_loop, ("loop1.jsonl",)),
    rank_file("unknown_suffix", "j.txt", "alpha beats beta\n"),
    rank_file("forced_format_unknown", "j.jsonl", jsonl(GOOD), "--format", "nope", names=("nope",), file=False),
    rank_file("forced_csv_on_jsonl", "j.jsonl", jsonl(GOOD), "--format", "csv"),
    rank_file("forced_json_on_jsonl", "j.jsonl", jsonl(GOOD), "--format", "json"),
    rank_file("forced_parquet_on_csv", "j.csv", csv_text(GOOD), "--format", "parquet"),
    rank_file("forced_alpacaeval_on_jsonl", "j.jsonl", jsonl(GOOD), "--format", "alpacaeval"),
    rank_file("forced_games_on_canonical", "j.jsonl", jsonl(GOOD), "--format", "arenahard-games"),
    rank_file("forced_store_on_jsonl", "j.jsonl", jsonl(GOOD), "--format", "store", names=("SQLite",)),
    Case("output_is_a_directory", _output_dir, ("out",)),
    Case("output_directory_missing", lambda root: ["rank", write(root, "j.jsonl", jsonl(GOOD)), "--output",
                                                   root / "no" / "such" / "r.json"], ("r.json",)),
    # ratings that the data cannot support
    rank_file("disconnected_graph_bt", "j.jsonl", jsonl(_disconnected()), "--method", "bt", names=("disconnected",),
              file=False),
    rank_file("disconnected_graph_elo", "j.jsonl", jsonl(_disconnected()), "--method", "elo",
              names=("disconnected",), file=False),
    rank_file("disconnected_graph_trueskill", "j.jsonl", jsonl(_disconnected()), "--method", "trueskill",
              names=("disconnected",), file=False),
    rank_file("disconnected_graph_elo_bootstrap", "j.jsonl", jsonl(_disconnected()), "--method", "elo",
              "--bootstrap", "20", names=("disconnected",), file=False),
    rank_file("winrate_models_never_meet_anchor", "j.jsonl", jsonl(_disconnected()), "--method", "winrate",
              "--anchor", "a1", names=("a1",), file=False),
    rank_file("bt_one_model_wins_everything_and_l2_0_refuses_the_prior", "j.jsonl",
              jsonl([{**r, "outcome": 1.0 if r["model_a"] == "alpha" else r["outcome"]} for r in GOOD]),
              "--l2", "0", names=("infinite",), file=False),
    rank_file("bt_l2_negative", "j.jsonl", jsonl(GOOD), "--l2", "-1", names=("l2",), file=False),
    rank_file("anchor_not_in_data", "j.jsonl", jsonl(anchored()), "--method", "winrate", "--anchor", "nobody",
              names=("nobody",), file=False),
    rank_file("method_unknown", "j.jsonl", jsonl(GOOD), "--method", "foo", names=("foo",), file=False),
    rank_file("bootstrap_negative", "j.jsonl", jsonl(GOOD), "--bootstrap", "-1", names=("--bootstrap",),
              file=False),
    rank_file("bootstrap_huge", "j.jsonl", jsonl(GOOD), "--bootstrap", "1000000000",
              names=("bootstrap",), file=False),
    rank_file("bootstrap_unit_unknown", "j.jsonl", jsonl(GOOD), "--bootstrap", "10", "--bootstrap-unit", "judge",
              names=("--bootstrap-unit",), file=False),
    rank_file("seed_negative", "j.jsonl", jsonl(GOOD), "--bootstrap", "10", "--seed", "-1", names=("seed",),
              file=False),
    rank_file("ci_level_one", "j.jsonl", jsonl(GOOD), "--ci-level", "1", names=("--ci-level",), file=False),
    rank_file("ci_level_nan", "j.jsonl", jsonl(GOOD), "--ci-level", "nan", names=("--ci-level",), file=False),
    rank_file("elo_k_via_style_control", "j.jsonl", jsonl(GOOD), "--method", "elo", "--style-control",
              names=("style",), file=False),
    # judging stores given to rank
    Case("store_that_is_foreign_sqlite", lambda root: ["rank", foreign_sqlite(root)], ("other.sqlite",)),
    Case("store_zero_bytes_forced", lambda root: ["rank", write(root, "s.sqlite", b""), "--format", "store"],
         ("s.sqlite",)),
    Case("store_where_every_game_failed",
         _rank_store([{**r, "status": "failed", "outcome": None, "error": "HTTP 500"} for r in GOOD]),
         ("s.sqlite",)),
    Case("store_with_one_model_playing_itself",
         _rank_store([{**r, "model_b": r["model_a"]} for r in GOOD]), ("s.sqlite",)),
]
