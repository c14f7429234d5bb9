"""Benchmark (issue 16): ``judgewise rank battles.jsonl --method bt`` against pyarrow reading the same file.

Writes 2,000,000 seeded synthetic Chatbot-Arena battles among 150 models as JSONL (:func:`scale.write_battles`,
in a child process; or uses ``--file``), then times, three times each, ``pyarrow.json.read_json`` on the file (in
this process) and the whole CLI, ``judgewise rank FILE --method bt --json`` (no bootstrap), in a child process
(:func:`scale.run_rank`: wall clock and the child's peak RSS; Python's bytecode cache on, filled by one untimed
run). The acceptance bound is rank ≤ 3 × read_json: the CLI's reading, checking and coding of the battles, its
imports and the fit against the bare parse. It also times the same command on a two-battle file (the CLI's fixed
start-up) and prints the ratio without it. The machine's load average is printed: on a shared machine the times
are noisy, the memory is not.

Run: ``.venv/bin/python benchmarks/ingest_speed.py [--battles 2000000] [--models 150] [--file PATH]``.
Last line: ``read_json_s=<s> rank_bt_s=<s> ratio=<x> battles=<n>`` (medians of 3).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from scale import run_rank, write_in_child

RUNS = 3


def read_json_seconds(path: Path) -> float:
    """Wall seconds of ``pyarrow.json.read_json`` on the file (pyarrow already imported)."""
    import pyarrow.json as pj

    start = time.perf_counter()
    table = pj.read_json(path)
    seconds = time.perf_counter() - start
    del table
    return seconds


def tiny_file(folder: Path) -> Path:
    tiny = folder / "two_battles.jsonl"
    tiny.write_text('{"question_id": "q1", "model_a": "a", "model_b": "b", "winner": "model_a"}\n'
                    '{"question_id": "q2", "model_a": "b", "model_b": "a", "winner": "model_a"}\n')
    return tiny


def startup_seconds(folder: Path) -> float:
    """Median wall seconds of the same command on a two-battle file: the CLI's fixed cost (interpreter, imports,
    command set-up), which the bound charges to the read."""
    return statistics.median(run_rank(tiny_file(folder), ["--method", "bt"])[0] for _ in range(RUNS))


def measure(path: Path, battles: int, folder: Path) -> None:
    """Alternate the two, RUNS times; print each run and then the medians."""
    parse, rank, peak = [], [], []
    run_rank(tiny_file(folder), ["--method", "bt"])  # untimed: fills the bytecode cache (scale.child_env)
    for run in range(RUNS):
        parse.append(read_json_seconds(path))
        seconds, mb = run_rank(path, ["--method", "bt"])
        rank.append(seconds)
        peak.append(mb)
        print(f"run {run + 1}: read_json_s={parse[-1]:.2f} rank_bt_s={seconds:.2f} rank_peak_mb={mb:.0f} "
              f"load={os.getloadavg()[0]:.1f}", flush=True)
    p, r = statistics.median(parse), statistics.median(rank)
    start = startup_seconds(folder)
    print(f"rank peak RSS (median) {statistics.median(peak):.0f} MB; file {path.stat().st_size / 1e6:.0f} MB")
    print(f"start-up (rank of a two-battle file) {start:.2f} s; rank minus start-up = {(r - start) / p:.2f}× read_json")
    print(f"read_json_s={p:.2f} rank_bt_s={r:.2f} ratio={r / p:.2f} battles={battles}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=2_000_000)
    parser.add_argument("--models", type=int, default=150)
    parser.add_argument("--file", type=Path, help="an existing battles JSONL file (battles: its lines)")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    if args.file:
        with open(args.file, "rb") as fh:
            battles = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))
        with tempfile.TemporaryDirectory() as tmp:
            measure(args.file, battles, Path(tmp))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = write_in_child(Path(tmp) / "battles.jsonl", args.battles, args.models)
        measure(path, args.battles, Path(tmp))


if __name__ == "__main__":
    main()
