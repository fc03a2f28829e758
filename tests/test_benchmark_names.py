"""The benchmark scripts (``tests/benchmarks/``, not run by the suite) still name what the
toolkit has: each imports, and each function a benchmark times by name exists. A benchmark
that broke when a function moved would be found only on the day someone measures."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent / "benchmarks"
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_each_benchmark_imports(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"_bench_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)  # the module's own imports, names and constants


def timed_names(tree: ast.AST) -> list[tuple[str, str, int]]:
    """``(module, function, line)`` of every ``x.wrap(alias, "name", ...)`` whose alias is a
    module the script imports (``import toolkit.stats.duck as duck``)."""
    aliases = {
        a.asname or a.name: a.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for a in node.names
    }
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "wrap"
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and isinstance(node.args[1], ast.Constant)
            and node.args[0].id in aliases
        ):
            out.append((aliases[node.args[0].id], node.args[1].value, node.lineno))
    return out


def test_the_functions_a_benchmark_times_exist() -> None:
    missing, seen = [], 0
    for script in SCRIPTS:
        for module, name, line in timed_names(ast.parse(script.read_text(encoding="utf-8"))):
            seen += 1
            if not hasattr(importlib.import_module(module), name):
                missing.append(f"{script.name}:{line}: {module}.{name}")
    assert seen >= 5  # the rules benchmark times its phases this way
    assert not missing, missing
