"""Arena-Hard-Auto's judge config and baselines: which model a judgment record was compared with, and by which judge.

Facts from lmarena/arena-hard-auto, kept as data in ``presets/arenahard.yaml``: v0.1 compares every model with
``gpt-4-0314`` (``config/judge_config.yaml`` ``baseline_model``); v2.0's config yaml names the judge only
(``judge_model: gpt-4.1``) and the baseline of a question follows its category (``utils/judge_utils.py``
``JUDGE_SETTINGS``: hard prompts, coding and math → ``o3-mini-2025-01-31``, creative writing →
``gemini-2.0-flash-001``, the v0.1 questions → ``gpt-4-0314``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path


from judgewise.errors import InputError
from judgewise.io.streams import note_read


@lru_cache(maxsize=1)
def presets() -> dict:
    """The published baselines and judges (``presets/arenahard.yaml``), read once."""
    import yaml  # on use, as below: most commands never read a yaml

    text = resources.files("judgewise.io").joinpath("presets", "arenahard.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


@dataclass(frozen=True)
class ArenaHardConfig:
    """What judgewise takes from an Arena-Hard judge config: the bench, the judge and the baseline(s).

    ``baseline`` is one model for every question (v0.1's ``baseline_model``), or None when the baseline follows
    the question's category (``category_baselines``, v2.0)."""

    source: str
    bench: str | None = None
    judge: str | None = None
    baseline: str | None = None
    category_baselines: dict = field(default_factory=dict)

    def baseline_for(self, category) -> str | None:
        """The baseline of a question of ``category`` (None when this config does not say)."""
        if self.baseline:
            return self.baseline
        return self.category_baselines.get(category) if isinstance(category, str) else None


def read_config(path: str | Path) -> ArenaHardConfig:
    """Read an Arena-Hard judge config yaml (``judge_model``, ``bench_name``, optional ``baseline_model``).

    A bench without a ``baseline_model`` (v2.0) gets the published per-category baselines."""
    import yaml

    path = Path(path)
    note_read(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the Arena-Hard config: {exc}", file=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"not valid YAML{where}: {' '.join(problem.split())}", file=str(path)) from None
    if not isinstance(data, dict):
        raise InputError(f"expected an Arena-Hard judge config (a mapping with judge_model), found "
                         f"{type(data).__name__}", file=str(path))
    judge, bench, baseline = data.get("judge_model"), data.get("bench_name"), data.get("baseline_model")
    for name, value in (("judge_model", judge), ("bench_name", bench), ("baseline_model", baseline)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"expected a name, found {value!r}", file=str(path), field=name)
    if judge is None:
        raise InputError("no judge_model: not an Arena-Hard judge config", file=str(path), field="judge_model")
    known = presets()["benches"].get(bench, {})
    return ArenaHardConfig(str(path), bench, judge, baseline or known.get("baseline"),
                           {} if baseline else dict(presets()["category_baselines"]))


def record_baseline(record: dict, baseline: str | None = None, config: ArenaHardConfig | None = None):
    """The baseline a judgment record was compared with (order in ``io.arenahard``'s module doc), or None when
    its category has no known baseline."""
    if baseline:
        return baseline
    if isinstance(record.get("baseline"), str) and record["baseline"]:
        return record["baseline"]
    category = record.get("category")
    if config is not None and config.baseline_for(category):
        return config.baseline_for(category)
    if category is None:
        return presets()["default_baseline"]
    return presets()["category_baselines"].get(category) if isinstance(category, str) else None
