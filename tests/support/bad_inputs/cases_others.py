"""Bad inputs of the commands whose fixes live in other areas: report, serve, store, judge (run config), Rich
markup and judge provenance. Each case names the area that holds its fix."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.support.bad_inputs.inputs import (Case, deep_json, foreign_sqlite, judgments, jsonl, responses, store,
                                             with_row, write)

REPORT = "templates/report/explorer"
CONFIG = "run config (judges/config.py, cli/judge_cmd.py)"
PROVENANCE = "judge provenance + Rich escaping (cli/*_cmd.py, cli/app.py)"
JUDGED = jsonl(judgments())


def _with(root: Path, files: dict) -> dict:
    return {key: write(root, key, content) for key, content in files.items()}


def case(name: str, command: list, files: dict, names=(), owner=None, timeout: float = 90.0) -> Case:
    """``command`` items that are keys of ``files`` become those files' paths; ``DIR:x`` an existing folder x."""
    def build(root: Path) -> list:
        paths = _with(root, files)
        out = []
        for a in command:
            if isinstance(a, str) and a.startswith("DIR:"):
                (root / a[4:]).mkdir(exist_ok=True)
                out.append(root / a[4:])
            elif isinstance(a, str) and a.startswith("ROOT:"):
                out.append(root / a[5:])
            else:
                out.append(paths.get(a, a) if isinstance(a, str) else a)
        return out
    return Case(name, build, tuple(names), owner, timeout)


def _busy_port(root: Path) -> list:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    _HELD.append(sock)  # held open until the corpus has run
    return ["serve", write(root, "j.jsonl", JUDGED), "--port", str(sock.getsockname()[1]), "--bootstrap", "0"]


_HELD: list = []


def _store_cmd(name: str, sub: str, make, *args, names=(), owner=None) -> Case:
    def build(root: Path) -> list:
        return ["store", sub, make(root), *[root / a[5:] if isinstance(a, str) and a.startswith("ROOT:") else a
                                            for a in args]]
    return Case(name, build, tuple(names), owner)


def _dir_at(name: str):
    def make(root: Path) -> Path:
        (root / name).mkdir()
        return root / name
    return make


REPORT_CASES = [
    case("report_format_unknown", ["report", "j.jsonl", "--format", "pdf", "-o", "ROOT:r.pdf"], {"j.jsonl": JUDGED},
         ("pdf",)),
    case("report_output_is_a_directory", ["report", "j.jsonl", "-o", "DIR:out", "--bootstrap", "0"],
         {"j.jsonl": JUDGED}, ("out",), owner=REPORT),
    case("report_method_unknown", ["report", "j.jsonl", "--method", "foo", "-o", "ROOT:r.html", "--bootstrap", "0"],
         {"j.jsonl": JUDGED}, ("foo",), owner=REPORT),
    case("report_gold_missing", ["report", "j.jsonl", "--gold", "ROOT:gold.json", "-o", "ROOT:r.html"],
         {"j.jsonl": JUDGED}, ("gold.json",), owner=REPORT),
    case("report_gold_malformed", ["report", "j.jsonl", "--gold", "gold.json", "-o", "ROOT:r.html"],
         {"j.jsonl": JUDGED, "gold.json": "{not json"}, ("gold.json",), owner=REPORT),
    case("report_gold_nested_100k_deep", ["report", "j.jsonl", "--gold", "gold.json", "-o", "ROOT:r.html"],
         {"j.jsonl": JUDGED, "gold.json": deep_json()}, ("gold.json",)),
    case("report_study_malformed", ["report", "j.jsonl", "--study", "study.json", "-o", "ROOT:r.html"],
         {"j.jsonl": JUDGED, "study.json": "[1, 2"}, ("study.json",), owner=REPORT),
    case("report_bootstrap_negative", ["report", "j.jsonl", "--bootstrap", "-1", "-o", "ROOT:r.html"],
         {"j.jsonl": JUDGED}, ("--bootstrap",), owner=REPORT),
    case("report_source_missing", ["report", "ROOT:nope.jsonl", "-o", "ROOT:r.html"], {}, ("nope.jsonl",)),
    case("report_source_nested_100k_deep", ["report", "j.json", "-o", "ROOT:r.html"], {"j.json": deep_json()},
         ("j.json",)),
    case("report_input_format_unknown", ["report", "j.jsonl", "--input-format", "nope", "-o", "ROOT:r.html"],
         {"j.jsonl": JUDGED}, ("nope",)),
    case("report_responses_malformed", ["report", "j.jsonl", "--responses", "r.jsonl", "-o", "ROOT:r.html",
                                        "--bootstrap", "0"],
         {"j.jsonl": JUDGED, "r.jsonl": jsonl(responses()) + "{broken\n"}, ("r.jsonl", "row 13")),
    case("report_source_foreign_sqlite", ["report", "ROOT:other.sqlite", "-o", "ROOT:r.html"], {},
         ("other.sqlite",)),
]
REPORT_CASES[-1] = Case(REPORT_CASES[-1].name, lambda root: ["report", foreign_sqlite(root), "-o", root / "r.html"],
                        ("other.sqlite",))

SERVE_CASES = [
    case("serve_source_missing", ["serve", "ROOT:nope.jsonl", "--port", "0"], {}, ("nope.jsonl",)),
    case("serve_source_empty_file", ["serve", "j.jsonl", "--port", "0"], {"j.jsonl": ""}, ("j.jsonl",)),
    case("serve_source_nested_100k_deep", ["serve", "j.json", "--port", "0"], {"j.json": deep_json()},
         ("j.json",)),
    Case("serve_port_busy", _busy_port, ("port",), REPORT, timeout=60),
    case("serve_port_negative", ["serve", "j.jsonl", "--port", "-1", "--bootstrap", "0"], {"j.jsonl": JUDGED},
         ("--port",), REPORT, timeout=60),
    case("serve_port_too_large", ["serve", "j.jsonl", "--port", "70000", "--bootstrap", "0"], {"j.jsonl": JUDGED},
         ("--port",), REPORT, timeout=60),
    case("serve_host_unresolvable", ["serve", "j.jsonl", "--host", "no-such-host.invalid", "--port", "0",
                                     "--bootstrap", "0"], {"j.jsonl": JUDGED}, ("no-such-host.invalid",), REPORT,
         timeout=60),
    case("serve_bootstrap_negative", ["serve", "j.jsonl", "--bootstrap", "-1", "--port", "0"], {"j.jsonl": JUDGED},
         ("--bootstrap",), REPORT, timeout=60),
    case("serve_responses_missing", ["serve", "j.jsonl", "--responses", "ROOT:nope.jsonl", "--port", "0",
                                     "--bootstrap", "0"], {"j.jsonl": JUDGED}, ("nope.jsonl",), REPORT, timeout=60),
]

STORE_CASES = [
    _store_cmd("store_stats_not_sqlite", "stats", lambda r: write(r, "s.sqlite", JUDGED), names=("s.sqlite",)),
    _store_cmd("store_stats_missing", "stats", lambda r: r / "nope.sqlite", names=("nope.sqlite",)),
    _store_cmd("store_stats_directory", "stats", _dir_at("s.sqlite"), names=("s.sqlite",)),
    _store_cmd("store_stats_foreign_sqlite", "stats", foreign_sqlite, names=("other.sqlite",)),
    _store_cmd("store_stats_zero_bytes", "stats", lambda r: write(r, "s.sqlite", b""), names=("s.sqlite",)),
    _store_cmd("store_export_foreign_sqlite", "export", foreign_sqlite, "-o", "ROOT:out.jsonl",
               names=("other.sqlite",)),
    _store_cmd("store_export_zero_bytes", "export", lambda r: write(r, "s.sqlite", b""), "-o", "ROOT:out.jsonl",
               names=("s.sqlite",)),
    _store_cmd("store_export_not_sqlite", "export", lambda r: write(r, "s.sqlite", JUDGED), "-o", "ROOT:out.jsonl",
               names=("s.sqlite",)),
    _store_cmd("store_export_output_is_a_directory", "export", store, "-o", "ROOT:", names=("-o",)),
    _store_cmd("store_export_output_suffix_unknown", "export", store, "-o", "ROOT:out.txt", names=("out.txt",)),
    _store_cmd("store_export_output_directory_missing", "export", store, "-o", "ROOT:no/such/out.jsonl",
               names=("out.jsonl",)),
]
STORE_CASES[8] = Case("store_export_output_is_a_directory",
                      lambda root: ["store", "export", store(root), "-o", _dir_at("out.jsonl")(root)],
                      ("out.jsonl",))

RUN = """responses: r.jsonl
judge: {backend: simulated, ratings: {alpha: 900, beta: 1000, gamma: 1100}}
design: all_pairs
store: ROOT/s.sqlite
"""


def judge(name: str, config: str, *args, files=None, names=("run.yaml",), owner=CONFIG) -> Case:
    def build(root: Path) -> list:
        _with(root, {"r.jsonl": jsonl(responses()), **(files or {})})
        path = write(root, "run.yaml", config.replace("ROOT", str(root)).replace("r.jsonl", str(root / "r.jsonl")))
        return ["judge", "--config", path, "--dry-run", *[root / a[5:] if str(a).startswith("ROOT:") else a
                                                          for a in args]]
    return Case(name, build, tuple(names), owner)


EVIL_TEMPLATE = ("{#- judgewise-template\nname: evil\nversion: 1\nkind: pairwise\nparser: arena_hard_5way\n-#}\n"
                 "{%- block system -%}judge{%- endblock -%}{%- block user -%}"
                 "{{ cycler.__init__.__globals__.os.system('touch pwned') }} {{ instruction }} {{ response_a }} "
                 "{{ response_b }}{%- endblock -%}{%- block reask -%}again{%- endblock -%}")
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))

JUDGE_CASES = [
    Case("judge_config_missing", lambda root: ["judge", "--config", root / "nope.yaml", "--dry-run"],
         ("nope.yaml",), CONFIG),
    judge("judge_config_empty", ""),
    judge("judge_config_not_yaml", "responses: [unclosed\n  judge: {"),
    judge("judge_config_a_list", "- responses\n- judge\n"),
    judge("judge_config_billion_laughs", LAUGHS + RUN),
    judge("judge_config_unknown_key", RUN + "colour: blue\n", names=("colour",)),
    judge("judge_retry_failed_a_string", RUN + 'retry_failed: "false"\n', names=("retry_failed",)),
    judge("judge_models_duplicated", RUN + "models: [alpha, alpha, beta]\n", names=("models",)),
    judge("judge_one_model", RUN + "models: [alpha]\n", names=("models",)),
    judge("judge_concurrency_zero", RUN + "limits: {concurrency: 0}\n", names=("concurrency",)),
    judge("judge_timeout_negative", RUN + "limits: {timeout_s: -1}\n", names=("timeout_s",)),
    judge("judge_design_unknown_option", RUN.replace("design: all_pairs", "design: {name: all_pairs, colour: 1}"),
          names=("colour",)),
    judge("judge_responses_missing", RUN.replace("r.jsonl", "ROOT/nope.jsonl"), names=("nope.jsonl",)),
    judge("judge_responses_lone_surrogate", RUN, files={"r.jsonl": jsonl(with_row(responses(), 2, text="x\ud800y"))},
          names=("r.jsonl", "row 3", '"text"', "lone surrogate"), owner=None),
    judge("judge_store_not_sqlite", RUN, "--store", "ROOT:notes.sqlite", files={"notes.sqlite": "hello\n"},
          names=("notes.sqlite",), owner=None),
    judge("judge_max_calls_negative", RUN, "--max-calls", "-1", names=("--max-calls",)),
    judge("judge_concurrency_option_zero", RUN, "--concurrency", "0", names=("--concurrency",)),
    judge("judge_template_runs_code", RUN.replace("{backend: simulated, ratings: {alpha: 900, beta: 1000, gamma: 1100}}",
                                                  "{backend: openai, base_url: 'http://127.0.0.1:9/v1', model: m, "
                                                  "template: ROOT/evil.j2}"),
          files={"evil.j2": EVIL_TEMPLATE}, names=("evil.j2",), owner=None),
]

PROVENANCE_CASES = [
    case("rank_pools_two_judges", ["rank", "j.jsonl"], {"j.jsonl": jsonl(judgments(judge="j1") +
                                                                          judgments(judge="j2"))},
         ("j1", "j2"), owner=PROVENANCE),
    case("rich_markup_in_file_name", ["rank", "x[/].jsonl"], {"x[/].jsonl": ""}, ("x[/].jsonl",), owner=PROVENANCE),
    case("rich_markup_style_in_missing_file_name", ["rank", "ROOT:data[red].jsonl"], {}, ("data[red].jsonl",),
         owner=PROVENANCE),
    case("rich_markup_in_model_name", ["rank", "j.jsonl"],
         {"j.jsonl": jsonl([{"prompt_id": "p1", "model_a": "A[/]", "model_b": "A[/]", "judge": "j", "outcome": 1}])},
         ("A[/]",), owner=PROVENANCE),
]

OTHER_CASES = REPORT_CASES + SERVE_CASES + STORE_CASES + JUDGE_CASES + PROVENANCE_CASES
