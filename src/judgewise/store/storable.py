"""Text as every store can hold it: secrets scrubbed, what UTF-8 or PostgreSQL cannot hold escaped."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from judgewise.redaction import scrub

_UNSTORABLE = re.compile("[\ud800-\udfff\x00]")  # lone surrogates (no UTF-8 form) and NUL (PostgreSQL text)


def storable(text: str) -> tuple[str, int]:
    """(``text`` as every store can hold it, the number of characters escaped): secrets scrubbed (:func:`scrub`),
    and each lone surrogate (which UTF-8 cannot encode; JSON's ``"\\ud800"`` decodes to one) or NUL written as
    its ``\\uXXXX`` escape."""
    text = scrub(text)
    if "\x00" not in text and (text.isascii() or _encodes(text)):  # the common case, without a regex (~50x faster)
        return text, 0
    return _UNSTORABLE.subn(lambda m: f"\\u{ord(m.group()):04x}", text)


def _encodes(text: str) -> bool:
    """Whether UTF-8 has a form for ``text`` (no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def journal_json(answer) -> str:
    """An answer as the journal stores it: JSON in ASCII (a lone surrogate kept exactly, as ``\\ud800``, where
    UTF-8 has no form for it), scrubbed of secrets (their JSON spellings are among :func:`secret_forms`)."""
    return scrub(json.dumps(answer, default=str))


@dataclass(kw_only=True)
class CallCost:
    """What one stored call cost and when it was stored: the fields every store record (a judged game, a generated
    answer) carries after its own. Keyword-only, so a record's own fields keep their positions."""

    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cost: float = 0.0
    n_calls: int = 0
    created_at: float = 0.0
    tokens_cached: int = 0  # of tokens_in, read from the server's prompt cache (priced at the cached-input rate)
