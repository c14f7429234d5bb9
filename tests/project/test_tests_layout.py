"""The tests mirror the package: a folder per package of src/judgewise, and what tests share lives in tests/support."""

from __future__ import annotations

import ast

from tests.support import REPO

TESTS = REPO / "tests"
NOT_PACKAGES = {"project", "support"}  # whole-project tests; helpers


def test_every_test_folder_is_a_package_of_judgewise_or_project_or_support():
    packages = {p.parent.name for p in (REPO / "src" / "judgewise").glob("*/__init__.py")}
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders - NOT_PACKAGES <= packages, f"test folders naming no package of judgewise: {folders - packages}"
    assert not list(TESTS.glob("test_*.py")), "a test module belongs in the folder of the package it tests"
    assert all((TESTS / f / "__init__.py").is_file() for f in folders), "every test folder is a package"


def imported_modules(path) -> set[str]:
    """Every module ``path`` imports, relative imports resolved against its package."""
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(filter(None, [base, node.module or ""]))
            names |= {module} | {f"{module}.{a.name}" for a in node.names}
    return names


def test_no_test_module_imports_another_test_module():
    offending = {}
    for path in TESTS.rglob("*.py"):
        tests = sorted(m for m in imported_modules(path) if m.rsplit(".", 1)[-1].startswith("test_"))
        if tests:
            offending[str(path.relative_to(REPO))] = tests
    assert not offending, f"shared helpers belong in tests/support, not in test modules: {offending}"
