"""Refused before anything is written: bad ``JUDGEWISE_*`` settings (each case's ``extra["env"]``) on the commands
that would read them late, ``label``'s host and port (bound before its store is made), ``demo``'s options and output
folder (checked before part 1), and the PeerEval reader's ``position`` (outside AB/BA, missing where needed, or
contradicting the shown models)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.support import REPO
from tests.support.bad_inputs.cases_files import rank_file
from tests.support.bad_inputs.cases_others import _HELD
from tests.support.bad_inputs.inputs import Case, jsonl, responses, write
from tests.support.labelling import make_label_inputs

RUN = """responses: {root}/r.jsonl
judge: {{backend: simulated, ratings: {{alpha: 900, beta: 1000, gamma: 1100}}}}
design: all_pairs
store: {root}/s.sqlite
"""
BAD_SETTINGS = [("progress_interval_negative", "JUDGEWISE_PROGRESS_INTERVAL", "-1"),
                ("progress_interval_nan", "JUDGEWISE_PROGRESS_INTERVAL", "nan"),
                ("progress_interval_text", "JUDGEWISE_PROGRESS_INTERVAL", "soon"),
                ("progress_interval_overflow", "JUDGEWISE_PROGRESS_INTERVAL", "1e999"),
                ("event_loop_unknown", "JUDGEWISE_EVENT_LOOP", "trio"),
                ("progress_maybe", "JUDGEWISE_PROGRESS", "maybe")]


def _judge(root: Path) -> list:
    write(root, "r.jsonl", jsonl(responses()))
    return ["judge", "--config", write(root, "run.yaml", RUN.format(root=root))]


def _evaluate(root: Path) -> list:
    return ["evaluate", "--config", REPO / "examples" / "evaluate-simulated.yaml", "--store", root / "sim.sqlite",
            "--bootstrap", "0"]


def _label(*args, busy: bool = False):
    def build(root: Path) -> list:
        scores, answers, items = make_label_inputs(root, n_items=4)
        extra = list(args)
        if busy:
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sock.listen(1)
            _HELD.append(sock)  # held open until the corpus has run
            extra = ["--port", str(sock.getsockname()[1])]
        return ["label", scores, "--store", root / "labels.sqlite", "--target", "judge-x", "--responses", answers,
                "--items", items, *extra]
    return build


def _demo(*args, output=None):
    def build(root: Path) -> list:
        out = output(root) if output else root / "demo-out"
        return ["demo", "--no-judge", "--examples", REPO / "examples", "--output", out, *args]
    return build


def _a_file(root: Path) -> Path:
    return write(root, "taken", "a file where the demo's folder would go\n")


def _under_a_file(root: Path) -> Path:
    return _a_file(root) / "demo-out"


def _env(name: str, build, value: tuple[str, str], names: tuple, timeout: float = 30.0) -> Case:
    return Case(name, build, names, "cli/app.py + commands/environment.py", timeout, extra={"env": dict([value])})


SETTINGS_CASES = [_env(f"judge_env_{name}", _judge, (var, value), (var,)) for name, var, value in BAD_SETTINGS] + [
    _env("evaluate_env_event_loop_unknown", _evaluate, ("JUDGEWISE_EVENT_LOOP", "trio"), ("JUDGEWISE_EVENT_LOOP",)),
    _env("label_env_progress_interval_negative", _label("--port", "0"), ("JUDGEWISE_PROGRESS_INTERVAL", "-1"),
         ("JUDGEWISE_PROGRESS_INTERVAL",)),
    _env("demo_env_event_loop_unknown", _demo(), ("JUDGEWISE_EVENT_LOOP", "trio"), ("JUDGEWISE_EVENT_LOOP",)),
]

LABEL = "report/labelling.py (serve_labels binds, then makes the store)"
LABEL_CASES = [
    Case("label_port_in_use", _label(busy=True), ("in use", "--port"), LABEL, 30.0),
    Case("label_port_out_of_range", _label("--port", "70000"), ("--port", "70000"), LABEL, 30.0),
    Case("label_port_negative", _label("--port", "-1"), ("--port",), LABEL, 30.0),
    Case("label_host_not_this_machine", _label("--host", "192.0.2.1", "--port", "0"), ("192.0.2.1", "--host"), LABEL,
         30.0),
]

DEMO = "commands/demo.py (check_options before part 1)"
DEMO_CASES = [
    Case("demo_output_an_existing_file", _demo(output=_a_file), ("taken", "not a folder"), DEMO),
    Case("demo_output_under_a_file", _demo(output=_under_a_file), ("demo-out", "taken"), DEMO),
    Case("demo_output_impossible_path", _demo(output=lambda root: Path("/proc/judgewise-demo/out")),
         ("/proc/judgewise-demo/out",), DEMO),
    Case("demo_bootstrap_negative", _demo("--bootstrap", "-1"), ("--bootstrap", "-1"), DEMO),
    Case("demo_threads_zero", _demo("--threads", "0"), ("--threads",), DEMO),
]


def _peereval(position, shown: bool = False, **changes) -> str:
    rows = [{"question_id": f"q{i}", "solver_left": "m1", "solver_right": "m2", "judge_model": "j", "position": "AB",
             "judgment": {"winner": "A"}} for i in range(3)]
    rows[1] = {**rows[1], **({"response_a_model": "m2", "response_b_model": "m1"} if shown else {}), **changes}
    if position is not ...:
        rows[1]["position"] = position
    else:
        del rows[1]["position"]
    return "".join(json.dumps(r) + "\n" for r in rows)


READER_CASES = [
    rank_file("peereval_position_lower_case", "p.jsonl", _peereval("ba"), names=("row 2", "position", '"ba"')),
    rank_file("peereval_position_unknown", "p.jsonl", _peereval("XY"), names=("row 2", "position", '"XY"')),
    rank_file("peereval_position_missing_without_shown_models", "p.jsonl", _peereval(...),
              names=("row 2", "position")),
    rank_file("peereval_position_contradicts_the_shown_models", "p.jsonl", _peereval("AB", shown=True),
              names=("row 2", "position", "response_a_model")),
]

REFUSE_CASES = SETTINGS_CASES + LABEL_CASES + DEMO_CASES + READER_CASES


def _generate(output: str):
    """``generate`` writing FastChat answer files to ``output`` (relative: under the case's folder, beside a file
    named ``taken``); its endpoint listens nowhere, so a run that got as far as calling would fail differently."""
    def build(root: Path) -> list:
        write(root, "taken", "a file where the answers' folder would go\n")
        write(root, "q.jsonl", json.dumps({"question_id": 1, "category": "writing", "turns": ["Say hi."]}) + "\n")
        config = {"prompts": str(root / "q.jsonl"), "store": str(root / "gens.sqlite"), "format": "mtbench",
                  "output": output if output.startswith("/") else str(root / output),
                  "models": [{"name": "alpha", "model": "m", "base_url": "http://127.0.0.1:9/v1"}],
                  "limits": {"timeout_s": 1, "base_delay_s": 0.01, "max_delay_s": 0.02}}
        return ["generate", "-c", write(root, "gen.yaml", json.dumps(config))]
    return build


REFUSE_CASES += [
    Case("generate_answers_folder_under_a_file", _generate("taken/answers"), ("taken",),
         "pipeline/generate.py (check_output)"),
    Case("generate_answers_folder_impossible", _generate("/proc/judgewise-gen/answers"),
         ("/proc/judgewise-gen/answers",), "pipeline/generate.py (check_output)"),
]
