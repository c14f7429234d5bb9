"""Peak memory of a judge run against a malicious server: the answer cap of the HTTP client (issue 26 item 2).

A fault server (tests/support/fault_server.py) in its own process answers every call with one hostile answer — a ~1 MB gzip
(or deflate) bomb of 1 GiB, an HTTP/1.0 body of 1 GiB framed by the end of the connection, a 1 GiB chunked stream (in
64 KB chunks, or a valid answer in one-byte chunks), a valid 200 MB JSON answer — or, for the baseline, a normal verdict. Each case is a whole ``judgewise judge`` run in a
new process (12 games, ``limits.concurrency`` 8, the default 8 MB answer cap, real SQLite store); the run reads its
own peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) as it exits. The goal (issue 26): ≤ 400 MB for the bomb
and the 1 GiB body (the code before the cap peaked at 2.2 GB and 1.2 GB there; a normal run at 186 MB). ``--src``
runs another checkout's ``src`` for comparison (beware: the code before the cap needs gigabytes per call in flight).

``batch_output_1gib`` (issue 32): a ``judge.batch: true`` run of 24 calls against the fake batch server
(tests/support/batch_server.py, in this process) whose output file is 1 GiB — the 24 answer lines, then filler lines
of 1 MiB generated as they are sent. The code before issue 32 read it whole and copied it (3.3 GB); the goal is
≤ 400 MB: the file is streamed and parsed line by line.

    .venv/bin/python benchmarks/hostile_memory.py [--case all|normal|gzip_bomb|...] [--src PATH]
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

import yaml

REPO = Path(__file__).resolve().parents[1]
GOAL_MB = 400
CASES = {"normal": (None, 0), "gzip_bomb": ("gzip_bomb", 1 << 30), "deflate_bomb": ("deflate_bomb", 1 << 30),
         "close_flood": ("close_flood", 1 << 30), "chunked_flood": ("chunked_flood", 1 << 30),
         "tiny_chunk_flood": ("tiny_chunk_flood", 1 << 30),
         "huge_json": ("huge_json", 200 << 20), "batch_output_1gib": ("batch", 1 << 30)}


def _server(kind: str | None, size: int) -> tuple[subprocess.Popen, str]:
    args = [sys.executable, str(REPO / "tests" / "support" / "fault_server.py"), "--flood-bytes", str(size or 1 << 20)]
    if kind:
        args += [f"--rate-{kind}", "1.0"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().split()
    if len(line) != 2 or line[0] != "URL":
        proc.kill()
        raise SystemExit(f"fault server did not start: {line}")
    return proc, line[1]


def _config(folder: Path, url: str, batch: bool = False) -> Path:
    """12 games (2 prompts), or with ``batch`` 24 (4 prompts) sent as one batch."""
    with (folder / "responses.jsonl").open("w") as fh:
        for p in range(4 if batch else 2):
            for m in ("m1", "m2", "m3"):
                fh.write(f'{{"prompt_id": "p{p}", "model": "{m}", "text": "{m} answers {p}.", '
                         f'"instruction": "Question {p}?"}}\n')
    cfg = {"responses": "responses.jsonl", "store": "store.sqlite", "design": "all_pairs",
           "judge": {"backend": "openai", "model": "judge-model", "base_url": url,
                     **({"batch": True, "batch_poll_s": 0.05} if batch else {})},
           "limits": {"concurrency": 8, "timeout_s": 120, "max_attempts": 2, "base_delay_s": 0.01}}
    (folder / "run.yaml").write_text(yaml.safe_dump(cfg))
    return folder / "run.yaml"


def measure(case: str, src: Path) -> tuple[float, float, int]:
    """(peak RSS in MB, seconds, exit code) of one judge run in a new process against the case's server."""
    kind, size = CASES[case]
    if kind == "batch":
        sys.path.insert(0, str(REPO))
        from tests.support.batch_server import BatchServer

        with tempfile.TemporaryDirectory() as state, BatchServer(Path(state) / "state.json", polls=1,
                                                                 huge_output=size) as batch_server:
            return _run_judge(case, src, batch_server.url, batch=True)
    server, url = _server(kind, size)
    try:
        return _run_judge(case, src, url)
    finally:
        server.kill()
        server.wait()


def _run_judge(case: str, src: Path, url: str, batch: bool = False) -> tuple[float, float, int]:
    """(peak RSS in MB, seconds, exit code) of ``judgewise judge`` in a new process against ``url``."""
    with tempfile.TemporaryDirectory() as tmp:
        config = _config(Path(tmp), url, batch)
        env = {**os.environ, "PYTHONPATH": str(src)}
        code = ("import resource, sys; from judgewise.cli.app import main\n"
                "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\nelse:\n    code = 0\n"
                "print('PEAK_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
                "sys.exit(code)")
        t0 = time.perf_counter()
        run = subprocess.run([sys.executable, "-c", code, "judge", "-c", str(config), "--no-progress", "--json"],
                             cwd=tmp, env=env, capture_output=True, text=True, timeout=900)
        seconds = time.perf_counter() - t0
    peak = [int(line.split()[1]) for line in run.stderr.splitlines() if line.startswith("PEAK_KB")]
    if not peak:
        raise SystemExit(f"{case}: the run printed no peak (exit {run.returncode}): {run.stderr[-600:]}")
    last = [line for line in run.stderr.splitlines() if line.startswith("error:")][-1:] or ["(no error line)"]
    try:
        batch = json.loads(run.stdout).get("batch") or ""
    except (ValueError, AttributeError):
        batch = ""
    print(f"  {case}: {last[0][:160]} {json.dumps(batch) if batch else ''}")
    return peak[0] / 1024, seconds, run.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="all", choices=["all", *CASES])
    ap.add_argument("--src", type=Path, default=REPO / "src", help="the judgewise source tree to run")
    args = ap.parse_args()
    cases = list(CASES) if args.case == "all" else [args.case]
    rows = [(case, *measure(case, args.src)) for case in cases]
    print(f"{'case':<15}{'peak RSS MB':>12}{'seconds':>9}{'exit':>6}")
    for case, mb, seconds, code in rows:
        print(f"{case:<15}{mb:>12.0f}{seconds:>9.1f}{code:>6}")
    for case, mb, *_ in rows:
        if case == "batch_output_1gib":
            print(f"batch_output_peak_rss_mb={mb:.0f} goal<={GOAL_MB}")
    worst = max(mb for case, mb, *_ in rows if case in ("gzip_bomb", "close_flood")) if any(
        case in ("gzip_bomb", "close_flood") for case, *_ in rows) else None
    if worst is not None:
        print(f"peak_rss_mb={worst:.0f} goal<={GOAL_MB}")


if __name__ == "__main__":
    main()
