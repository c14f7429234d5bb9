"""Headless Chromium for the browser tests (Playwright): the ``browser`` fixture, and a page that records what it
must not do."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support import REPO

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
         "--no-first-run", "--disable-component-update", "--disable-sync"]
OUT = REPO / "test-output"  # screenshots


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium): browser tests skipped")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright's Python package is not installed (pip install playwright): browser tests skipped")
    OUT.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


class Watched:
    """A page plus what it did that it must not: dialogs, page errors, requests leaving the machine."""

    def __init__(self, browser):
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.dialogs, self.errors, self.remote = [], [], []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.remote.append(r.url)
                     if not r.url.startswith(("file:", "data:", "http://127.0.0.1", "about:")) else None)

    def assert_nothing_ran(self):
        assert self.page.evaluate("typeof window.__xss") == "undefined"
        assert not self.dialogs and not self.errors and not self.remote, (self.dialogs, self.errors, self.remote)
