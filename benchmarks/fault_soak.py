"""Fault soak: thousands of games through a faulty endpoint while the judging process is SIGKILLed at random.

The fault server (tests/support/fault_server.py) runs in this process with every fault kind, the malformed HTTP 200s
included (HTML, truncated JSON, empty body, JSON array/scalar, no choices, wrong types). The judge is the real
CLI, ``judgewise judge --config run.yaml``, in a subprocess that is SIGKILLed at random moments and restarted
until it finishes by itself. Counted at the end:

- ``lost``: planned games not in the store;
- ``valid_answers_paid_twice``: valid answers (200s with a chat completion, delivered to a connected client)
  the server delivered more than once for the same request, apart from those delivered in the last instant
  around a SIGKILL (within ``--instant`` seconds of it), counted and printed separately;
- ``maybe_charged_timeouts``: calls that timed out after being sent (the store's durable count, all runs);
- ``crashes``: exits with a non-zero code that our SIGKILL did not cause.

The last line is ``games=<n> stored=<n> lost=<n> valid_answers_paid_twice=<n> maybe_charged_timeouts=<n>
crashes=<n>``.

    .venv/bin/python benchmarks/fault_soak.py [--games 5000] [--latency 0.005] [--kills 12] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from judgewise.store.judgments import JudgmentStore  # noqa: E402
from tests.support.fault_server import MALFORMED, FaultServer  # noqa: E402
from tests.support.judging import MODEL, write_responses  # noqa: E402

MODELS = ["m1", "m2", "m3", "m4", "m5"]  # all pairs: 10 comparisons per prompt, 20 games with both orders
RATES = {"429": 0.03, "500": 0.03, "timeout": 0.01, "drop": 0.02, "empty": 0.02, "garbage": 0.02,
         "too_long": 0.005, **{kind: 0.005 for kind in MALFORMED}}


def write_job(folder: Path, url: str, games: int, concurrency: int, timeout_s: float) -> Path:
    """A run config judging all pairs of MODELS, both orders, on enough prompts for ``games`` games."""
    write_responses(folder, math.ceil(games / 20), MODELS)
    cfg = {"responses": "responses.jsonl", "store": "store.sqlite", "design": "all_pairs",
           "judge": {"backend": "openai", "model": MODEL, "base_url": url, "template": "arena_hard_5way"},
           "limits": {"concurrency": concurrency, "timeout_s": timeout_s, "max_attempts": 6, "base_delay_s": 0.01,
                      "max_delay_s": 0.2}}
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def run_until_done(folder: Path, config: Path, rng: random.Random, kills: int, max_runs: int) -> dict:
    """Start ``judgewise judge`` until one run ends by itself; SIGKILL the first ``kills`` runs at a random
    moment. Returns kill times, exit codes, crash messages and the last run's JSON summary."""
    out = {"kill_times": [], "exits": [], "crashes": [], "summary": None, "runs": 0}
    cmd = [sys.executable, "-m", "judgewise.cli.app", "judge", "-c", str(config), "--no-progress", "--json"]
    while out["runs"] < max_runs:
        out["runs"] += 1
        proc = subprocess.Popen(cmd, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        kill_at = rng.uniform(1.5, 6.0) if len(out["kill_times"]) < kills else None
        try:
            stdout, stderr = proc.communicate(timeout=kill_at)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            out["kill_times"].append(time.time())
            proc.communicate()
            out["exits"].append(-signal.SIGKILL)
            continue
        out["exits"].append(proc.returncode)
        if proc.returncode != 0:
            out["crashes"].append((proc.returncode, (stderr.strip().splitlines() or ["(no stderr)"])[-1]))
            continue
        out["summary"] = json.loads(stdout.strip().splitlines()[-1])
        return out
    return out


def paid_twice(success_times: list[tuple[float, str]], kill_times: list[float],
               instant_s: float) -> tuple[int, list[float], list[float | None]]:
    """Repeated deliveries of one valid answer: (how many are not explained by a kill, the signed seconds from
    delivery to the SIGKILL of those within ``instant_s`` of one, the same for the others, None without kills).

    "Within" counts both sides: a kill is recorded when the signal is sent, and the server may still write an
    answer into the socket of a process that is dying (the write succeeds, the answer is never read)."""
    by_key: dict[str, list[float]] = {}
    for t, key in sorted(success_times):
        by_key.setdefault(key, []).append(t)
    unexplained, at_kill, gaps = 0, [], []
    for times in by_key.values():
        for t in times[:-1]:  # every delivery but the last was paid again later
            nearest = min((k - t for k in kill_times), key=abs, default=None)
            if nearest is not None and abs(nearest) <= instant_s:
                at_kill.append(nearest)
            else:
                unexplained += 1
                gaps.append(None if nearest is None else round(nearest, 3))
    return unexplained, at_kill, gaps


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=5000, help="games to judge (rounded up to a multiple of 20)")
    ap.add_argument("--latency", type=float, default=0.005, help="server latency per call (s)")
    ap.add_argument("--kills", type=int, default=12, help="how many runs to SIGKILL at a random moment")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--timeout", type=float, default=2.0, help="per-call timeout (s); hung calls wait this long")
    ap.add_argument("--instant", type=float, default=0.25, help="'last instant before a SIGKILL' window (s)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jw-soak-") as tmp, \
            FaultServer(latency_s=args.latency, rates=RATES, seed=args.seed, hang_s=args.timeout + 1.0) as srv:
        folder = Path(tmp)
        config = write_job(folder, srv.url, args.games, args.concurrency, args.timeout)
        runs = run_until_done(folder, config, rng, args.kills, max_runs=args.kills + 10)
        events, success_times = Counter(srv.events), list(srv.success_times)
        with JudgmentStore.open_readonly(folder / "store.sqlite") as store:
            stats, integrity = store.stats(), store.integrity_check()
    elapsed = time.perf_counter() - t0
    games = runs["summary"]["games"] if runs["summary"] else math.ceil(args.games / 20) * 20
    stored = stats["games"]
    twice, at_kill, gaps = paid_twice(success_times, runs["kill_times"], args.instant)
    print(f"{runs['runs']} runs ({len(runs['kill_times'])} SIGKILLed), {elapsed:.1f}s; exit codes {Counter(runs['exits'])}")
    print(f"server: {sum(events.values())} events {dict(sorted(events.items()))}")
    print(f"store: {stats['ok']} ok, {stats['failed']} failed, {stats['calls']} calls; integrity {integrity}; "
          f"failure reasons {stats['failure_reasons']}")
    print(f"valid answers delivered {len(success_times)}, distinct {len({k for _, k in success_times})}; "
          f"paid twice, delivered within {args.instant}s of a SIGKILL: {len(at_kill)} ({sum(g < 0 for g in at_kill)} "
          f"after the signal was sent, median {1000 * statistics.median(at_kill or [0]):+.0f} ms before it); others "
          f"(seconds from delivery to the nearest SIGKILL): {sorted(gaps, key=lambda g: (g is None, g or 0))}")
    for code, line in runs["crashes"]:
        print(f"crash: exit {code}: {line}")
    print(f"games={games} stored={stored} lost={games - stored} valid_answers_paid_twice={twice} "
          f"maybe_charged_timeouts={stats['maybe_charged_timeouts']} crashes={len(runs['crashes'])}")


if __name__ == "__main__":
    main()
