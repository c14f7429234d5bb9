"""Benchmark (issue 16): ``judgewise rank --method elo --bootstrap 100`` on 2,000,000 Arena battles, the real CLI.

The online Elo pass and its bootstrap are compiled (numba) and run every replicate in one compiled call
(:mod:`judgewise.ratings.elo`); this times what a user runs: the CLI in a subprocess on a JSONL file of seeded
synthetic battles (``benchmarks/scale.py``'s generator: 150 models, 100,000 prompts), prompt bootstrap (the
default unit). A warm-up run on a small file first loads numba's cache, as any second use of judgewise would.
It then checks the CLI's point ratings against the plain Python definition (``online_elo_reference``) on the
rows as read.

Run: ``.venv/bin/python benchmarks/elo_speed.py [--battles 2000000] [--models 150] [--rounds 100] [PATH]``.
Last line: ``elo_bootstrap100_s=<s> battles=<n>``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from scale import write_in_child as write_battles


def rank_elo(path: Path, rounds: int) -> tuple[float, list[dict]]:
    """(wall seconds, JSON records) of ``judgewise rank PATH --method elo --bootstrap ROUNDS --json``."""
    command = [sys.executable, "-m", "judgewise.cli.app", "rank", str(path), "--method", "elo", "--bootstrap",
               str(rounds), "--json"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout)


def reference_diff(path: Path, records: list[dict]) -> float:
    """Largest |CLI rating − plain-Python online Elo| over the models, on the rows in file order."""
    from judgewise.io import read_judgments
    from judgewise.ratings.elo import online_elo_reference
    from judgewise.ratings.encode import encode

    enc = encode(read_judgments(path).frame)
    reference = online_elo_reference(enc.a, enc.b, enc.outcome, np.asarray(enc.weight), enc.n_models)
    cli = {r["model"]: r["score"] for r in records}
    return float(max(abs(cli[m] - reference[k]) for k, m in enumerate(enc.models)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", help="a battles file (default: synthetic, written to a temp folder)")
    parser.add_argument("--battles", type=int, default=2_000_000)
    parser.add_argument("--models", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rank_elo(write_battles(Path(tmp) / "warm.jsonl", 2_000, 10), 10)  # numba's cache loaded once
        path = Path(args.path) if args.path else write_battles(Path(tmp) / "battles.jsonl", args.battles,
                                                               args.models)
        load = os.getloadavg()[0]
        seconds, records = rank_elo(path, args.rounds)
        diff = reference_diff(path, records)
        n = sum(1 for _ in open(path, "rb")) if args.path else args.battles
    print(f"{n:,} battles, {len(records)} models, {args.rounds} prompt-bootstrap rounds; {os.cpu_count()} cores, "
          f"load average {load:.1f}; point ratings vs plain-Python online Elo: max |diff| = {diff:.3g}")
    print(f"elo_bootstrap100_s={seconds:.2f} battles={n}")


if __name__ == "__main__":
    main()
