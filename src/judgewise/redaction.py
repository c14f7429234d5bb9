"""Secrets never leave the process: every spelling of each registered secret is scrubbed from what is kept or printed."""

from __future__ import annotations

import json
from urllib.parse import quote, quote_plus

REDACTED = "[redacted]"
_SECRETS: list[str] = []  # every spelling of the process's secrets, longest first, held in memory only


def secret_forms(value: str) -> set[str]:
    """Every spelling in which ``value`` can leave the process and come back in a text: as configured, trimmed of
    whitespace (what a header or a server keeps), URL-encoded (``%40``, ``+`` for a space: a URL, a query
    parameter), JSON-escaped (a journaled answer, an export). Forms shorter than 4 characters are left out: they
    would redact ordinary words."""
    forms = set()
    for base in {value, value.strip()}:
        forms |= {base, quote(base, safe=""), quote(base, safe="/:@"), quote_plus(base),
                  json.dumps(base)[1:-1], json.dumps(base, ensure_ascii=False)[1:-1]}
        forms |= {f.lower() for f in forms if "%" in f}  # percent-escapes in lower case
    return {f for f in forms if len(f.strip()) >= 4}


def register_secret(value: str | None) -> None:
    """Remember ``value`` (an API key, a database password) so that :func:`scrub` removes every spelling of it
    (:func:`secret_forms`) from every text judgewise keeps or prints.

    Backends call this for each key they read (``api_key_env``'s value, or a key given directly), the PostgreSQL
    store for the password of its URL; the store calls :func:`scrub` on every text it writes, backends on every error
    message they raise, and the CLI on every message it prints.
    """
    if not value or len(value.strip()) < 4:  # shorter "keys" would redact ordinary words
        return
    _SECRETS[:] = sorted(set(_SECRETS) | secret_forms(value), key=len, reverse=True)


def scrub(text):
    """``text`` with every registered secret, in each of its spellings, replaced by ``[redacted]`` (non-text values
    unchanged).

    The one scrubbing function: used by the store's write path (raw completion, error, parsed label,
    identity, every text column), by the backends' error messages and by the CLI's messages.
    """
    if not isinstance(text, str) or not text or not _SECRETS:
        return text
    for secret in _SECRETS:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "api-key", "x-api-key"})


def holds_credential(name: str, value: str) -> bool:
    """Whether an HTTP header carries a credential: by its name (``Authorization``, ``Cookie``, ``api-key``...) or
    because its value holds a registered secret (:func:`register_secret`) in any spelling. Such a header is sent
    only to the origin it was configured for, never after a redirect to another one."""
    return name.strip().lower() in CREDENTIAL_HEADERS or scrub(str(value)) != str(value)
