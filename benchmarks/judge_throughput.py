"""Judging throughput: the full engine chain against a loopback OpenAI-compatible server with a fixed latency.

The server (tests/support/fault_server.py, no faults, 200 ms per answer by default) runs in its own process; the judge is
the real chain (Arena-Hard template → OpenAIBackend and its keep-alive HTTP client under the scheduler → parser)
writing every game to a SQLite store (claims a batch at a time; each answer committed with its game's row, as the
engine commits them in any run). With ``c`` calls in
flight the ideal is c / latency calls/s; the goal (issue 16) at concurrency 256 is ≥ 85% of the ideal 1,280 calls/s
with ≤ 0.6 ms of judging-process CPU per call. First a baseline: the same number of bare POSTs through the engine's
own HTTP client (``judges.http11``) at the same concurrency, without the engine (``--no-baseline`` skips it).
Prints call latency, calls/s and CPU of the judging process (its user + system time, background threads included)
and of the server; ``--profile`` adds the judging time per call split by stage (HTTP client, store writes, engine,
JSON, event loop, templates, the judgments table, parsing, progress, and the idle wait in epoll; cProfile's own time
per function, built-ins counted with their callers; profiling inflates it).
The last two lines are ``cpu_ms_per_call=<float>`` and ``calls_per_s=<float> ideal=<float>``.

    .venv/bin/python benchmarks/judge_throughput.py [--games 2560] [--concurrency 256] [--latency 0.2] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL_SHARE, GOAL_CPU_MS = 0.85, 0.6  # issue 16: at concurrency 256 and 200 ms latency
sys.path.insert(0, str(REPO))

from judgewise.judges import eventloop  # noqa: E402
from judgewise.judges.base import Comparison  # noqa: E402
from judgewise.judges.http11 import Endpoint  # noqa: E402
from judgewise.judges.llm_judge import LLMJudge  # noqa: E402
from judgewise.judges.openai_backend import OpenAIBackend  # noqa: E402
from judgewise.judges.runner import run_judging  # noqa: E402


def _cpu_seconds_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0  # utime + stime, in clock ticks (USER_HZ = 100)


def _start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "support" / "fault_server.py"), "--latency", str(latency)],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().split()
    if len(line) != 2 or line[0] != "URL":
        proc.kill()
        raise SystemExit(f"fault server did not start: {line}")
    return proc, line[1]


async def _bare_client_rate(url: str, n: int, concurrency: int) -> float:
    """Calls/s of bare POSTs through the engine's own HTTP client (``judges.http11``, one keep-alive pool, its
    connections opened ahead as a run opens them, on the loop a run uses) with ``concurrency`` in flight and nothing
    else (no template, scheduler, parser or store): what the machine and the server allow without the engine."""
    endpoint = Endpoint(url, headers={"Content-Type": "application/json"}, connect_timeout_s=5, read_timeout_s=60)
    queue = list(range(n))
    t0 = time.perf_counter()
    await endpoint.open_ahead(concurrency)

    async def worker() -> None:
        while queue:
            body = json.dumps({"model": "judge-model", "messages": [{"role": "user", "content": f"b{queue.pop()}"}]})
            response = await endpoint.post("/chat/completions", body.encode())
            if response.status != 200:
                raise SystemExit(f"bare client: HTTP {response.status} from the fault server")
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    rate = n / (time.perf_counter() - t0)
    await endpoint.aclose()
    return rate


STAGES = [  # (stage, substrings of "file:function" of the profiled functions that belong to it), first match wins
    ("store writes (SQLite)", ("store/", "store/leases", "sqlite3")),
    ("templates", ("judges/templates", "jinja2", "<template>")),
    ("parsing the verdict", ("judges/parsing",)),
    ("progress display", ("rich/", "cli/progress")),
    ("JSON encode/decode", ("json/", "_json")),
    ("HTTP client", ("judges/http11", "selector_events", "sslproto", "ssl.py", "_ssl", "_socket", "socket.py",
                     "zlib", "httpx", "httpcore", "h11", "anyio", "sniffio", "openai/")),
    ("engine (scheduler, backend, judge, keys)", ("judgewise/", "hashlib", "dataclasses", "copy.py", "random.py")),
    ("waiting for answers (epoll; idle, not CPU)", ("select.epoll",)),
    ("event loop (asyncio)", ("asyncio", "selectors", "contextvars")),
    ("the judgments table (pandas)", ("pandas", "numpy", "pyarrow")),
]


def _stage(where: str) -> str | None:
    return next((stage for stage, keys in STAGES if any(k in where for k in keys)), None)


def stage_split(profile, calls: int) -> list[tuple[str, float]]:
    """Time per call (ms) of each stage, from a cProfile of the judging run: the own time of each function, assigned
    to the first stage whose pattern its file or name matches; a function that matches none (``isinstance``,
    ``str.join``, ``collections.ChainMap`` ...) is shared among the stages of its callers by the time it spent for
    each (a caller that matches none counts as the stage of its own main caller, a few levels up). What is left is
    'other'. cProfile measures wall time: the stages are CPU except the idle wait in epoll (and any time the process
    waited for a core on a busy machine)."""
    import pstats

    stats = pstats.Stats(profile).stats

    def stage_of(func, depth: int = 0) -> str:
        file, _, name = func
        stage = _stage(f"{file}:{name}")
        callers = stats.get(func, (0, 0, 0, 0, {}))[4]
        if stage is not None or depth > 4 or not callers:
            return stage or "other"
        return stage_of(max(callers, key=lambda c: callers[c][2]), depth + 1)  # its main caller's

    totals: dict[str, float] = {}
    for func, (_, _, own, _, callers) in stats.items():
        if _stage(f"{func[0]}:{func[2]}") is None and callers:
            for caller, (_, _, spent, _) in callers.items():
                stage = stage_of(caller)
                totals[stage] = totals.get(stage, 0.0) + spent
        else:
            stage = stage_of(func)
            totals[stage] = totals.get(stage, 0.0) + own
    return sorted(((s, 1000 * t / max(1, calls)) for s, t in totals.items()), key=lambda x: -x[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2560)
    ap.add_argument("--concurrency", type=int, default=256)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--no-baseline", action="store_true", help="skip the bare-client baseline run")
    ap.add_argument("--profile", action="store_true", help="profile the judging run (cProfile; slows it down) and "
                                                          "print the CPU per call of each stage")
    args = ap.parse_args()
    ideal = args.concurrency / args.latency
    comps = [Comparison(f"p{i}", f"Prompt {i}: explain something.", "alpha", "beta", f"Alpha's answer {i}.",
                        f"Beta's answer {i}.") for i in range(args.games // 2)]
    server, url = _start_server(args.latency)
    try:
        baseline = None if args.no_baseline else eventloop.run(_bare_client_rate(url, args.games, args.concurrency))
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
    cpu_ms = 1000 * client_cpu / max(1, result.calls_made)
    print(f"judging process CPU: {client_cpu:.2f}s ({100 * client_cpu / wall:.0f}% of one core, "
          f"{cpu_ms:.3f} ms per call)")
    print(f"server process CPU: {server_cpu1 - server_cpu0:.2f}s ({100 * (server_cpu1 - server_cpu0) / wall:.0f}% "
          f"of one core)")
    if baseline:
        print(f"bare HTTP client against the same server (no engine): {baseline:.1f} calls/s = "
              f"{100 * baseline / ideal:.1f}% of ideal; the engine reaches {100 * rate / baseline:.1f}% of that")
    if profile is not None:
        split = stage_split(profile, result.calls_made)
        print("judging time per call by stage (cProfile, own time of each function; profiling inflates it): " +
              ", ".join(f"{stage} {ms:.3f} ms" for stage, ms in split))
    print(f"achieved {rate:.1f} calls/s = {100 * rate / ideal:.1f}% of ideal (goal >= {100 * GOAL_SHARE:.0f}%), "
          f"{cpu_ms:.2f} ms judging CPU per call (goal <= {GOAL_CPU_MS} ms)")
    print(f"cpu_ms_per_call={cpu_ms:.3f}")
    print(f"calls_per_s={rate:.2f} ideal={ideal:.2f}")


if __name__ == "__main__":
    main()
