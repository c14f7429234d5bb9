"""The package's layering holds: no module imports a later layer, and no modules import each other in a cycle.

Layers, each importing only from those before it: base (``errors``, ``registry``, ``redaction``, ``executors``,
``flags``) → io → store → judges → designs → ratings → analysis → pipeline → report → commands → cli (the report
below the commands: ``judgewise demo``'s commands write reports, the report imports no command). Every import
counts — module-level, inside functions, under ``TYPE_CHECKING``, and ``importlib.import_module("judgewise...")``
with a literal name. ``judgewise/__init__.py`` is the lazy public facade (it loads any layer on first use) and is
exempt.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path


import judgewise

LAYERS = ["base", "io", "store", "judges", "designs", "ratings", "analysis", "pipeline", "report", "commands", "cli"]
BASE_MODULES = {"errors", "registry", "redaction", "executors", "flags"}  # top-level modules every layer may use
FACADE = "judgewise"


def find_modules(root: Path, package: str = "judgewise") -> dict[str, Path]:
    """Dotted module name → file, for every .py file under ``root`` (a package folder named ``package``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = (package, *path.relative_to(root).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _from_target(node: ast.ImportFrom, name: str, is_package: bool, mods) -> list[str]:
    """Modules a ``from X import a, b`` makes ``name`` depend on: X.a when that is a module, else X itself."""
    mod = node.module or ""
    if node.level:
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        mod = ".".join(base + ([mod] if mod else []))
    subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in mods]
    return subs + ([mod] if len(subs) < len(node.names) else [])


def _literal_import_module(node: ast.Call) -> str | None:
    func = node.func
    named = (isinstance(func, ast.Attribute) and func.attr == "import_module") or \
            (isinstance(func, ast.Name) and func.id == "import_module")
    if named and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def import_edges(mods: dict[str, Path]) -> dict[str, dict[str, int]]:
    """module → {imported module → line of the first such import}, over every import in the module's AST."""
    edges: dict[str, dict[str, int]] = defaultdict(dict)
    for name, path in mods.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = _from_target(node, name, is_package, mods)
            elif isinstance(node, ast.Call) and _literal_import_module(node):
                targets = [_literal_import_module(node)]
            else:
                continue
            for target in targets:
                if target in mods and target != name:
                    edges[name].setdefault(target, node.lineno)
    return edges


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) == 1:
        return None  # the facade
    if len(parts) == 2 and parts[1] in BASE_MODULES:
        return "base"
    return parts[1] if parts[1] in LAYERS else f"<unplaced: {parts[1]}>"


def upward_imports(mods: dict[str, Path]) -> list[str]:
    """'a (layer) imports b (later layer) at file:line' for every import of a later layer."""
    found = []
    for src, targets in import_edges(mods).items():
        for dst, line in targets.items():
            ls, ld = layer_of(src), layer_of(dst)
            if ls in LAYERS and ld in LAYERS and LAYERS.index(ld) > LAYERS.index(ls):
                found.append(f"{src} ({ls}) imports {dst} ({ld}) at {mods[src].name}:{line}")
    return sorted(found)


def import_cycles(mods: dict[str, Path]) -> list[set[str]]:
    """Strongly connected groups of more than one module in the import graph (Tarjan, iterative)."""
    edges = import_edges(mods)
    index, low, on_stack, stack, cycles, counter = {}, {}, set(), [], [], [0]
    for start in mods:
        if start in index:
            continue
        work = [(start, iter(edges.get(start, ())))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        cycles.append(group)
            elif child not in index:
                index[child] = low[child] = counter[0]
                counter[0] += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(edges.get(child, ()))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return cycles


MODULES = find_modules(Path(judgewise.__file__).parent)


def test_every_module_belongs_to_a_layer():
    unplaced = sorted(m for m in MODULES if m != FACADE and layer_of(m) not in LAYERS)
    assert not unplaced, f"place these in LAYERS/BASE_MODULES of tests/project/test_architecture.py: {unplaced}"


def test_no_module_imports_a_later_layer():
    assert upward_imports(MODULES) == []


def test_the_report_imports_nothing_from_the_commands():
    """Issue 34: the report sits below the commands (its options in ``report.options``, the labelling statistics in
    ``analysis.labelling``, the interval line in ``ratings.coverage``; the demo's reports written by
    ``commands.demo``), so nothing in report/ imports commands/ — not even under ``TYPE_CHECKING``."""
    assert LAYERS.index("report") < LAYERS.index("commands")
    found = sorted(f"{src} imports {dst} at {MODULES[src].name}:{line}"
                   for src, targets in import_edges(MODULES).items() if layer_of(src) == "report"
                   for dst, line in targets.items() if layer_of(dst) == "commands")
    assert found == []


def test_no_import_cycle():
    assert [sorted(c) for c in import_cycles(MODULES)] == []


def test_the_checker_sees_function_level_upward_imports_and_cycles(tmp_path):
    pkg = tmp_path / "judgewise"
    for folder in ("io", "judges", "cli"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text('"""x."""\n')
    (pkg / "__init__.py").write_text('"""facade."""\n')
    (pkg / "io" / "a.py").write_text("def f():\n    from judgewise.judges.b import g\n")  # io → judges: upward
    (pkg / "judges" / "b.py").write_text("from judgewise.io import a\n\ndef g():\n    pass\n")
    (pkg / "cli" / "c.py").write_text("import importlib\nimportlib.import_module('judgewise.cli.d')\n")
    (pkg / "cli" / "d.py").write_text("from . import c\n")
    mods = find_modules(pkg)
    assert upward_imports(mods) == ["judgewise.io.a (io) imports judgewise.judges.b (judges) at a.py:2"]
    assert sorted(map(sorted, import_cycles(mods))) == [["judgewise.cli.c", "judgewise.cli.d"],
                                                       ["judgewise.io.a", "judgewise.judges.b"]]
