"""Bad rubrics (issue 33, part 2): a run config's ``judge.rubric`` naming a rubric file that is not a rubric, a rubric
nobody ships, a rubric beside a template, and a rubric graded against references the config does not give."""

from __future__ import annotations

from tests.support.bad_inputs.cases_others import LAUGHS, judge

RUBRICS = "rubrics (judges/rubric_files.py, pipeline/job.py)"


def rubric_run(rubric: str, extra: str = "") -> str:
    return ("responses: r.jsonl\n"
            f'judge: {{backend: openai, model: m, base_url: "http://127.0.0.1:9/v1", {rubric}}}\n'
            f"store: ROOT/s.sqlite\n{extra}")


def with_file(name: str, text: str, names: tuple[str, ...]) -> object:
    return judge(name, rubric_run("rubric: mine.yaml"), files={"mine.yaml": text}, names=("mine.yaml", *names),
                 owner=RUBRICS)


GOOD = "name: brevity\ncriterion: Is it short?\n"

RUBRIC_CASES = [
    with_file("rubric_scores_with_a_gap", GOOD + "scores: {1: long, 3: short}\n", ("scores", "[1, 3]")),
    with_file("rubric_one_score", GOOD + "scores: {1: long}\n", ("scores",)),
    with_file("rubric_empty_description", GOOD + 'scores: {1: long, 2: " "}\n', ("scores[2]",)),
    with_file("rubric_no_criterion", "name: brevity\nscores: {1: long, 2: short}\n", ("criterion",)),
    with_file("rubric_unknown_key", GOOD + "scores: {1: long, 2: short}\ncolour: blue\n", ("colour",)),
    with_file("rubric_reference_sometimes", GOOD + "scores: {1: long, 2: short}\nreference: sometimes\n",
              ("reference",)),
    with_file("rubric_a_list", "- criterion\n- scores\n", ("a rubric",)),
    with_file("rubric_empty_file", "", ("a rubric",)),
    with_file("rubric_billion_laughs", LAUGHS + GOOD + "scores: {1: long, 2: short}\n", ("aliases",)),
    with_file("rubric_score_named_twice", GOOD + "scores:\n  1: long\n  1: short\n  2: tiny\n", ("line",)),
    judge("rubric_missing_file", rubric_run("rubric: nope.yaml"), names=("nope.yaml",), owner=RUBRICS),
    judge("rubric_unknown_name", rubric_run("rubric: kindness"), names=("kindness", "helpfulness"), owner=RUBRICS),
    judge("rubric_and_template", rubric_run("rubric: helpfulness, template: likert"), names=("template", "rubric"),
          owner=RUBRICS),
    judge("rubric_needs_references", rubric_run("rubric: factual_correctness"),
          names=("factual_correctness", "references"), owner=RUBRICS),
    judge("rubric_on_the_simulated_judge", "responses: r.jsonl\njudge: {backend: simulated, ratings: {alpha: 1000, "
          "beta: 1100, gamma: 1200}, rubric: helpfulness}\nstore: ROOT/s.sqlite\n", names=("judge.rubric",),
          owner=RUBRICS),
]
