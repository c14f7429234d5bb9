"""The logistic function σ(x) = 1 / (1 + e^(−x)) of every Bradley–Terry-type model here, in numpy alone.

``scipy.special.expit`` computes the same expression (``1 / (1 + exp(-x))``), so the values are scipy's (equal to
within an ulp, bit for bit where numpy's and the C library's ``exp`` agree); importing scipy.special for it cost a
tenth of a second of every ``rank``.
"""

from __future__ import annotations

import numpy as np


def expit(x):
    """σ(x) = 1 / (1 + e^(−x)), elementwise: exact limits 0 and 1 where e^(−x) overflows or vanishes (x below
    about −709 gives 1 / inf = 0, not a warning), NaN for NaN."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-np.asarray(x)))
