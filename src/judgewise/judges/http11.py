"""A lean asyncio HTTP/1.1 client for the judge's POSTs: keep-alive connections to one endpoint, pooled per loop.

What the OpenAI-compatible backend needs and nothing more: ``POST`` a body, get (status, headers, body) back, over
TCP or TLS, reusing connections (HTTP/1.1 keep-alive; a connection the server closes leaves the pool the moment the
event loop sees it close, with no polling). Bodies are framed by ``Content-Length``, ``chunked`` or the end of the
connection; gzip and deflate bodies are decoded. One request at a time per connection, as many connections as
requests in flight (the scheduler bounds them). Every answer is bounded while it is read: the body on the wire and
its decoded form are each at most ``max_answer_bytes`` (a ``Content-Length`` above it is refused before the body
arrives, a chunked or connection-framed body the moment it passes it, a gzip or deflate body is inflated in steps
that stop at the cap; chunk-size lines count as sent), at most MAX_INTERIM interim (1xx) answers precede the answer,
and header values are read strictly (ASCII digits, hexadecimal chunk sizes), so a hostile server costs at most a few
times the cap in memory and never a traceback. Per call it costs a few tens of microseconds where ``httpx`` with
hundreds of pooled connections costs milliseconds (its pool scans and polls every connection for every request).

The errors say what became of the request: :class:`ConnectError` (no connection, nothing sent), :class:`ReadTimeout`
(sent, no whole answer in time: the server may have acted on it), :class:`ConnectionDropped` (sent, and the
connection ended, or answered something that is not HTTP/1.x, before a whole answer came), :class:`AnswerTooLarge`
(sent, and the answer passes ``max_answer_bytes``: the server has acted on it).
"""

from __future__ import annotations

import asyncio
import re
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_HEAD = 64 * 1024  # bytes of status line and headers accepted before the answer is called malformed
MAX_INTERIM = 8  # interim (1xx) answers accepted before an answer (a server looping on 100 Continue is dropped)
MAX_ANSWER_MB = 8  # default cap on an answer's body, as sent and as decoded (the judge config's max_answer_mb)
MAX_ANSWER_BYTES = MAX_ANSWER_MB << 20
_DIGITS = re.compile(rb"[0-9]{1,19}")  # a Content-Length: ASCII digits only (str.isdigit takes "²" and "١")
# a chunk-size line: hexadecimal digits (int(x, 16) takes "_", "+" and other scripts), an extension, CRLF
_CHUNK_SIZE_LINE = re.compile(rb"[ \t]*([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r\n")


class HTTPError(Exception):
    """A request that got no whole HTTP answer."""


class ConnectError(HTTPError):
    """No connection could be opened: the request was not sent."""


class ReadTimeout(HTTPError):
    """The request was sent and no whole answer came in time (the server may have acted on it)."""


class ConnectionDropped(HTTPError):
    """The request was sent; the connection closed, or answered something that is not HTTP/1.x, first."""


class AnswerTooLarge(HTTPError):
    """The request was sent and the answer (as sent, or decoded) passes the size cap: refused, connection closed."""


@dataclass
class Response:
    status: int
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", "
    body: bytes | bytearray  # bytearray when taken whole from the read buffer (no copy)


class _Connection(asyncio.Protocol):
    """One keep-alive connection: writes a request, parses the answer as its bytes arrive."""

    def __init__(self, max_answer_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.transport = None
        self.cap = max_answer_bytes
        self.buf = bytearray()
        self.waiter: asyncio.Future | None = None
        self.closed = False   # the connection is gone (or going): never reused
        self.reusable = True  # False once the answer says so (Connection: close, framing by end of connection)
        self.interim = 0  # interim (1xx) answers to the current request so far
        self._start()

    def _start(self) -> None:
        self.status, self.headers, self.length, self.chunked = None, None, None, False
        self.body = bytearray()  # a chunked body's data so far
        self.chunk_left: int | None = None
        self.wire_bytes = 0  # bytes of a chunked body on the wire so far: size lines, data and line ends

    # -- asyncio.Protocol --------------------------------------------------------------------------------------------
    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.waiter is None or self.waiter.done():  # bytes nobody asked for: this connection is not trusted again
            self.reusable = False
            return
        self.buf += data
        try:
            self._parse()
        except HTTPError as exc:
            self._fail(exc)
        except Exception as exc:  # noqa: BLE001 - never a traceback from the event loop for what a server sent
            self._fail(ConnectionDropped(f"an answer that could not be read ({type(exc).__name__}: {exc})"))

    def eof_received(self) -> bool:
        return False  # close the transport: connection_lost follows

    def connection_lost(self, exc) -> None:
        self.closed = True
        if self.waiter is None or self.waiter.done():
            return
        if self.status is not None and self.length is None and not self.chunked:  # body framed by the connection end
            body, self.buf = self.buf, bytearray()  # the buffer is the body: no copy of it
            self._finish(body)
            return
        got = "part of an answer" if self.status is not None or self.buf else "no answer"
        self._fail(ConnectionDropped(f"the server closed the connection after {got}" + (f" ({exc})" if exc else "")))

    # -- requests ----------------------------------------------------------------------------------------------------
    def send(self, data: bytes, loop: asyncio.AbstractEventLoop) -> asyncio.Future:
        self.waiter = loop.create_future()
        self.buf.clear()
        self._start()
        self.interim = 0
        self.transport.write(data)
        return self.waiter

    def close(self, *, abort: bool = False) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort() if abort else self.transport.close()

    def _fail(self, exc: Exception) -> None:
        self.reusable = False
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc)
        if isinstance(exc, AnswerTooLarge) and self.transport is not None:
            self.transport.abort()  # stop reading what is left of it now (the caller drops the connection too)

    def _too_large(self, what: str) -> AnswerTooLarge:
        return AnswerTooLarge(f"an answer larger than the {self.cap:,}-byte cap ({what}); refused "
                              f"(max_answer_mb in the judge config raises the cap)")

    # -- parsing -----------------------------------------------------------------------------------------------------
    def _parse(self) -> None:
        buf = self.buf
        while self.status is None:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > MAX_HEAD or not (buf.startswith(b"HTTP/") or b"HTTP/".startswith(bytes(buf))):
                    raise ConnectionDropped(f"not an HTTP/1.x answer: starts {bytes(buf[:40])!r}")
                return
            self._head(bytes(buf[:end]))
            del buf[:end + 4]
            if 100 <= self.status < 200:  # an interim answer (100 Continue, 103 Early Hints): the real one follows
                self.interim += 1
                if self.interim > MAX_INTERIM:
                    raise ConnectionDropped(f"more than {MAX_INTERIM} interim (1xx) answers before the answer")
                self._start()
        if self.chunked:
            body = self._chunks()
            if body is None:
                return
        elif self.length is not None:
            if self.length > self.cap:
                raise self._too_large(f"Content-Length {self.length:,}")
            if len(buf) < self.length:
                return
            if len(buf) == self.length:  # the common case: the buffer is the body, taken without a copy
                body, self.buf = buf, bytearray()
                return self._finish(body)
            body = bytes(buf[:self.length])
            del buf[:self.length]
        else:  # framed by the end of the connection: connection_lost finishes it
            if len(buf) > self.cap:
                raise self._too_large(f"more than {self.cap:,} bytes before the connection closed")
            return
        if buf:
            self.reusable = False  # more bytes than the answer: do not trust this connection again
        self._finish(body)

    def _head(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not _DIGITS.fullmatch(code.encode("latin-1")):
            raise ConnectionDropped(f"not an HTTP/1.x status line: {lines[0][:60]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise ConnectionDropped(f"a malformed header line in the answer: {line[:60]!r}")
            name, value = name.strip().lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        self.status, self.headers = int(code), headers
        connection = headers.get("connection", "").lower()
        if "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection):
            self.reusable = False
        self.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        if self.status in (204, 304) or self.status < 200:
            self.length, self.chunked = 0, False
        elif not self.chunked:
            self.length = _content_length(headers.get("content-length"))
            if self.length is None:
                self.reusable = False

    def _chunks(self) -> bytearray | None:
        """The whole chunked body once it is in, else None (the chunks read so far are kept). The cap counts the
        body as sent (size lines and line ends too), so a flood of one-byte chunks costs no more memory than one
        chunk of the cap, and is cut after cap/6 chunks (~3 s of CPU at the default cap); the bytes read are dropped
        from the buffer once per call, not per chunk."""
        buf, pos = self.buf, 0
        try:
            while True:
                if self.chunk_left is None:
                    after = self._size_line(buf, pos)
                    if after < 0:
                        return None
                    pos = after
                if self.chunk_left == 0:  # the last chunk: trailers (ignored) up to an empty line
                    end = pos - 2 if buf.startswith(b"\r\n", pos) else buf.find(b"\r\n\r\n", pos)
                    if end == -1:
                        if len(buf) - pos > MAX_HEAD:
                            raise ConnectionDropped("trailers after the last chunk that never end")
                        return None
                    pos = end + 4
                    return self.body
                end = pos + self.chunk_left
                if len(buf) < end + 2:
                    return None
                if not buf.startswith(b"\r\n", end):
                    raise ConnectionDropped("a chunk longer than its size line says")
                self.body += buf[pos:end]
                pos, self.chunk_left = end + 2, None
        finally:
            del buf[:pos]

    def _size_line(self, buf: bytearray, pos: int) -> int:
        """Read the chunk-size line at ``pos`` into :attr:`chunk_left`; the position after it, or -1 when the line
        is not all in yet. A malformed size, or a body past the cap, raises."""
        line = _CHUNK_SIZE_LINE.match(buf, pos)
        if line is None:
            if buf.find(b"\r\n", pos) >= 0:
                raise ConnectionDropped(f"a malformed chunk size in the answer: {bytes(buf[pos:pos + 20])!r}")
            if len(buf) - pos > MAX_HEAD:
                raise ConnectionDropped("a malformed chunk-size line in the answer")
            return -1
        self.chunk_left = int(line.group(1), 16)
        self.wire_bytes += line.end() - pos + self.chunk_left + 2
        if self.wire_bytes > self.cap:
            raise self._too_large(f"a chunked body passing {self.cap:,} bytes as sent")
        return line.end()

    def _finish(self, body: bytes | bytearray) -> None:
        encoding = self.headers.get("content-encoding", "").lower().strip()
        try:
            if encoding in ("gzip", "x-gzip"):
                body = _inflate(body, 16 + zlib.MAX_WBITS, self.cap)
            elif encoding == "deflate":
                try:
                    body = _inflate(body, zlib.MAX_WBITS, self.cap)
                except zlib.error:
                    body = _inflate(body, -zlib.MAX_WBITS, self.cap)  # raw deflate, as some servers send it
            elif encoding not in ("", "identity"):
                raise ConnectionDropped(f"an answer in content-encoding {encoding!r}, which is not supported")
        except zlib.error as exc:
            return self._fail(ConnectionDropped(f"an answer whose {encoding} body does not decode ({exc})"))
        except OverflowError:
            return self._fail(self._too_large(f"its {encoding} body decodes to more than {self.cap:,} bytes"))
        except ConnectionDropped as exc:
            return self._fail(exc)
        if not self.waiter.done():
            self.waiter.set_result(Response(self.status, self.headers, body))


def _content_length(value: str | None) -> int | None:
    """The body length a Content-Length header gives: ASCII digits only (a repeated header with one value is allowed,
    RFC 9110 8.6), else :class:`ConnectionDropped`."""
    if value is None:
        return None
    values = {v.strip(" \t") for v in value.split(",")}
    one = next(iter(values))
    if len(values) != 1 or not _DIGITS.fullmatch(one.encode("latin-1")):
        raise ConnectionDropped(f"an invalid Content-Length in the answer: {value[:40]!r}")
    return int(one)


def _inflate(body: bytes, wbits: int, cap: int) -> bytes:
    """``body`` decompressed in steps of at most ``cap`` bytes out: OverflowError past ``cap`` (a zip bomb costs
    ``cap`` bytes and the time to inflate them, never its whole size); zlib.error when it does not decode whole."""
    inflater = zlib.decompressobj(wbits)
    out = inflater.decompress(body, cap + 1)
    if len(out) > cap or inflater.unconsumed_tail:
        raise OverflowError(cap)
    out += inflater.flush()
    if len(out) > cap:
        raise OverflowError(cap)
    if not inflater.eof:
        raise zlib.error("the compressed body ends early")
    return out


class Endpoint:
    """Keep-alive connections to one base URL (``http://`` or ``https://``), remade for each event loop.

    ``headers`` are sent with every request (besides Host and Content-Length); ``connect_timeout_s`` bounds opening
    a connection, ``read_timeout_s`` waiting for the whole answer; ``ssl_context`` (a context, or a function making
    one, called at the first connection) verifies ``https`` servers; ``max_answer_bytes`` caps each answer's body
    (as sent and as decoded).
    """

    def __init__(self, base_url: str, *, headers: dict[str, str], connect_timeout_s: float, read_timeout_s: float,
                 ssl_context=None, max_answer_bytes: int = MAX_ANSWER_BYTES):
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http:// or https:// URL: {base_url!r}")
        self.host = url.hostname
        self.port = url.port or (443 if url.scheme == "https" else 80)
        self.ssl = ssl_context if url.scheme == "https" else None
        self.prefix = url.path.rstrip("/")
        self.connect_timeout_s, self.read_timeout_s = connect_timeout_s, read_timeout_s
        self.max_answer_bytes = int(max_answer_bytes)
        fields = {"Host": url.netloc.rpartition("@")[2], **headers}
        self._head = "".join(f"{k}: {v}\r\n" for k, v in fields.items()).encode("utf-8")
        self._loop = None
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()

    async def post(self, path: str, body: bytes) -> Response:
        """POST ``body`` to ``path`` (below the base URL's path); the answer, whatever its status."""
        loop = asyncio.get_running_loop()
        conn = await self._connection(loop)
        waiter = conn.send(b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n%s" % (
            (self.prefix + path).encode("utf-8"), self._head, len(body), body), loop)
        timer = loop.call_later(self.read_timeout_s, _expire, waiter, self.read_timeout_s)
        answered = False
        try:
            response = await waiter
            answered = True
            return response
        finally:
            timer.cancel()
            if answered and conn.reusable and not conn.closed:
                self._idle.append(conn)
            else:  # no whole answer (an error, a timeout, a cancelled call): the connection goes
                self._open.discard(conn)
                conn.close(abort=not answered)

    async def open_ahead(self, n: int) -> None:
        """Open connections, all at once, until ``n`` are idle: a run about to send ``n`` calls at once opens them
        before it sends the first (each call then sends at once, rather than waiting for its own connection while
        the others are made ready). One that fails to open is left for a call to report."""
        loop = asyncio.get_running_loop()
        self._own(loop)
        opened = await asyncio.gather(*(self._connect(loop) for _ in range(n - len(self._idle))),
                                      return_exceptions=True)
        for conn in opened:
            if isinstance(conn, BaseException) and not isinstance(conn, HTTPError):
                raise conn
            if isinstance(conn, _Connection):
                self._idle.append(conn)

    def _own(self, loop) -> None:
        if loop is not self._loop:  # connections belong to the loop that opened them
            self._loop, self._idle, self._open = loop, [], set()

    async def _connection(self, loop) -> _Connection:
        self._own(loop)
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed and not conn.transport.is_closing():
                return conn
            self._open.discard(conn)
        return await self._connect(loop)

    async def _connect(self, loop) -> _Connection:
        """A new connection (in :attr:`_open`)."""
        if callable(self.ssl):
            self.ssl = self.ssl()
        try:
            async with asyncio.timeout(self.connect_timeout_s):  # not wait_for: no extra task per connection
                _, conn = await loop.create_connection(self._protocol, self.host, self.port, ssl=self.ssl)
        except TimeoutError:
            raise ConnectError(f"could not connect to {self.host}:{self.port} within {self.connect_timeout_s:g}s") \
                from None
        except OSError as exc:  # refused, unreachable, unknown host, TLS verification failed
            raise ConnectError(f"could not connect to {self.host}:{self.port}: {exc}") from None
        self._open.add(conn)
        return conn

    def _protocol(self) -> _Connection:
        return _Connection(self.max_answer_bytes)

    async def aclose(self) -> None:
        """Close every connection (call inside the loop that opened them)."""
        for conn in list(self._open):
            conn.close()
        self._idle, self._open, self._loop = [], set(), None


def _expire(waiter: asyncio.Future, seconds: float) -> None:
    if not waiter.done():
        waiter.set_exception(ReadTimeout(f"no whole answer within {seconds:g}s of sending"))
