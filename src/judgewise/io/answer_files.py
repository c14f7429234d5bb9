"""Model answers written in the layouts other tools read: Arena-Hard-Auto's and FastChat's ``model_answer/<model>.jsonl``.

* **Arena-Hard** (arena-hard-auto v2's ``gen_answer.py`` output, as in ``data/arena-hard-v2.0/model_answer``):
  ``{uid, ans_id, model, messages: [{role: user, content}, {role: assistant, content: {answer}}, ...], tstamp,
  metadata: {token_len, header_count, list_count, bold_count}}``. The metadata (what Arena-Hard's style control
  reads) is :func:`judgewise.io.markdown.markdown_counts` (its ``add_markdown_info.py``) of the last answer;
  ``token_len`` is the answer's completion tokens as the model's server counted them (Arena-Hard counts with
  tiktoken's gpt-4o encoding, which needs a download at run time).
* **FastChat** (MT-bench's ``gen_model_answer.py`` output): ``{question_id, answer_id, model_id, choices: [{index: 0,
  turns: [...]}], tstamp}``.

Both are read back by :mod:`judgewise.io.arenahard` / :mod:`judgewise.io.mtbench`. Each file is written atomically.
"""

from __future__ import annotations

import json
from pathlib import Path

from judgewise.errors import InputError
from judgewise.io.atomic import write_text_atomic
from judgewise.io.markdown import markdown_counts


def arena_hard_record(prompt_id: str, model: str, questions: list[str], answers: list[str], *, answer_id: str,
                      tstamp: float, token_len: int) -> dict:
    """One Arena-Hard answer record of a conversation (``messages`` alternate user and assistant turns)."""
    messages = []
    for question, answer in zip(questions, answers):
        messages += [{"role": "user", "content": question}, {"role": "assistant", "content": {"answer": answer}}]
    return {"uid": prompt_id, "ans_id": answer_id, "model": model, "messages": messages, "tstamp": tstamp,
            "metadata": {"token_len": int(token_len), **markdown_counts(answers[-1])}}


def fastchat_record(prompt_id: str, model: str, answers: list[str], *, answer_id: str, tstamp: float) -> dict:
    """One FastChat (MT-bench) answer record; a numeric prompt id is written as a number, as FastChat's are."""
    question_id = int(prompt_id) if prompt_id.isdigit() else prompt_id
    return {"question_id": question_id, "answer_id": answer_id, "model_id": model,
            "choices": [{"index": 0, "turns": list(answers)}], "tstamp": tstamp}


def write_answer_files(records: dict[str, list[dict]], folder: str | Path) -> list[Path]:
    """``folder/<model>.jsonl`` for each model's records (the folder is made if missing); returns the files."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise InputError("is a file; the arena-hard and mtbench formats write a folder of <model>.jsonl files",
                         file=str(folder))
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for model, rows in records.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        written.append(write_text_atomic(folder / f"{model}.jsonl", text))
    return written
