"""Write examples/alpacaeval-pairwise.parquet: GPT-4-turbo's recorded AlpacaEval verdicts as a pairwise judge.

AlpacaEval judged every model of ``examples/alpacaeval`` against one anchor (``gpt4_1106_preview``) with a
continuous preference per instruction. Anchor §4.3's logic turns those into pairwise verdicts
(:func:`judgewise.analysis.anchor_pairwise.derived_pairwise`, the judge of ``benchmarks/designs_alpacaeval.py``):
on an instruction, model i beats model j when GPT-4-turbo preferred i's answer over the anchor more than j's, loses
when less, ties when equal. Each verdict is written for both answer orders (column ``first``: the derived judge
has no position effect), so ``judge: {backend: replay, judgments: alpacaeval-pairwise.parquet}`` can answer any game
``judgewise evaluate`` asks on this slice (examples/evaluate-replay.yaml).

Run from the repo root (reads only the shipped slice): ``python examples/make_alpacaeval_pairwise.py``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgewise.analysis.anchor_pairwise import derived_pairwise
from judgewise.io.alpacaeval import read_alpacaeval

HERE = Path(__file__).resolve().parent
SLICE = HERE / "alpacaeval"
OUT = HERE / "alpacaeval-pairwise.parquet"


def pairwise_rows(slice_path: Path = SLICE) -> pd.DataFrame:
    """The derived verdicts of every pair of the slice's judged models, once per answer order, in a fixed order."""
    table = read_alpacaeval(slice_path)
    derived = derived_pairwise(table.frame, table.extras["anchor"])
    both = pd.concat([derived.assign(first=derived["model_a"]), derived.assign(first=derived["model_b"])],
                     ignore_index=True)
    return both.sort_values(["prompt_id", "model_a", "model_b", "first"], ignore_index=True)


def main() -> None:
    rows = pairwise_rows()
    rows.to_parquet(OUT, index=False)
    print(f"wrote {OUT.relative_to(HERE.parent)}: {len(rows):,} rows ({rows['prompt_id'].nunique()} instructions, "
          f"{len(set(rows['model_a']) | set(rows['model_b']))} models, both answer orders), judge "
          f"{rows['judge'].iloc[0]!r}")


if __name__ == "__main__":
    main()
