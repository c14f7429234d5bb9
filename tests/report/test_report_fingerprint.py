"""Issue 32 item 3: the Reproduce section's input fingerprint covers the files the report read, hashed in chunks —
an unrelated file in the input folder is neither read nor part of it (a 600 MB one was read whole, 852 MB peak)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from judgewise.report import ReportOptions, build_report
from judgewise.report.analysis_sections import _fingerprint

ALPACAEVAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "alpacaeval" / "results"
MODELS = ("phi-2", "phi-2-sft")


def _inputs(folder: Path) -> list[list]:
    sections = build_report(folder, options=ReportOptions(bootstrap=0, seed=1))
    reproduce = next(s for s in sections if s.key == "reproduce")
    return next(t for t in reproduce.tables if t.caption.startswith("Inputs")).rows


@pytest.fixture
def results(tmp_path) -> Path:
    if not ALPACAEVAL.is_dir():
        pytest.skip("needs ../shared/data/alpacaeval")
    folder = tmp_path / "results"
    for model in MODELS:
        annotations = next((ALPACAEVAL / model).glob("*/annotations.json"))
        target = folder / model / annotations.parent.name
        target.mkdir(parents=True)
        shutil.copy(annotations, target / "annotations.json")
    return folder


@pytest.mark.slow
def test_an_unrelated_file_in_the_input_folder_is_not_part_of_the_fingerprint(results):
    before = _inputs(results)
    (results / "notes.bin").write_bytes(b"\0" * (3 << 20))  # beside the annotator folders: no reader reads it
    (results / MODELS[0] / "scratch.txt").write_text("an unrelated file")
    after = _inputs(results)
    assert before == after and len(after) == 1
    read = sorted(results.glob("*/*/annotations.json"))
    assert after[0][1] == f"{sum(f.stat().st_size for f in read):,} bytes"


@pytest.mark.slow
def test_a_change_in_a_file_the_report_read_changes_the_fingerprint(results):
    before = _inputs(results)
    annotations = next((results / MODELS[1]).glob("*/annotations.json"))
    annotations.write_bytes(annotations.read_bytes().replace(b'"preference"', b'"preference" ', 1))
    assert _inputs(results)[0][2] != before[0][2]


def test_a_file_is_fingerprinted_in_chunks_as_name_size_and_bytes(tmp_path):
    data = bytes(range(256)) * 20_000  # 5 MB: several chunks
    path = tmp_path / "judgments.jsonl"
    path.write_bytes(data)
    expected = hashlib.sha256(f"judgments.jsonl\0{len(data)}\0".encode() + data).hexdigest()[:16]
    assert _fingerprint(path, []) == (f"{len(data):,} bytes", expected)
