"""Following docs/extending.md works: its toy rating method and design, added as the page says in a copy of the
repository, pass the tests generated from the registries, with no edit to any test (issue 34)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.support import SHARED
from tools.docs_examples import describe, run_extended
from tools.extending_copy import PAGE, make_copy, page_changes

TOY_METHOD, TOY_DESIGN = "net_wins", "ring"
GENERATED = ["tests/ratings/test_ratings_methods.py", "tests/ratings/test_ratings_bootstrap.py",
             "tests/designs/test_designs.py", "tests/project/test_command_input_matrix.py"]
ALSO = ["tests/project/test_command_input_matrix.py::test_every_cell_is_declared",  # the page's format has its row
        "tests/project/test_architecture.py::test_no_module_imports_a_later_layer",  # the toys import upward only
        "tests/project/test_architecture.py::test_no_import_cycle"]
EXPECTED = {  # test function → the toy it must be generated for (the page names these)
    "test_every_method_gives_a_ranking_of_every_model_best_first_with_what_made_it": TOY_METHOD,
    "test_every_method_bootstraps": TOY_METHOD,
    "test_every_rating_method_ranks_from_the_command_line_the_api_and_the_report_alike": TOY_METHOD,
    "test_every_design_runs_to_canonical_judgments_within_its_declared_cost": TOY_DESIGN,
    "test_a_single_shot_design_lists_up_front_what_it_runs_at_its_exact_cost": TOY_DESIGN,
    "test_every_design_runs_in_the_simulator": TOY_DESIGN,
}


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """The repository copied with the page's modules saved and its diffs applied."""
    return make_copy(tmp_path_factory.mktemp("extended") / "repo")


def pytest_in(root, *args: str) -> subprocess.CompletedProcess:
    """``python -m pytest ARGS`` in ``root``, importing the copy's package and tests."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(PYTHONPATH=os.pathsep.join([str(root / "src"), str(root)]), JUDGEWISE_SHARED=str(SHARED))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", *args],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600)


def toy_ids(ids: list[str]) -> list[str]:
    """The collected test ids parametrized with a toy (the toy's name is one of the id's ``-``-separated parts)."""
    return [i for i in ids if (m := re.search(r"\[(.*)\]$", i)) and {TOY_METHOD, TOY_DESIGN} & set(m[1].split("-"))]


def test_the_page_shows_each_toy_module_and_the_diff_that_registers_it():
    modules, hunks = page_changes()
    assert {TOY_METHOD, TOY_DESIGN} <= set(modules)
    changed = {h.path for h in hunks}
    assert {"src/judgewise/ratings/ranking.py", "src/judgewise/designs/catalog.py"} <= changed
    assert not [p for p in changed if p.startswith("tests/") and p != "tests/support/matrix_inputs.py"
                and p != "tests/project/test_command_input_matrix.py"], changed  # only a format declares tests
    assert len({h.path for h in hunks if h.path.startswith("src/")}) == len(modules), \
        "each toy: its module and one registry file"
    text = PAGE.read_text(encoding="utf-8")
    assert [name for name in EXPECTED if f"{name}[" not in text] == [], "the page names each generated test"


@pytest.mark.slow
def test_the_toy_method_and_design_pass_the_tests_generated_from_the_registries(copy, shared):
    selected = " or ".join([TOY_METHOD, TOY_DESIGN, *(i.split("::")[1] for i in ALSO)])
    done = pytest_in(copy, "-rA", "-k", selected, *dict.fromkeys([*GENERATED, *(i.split("::")[0] for i in ALSO)]))
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    outcomes = {line.split(" ")[1]: line.split(" ")[0] for line in done.stdout.splitlines()
                if line.split(" ")[0] in ("PASSED", "FAILED", "SKIPPED", "XFAIL", "XPASS", "ERROR")}
    ids = toy_ids(list(outcomes))
    generated = {name: [i for i in ids if f"::{name}[" in i] for name in EXPECTED}
    assert all(generated.values()), f"no test generated for a toy by {[n for n, i in generated.items() if not i]}"
    assert not [i for i in ids if "multi_round" in i], "the single-shot toy design is tested as a multi-round one"
    not_passed = {i: outcomes.get(i) for i in [*ids, *ALSO] if outcomes.get(i) != "PASSED"}
    assert not not_passed, f"{not_passed}\n{done.stdout[-3000:]}"


@pytest.mark.slow
def test_the_pages_commands_after_each_change_print_what_the_page_shows(copy):
    outcomes = run_extended(PAGE, copy / "src")
    assert len(outcomes) >= 4
    failures = [describe(o) for o in outcomes if not o.ok]
    assert not failures, "\n\n".join(failures)
