"""Prompt tokens a judge API's prompt cache serves for an order of requests, by OpenAI's documented rule.

OpenAI's platform docs ("Prompt caching"): a prompt of 1,024 tokens or more has its prefix cached after it is
sent, in blocks of 128 tokens, for a few minutes (up to an hour off-peak); a later request starting with the same
blocks reads them from the cache (``usage.prompt_tokens_details.cached_tokens``: 0, or 1,024 + 128·k tokens).
:func:`cached_tokens_in_order` applies that rule to prompts given as segments (a key saying what a part is and its
length in tokens), so that two prompts share a block exactly when the parts it covers are the same.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

CACHE_MIN_TOKENS = 1024  # shortest prompt (and cached prefix) the cache serves
CACHE_BLOCK_TOKENS = 128  # the cache's unit past the first 1,024 tokens
CHARS_PER_TOKEN = 4  # the estimate :func:`judgewise.judges.scheduler.estimate_tokens` makes


def _block_chain(segments: Sequence[tuple[Hashable, int]]) -> list[int]:
    """The hash chain of a prompt's whole 128-token blocks: block k's hash covers blocks 0..k."""
    chain, pieces, filled, h = [], [], 0, 0
    for key, n in segments:
        start = 0
        while start < n:
            take = min(n - start, CACHE_BLOCK_TOKENS - filled)
            pieces.append((key, start, start + take))
            filled, start = filled + take, start + take
            if filled == CACHE_BLOCK_TOKENS:
                h = hash((h, tuple(pieces)))
                chain.append(h)
                pieces, filled = [], 0
    return chain


def cached_tokens_in_order(prompts: Iterable[Sequence[tuple[Hashable, int]]], *,
                           window: int | None = None) -> list[int]:
    """Cached prompt tokens of each request, sent in the given order: the longest run of leading blocks an earlier
    request sent (at most ``window`` requests earlier, None: any), counted when it reaches 1,024 tokens."""
    last_sent: dict[int, int] = {}
    out = []
    for i, segments in enumerate(prompts):
        chain = _block_chain(segments)
        hit = 0
        for h in chain:
            sent = last_sent.get(h)
            if sent is None or (window is not None and i - sent > window):
                break
            hit += 1
        for h in chain:
            last_sent[h] = i
        cached = hit * CACHE_BLOCK_TOKENS
        out.append(cached if cached >= CACHE_MIN_TOKENS else 0)
    return out


def text_segments(messages: list[dict]) -> list[tuple[str, int]]:
    """A chat prompt as segments of estimated tokens (:data:`CHARS_PER_TOKEN` characters a token), cut at block
    boundaries so that equal leading text gives equal leading segments."""
    text = "\x00".join(f"{m.get('role', '')}\x01{m.get('content', '')}" for m in messages)
    size = CACHE_BLOCK_TOKENS * CHARS_PER_TOKEN
    return [(text[k:k + size], len(text[k:k + size]) // CHARS_PER_TOKEN) for k in range(0, len(text), size)]
