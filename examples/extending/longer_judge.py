"""The longer-answer judge: the longer of two answers wins, equal lengths tie (a toy backend, docs/extending.md)."""

from __future__ import annotations

from judgewise.judges.base import Game, JudgeResult, Verdict


class LongerAnswerJudge:
    """Judges without a model: the answer shown first wins when it is longer (outcome 1), loses when shorter."""

    def __init__(self, name: str = "longer"):
        self.identity = {"kind": "longer", "name": name}  # part of every stored verdict's key: no secrets

    async def judge(self, game: Game) -> JudgeResult:
        first, second = (len(text) for text in game.shown)
        outcome = 1.0 if first > second else 0.0 if first < second else 0.5
        return JudgeResult(Verdict(outcome, label={1.0: "A>B", 0.0: "B>A", 0.5: "A=B"}[outcome]))


def longer_judge(cfg: dict) -> LongerAnswerJudge:
    """The judge a run config's ``judge: {backend: longer, name: ...}`` section builds."""
    return LongerAnswerJudge(cfg.get("name", "longer"))
