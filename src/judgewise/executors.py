"""Map a top-level function over argument tuples serially, on a local process pool or on a Ray cluster.

One registry, one call signature: ``EXECUTORS[name](fn, tasks, workers, address)`` returns ``[fn(*t) for t in
tasks]`` in order. The simulation sweeps (:mod:`judgewise.analysis.sweeps`) and the judging workers
(:mod:`judgewise.pipeline.workers`) both run through :func:`run_tasks`. Ray is an optional extra
(``pip install 'judgewise[ray]'``), imported only when the ``ray`` executor runs.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Sequence

from judgewise.errors import ConfigError
from judgewise.registry import Registry

Tasks = Sequence[tuple]


def run_serially(fn: Callable, tasks: Tasks, workers: int | None, address: str | None) -> list:
    """Every task in this process, one after another (``workers`` and ``address`` are not used)."""
    return [fn(*t) for t in tasks]


def run_on_processes(fn: Callable, tasks: Tasks, workers: int | None, address: str | None) -> list:
    """Every task on a local pool of ``workers`` processes (default: one per CPU)."""
    if not tasks:
        return []
    with ProcessPoolExecutor(max_workers=workers or os.cpu_count()) as pool:
        return list(pool.map(fn, *zip(*tasks)))


def run_on_ray(fn: Callable, tasks: Tasks, workers: int | None, address: str | None) -> list:
    """Every task as a Ray task (one CPU each; Ray starts a task again when its node is lost) on the cluster at
    ``address``, or on a local Ray instance of ``workers`` CPUs started here and shut down after."""
    try:
        import ray
    except ImportError:
        raise ConfigError("executor 'ray' needs Ray: pip install 'judgewise[ray]'") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False,
                 **({} if address else {"num_cpus": workers}))
    try:
        remote = ray.remote(num_cpus=1, max_retries=3)(fn)
        return ray.get([remote.remote(*t) for t in tasks])
    finally:
        if started:
            ray.shutdown()


EXECUTORS: Registry[Callable[[Callable, Tasks, int | None, str | None], list]] = Registry(
    "executor", {"serial": run_serially, "process": run_on_processes, "ray": run_on_ray})


def run_tasks(fn: Callable, tasks: Tasks, executor: str = "serial", workers: int | None = None,
              address: str | None = None) -> list:
    """``[fn(*t) for t in tasks]`` on ``executor`` (a name in :data:`EXECUTORS`); ``fn`` must be a top-level
    function so process pools and Ray can ship it."""
    return EXECUTORS.get(executor)(fn, list(tasks), workers, address)
