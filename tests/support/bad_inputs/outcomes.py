"""What a bad-input case did: the files under its folder before and after, and its class (clean or how it broke)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

PYTHON_ERROR = re.compile(r"^\s*(Traceback \(most recent call last\)|[A-Za-z_.]*(Error|Exception): )", re.M)


def snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` with a digest of its content (folders: 'dir')."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink() or path.is_dir():
            out[rel] = "link" if path.is_symlink() else "dir"
        else:
            out[rel] = hashlib.sha1(path.read_bytes()).hexdigest()
    return out


def classify(res, before: dict, after: dict) -> tuple[str, str]:
    """(class, why): clean, or the first way the case breaks the promise. Clean: exit ≠ 0, nothing on stdout,
    exactly one stderr line starting ``error: `` and it is the last one (informational log lines before it are
    allowed), no Python traceback or exception line, no file created or changed."""
    if res is None:
        return "timeout", "no exit within the case's timeout"
    if res.returncode == 0:
        return "silent", f"exit 0; stdout: {res.stdout[:300]!r}"
    text = res.stderr + res.stdout
    if "Traceback" in text or PYTHON_ERROR.search(text.replace("error: ", "")) or res.returncode < 0:
        return "traceback", text[-600:]
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error: ")]
    if len(errors) != 1 or lines[-1] != errors[0] or res.stdout.strip():
        return "messy", f"stderr has {len(errors)} error line(s) of {len(lines)}: {res.stderr[-600:]!r}"
    if before != after:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        return "wrote", f"files created or changed: {changed}"
    return "clean", errors[0]
