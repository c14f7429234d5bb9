"""The one-file report: offline, escaped, numbers from the library, slots marked, Markdown, store input, CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgewise.report import ReportOptions, build_report, write_report
from judgewise.report.document import OK, fmt_num

from tests.support import REPO, run_cli
from tests.support.reports import make_run, parsed


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> tuple[Path, Path]:
    return make_run(tmp_path_factory.mktemp("run"))


@pytest.fixture(scope="module")
def small_report(small_run, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    return write_report(small_run[0], out, ReportOptions(bootstrap=50, seed=3, command="judgewise report x"),
                        responses=small_run[1])


def test_report_html_loads_nothing_from_the_network(small_report):
    html = small_report.read_text(encoding="utf-8")
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)\s*=\s*[\"']?(https?:)?//", html, re.I)
    assert "<script src" not in html and "<link" not in html
    assert "default-src 'none'" in html  # CSP: even an injected tag could fetch nothing
    assert "<svg" in html and "<style>" in html


def test_report_escapes_model_names_responses_and_judge_texts(small_report):
    html = small_report.read_text(encoding="utf-8")
    tags = parsed(html)
    assert "img" not in tags.tags and not tags.handlers
    assert tags.tags.count("script") == 1 and "__xss" not in tags.scripts[0]
    assert "evil&lt;img src=x onerror=" in html  # the hostile model name is shown, as text


def test_report_leaderboard_shows_the_numbers_rank_computes(small_run, small_report):
    from judgewise.io import read_judgments
    from judgewise.ratings import rank

    ranking = rank(read_judgments(small_run[0]).frame, method="bt", bootstrap=50, seed=3)
    html = small_report.read_text(encoding="utf-8")
    table = html[html.index('class="leaderboard'):]
    table = table[: table.index("</table>")]
    for rec in ranking.to_records():
        from judgewise.report.document import fmt_num

        row = f"<td>{rec['rank']}</td><td>{_escaped(rec['model'])}</td><td>{fmt_num(rec['score'], 4)}</td>"
        assert row in table, row


def _escaped(text: str) -> str:
    from markupsafe import escape

    return str(escape(text))


def test_report_marks_sections_without_data_as_slots(small_run):
    sections = build_report(small_run[0])  # no responses, no gold ranking, no study
    by_key = {s.key: s for s in sections}
    assert by_key["summary"].status == OK and by_key["leaderboard"].status == OK
    assert by_key["head_to_head"].status == OK
    assert by_key["inverted_u"].status == OK  # all pairs: quadratic BT serves as the gold ranking
    assert by_key["study"].is_slot and "--study" in by_key["study"].note
    for s in sections:
        assert s.status == OK or s.note, f"slot {s.key} must say why"


def test_report_head_to_head_matrix_is_complementary(small_run):
    from judgewise.io import read_judgments
    from judgewise.report.head_to_head import win_matrix

    df = read_judgments(small_run[0]).frame
    models = sorted(set(df.model_a) | set(df.model_b))
    rates, counts = win_matrix(df, models)
    off = ~np.eye(len(models), dtype=bool)
    assert np.allclose((rates + rates.T)[off], 1.0)
    assert np.array_equal(counts, counts.T) and counts[off].sum() == 2 * len(df)
    a, b = df.model_a.iloc[0], df.model_b.iloc[0]
    sub = df[(df.model_a == a) & (df.model_b == b)]
    assert rates[models.index(a), models.index(b)] == pytest.approx(sub.outcome.mean())


def test_markdown_report_links_figures_that_exist(small_run, tmp_path):
    md = write_report(small_run[0], tmp_path / "md", ReportOptions(bootstrap=20), format="md", responses=small_run[1])
    text = md.read_text(encoding="utf-8")
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert links and all((md.parent / link).is_file() for link in links)
    assert all((md.parent / link).read_text().startswith("<svg") for link in links)
    assert "## Leaderboard" in text and "<script" not in text and "<img src=x" not in text


def test_report_reads_a_judging_store_and_shows_its_run_facts(small_run, tmp_path):
    from judgewise.io import read_judgments
    from judgewise.store.judgments import GameRecord, JudgmentStore

    df = read_judgments(small_run[0]).frame.head(120)
    path = tmp_path / "store.sqlite"
    with JudgmentStore(path) as store:
        for k, r in enumerate(df.itertuples()):
            failed = k % 40 == 0
            store.record(GameRecord(key=f"k{k}", prompt_id=r.prompt_id, model_a=r.model_a, model_b=r.model_b,
                                    first=r.first, swapped=r.first != r.model_a, judge="sim-judge", template="t@1",
                                    judge_identity="{}", status="failed" if failed else "ok", raw=r.raw,
                                    verdict5=None if failed else int(r.verdict),
                                    outcome=None if failed else r.outcome, error="HTTP 500" if failed else None,
                                    tokens_in=100, tokens_out=20, cost=0.001, n_calls=1, latency_s=0.5))
    sections = {s.key: s for s in build_report(path)}
    facts = dict(sections["summary"].facts)
    assert facts["Games"] == "120" and facts["Failed"] == "3" and facts["Calls"] == "120"
    assert facts["Cost"] == "0.12"
    assert sections["leaderboard"].status == OK


def test_report_command_writes_html_and_prints_its_path(small_run, tmp_path):
    out = tmp_path / "r.html"
    res = run_cli("report", small_run[0], "-o", out, "--bootstrap", "20", "--responses", small_run[1])
    assert res.returncode == 0, res.stderr
    assert str(out) in res.stdout and out.stat().st_size > 10_000
    assert "judgewise report" in out.read_text(encoding="utf-8")


def test_report_command_rejects_an_unknown_format_with_one_line(small_run, tmp_path):
    res = run_cli("report", small_run[0], "-o", tmp_path / "r.html", "--format", "pdf")
    assert res.returncode != 0 and "pdf" in res.stderr and "Traceback" not in res.stderr


def _alpacaeval_source(shared_dir: Path | None) -> Path:
    example = REPO / "examples" / "alpacaeval"
    if example.is_dir() and any(example.iterdir()):
        return example
    if shared_dir is None:
        pytest.skip("neither examples/alpacaeval nor ../shared is present")
    return shared_dir / "data" / "alpacaeval"


def test_report_on_real_alpacaeval_data_ranks_every_model(shared, tmp_path):
    src = _alpacaeval_source(shared)
    sections = {s.key: s for s in build_report(src, options=_options())}
    lb = sections["leaderboard"]
    assert lb.status == OK, lb.note
    n_models = len(lb.tables[0].rows)
    assert n_models >= 8
    assert dict(sections["summary"].facts)["Design"].startswith("anchor")
    flags = [t for t in sections["diagnostics"].tables if t.css_class == "flags"]
    assert flags, "the AlpacaEval folder carries model outputs: gaming checks must run"
    ranked = {row[1] for row in lb.tables[0].rows}
    assert ("NullModel" in ranked) == any(row[0] == "NullModel" for row in flags[0].rows)
    assert sections["anchors"].status == OK and sections["anchors"].tables[0].rows[0][0] == "gpt4_1106_preview"


def small_study():
    """A seeded Metric Match study on synthetic scores (3 judges + a human), through the library's run_study."""
    from judgewise.analysis.study import pool_from_scores, run_study

    rng = np.random.default_rng(1)
    truth = rng.normal(size=120)
    rows = [{"item_id": f"i{k}", "rater": "human", "score": truth[k]} for k in range(120)]
    for j, noise in enumerate((0.5, 0.8, 1.2)):
        rows += [{"item_id": f"i{k}", "rater": f"judge{j}", "score": truth[k] + rng.normal(0, noise)}
                 for k in range(120)]
    pool = pool_from_scores(pd.DataFrame(rows))
    return run_study(pool, targets=["judge0"], metrics=("rho",), budgets=(10, 20, 40), trials=8,
                     methods=("random", "metric-match"), n_candidates=5, seed=0)


def test_report_plots_a_saved_reliability_study(small_run, tmp_path):
    study = small_study()
    path = tmp_path / "study.json"
    path.write_text(json.dumps(study.as_dict(), default=float), encoding="utf-8")
    section = {s.key: s for s in build_report(small_run[0], options=_options(study=path))}["study"]
    assert section.status == OK, section.note
    assert [f.name for f in section.figures] == ["study-rho"]
    svg = section.figures[0].svg
    assert svg.count('class="series"') == 2  # random and metric-match
    errors = study.errors()
    mm = errors[errors["method"] == "metric-match"].sort_values("budget")["mean_error"]
    assert f"metric-match: 10, {mm.iloc[0]:.4g}" in svg  # the plotted point is the study's own mean error


def _options(**kw):
    from judgewise.report.options import ReportOptions

    return ReportOptions(bootstrap=10, **kw)


def test_report_diagnostics_come_from_diagnose(small_run):
    from judgewise.analysis.diagnostics import diagnose
    from judgewise.io import read_judgments, read_responses

    judgments, responses = read_judgments(small_run[0]).frame, read_responses(small_run[1]).frame
    section = {s.key: s for s in build_report(small_run[0], responses=small_run[1])}["diagnostics"]
    assert section.status == OK, section.note
    position = diagnose(judgments, responses).judges[0].position
    assert f"{position.estimate:.3f} [{position.ci_low:.3f}, {position.ci_high:.3f}]" in section.tables[0].rows[0][3]
    assert position.estimate > 0.5  # make_run builds in a first-position advantage


def test_report_anchor_and_power_sections_use_the_anchor_study(tmp_path):
    from judgewise.analysis.anchor_selection import report_from_judgments
    from judgewise.analysis.power import sign_test_sample_size
    from judgewise.io import read_judgments

    jpath, _ = make_run(tmp_path, n_prompts=40, xss=False)
    star = read_judgments(jpath).frame
    star = star[(star.model_a == "model-2") | (star.model_b == "model-2")]  # an anchor design around model-2
    sections = {s.key: s for s in build_report(star, options=_options())}
    anchors, power = sections["anchors"], sections["power"]
    assert sections["inverted_u"].is_slot and "all-pairs" in sections["inverted_u"].note
    assert anchors.status == OK and power.status == OK, (anchors.note, power.note)
    expected = report_from_judgments(star, "model-2")
    row = anchors.tables[0].rows[0]
    assert row[0] == "model-2" and row[1] == f"{expected.informativeness:.3g}"
    size = sign_test_sample_size(0.55, expected.wasted_share)
    assert power.tables[0].rows[0][:3] == ["0.55", size.n_informative, size.n_total]


def test_report_inverted_u_is_anchor_quality_against_the_given_gold(small_run, tmp_path):
    from judgewise.analysis.anchor_experiments import anchor_quality
    from judgewise.analysis.anchor_selection import QuadraticData
    from judgewise.io import read_judgments

    df = read_judgments(small_run[0]).frame
    models = sorted(set(df.model_a) | set(df.model_b))
    gold = {m: float(len(m) + i) for i, m in enumerate(models)}  # any fixed gold ranking
    path = tmp_path / "gold.json"
    path.write_text(json.dumps([{"model": m, "score": v} for m, v in gold.items()]), encoding="utf-8")
    section = {s.key: s for s in build_report(small_run[0], options=_options(gold=path))}["inverted_u"]
    assert section.status == OK, section.note
    qd = QuadraticData(df)
    expected = anchor_quality(qd, np.array([gold[m] for m in qd.models]))
    shown = {row[1]: row[2] for row in section.tables[0].rows}
    assert shown == {r.anchor: f"{r.tau:.3g}" if r.tau != int(r.tau) else str(int(r.tau))
                     for r in expected.itertuples()}


def test_a_gold_ranking_with_a_bad_score_names_file_row_and_field(small_run, tmp_path):
    path = tmp_path / "gold.csv"
    path.write_text("model,score\nmodel-0,1.5\nmodel-1,abc\n", encoding="utf-8")
    res = run_cli("report", small_run[0], "-o", tmp_path / "r.html", "--gold", path, "--bootstrap", "0")
    assert res.returncode == 2 and not (tmp_path / "r.html").exists()
    assert 'gold.csv row 2 field "score": is not a number: \'abc\'' in res.stderr.replace("\n", "")


def test_report_shows_the_style_control_coefficients_diagnose_computes(small_run):
    from judgewise.analysis.diagnostics import diagnose
    from judgewise.io import read_judgments

    judgments = read_judgments(small_run[0]).frame
    rng = np.random.default_rng(5)  # markdown that varies within every model, so style control can be fitted
    responses = pd.DataFrame([{"prompt_id": pid, "model": m,
                               "text": "# h\n" * int(rng.integers(3)) + "- item\n" * int(rng.integers(4))
                               + "**bold** " * int(rng.integers(3)) + "word " * int(rng.integers(5, 60))}
                              for pid in judgments["prompt_id"].unique()
                              for m in set(judgments["model_a"]) | set(judgments["model_b"])])
    style = diagnose(judgments, responses).style
    length = style["per_judge"]["sim-judge"]["coefficients"]["length"]["estimate"]
    section = {s.key: s for s in build_report(small_run[0], responses=responses)}["diagnostics"]
    table = next(t for t in section.tables if t.caption.startswith("Style-controlled"))
    assert table.rows[0][0] == "sim-judge" and table.rows[0][1] == fmt_num(length, 4)
    assert dict(section.facts)["Self-preference coefficient"].startswith("not estimable")  # one judge family


def test_report_diagnostics_show_label_agreement_on_judgebench_as_diagnose_does(shared):
    from judgewise.report.context import ReportContext
    from judgewise.report.inputs import load_run
    from judgewise.report.sections import build_sections

    run = load_run(shared / "data" / "judgebench" / "outputs")
    (section,) = build_sections(ReportContext(run, _options()), ["diagnostics"])
    assert section.status == OK, section.note
    assert "label agreement (per judgment)" in section.tables[0].columns


def test_report_summary_counts_comparisons_judged_in_both_orders(small_run, tmp_path):
    frame = pd.read_json(small_run[0], lines=True)
    one_order = tmp_path / "one_order.jsonl"
    frame[frame["first"] == frame["model_a"]].to_json(one_order, orient="records", lines=True)
    n_pairs = frame.groupby(["prompt_id", "model_a", "model_b"]).ngroups
    for path, both in ((small_run[0], n_pairs), (one_order, 0)):
        (summary,) = build_sections_for(path, ["summary"])
        assert dict(summary.facts)["Answer orders"] == f"{both:,} of {n_pairs:,} comparisons judged in both orders"


def build_sections_for(path, keys):
    from judgewise.report.context import ReportContext
    from judgewise.report.inputs import load_run
    from judgewise.report.sections import build_sections

    return build_sections(ReportContext(load_run(path), _options()), keys)


# --- bad report inputs: one error line, nothing written -------------------------------------------------------

def _one_error_line(res) -> str:
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode != 0 and "Traceback" not in res.stderr, res.stderr[-600:]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


def test_an_unknown_report_method_is_an_error_listing_the_registered_ones(small_run, tmp_path):
    from judgewise.ratings import RATING_METHODS

    line = _one_error_line(run_cli("report", small_run[0], "--method", "foo", "-o", tmp_path / "r.html"))
    assert "foo" in line and all(name in line for name in RATING_METHODS)
    assert list(tmp_path.iterdir()) == []


def test_report_methods_come_from_the_rating_registry(monkeypatch):
    from judgewise.errors import ConfigError
    from judgewise.ratings import RATING_METHODS
    from judgewise.report.options import ReportOptions

    monkeypatch.setitem(RATING_METHODS, "my_method", RATING_METHODS["bt"])
    assert ReportOptions(method="my_method").method == "my_method"
    with pytest.raises(ConfigError, match="my_method"):
        ReportOptions(method="nope")


@pytest.mark.parametrize("option, value", [("--bootstrap", "-5"), ("--bootstrap", "100000000"), ("--seed", "-1")])
def test_report_settings_out_of_range_are_one_line_errors(small_run, tmp_path, option, value):
    line = _one_error_line(run_cli("report", small_run[0], option, value, "-o", tmp_path / "r.html"))
    assert option in line and value in line and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("layout", ["html_on_a_directory", "md_folder_is_a_file", "under_a_file",
                                    "md_figures_is_a_file"])
def test_report_output_that_cannot_be_a_file_is_one_line_naming_it(small_run, tmp_path, layout):
    (tmp_path / "taken").mkdir()
    (tmp_path / "plain.txt").write_text("keep", encoding="utf-8")
    (tmp_path / "md").mkdir()
    (tmp_path / "md" / "figures").write_text("", encoding="utf-8")
    out, fmt = {"md_figures_is_a_file": (tmp_path / "md", "md"),"html_on_a_directory": (tmp_path / "taken", "html"),
                "md_folder_is_a_file": (tmp_path / "plain.txt", "md"),
                "under_a_file": (tmp_path / "plain.txt" / "sub" / "r.html", "html")}[layout]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    line = _one_error_line(run_cli("report", small_run[0], "--format", fmt, "-o", out, "--bootstrap", "0"))
    assert {"html_on_a_directory": "taken", "md_figures_is_a_file": "figures"}.get(layout, "plain.txt") in line
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "plain.txt").read_text(encoding="utf-8") == "keep"


def _store_with_games(path: Path, *, all_failed: bool) -> Path:
    from judgewise.judges.runner import run_judging
    from judgewise.judges.scheduler import RetryPolicy

    from tests.support.fault_server import FaultServer
    from tests.support.judging import comparisons, llm_judge

    with FaultServer(fault_fn=(lambda messages, seen: "500") if all_failed else None) as srv:
        run_judging(comparisons(3), llm_judge(srv.url), path, retry=RetryPolicy(max_attempts=1))
    return path


@pytest.mark.parametrize("kind", ["empty_store", "all_failed_store", "empty_sqlite", "foreign_sqlite"])
def test_report_and_serve_refuse_a_store_with_nothing_to_show(tmp_path, kind):
    import sqlite3

    from judgewise.store.judgments import JudgmentStore

    path = tmp_path / f"{kind}.sqlite"
    if kind == "empty_store":
        with JudgmentStore(path):
            pass
    elif kind == "all_failed_store":
        _store_with_games(path, all_failed=True)
    else:
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA user_version = 1" if kind == "empty_sqlite" else "CREATE TABLE notes (x)")
        db.close()
    digest = path.read_bytes()
    for args in (["report", path, "-o", tmp_path / "r.html", "--bootstrap", "0"],
                 ["serve", path, "--port", "0", "--bootstrap", "0"]):
        line = _one_error_line(run_cli(*args, timeout=120))
        assert str(path) in line
    assert path.read_bytes() == digest and not (tmp_path / "r.html").exists()
