"""From a run config to stored verdicts: load and check the config, build the job, run its design.

The layer after ``analysis`` (io → judges → designs → ratings → analysis → pipeline → report, cli): it may
join everything below, e.g. it gives the adaptive design ratings' Bradley–Terry fit by default.
"""

from judgewise.pipeline.backends import JUDGE_BUILDERS, build_judge
from judgewise.pipeline.config import RunConfig, build_design, check_design, load_config, load_with_overrides
from judgewise.pipeline.job import Job, build_job, load_pool
from judgewise.pipeline.run import JudgeOutcome, RoundsPlan, run_config, run_job

__all__ = ["JUDGE_BUILDERS", "Job", "JudgeOutcome", "RoundsPlan", "RunConfig", "build_design", "build_job",
           "build_judge", "check_design", "load_config", "load_pool", "load_with_overrides", "run_config", "run_job"]
