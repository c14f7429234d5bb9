"""judgewise: evaluate language models with an LLM judge, reliably and at the lowest cost.

The public API, importable from the package top (loaded on first use, so ``import judgewise`` stays light)::

    import judgewise as jw
    table = jw.read_judgments("examples/alpacaeval")        # any supported format -> Table
    ranking = jw.rank(table.frame, "winrate", anchor="gpt4_1106_preview", bootstrap=200)
    ranking.to_frame()                                     # model, score, ci_low, ci_high, rank, n, ...

Readers: ``read_judgments`` (any format, or a judging store), ``read_responses``, ``read_scores``, ``read_any``, ``register_format``.
Ratings: ``rank``, ``Ranking``, ``RATING_METHODS``. The main job: ``evaluate("run.yaml")`` (judge in rounds until the
ranking reaches ``target:``, then rank with a trust block); ``add_model("run.yaml", "NEW")`` places one more model into
the leaderboard it stored. Answers to judge: ``generate("gen.yaml")`` (every model answers every prompt, stored as
they arrive; ``responses: gen.yaml`` in a run config reads them). Judging: ``load_config``, ``build_job``, ``run_judging``,
``JudgmentStore``. Errors: ``JudgewiseError``, ``InputError``, ``ConfigError``, ``RatingError``, ``JudgeError``.
"""

from __future__ import annotations

import importlib

#: public name -> module that defines it
_PUBLIC = {
    "read_judgments": "judgewise.store.reading", "read_responses": "judgewise.io", "read_scores": "judgewise.io",
    "read_any": "judgewise.io", "register_format": "judgewise.io", "Table": "judgewise.io",
    "rank": "judgewise.ratings", "Ranking": "judgewise.ratings", "RATING_METHODS": "judgewise.ratings",
    "load_config": "judgewise.pipeline", "build_job": "judgewise.pipeline",
    # a function named like its module: taken from the module (the package attribute is the module once imported)
    "evaluate": "judgewise.pipeline.evaluation", "add_model": "judgewise.pipeline.add_model",
    "generate": "judgewise.pipeline.generate",
    "run_judging": "judgewise.judges.runner", "JudgmentStore": "judgewise.store.judgments",
    "JudgewiseError": "judgewise.errors", "InputError": "judgewise.errors", "ConfigError": "judgewise.errors",
    "RatingError": "judgewise.errors", "JudgeError": "judgewise.errors",
}

__all__ = ["__version__", *_PUBLIC]


def _installed_version() -> str:
    """The version pyproject.toml gave the installed distribution (one definition), read on first use:
    ``importlib.metadata`` costs ~0.1 s that a command not printing the version should not pay."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("judgewise")
    except PackageNotFoundError:  # a source tree on sys.path that was never installed
        return "0+unknown"


def __getattr__(name: str):
    """Import a public name's module on first use (PEP 562); ``__version__`` read on first use too."""
    if name == "__version__":
        globals()[name] = _installed_version()
        return globals()[name]
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'judgewise' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
