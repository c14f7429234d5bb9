"""Shared pieces of the ``judgewise label`` tests: a small scores + responses set, a server in a thread, raw POSTs."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import threading
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.report.labelling import make_label_server

XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'


def make_label_inputs(folder: Path, n_items: int = 20, seed: int = 7) -> tuple[Path, Path, Path]:
    """(scores.csv, responses.jsonl, items.txt) of ``n_items`` pairwise items scored by three judges; the first
    item's response B holds :data:`XSS`."""
    rng = np.random.default_rng(seed)
    ids = [f"item-{k:02d}" for k in range(n_items)]
    truth = rng.random(n_items)
    rows = [{"item_id": i, "rater": judge, "score": float(np.clip(t + rng.normal(0, noise), 0, 1))}
            for judge, noise in (("judge-x", 0.2), ("judge-y", 0.3), ("judge-z", 0.4)) for i, t in zip(ids, truth)]
    scores = folder / "scores.csv"
    pd.DataFrame(rows).to_csv(scores, index=False)
    responses = folder / "responses.jsonl"
    with responses.open("w") as fh:
        for k, i in enumerate(ids):
            for slot in ("A", "B"):
                text = XSS if (k == 0 and slot == "B") else f"answer {slot} to question {k}"
                fh.write(json.dumps({"prompt_id": i, "model": slot, "text": text,
                                     "instruction": f"Question {k}: which answer is right?"}) + "\n")
    items = folder / "items.txt"
    items.write_text("\n".join(ids) + "\n")
    return scores, responses, items


@contextlib.contextmanager
def serving(task, port: int = 0):
    """The labelling page of ``task`` on 127.0.0.1 in a thread; yields (base URL, server)."""
    server = make_label_server(task, "127.0.0.1", port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", server
    finally:
        server.shutdown()
        server.server_close()


def page_token(url: str) -> str:
    status, body = request(url, "GET", "/")
    assert status == 200
    return re.search(r'name="judgewise-token" content="([^"]+)"', body).group(1)


def request(url: str, method: str, path: str, body=None, headers: dict | None = None) -> tuple[int, str]:
    """One raw HTTP request (``Host`` and ``Origin`` as given in ``headers``, else this server's)."""
    host = url.removeprefix("http://")
    conn = http.client.HTTPConnection(host, timeout=30)
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
    sent = {"Host": host, "Origin": url, "Content-Type": "application/json", **(headers or {})}
    sent = {k: v for k, v in sent.items() if v is not None}
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for k, v in sent.items():
        conn.putheader(k, v)
    if data is not None:
        conn.putheader("Content-Length", str(len(data)))
    conn.endheaders(data)
    res = conn.getresponse()
    out = res.status, res.read().decode()
    conn.close()
    return out
