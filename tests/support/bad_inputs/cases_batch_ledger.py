"""Bad inputs of batch judging's one-payer rule (issue 32): a generate config whose model entries repeat one another
(the same calls paid twice; in batch mode the second entry's went live at full price) is refused naming both."""

from __future__ import annotations

import json

from tests.support.bad_inputs.cases_commands import on
from tests.support.bad_inputs.inputs import Case

QUESTIONS = "".join(json.dumps({"question_id": q, "turns": [f"Say something about {q}."]}) + "\n" for q in range(2))
ENTRY = {"model": "gen-model", "base_url": "http://127.0.0.1:9/v1", "max_tokens": 16}


def repeated(name: str, *, names: tuple, **options) -> Case:
    entries = [{"name": "alpha", **ENTRY, **options}, {"name": "beta", **ENTRY, **options},
               {"name": "gamma", **ENTRY, **options, "max_tokens": 32}]
    config = {"prompts": "q.jsonl", "store": "gens.sqlite", "output": "answers.jsonl", "models": entries}
    return on(name, "generate", {"q.jsonl": QUESTIONS, "gen.yaml": json.dumps(config)}, "-c", "gen.yaml",
              names=names, owner="pipeline")


BATCH_LEDGER_CASES = [
    repeated("generate_models_repeated_but_for_the_name", names=("gen.yaml", "models[1]", "models[0]")),
    repeated("generate_batch_models_repeated_but_for_the_name", names=("gen.yaml", '"beta"', '"alpha"'),
             batch=True, batch_poll_s=0.05),
]
