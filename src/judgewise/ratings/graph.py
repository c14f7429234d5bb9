"""The comparison graph of a judgments table (models = nodes, judged pairs = edges) and the one connectivity check.

Scores of models that were never compared, directly or through others, are not comparable: every rating method
(Bradley–Terry, win rate, Elo, TrueSkill, ...) refuses a disconnected graph with the same RatingError, naming the
components, instead of ranking them on one scale (Elo and TrueSkill would otherwise rank them without a word).
"""

from __future__ import annotations

import numpy as np

from judgewise.errors import RatingError


def is_connected(rows: np.ndarray, cols: np.ndarray, n_models: int, directed: bool = False) -> bool:
    """Whether the graph with edges rows[k] → cols[k] is one component (:func:`components` finds at most one):
    strongly connected when ``directed``, i.e. every model is reached from model 0 along the edges and against them.

    Breadth-first in numpy, one pass over the edges per step away from model 0: the check of every rating, which
    would otherwise import scipy.sparse.csgraph (a third of a second) only to find one component."""
    if n_models <= 1:
        return True
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    if directed:
        return _reaches_all(rows, cols, n_models) and _reaches_all(cols, rows, n_models)
    return _reaches_all(np.concatenate([rows, cols]), np.concatenate([cols, rows]), n_models)


def _reaches_all(rows: np.ndarray, cols: np.ndarray, n_models: int) -> bool:
    """Whether every node is reached from node 0 along the edges rows[k] → cols[k]."""
    reached = np.zeros(n_models, dtype=bool)
    reached[0] = True
    frontier = reached.copy()
    while True:
        step = frontier[rows]  # the edges leaving the last step's nodes
        frontier = np.zeros(n_models, dtype=bool)
        frontier[cols[step]] = True
        frontier &= ~reached
        if not frontier.any():
            return bool(reached.all())
        reached |= frontier
        rows, cols = rows[~step], cols[~step]  # the edges just followed are spent


def components(rows: np.ndarray, cols: np.ndarray, n_models: int, directed: bool = False) -> tuple[int, np.ndarray]:
    """(number of components, component of each model) of the graph with edges rows[k] → cols[k]; strongly
    connected components when ``directed``. scipy's labels (they order the groups of the messages), imported
    on use: only a graph that is not connected (:func:`is_connected`) needs them."""
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components

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
    if is_connected(a[keep], b[keep], m):
        return
    n, groups = components(a[keep], b[keep], m)
    if n > 1:
        raise RatingError(f"the comparison graph is disconnected into {n} components that were never compared "
                          f"with each other: {describe_components(groups, n, models)}. Scores across components "
                          f"are not comparable; rate each component separately or add judgments linking them.")
