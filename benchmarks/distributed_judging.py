"""Distributed judging: 1 vs 4 worker processes on one PostgreSQL store, one of the 4 SIGKILLed mid-run.

Each worker is a real ``judgewise judge --config run.yaml --worker`` process with concurrency 16, judging through
the full engine chain (Arena-Hard template → OpenAI backend under the scheduler → parser → store) against a
loopback OpenAI-compatible endpoint that answers every call after 200 ms (tests/support/fault_server.py, run in this
process; each worker gets its own port of it — the endpoint URL is not part of a game's key — so every 200
delivered is known per worker). The store is a throwaway PostgreSQL server (tests/support/pg_server.py).
Run 1: one worker judges the whole job. Run 2 (a fresh database): four workers start together; when half the
games are stored one is SIGKILLed; the other three take its games (its claims are freed at once: same host).

Throughput is games stored per second between the first and the last game stored (process start-up, the same
for both runs, is left out); ``scaling`` is throughput_4 / (4 * throughput_1). ``duplicates`` counts games the
endpoint answered more than once among the live workers (a game judged twice) plus stored rows beyond one per
game. Answers the endpoint delivered to the killed worker that it had not journaled yet when it died (still in
its socket buffers) are re-sent by the others: they are paid twice by nature of a SIGKILL and reported apart as
``lost_with_killed_worker``. CPU seconds per game of the workers, the endpoint and PostgreSQL are reported too:
on a small machine the run is CPU-bound long before it is latency-bound. The last line is
``games=<n> stored=<n> duplicates=<n> scaling=<float>``.

    .venv/bin/python benchmarks/distributed_judging.py [--games 4000] [--workers 4] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.fault_server import FaultServer  # noqa: E402
from tests.support.judging import MODEL, write_responses  # noqa: E402
from tests.support.pg_server import PostgresServer  # noqa: E402

MODELS = ["m1", "m2", "m3", "m4", "m5"]  # 10 pairs: 200 prompts × 10 pairs × 2 orders = 4,000 games


def _config(folder: Path, url: str, store: str, games: int, concurrency: int) -> Path:
    pairs = len(MODELS) * (len(MODELS) - 1) // 2
    n_prompts = games // (2 * pairs)
    write_responses(folder, n_prompts, MODELS)
    cfg = {"responses": "responses.jsonl", "store": store, "design": "all_pairs", "orders": "both",
           "judge": {"backend": "openai", "model": MODEL, "base_url": url, "template": "arena_hard_5way"},
           "limits": {"concurrency": concurrency, "timeout_s": 30, "lease_s": 30}}
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def _start_worker(config: Path, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", "judgewise.cli.app", "judge", "-c", str(config), "--worker",
                             "--no-progress", "--json"], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _one(url: str, sql: str):
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchone()


def _cpu(pid: int, children: bool = False) -> float:
    """CPU seconds of a process (with its reaped children: PostgreSQL's backends are the postmaster's)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
    return ticks / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(pg: PostgresServer, servers: list, folder: Path, args, workers: int, kill: bool) -> dict:
    """One run on a fresh database: ``workers`` worker processes, worker i calling ``servers[i]`` (worker 0
    SIGKILLed at half the games when ``kill``)."""
    folder.mkdir()
    url = pg.new_database()
    configs = []
    for i in range(workers):
        (folder / f"w{i}").mkdir()
        configs.append(_config(folder / f"w{i}", servers[i].url, url, args.games, args.concurrency))
    before = [dict(srv.successes) for srv in servers]
    postmaster = int((pg.data / "postmaster.pid").read_text().split()[0])
    cpu0 = (_children_cpu(), _cpu(os.getpid()), _cpu(postmaster, children=True))
    procs = [_start_worker(config, config.parent) for config in configs]
    killed_at = _kill_at_half(url, procs[0], args.games) if kill else None
    summaries = []
    for i, proc in enumerate(procs):
        out, err = proc.communicate(timeout=1800)
        if kill and i == 0:
            continue
        if proc.returncode != 0:
            raise SystemExit(f"worker {i} failed ({proc.returncode}): {err[-2000:]}")
        summaries.append(json.loads(out.strip().splitlines()[-1]))
    cpu1 = (_children_cpu(), _cpu(os.getpid()), _cpu(postmaster, children=True))
    n, first, last, keys = _one(url, "SELECT COUNT(*), MIN(created_at), MAX(created_at), COUNT(DISTINCT key) "
                                     "FROM judgewise.games")
    calls = [{k: c - b.get(k, 0) for k, c in srv.successes.items() if c - b.get(k, 0) > 0}
             for srv, b in zip(servers, before)]
    live = calls[1:] if kill else calls  # answers delivered to workers that lived to journal them
    per_game = {}
    for counts in live:
        for k, c in counts.items():
            per_game[k] = per_game.get(k, 0) + c
    victim = calls[0] if kill else {}
    return {"stored": n, "distinct": keys, "span": last - first, "throughput": (n - 1) / (last - first),
            "calls": sum(sum(c.values()) for c in calls), "judged_twice": sum(c - 1 for c in per_game.values()),
            "lost": sum(1 for k in victim if k in per_game), "killed_at": killed_at, "summaries": summaries,
            "left_claims": _one(url, "SELECT COUNT(*) FROM judgewise.claims")[0],
            "cpu": [b - a for a, b in zip(cpu0, cpu1)]}


def _kill_at_half(url: str, proc: subprocess.Popen, games: int) -> tuple[int, int]:
    """SIGKILL ``proc`` once half the games are stored; (games stored, claims held) at that moment."""
    while proc.poll() is None:
        time.sleep(0.2)
        try:
            stored = _one(url, "SELECT COUNT(*) FROM judgewise.games")[0]
        except Exception:  # the tables are not made yet
            continue
        if stored >= games // 2:
            held = _one(url, f"SELECT COUNT(*) FROM judgewise.claims WHERE owner LIKE '%:{proc.pid}:%'")[0]
            proc.send_signal(signal.SIGKILL)
            return stored, held
    raise SystemExit("the worker to kill ended before half the games were stored")


def _report(one: dict, many: dict, args) -> None:
    ideal = args.concurrency / args.latency
    print(f"endpoint: {args.latency * 1000:.0f} ms per call; per-worker concurrency {args.concurrency}: ideal "
          f"{ideal:.0f} games/s per worker; machine: {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}")
    for name, run, n in (("1 worker", one, 1), (f"{args.workers} workers", many, args.workers)):
        workers, endpoint, postgres = (c / run["stored"] * 1000 for c in run["cpu"])
        print(f"{name}: {run['stored']} games stored in {run['span']:.1f}s = {run['throughput']:.1f} games/s "
              f"({100 * run['throughput'] / (n * ideal):.0f}% of {n} x ideal); {run['calls']} calls; CPU per game: "
              f"workers {workers:.1f} ms, endpoint {endpoint:.1f} ms, PostgreSQL {postgres:.1f} ms")
    stored, held = many["killed_at"]
    print(f"{args.workers} workers: worker 1 SIGKILLed when {stored} games were stored (holding {held} claims); "
          f"the {len(many['summaries'])} survivors judged {', '.join(str(s['judged']) for s in many['summaries'])} "
          f"games; claims left {many['left_claims']}; lost_with_killed_worker={many['lost']} (answers delivered to "
          f"it and not journaled before it died, judged again by the others)")
    duplicates = one["judged_twice"] + many["judged_twice"] + (one["stored"] - one["distinct"]) \
        + (many["stored"] - many["distinct"])
    scaling = many["throughput"] / (args.workers * one["throughput"])
    print(f"games={args.games} stored={many['stored']} duplicates={duplicates} scaling={scaling:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=4000)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--workdir", type=Path, default=None, help="folder for configs (default: a temp dir)")
    args = ap.parse_args()
    sys.setswitchinterval(0.0005)  # the endpoint's threads mostly sleep: hand the GIL over quickly
    import tempfile

    work = args.workdir or Path(tempfile.mkdtemp(prefix="judgewise-bench-"))
    with PostgresServer() as pg, contextlib.ExitStack() as stack:
        servers = [stack.enter_context(FaultServer(latency_s=args.latency)) for _ in range(args.workers)]
        one = _run(pg, servers, work / "one", args, 1, kill=False)
        many = _run(pg, servers, work / "many", args, args.workers, kill=True)
    _report(one, many, args)


if __name__ == "__main__":
    main()
