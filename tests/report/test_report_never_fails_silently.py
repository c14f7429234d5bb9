"""A report never fails silently: a section that raises stops ``report`` non-zero naming it (``--partial`` keeps the
rest, still non-zero), and judgewise's own canonical table (JSONL, CSV, Parquet: columns read as categoricals)
gives every applicable section — the run summary, leaderboard and reproduce sections once failed on it with
"Cannot perform min with non-ordered Categorical" while the command exited 0."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.support import matrix_inputs
from tests.support import run_cli

APPLICABLE = ("summary", "leaderboard", "head_to_head", "power", "diagnostics", "reproduce")  # on an all-pairs run


def statuses(page: str) -> dict[str, str]:
    return dict(re.findall(r'<section class="report" id="(\w+)" data-status="([^"]+)"', page))


@pytest.mark.parametrize("container", ["jsonl", "csv", "parquet"])
def test_report_on_the_canonical_table_writes_every_applicable_section(container, tmp_path):
    path = matrix_inputs.canonical(container)(tmp_path)
    res = run_cli("report", path, "-o", tmp_path / "r.html", "--bootstrap", "0")
    assert res.returncode == 0, res.stderr
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    status = statuses(page)
    assert {k: status.get(k) for k in APPLICABLE} == {k: "ok" for k in APPLICABLE}
    assert "failed" not in status.values() and "Categorical" not in page
    assert "Design</dt><dd>all pairs" in page  # the design check that raised on categoricals
    assert "failed" not in res.stderr and "error" not in res.stderr


def test_the_design_of_a_categorical_table_is_that_of_the_same_table_as_text():
    from judgewise.report.context import ReportContext
    from judgewise.report.options import ReportOptions
    from judgewise.report.inputs import RunData

    frame = matrix_inputs.judgments()
    coded = frame.astype({c: "category" for c in ("prompt_id", "model_a", "model_b", "judge")})
    designs = [ReportContext(RunData(judgments=f, sources=["x"]), ReportOptions(bootstrap=0)).design
               for f in (frame, coded)]
    assert designs == ["all pairs", "all pairs"]
    pairs_missing = coded[~((coded["prompt_id"] == "p0") & (coded["model_b"] == "model-d"))
                          & ~((coded["prompt_id"] == "p0") & (coded["model_a"] == "model-d"))]
    assert ReportContext(RunData(judgments=pairs_missing, sources=["x"]), ReportOptions(bootstrap=0)).design \
        != "all pairs"


@pytest.fixture
def broken_power(monkeypatch):
    """The power section's builder raises (a bug in one section)."""
    from judgewise.report import sections

    def broken(ctx, section):
        raise ZeroDivisionError("forced failure")

    monkeypatch.setitem(sections.SECTIONS, "power", (sections.SECTIONS["power"][0], broken))
    return sections.SECTIONS["power"][0]


def test_a_section_that_raises_stops_the_report_naming_it_and_writes_nothing(broken_power, tmp_path):
    from judgewise.errors import ReportError
    from judgewise.report import ReportOptions, write_report

    out = tmp_path / "r.html"
    with pytest.raises(ReportError) as err:
        write_report([str(matrix_inputs.canonical("jsonl")(tmp_path))], out, ReportOptions(bootstrap=0))
    assert f'report section "{broken_power}" failed: ZeroDivisionError: forced failure' in str(err.value)
    assert "`partial=True`" in str(err.value) and not out.exists()


def test_partial_writes_the_other_sections_and_still_fails(broken_power, tmp_path):
    from judgewise.errors import ReportError
    from judgewise.report import ReportOptions, write_report

    out = tmp_path / "r.html"
    with pytest.raises(ReportError, match=str(out)):
        write_report([str(matrix_inputs.canonical("jsonl")(tmp_path))], out, ReportOptions(bootstrap=0), partial=True)
    status = statuses(out.read_text(encoding="utf-8"))
    assert status["power"] == "failed" and status["leaderboard"] == "ok"


@pytest.mark.parametrize("partial", [False, True])
def test_the_report_command_exits_non_zero_with_one_error_line(broken_power, partial, tmp_path, capsys):
    from judgewise.cli.app import main

    path = matrix_inputs.canonical("csv")(tmp_path)
    out = tmp_path / "r.html"
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(path), "-o", str(out), "--bootstrap", "0", *(["--partial"] if partial else [])])
    assert exit_.value.code == 7
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and broken_power in errors[0] and "forced failure" in errors[0]
    assert out.exists() == partial


def test_a_not_applicable_section_is_not_a_failure(tmp_path):
    """No study given: its section is marked "not applicable" and the report succeeds."""
    res = run_cli("report", matrix_inputs.canonical("parquet")(tmp_path), "-o", tmp_path / "r.html",
                  "--bootstrap", "0")
    assert res.returncode == 0, res.stderr
    status = statuses((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert status["study"] == "not applicable" and "failed" not in status.values()


def test_diagnose_with_responses_matching_no_judged_prompt_is_one_clear_error(tmp_path):
    judgments = matrix_inputs.canonical("jsonl")(tmp_path)
    other = matrix_inputs.responses().assign(prompt_id=lambda f: "other-" + f["prompt_id"])
    other.to_json(tmp_path / "responses.jsonl", orient="records", lines=True)
    for command in (["diagnose", judgments], ["report", judgments, "-o", tmp_path / "r.html"]):
        res = run_cli(*command, "--responses", tmp_path / "responses.jsonl")
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        (line,) = [x for x in res.stderr.splitlines() if x.startswith("error:")]
        assert "responses.jsonl: no response matches a judged (prompt_id, model)" in line


def test_diagnose_with_matching_responses_still_reads_them(tmp_path):
    judgments = matrix_inputs.canonical("jsonl")(tmp_path)
    matrix_inputs.responses().to_json(tmp_path / "responses.jsonl", orient="records", lines=True)
    res = run_cli("diagnose", judgments, "--responses", tmp_path / "responses.jsonl", "--json")
    assert res.returncode == 0, res.stderr


def test_echo_correlation_of_no_matching_pair_is_nan_not_a_crash():
    from judgewise.analysis.echo import echo_flags, echo_win_correlation

    flagged = echo_flags(pd.DataFrame({"prompt_id": ["zz"], "model": ["m"], "text": ["hello"]}))
    result = echo_win_correlation(matrix_inputs.judgments(), flagged)
    assert result.n_judgments == 0 and result.spearman_rho != result.spearman_rho  # NaN
