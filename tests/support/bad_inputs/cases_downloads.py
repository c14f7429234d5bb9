"""Bad download limits of batch judging (issue 32): the deadline and the output cap refused, naming the key."""

from __future__ import annotations

from tests.support.bad_inputs.cases_others import judge

BATCH_RUN = """responses: r.jsonl
judge: {backend: openai, model: judge-model, base_url: "http://127.0.0.1:9/v1", batch: true, LIMIT}
design: all_pairs
store: ROOT/s.sqlite
"""


def _limit(name: str, key: str, value: str):
    return judge(name, BATCH_RUN.replace("LIMIT", f"{key}: {value}"), names=(key,))


DOWNLOAD_CASES = [
    _limit("batch_download_s_zero", "batch_download_s", "0"),
    _limit("batch_download_s_negative", "batch_download_s", "-5"),
    _limit("batch_download_s_nan", "batch_download_s", ".nan"),
    _limit("batch_download_s_text", "batch_download_s", "soon"),
    _limit("batch_download_s_a_year", "batch_download_s", "31536000"),
    _limit("batch_max_output_mb_zero", "batch_max_output_mb", "0"),
    _limit("batch_max_output_mb_infinite", "batch_max_output_mb", ".inf"),
    _limit("batch_max_output_mb_a_list", "batch_max_output_mb", "[1, 2]"),
]
