"""Benchmark (issue 16): how the time and peak memory of ``judgewise rank`` grow with battles and models.

Writes seeded synthetic Chatbot-Arena battles (``question_id, model_a, model_b, winner``; FastChat's winner labels,
ties and ``tie (bothbad)`` included; 100,000 prompts; Bradley–Terry skills s ~ N(0, 1)) to a temporary folder as
Parquet and as JSONL, and runs the real CLI in a subprocess on each::

    judgewise rank FILE --method bt --bootstrap 1000 --bootstrap-unit battle --json

timing the wall clock and reading the child's peak RSS (``/usr/bin/time``-style, from ``wait4``'s rusage). Two
sweeps: battles 1M/2M/5M/10M at 300 models, and models 50/150/300/1,000 at 2M battles. Prints one line per run
and writes a PNG of both sweeps beside this script (``scale.png``). The machine's load average is printed with
the results: on a shared machine the times are noisy, the memory is not.

Run: ``.venv/bin/python benchmarks/scale.py [--rounds 1000] [--battles 1e6,2e6,5e6,1e7] [--models 50,150,300,1000]``.
Last line: ``parquet10m_s=<s> parquet10m_mb=<MB> jsonl10m_s=<s> jsonl10m_mb=<MB>``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

N_PROMPTS = 100_000
WINNERS = ["model_a", "model_b", "tie", "tie (bothbad)"]


def battles_table(n: int, n_models: int, seed: int = 0):
    """The seeded synthetic battles (module doc) as a pyarrow Table."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    skill = rng.normal(size=n_models)
    a = rng.integers(0, n_models, n)
    b = (a + rng.integers(1, n_models, n)) % n_models
    p = 0.9 * expit(skill[a] - skill[b])
    u = rng.random(n)
    winner = np.where(u < p, 0, np.where(u < p + 0.05, 2, np.where(u < p + 0.1, 3, 1)))
    names = pa.array([f"model-{i:04d}" for i in range(n_models)])
    prompt = pc.binary_join_element_wise("q", pa.array(rng.integers(0, N_PROMPTS, n)).cast(pa.string()), "")
    return pa.table({"question_id": prompt, "model_a": names.take(a), "model_b": names.take(b),
                     "winner": pa.array(WINNERS).take(winner)})


def write_battles(path: Path, n: int, n_models: int, seed: int = 0) -> Path:
    """Write the synthetic battles as Parquet (``.parquet``) or JSONL (any other suffix)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = battles_table(n, n_models, seed)
    if path.suffix == ".parquet":
        pq.write_table(table, path)
        return path
    parts = []
    for i, col in enumerate(table.column_names):
        parts += [('{"' if i == 0 else ', "') + col + '": "', table[col], '"']
    lines = pc.binary_join_element_wise(*parts, "}\n", "").combine_chunks().cast(pa.large_string())
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)
    with open(path, "wb") as fh:
        fh.write(memoryview(lines.buffers()[2])[offsets[0]:offsets[len(lines)]])
    return path


def write_in_child(path: Path, n: int, n_models: int) -> Path:
    """:func:`write_battles` in a child process: this process stays small, so that the children's peak RSS
    (which Linux carries over from the spawning process's memory at exec) is their own."""
    subprocess.run([sys.executable, __file__, "--write", str(path), str(n), str(n_models)], check=True)
    return path


def child_env() -> dict:
    """The environment of a timed child: this one with Python's bytecode cache on, as an installed judgewise has it
    (pip compiles on install). With ``PYTHONDONTWRITEBYTECODE`` set (as in some sandboxes) every run would compile
    judgewise's ~200 modules from source, 0.2 s of each start-up here that no user pays; the cache goes to a folder
    of its own in the temporary directory (``PYTHONPYCACHEPREFIX``), not into the source tree."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "judgewise-bench-pycache"))
    return env


def run_rank(path: Path, args: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of ``judgewise rank PATH ARGS`` in a child process (:func:`child_env`)."""
    command = [sys.executable, "-m", "judgewise.cli.app", "rank", str(path), *args, "--json"]
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_env())
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed: {child.stderr.read().decode()[-2000:]}")
    child.stderr.close()
    return seconds, usage.ru_maxrss / 1024.0


def sweep(folder: Path, points: list[tuple[int, int]], rank_args: list[str]) -> dict:
    """{(format, battles, models): (seconds, MB)} over the points, each written once per format then deleted."""
    results = {}
    for n, m in points:
        for fmt in ("parquet", "jsonl"):
            path = write_in_child(folder / f"battles_{n}_{m}.{fmt}", n, m)
            seconds, mb = run_rank(path, rank_args)
            path.unlink()
            results[fmt, n, m] = (seconds, mb)
            print(f"{fmt:7s} battles={n:>10,} models={m:>5} time_s={seconds:7.2f} peak_mb={mb:7.0f} "
                  f"load={os.getloadavg()[0]:.1f}", flush=True)
    return results


def plot(results: dict, battles: list[int], models: list[int], fixed_models: int, fixed_battles: int,
         out: Path) -> None:
    """Time and peak RSS against battles (at ``fixed_models``) and against models (at ``fixed_battles``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for col, (xs, key, label) in enumerate(((battles, lambda x: (x, fixed_models), "battles (millions)"),
                                            (models, lambda x: (fixed_battles, x), "models"))):
        for fmt, marker in (("parquet", "o"), ("jsonl", "s")):
            pts = [(x, results[(fmt, *key(x))]) for x in xs if (fmt, *key(x)) in results]
            scale = 1e6 if col == 0 else 1
            for row in (0, 1):
                axes[row, col].plot([x / scale for x, _ in pts], [r[row] for _, r in pts], marker=marker,
                                    label=fmt)
        axes[0, col].set_ylabel("wall time (s)")
        axes[1, col].set_ylabel("peak RSS (MB)")
        axes[1, col].set_xlabel(label)
        axes[0, col].legend()
    fig.suptitle("judgewise rank --method bt --bootstrap 1000 --bootstrap-unit battle")
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def numbers(text: str) -> list[int]:
    return [int(float(x)) for x in text.split(",") if x]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--battles", default="1e6,2e6,5e6,1e7")
    parser.add_argument("--models", default="50,150,300,1000")
    parser.add_argument("--fixed-models", type=int, default=300)
    parser.add_argument("--fixed-battles", type=int, default=2_000_000)
    parser.add_argument("--write", nargs=3, metavar=("PATH", "BATTLES", "MODELS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        write_battles(Path(args.write[0]), int(args.write[1]), int(args.write[2]))
        return
    battles, models = numbers(args.battles), numbers(args.models)
    rank_args = ["--method", "bt", "--bootstrap", str(args.rounds), "--bootstrap-unit", "battle"]
    points = [(n, args.fixed_models) for n in battles]
    points += [(args.fixed_battles, m) for m in models if (args.fixed_battles, m) not in points]
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start; rank {' '.join(rank_args)}")
    with tempfile.TemporaryDirectory() as tmp:
        results = sweep(Path(tmp), points, rank_args)
    out = Path(__file__).with_suffix(".png")
    plot(results, battles, models, args.fixed_models, args.fixed_battles, out)
    print(f"plot: {out}; load average {os.getloadavg()[0]:.1f} at end; this process's own peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB (a floor under the children's)")
    top = max(battles)
    p, j = results["parquet", top, args.fixed_models], results["jsonl", top, args.fixed_models]
    tag = f"{top // 1_000_000}m"
    print(f"parquet{tag}_s={p[0]:.2f} parquet{tag}_mb={p[1]:.0f} jsonl{tag}_s={j[0]:.2f} jsonl{tag}_mb={j[1]:.0f}")


if __name__ == "__main__":
    main()
