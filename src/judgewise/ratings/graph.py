"""The comparison graph of a judgments table (models = nodes, judged pairs = edges) and the one connectivity check.

Scores of models that were never compared, directly or through others, are not comparable: every rating method
(Bradley–Terry, win rate, Elo, TrueSkill, ...) refuses a disconnected graph with the same RatingError, naming the
components, instead of ranking them on one scale (Elo and TrueSkill would otherwise rank them without a word).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from judgewise.errors import RatingError


def components(rows: np.ndarray, cols: np.ndarray, n_models: int, directed: bool = False) -> tuple[int, np.ndarray]:
    """(number of components, component of each model) of the graph with edges rows[k] → cols[k]; strongly
    connected components when ``directed``."""
    from scipy.sparse.csgraph import connected_components  # on use: it loads scipy.linalg (~0.1 s per command)

    graph = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_models, n_models))
    return connected_components(graph, directed=directed, connection="strong" if directed else "weak")


def describe_components(groups: np.ndarray, n: int, models: list[str]) -> str:
    """``{a, b}; {c, d}`` (at most 6 groups of 8 names shown)."""
    parts = []
    for k in range(min(n, 6)):
        names = [models[i] for i in np.flatnonzero(groups == k)]
        parts.append("{" + ", ".join(names[:8]) + (", ..." if len(names) > 8 else "") + "}")
    return "; ".join(parts) + (f"; ... ({n} in all)" if n > 6 else "")


def require_connected(a: np.ndarray, b: np.ndarray, models: list[str]) -> None:
    """RatingError when the models of judgments ``a[i]`` vs ``b[i]`` do not form one connected comparison graph."""
    m = len(models)
    if m * m <= 20_000_000:  # millions of rows, few models: the distinct edges, counted densely (no sort)
        edges = np.flatnonzero(np.bincount(np.asarray(a, np.int64) * m + b, minlength=m * m))
        a, b = edges // m, edges % m
    keep = a != b
    n, groups = components(a[keep], b[keep], m)
    if n > 1:
        raise RatingError(f"the comparison graph is disconnected into {n} components that were never compared "
                          f"with each other: {describe_components(groups, n, models)}. Scores across components "
                          f"are not comparable; rate each component separately or add judgments linking them.")
