"""PostgreSQL store URLs as text: recognise one, find and mask its passwords, spell it for libpq (no driver loaded)."""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, unquote_plus

from judgewise.redaction import register_secret

URL_SCHEMES = ("postgresql", "postgres")


def is_url(location) -> bool:
    """True when ``location`` is a ``postgresql://`` (or ``postgres://``) URL."""
    return str(location).partition(":")[0].lower() in URL_SCHEMES and ":" in str(location)


_PASSWORD_PARAM = re.compile(r"(?i)([?&]password=)([^&#]*)")  # libpq's ?password=... query parameter


def _userinfo(url: str) -> tuple[str, str, str | None, str] | None:
    """(scheme://, user, password or None, the rest from the host on) of ``url``, the user information ending at
    the LAST ``@`` before the path or query — as Python reads a URL; None without user information. A password
    holding ``@`` or ``/`` unescaped is read whole (libpq would split it at its first ``@``)."""
    scheme, sep, rest = str(url).partition("://")
    if not sep:
        return None
    head = rest.split("?", 1)[0].split("#", 1)[0]
    at = head.rfind("@")
    if at < 0:
        return None
    user, colon, password = rest[:at].partition(":")
    return scheme + sep, user, password if colon else None, rest[at + 1:]


def url_passwords(url: str) -> list[str]:
    """Every password a PostgreSQL URL carries (in its user information, in ``?password=``), as written and decoded."""
    found = [m.group(2) for m in _PASSWORD_PARAM.finditer(str(url))]
    info = _userinfo(url)
    if info and info[2] is not None:
        found.append(info[2])
    return [form for p in found for form in {p, unquote(p), unquote_plus(p)} if form]


def masked(url: str) -> str:
    """The URL with every password (user information, ``?password=``) replaced by ``***``: what messages and
    summaries show. Its passwords are registered as secrets (:func:`redaction.register_secret`), so that any other
    message quoting one — libpq's own ("could not resolve host ...") — is scrubbed too."""
    url = str(url)
    for password in url_passwords(url):
        register_secret(password)
    url = _PASSWORD_PARAM.sub(lambda m: m.group(1) + "***", url)
    info = _userinfo(url)
    if info is None or info[2] is None:
        return url
    scheme, user, _, rest = info
    return f"{scheme}{user}:***@{rest}"


def libpq_url(url: str) -> str:
    """``url`` as libpq must read it to mean what it says to a reader (and to :func:`masked`): the user and password
    percent-encoded, so that an ``@`` or ``/`` in the password is not taken for the end of it (libpq splits at the
    first ``@``, and would send part of the password as the host name, then print it in its error)."""
    info = _userinfo(url)
    if info is None:
        return str(url)
    scheme, user, password, rest = info
    user = quote(unquote(user), safe="")
    return f"{scheme}{user}{'' if password is None else ':' + quote(unquote(password), safe='')}@{rest}"
