"""A small canonical run with hostile text for the report and explorer tests, and the parsing and serving they use."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.report.explorer import make_explorer_server
from judgewise.report.explorer_data import ExplorerData

XSS_TEXT = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'
XSS_MODEL = 'evil<img src=x onerror="window.__xss=3">'


def make_run(folder: Path, *, n_models: int = 5, n_prompts: int = 30, seed: int = 0, xss: bool = True,
             with_round: bool = False) -> tuple[Path, Path]:
    """A small canonical run: every pair on every prompt in both answer orders, 5-way verdicts, raw judge
    texts, and a responses table. With ``xss`` one model's name, one response and one judge text carry HTML
    that must never run. Returns (judgments.jsonl, responses.jsonl)."""
    rng = np.random.default_rng(seed)
    models = [f"model-{i}" for i in range(n_models - 1)] + [XSS_MODEL if xss else f"model-{n_models - 1}"]
    skill = np.linspace(1.5, -1.0, n_models)
    rows, responses = [], []
    for p in range(n_prompts):
        pid = f"p{p:04d}"
        for i, m in enumerate(models):
            text = f"Answer of {m} to prompt {p}. " * int(rng.integers(1, 6))
            if xss and i == 0 and p == 0:
                text = XSS_TEXT
            responses.append({"prompt_id": pid, "model": m, "text": text, "instruction": f"Question number {p}?"})
        for i in range(n_models):
            for j in range(i + 1, n_models):
                for swapped in (False, True):
                    d = skill[i] - skill[j] + (0.3 if not swapped else -0.3)  # a small position bias
                    u = rng.random()
                    p_win, p_tie = 1 / (1 + np.exp(-d)) * 0.85, 0.15
                    verdict = 1 if u < p_win else (0 if u < p_win + p_tie else -1)
                    raw = f"Both answers considered. My final verdict is [[{'A>B' if verdict > 0 else 'A=B' if verdict == 0 else 'B>A'}]]"
                    if xss and p == 0 and i == 0:
                        raw = "Rationale " + XSS_TEXT
                    rows.append({"prompt_id": pid, "model_a": models[i], "model_b": models[j], "judge": "sim-judge",
                                 "outcome": (verdict + 1) / 2, "verdict": verdict,
                                 "first": models[j] if swapped else models[i], "raw": raw,
                                 **({"round": 1 + (i + j) % 3} if with_round else {})})
    folder.mkdir(parents=True, exist_ok=True)
    jpath, rpath = folder / "judgments.jsonl", folder / "responses.jsonl"
    pd.DataFrame(rows).to_json(jpath, orient="records", lines=True)
    pd.DataFrame(responses).to_json(rpath, orient="records", lines=True)
    return jpath, rpath


class Tags(HTMLParser):
    """Collects the element names and event-handler attributes a browser would build from a document."""

    def __init__(self):
        super().__init__()
        self.tags, self.handlers, self.scripts = [], [], []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def parsed(html: str) -> Tags:
    """The tags, event handlers and script texts a browser would build from ``html``."""
    tags = Tags()
    tags.feed(html)
    return tags


@contextmanager
def running(data: ExplorerData):
    """Serve ``data`` on 127.0.0.1 (a free port) in a thread; yields the base URL."""
    server = make_explorer_server(data, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
