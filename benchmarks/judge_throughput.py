"""Judging throughput: the full engine chain against a loopback OpenAI-compatible server with 200 ms latency.

Concurrency 32 and a fixed 200 ms server latency make the ideal 32 / 0.2 = 160 calls/s; the goal is ≥ 80%
of it. The server (tests/fault_server.py, no faults) runs in its own process; the judge is the real chain
(Arena-Hard template → OpenAIBackend under the scheduler → parser) writing every game to a SQLite store.
Prints calls/s and CPU use of the judging process and of the server (``--profile``: and the judging CPU per call
split by stage: HTTP client, JSON, templates, parsing, store writes, progress, engine, event loop); the last line
is ``calls_per_s=<float> ideal=<float>``.

    .venv/bin/python benchmarks/judge_throughput.py [--games 1280] [--concurrency 32] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from judgewise.judges.base import Comparison  # noqa: E402
from judgewise.judges.llm_judge import LLMJudge  # noqa: E402
from judgewise.judges.openai_backend import OpenAIBackend  # noqa: E402
from judgewise.judges.runner import run_judging  # noqa: E402


def _cpu_seconds_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0  # utime + stime, in clock ticks (USER_HZ = 100)


def _start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "fault_server.py"), "--latency", str(latency)],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().split()
    if len(line) != 2 or line[0] != "URL":
        proc.kill()
        raise SystemExit(f"fault server did not start: {line}")
    return proc, line[1]


async def _raw_httpx_rate(url: str, n: int, concurrency: int) -> float:
    """Calls/s of bare httpx POSTs to the same server: what the machine allows without the engine."""
    import httpx

    sem = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=concurrency)) as client:
        async def one(i: int) -> None:
            async with sem:
                await client.post(f"{url}/chat/completions",
                                  json={"model": "judge-model", "messages": [{"role": "user", "content": f"b{i}"}]})
        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return n / (time.perf_counter() - t0)


STAGES = [  # (stage, substrings of "file:function" of the profiled functions that belong to it), first match wins
    ("store writes (SQLite)", ("judges/store", "judges/sqlite_leases", "sqlite3")),
    ("templates", ("judges/templates", "jinja2")),
    ("parsing the verdict", ("judges/parsing",)),
    ("progress display", ("rich/", "cli/progress")),
    ("JSON encode/decode", ("json/", "_json")),
    ("HTTP client", ("judges/http11", "selector_events", "sslproto", "ssl.py", "_ssl", "_socket", "socket.py",
                     "zlib", "httpx", "httpcore", "h11", "anyio", "sniffio", "openai/")),
    ("engine (scheduler, backend, judge, keys)", ("judgewise/", "hashlib", "dataclasses", "copy.py", "random.py")),
    ("event loop (asyncio; waiting in epoll)", ("asyncio", "selectors", "poll", "contextvars")),
]


def stage_split(profile, calls: int) -> list[tuple[str, float]]:
    """Time per call (ms) of each stage, from a cProfile of the judging run (own time of each function, assigned
    to the first stage whose pattern its file or name matches; the rest is 'other'). The event loop's share
    includes its idle waiting in epoll; the other stages are CPU (the judge runs in one thread)."""
    import pstats

    totals: dict[str, float] = {}
    for (file, _, name), (_, _, own, _, _) in pstats.Stats(profile).stats.items():
        where = f"{file}:{name}"
        stage = next((s for s, keys in STAGES if any(k in where for k in keys)), "other")
        totals[stage] = totals.get(stage, 0.0) + own
    return sorted(((s, 1000 * t / max(1, calls)) for s, t in totals.items()), key=lambda x: -x[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1280)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--no-baseline", action="store_true", help="skip the bare-httpx baseline run")
    ap.add_argument("--profile", action="store_true", help="profile the judging run (cProfile; slows it down) and "
                                                          "print the CPU per call of each stage")
    args = ap.parse_args()
    ideal = args.concurrency / args.latency
    comps = [Comparison(f"p{i}", f"Prompt {i}: explain something.", "alpha", "beta", f"Alpha's answer {i}.",
                        f"Beta's answer {i}.") for i in range(args.games // 2)]
    server, url = _start_server(args.latency)
    try:
        baseline = None if args.no_baseline else asyncio.run(_raw_httpx_rate(url, args.games // 2, args.concurrency))
        judge = LLMJudge(OpenAIBackend("judge-model", base_urls=url), "arena_hard_5way")
        with tempfile.TemporaryDirectory() as tmp:
            cpu0, server_cpu0, t0 = resource.getrusage(resource.RUSAGE_SELF), _cpu_seconds_of(server.pid), time.perf_counter()
            profile = None
            if args.profile:
                import cProfile

                profile = cProfile.Profile()
                profile.enable()
            result = run_judging(comps, judge, Path(tmp) / "bench.sqlite", concurrency=args.concurrency)
            if profile is not None:
                profile.disable()
            lat = result.judgments["latency_s"]
            print(f"call latency mean={lat.mean()*1000:.1f}ms p50={lat.median()*1000:.1f}ms p90={lat.quantile(0.9)*1000:.1f}ms")
            wall = time.perf_counter() - t0
            cpu1, server_cpu1 = resource.getrusage(resource.RUSAGE_SELF), _cpu_seconds_of(server.pid)
    finally:
        server.terminate()
        server.wait()
    client_cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    rate = result.calls_made / wall
    print(f"games={result.n_games} judged={result.judged} failed={result.failed} calls={result.calls_made} "
          f"wall={wall:.2f}s")
    print(f"concurrency={args.concurrency} server_latency={args.latency}s ideal={ideal:.1f} calls/s")
    print(f"judging process CPU: {client_cpu:.2f}s ({100 * client_cpu / wall:.0f}% of one core, "
          f"{1000 * client_cpu / max(1, result.calls_made):.2f} ms per call)")
    print(f"server process CPU: {server_cpu1 - server_cpu0:.2f}s ({100 * (server_cpu1 - server_cpu0) / wall:.0f}% "
          f"of one core)")
    if baseline:
        print(f"bare httpx against the same server (no engine): {baseline:.1f} calls/s = "
              f"{100 * baseline / ideal:.1f}% of ideal; the engine reaches {100 * rate / baseline:.1f}% of that")
    if profile is not None:
        split = stage_split(profile, result.calls_made)
        print("judging CPU per call by stage (cProfile, own time; profiling inflates it): " +
              ", ".join(f"{stage} {ms:.3f} ms" for stage, ms in split))
    print(f"achieved {rate:.1f} calls/s = {100 * rate / ideal:.1f}% of ideal (goal >= 80%)")
    print(f"calls_per_s={rate:.2f} ideal={ideal:.2f}")


if __name__ == "__main__":
    main()
