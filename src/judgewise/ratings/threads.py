"""Run rating code with one BLAS thread: its matrices are small (models × models), where BLAS threads only add
hand-off cost — 5–20× slower on a loaded 2-core machine. Scoped to the call (threadpoolctl), no global setting."""

from __future__ import annotations

import functools

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


def single_blas_thread(fn):
    """Decorator: call ``fn`` with BLAS limited to one thread, restoring the previous limits afterwards."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _controller().limit(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper
