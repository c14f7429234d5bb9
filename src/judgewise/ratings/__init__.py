"""Rating methods: scores with honest uncertainty from pairwise judgments.

``rank(judgments, method=...)`` is the entry point; ``RATING_METHODS`` maps method names to functions and can be
extended by users. Every method returns a :class:`Ranking` (``ratings.result``).
"""

from judgewise.ratings.method import MethodResult, RatingData, StatsForm
from judgewise.ratings.ranking import RATING_METHODS, rank
from judgewise.ratings.result import Ranking, ci_aware_rank

__all__ = ["rank", "RATING_METHODS", "Ranking", "ci_aware_rank", "MethodResult", "RatingData", "StatsForm"]
