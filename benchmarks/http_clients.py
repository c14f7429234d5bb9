"""The judge's HTTP transport, measured against well-kept async libraries with the same limits (issue 26 item 2).

Bare chat-completion POSTs at a given concurrency (default 256, 200 ms server latency, the fault server in its own
process, as ``judge_throughput.py``) through: judgewise's own client (``judges.http11``: keep-alive pool, answer cap
while reading, capped inflate), ``httpcore`` (the transport under httpx; the body read as a stream and counted
against the same cap) and ``aiohttp`` (its ``ClientSession``; the body read as it arrives, which it
inflates itself, counted as it arrives), each keeping one connection per call in flight. httpcore is given
``--slow-calls`` calls only (default 512): at concurrency 256 it spends a fifth of a second of CPU per call here. Prints the client process's CPU (user + system)
per call and calls/s for each; the goal for the whole engine (issue 16) is ≤ 0.6 ms CPU per call at concurrency 256,
so a transport costing more than the lean client's difference to that goal cannot meet it.
A library that is not installed is skipped, with the reason.

    .venv/bin/python benchmarks/http_clients.py [--calls 5120] [--concurrency 256] [--latency 0.2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.judge_throughput import _start_server  # noqa: E402
from judgewise.judges.http11 import MAX_ANSWER_BYTES, Endpoint  # noqa: E402

HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer sk-no-key-required"}


def _bodies(n: int) -> list[bytes]:
    return [json.dumps({"model": "judge-model", "messages": [{"role": "user", "content": f"question {i}"}],
                        "max_tokens": 16}).encode() for i in range(n)]


async def _run(post, bodies: list[bytes], concurrency: int) -> None:
    queue = list(bodies)

    async def worker() -> None:
        while queue:
            answer = await post(queue.pop())
            if b"choices" not in answer:
                raise SystemExit(f"not an answer: {answer[:80]!r}")
    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def lean(url: str, bodies: list[bytes], concurrency: int) -> None:
    endpoint = Endpoint(url, headers=HEADERS, connect_timeout_s=5, read_timeout_s=60)

    async def post(body: bytes) -> bytes:
        return (await endpoint.post("/chat/completions", body)).body
    try:
        await _run(post, bodies, concurrency)
    finally:
        await endpoint.aclose()


async def with_httpcore(url: str, bodies: list[bytes], concurrency: int) -> None:
    import httpcore

    target = url.rstrip("/") + "/chat/completions"
    async with httpcore.AsyncConnectionPool(max_connections=concurrency, max_keepalive_connections=concurrency) as pool:
        async def post(body: bytes) -> bytes:
            async with pool.stream("POST", target, headers=[*HEADERS.items(), ("Content-Length", str(len(body)))],
                                   content=body) as response:
                parts, size = [], 0
                async for part in response.aiter_stream():
                    size += len(part)
                    if size > MAX_ANSWER_BYTES:
                        raise SystemExit("answer above the cap")
                    parts.append(part)
                data = b"".join(parts)
                encoding = dict(response.headers).get(b"Content-Encoding", b"").lower()
                if encoding == b"gzip":
                    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    data = inflater.decompress(data, MAX_ANSWER_BYTES + 1)
                return data
        await _run(post, bodies, concurrency)


async def with_aiohttp(url: str, bodies: list[bytes], concurrency: int) -> None:
    import aiohttp

    target = url.rstrip("/") + "/chat/completions"
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=HEADERS) as session:
        async def post(body: bytes) -> bytes:
            async with session.post(target, data=body) as response:
                parts, size = [], 0
                async for part in response.content.iter_any():  # inflated by aiohttp as it arrives
                    size += len(part)
                    if size > MAX_ANSWER_BYTES:
                        raise SystemExit("answer above the cap")
                    parts.append(part)
                return b"".join(parts)
        await _run(post, bodies, concurrency)


CLIENTS = {"judgewise http11": lean, "httpcore": with_httpcore, "aiohttp": with_aiohttp}


def measure(client, url: str, n: int, concurrency: int) -> tuple[float, float]:
    """(CPU ms per call, calls/s) of ``n`` POSTs (after a warm-up of ``concurrency`` calls, which opens the pool)."""
    async def go():
        await client(url, _bodies(concurrency), concurrency)  # connections, imports, first-use costs
        cpu, wall = time.process_time(), time.perf_counter()
        await client(url, _bodies(n), concurrency)
        return time.process_time() - cpu, time.perf_counter() - wall
    cpu, wall = asyncio.run(go())
    return 1000 * cpu / n, n / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=5120)
    ap.add_argument("--concurrency", type=int, default=256)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--rounds", type=int, default=3, help="each client this many times, interleaved; best kept")
    ap.add_argument("--slow-calls", type=int, default=512, help="calls for httpcore (its CPU per call is ~1000x)")
    args = ap.parse_args()
    server, url = _start_server(args.latency)
    results: dict[str, list[tuple[float, float]]] = {}
    try:
        for _ in range(args.rounds):
            for name, client in CLIENTS.items():
                try:
                    n = args.slow_calls if name == "httpcore" else args.calls
                    results.setdefault(name, []).append(measure(client, url, n, args.concurrency))
                except ImportError as exc:
                    results[name] = []
                    print(f"{name}: skipped ({exc})")
    finally:
        server.terminate()
        server.wait()
    print(f"{'client':<18}{'CPU ms/call':>12}{'calls/s':>9}   ({args.calls} calls, concurrency {args.concurrency}, "
          f"{args.latency:g}s latency; ideal {args.concurrency / args.latency:.0f} calls/s; best of {args.rounds})")
    for name, runs in results.items():
        if runs:
            cpu, rate = min(r[0] for r in runs), max(r[1] for r in runs)
            print(f"{name:<18}{cpu:>12.3f}{rate:>9.0f}")


if __name__ == "__main__":
    main()
