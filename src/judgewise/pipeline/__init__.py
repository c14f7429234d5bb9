"""From a run config to stored verdicts: load and check the config, build the job, run its design.

The layer after ``analysis`` (io → judges → designs → ratings → analysis → pipeline → report, cli): it may
join everything below, e.g. it gives the adaptive design ratings' Bradley–Terry fit by default.
"""

import importlib

#: public name -> module that defines it (imported on first use, so reading a file does not import scipy)
_PUBLIC = {
    "JUDGE_BUILDERS": "backends", "build_judge": "backends",
    "RunConfig": "config", "build_design": "config", "check_design": "config", "load_config": "config",
    "load_with_overrides": "config",
    "Job": "job", "build_job": "job", "load_pool": "job",
    "JudgeOutcome": "run", "RoundsPlan": "run", "run_config": "run", "run_job": "run",
    "evaluate": "evaluation", "EvaluateResult": "evaluation", "choose_design": "evaluation",
    "GenerateResult": "generate", "generated_responses": "generate",  # generate(): judgewise.generate (its module's name)
    "GenerateConfig": "generate_config", "load_generate_config": "generate_config",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    """Import a public name's module on first use (PEP 562)."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'judgewise.pipeline' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"judgewise.pipeline.{module}"), name)
    globals()[name] = value
    return value
