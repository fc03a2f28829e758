"""The package's shape, as docs/architecture.md draws it: no import cycle, no import up the
layers, no file or function past its size, and the kind vocabulary only in ``spec.py``.

The import graph is built with ``ast`` from the source, so it sees every import: at module
level, inside functions (where a cycle likes to hide) and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "toolkit"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

#: Files allowed past 600 lines: the table of the interface's vocabulary (one row per format,
#: target kind, list, limit and operation), data rather than logic.
DATA_TABLES = frozenset({"toolkit/spec.py"})
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 60


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    local: bool  # inside a function
    typing_only: bool  # under ``if TYPE_CHECKING``


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(mod: str, is_package: bool, node: ast.ImportFrom, known: set[str]) -> list[str]:
    if node.level:
        base = mod.split(".") if is_package else mod.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{prefix}.{alias.name}"
        out.append(sub if sub in known else prefix)
    return [m for m in out if m in known]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    """Collects the toolkit imports of one module, noting whether each is inside a function
    and whether it is under ``if TYPE_CHECKING``."""

    def __init__(self, mod: str, is_package: bool, names: set[str]) -> None:
        self.mod, self.is_package, self.names = mod, is_package, names
        self.local = self.typing_only = False
        self.found: list[Edge] = []

    def _add(self, target: str, line: int) -> None:
        self.found.append(Edge(self.mod, target, line, self.local, self.typing_only))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for target in _resolve(self.mod, self.is_package, node, self.names):
            self._add(target, node.lineno)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name in self.names:
                self._add(alias.name, node.lineno)

    def visit_If(self, node: ast.If) -> None:
        before, self.typing_only = self.typing_only, self.typing_only or _is_type_checking(node)
        self.generic_visit(node)
        self.typing_only = before

    def visit_FunctionDef(self, node: ast.AST) -> None:
        before, self.local = self.local, True
        self.generic_visit(node)
        self.local = before

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef


def edges() -> list[Edge]:
    known = modules()
    out: list[Edge] = []
    for mod, path in known.items():
        visitor = _Imports(mod, path.name == "__init__.py", set(known))
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        out += visitor.found
    return [e for e in out if e.source != e.target]


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = dfs(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = dfs(node)
            if found:
                return found
    return None


def runtime_graph(all_edges: list[Edge]) -> dict[str, set[str]]:
    """Every import between modules: at module level, inside functions and under
    ``TYPE_CHECKING`` (a type checker follows those, and a cycle through them is a cycle of
    the design); a package's ``__init__`` importing its own submodules (to export them) is
    the package's face, not a dependency of those submodules on it."""
    graph: dict[str, set[str]] = {}
    for e in all_edges:
        if e.source.startswith(e.target + "."):
            continue
        graph.setdefault(e.source, set()).add(e.target)
    return graph


def layers() -> dict[str, int]:
    """``{module prefix: layer}`` from the table of docs/architecture.md (0 = bottom)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    out: dict[str, int] = {}
    for line in section.splitlines():
        m = re.match(r"^\|\s*(\d+)\s*\|([^|]+)\|", line)
        if m:
            for name in re.findall(r"`([a-z_./]+)`", m.group(2)):
                dotted = name.strip("/").removesuffix(".py").replace("/", ".")
                mod = "toolkit" if dotted == "__init__" else f"toolkit.{dotted}"
                out[mod] = int(m.group(1))
    return out


def layer_of(mod: str, table: dict[str, int]) -> int | None:
    best = None
    for prefix, n in table.items():
        if (mod == prefix or mod.startswith(prefix + ".")) and (
            best is None or len(prefix) > len(best[0])
        ):
            best = (prefix, n)
    return None if best is None else best[1]


def test_the_import_graph_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_import_graph_sees_local_and_relative_imports():
    found = {(e.source, e.target) for e in edges()}
    assert ("toolkit.client.client", "toolkit.sandbox") in found  # a local import
    assert ("toolkit.bulk.plan", "toolkit.spec") in found  # from .. import spec


def test_a_cycle_through_a_type_checking_import_counts():
    planted = [Edge("a", "b", 1, False, False), Edge("b", "a", 2, False, True)]
    assert find_cycle(runtime_graph(planted)) == ["a", "b", "a"]
    face = [Edge("p", "p.m", 1, False, False), Edge("p.m", "p", 2, False, False)]
    assert find_cycle(runtime_graph(face)) is None  # a package exporting its submodule


def test_no_import_cycle_in_the_package():
    cycle = find_cycle(runtime_graph(edges()))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_every_module_has_a_layer_and_no_import_goes_up():
    table = layers()
    assert table, "docs/architecture.md has no layer table"
    unplaced = [m for m in modules() if layer_of(m, table) is None]
    assert not unplaced, f"modules with no layer in docs/architecture.md: {unplaced}"
    upward = []
    for e in edges():
        src, dst = layer_of(e.source, table), layer_of(e.target, table)
        if e.target == "toolkit" or e.source.startswith(e.target + "."):
            continue
        if src is not None and dst is not None and dst > src:
            upward.append(f"{e.source}:{e.line} imports {e.target} (layer {src} -> {dst})")
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_the_sandbox_never_imports_the_client_or_above():
    bad = [
        f"{e.source}:{e.line} -> {e.target}"
        for e in edges()
        if e.source.startswith("toolkit.sandbox")
        and not e.target.startswith("toolkit.sandbox")
        and e.target not in ("toolkit.spec", "toolkit.errors")
    ]
    assert not bad, bad


def _py_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", _py_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_file_and_function_sizes(path: Path):
    rel = str(path.relative_to(ROOT))
    text = path.read_text(encoding="utf-8")
    n = text.count("\n")
    if rel not in DATA_TABLES:
        assert n <= MAX_FILE_LINES, f"{rel} has {n} lines (at most {MAX_FILE_LINES})"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines, line {node.lineno})"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES  # type: ignore[operator]
    ]
    assert not long, f"{rel}: functions over {MAX_FUNCTION_LINES} lines: {long}"


#: Where a kind's name may stand in code outside spec.py, and why: the sandbox's reference
#: data and price model (they describe the service's world), and names that are not kinds
#: there: the ``country`` column of the countries and search tables, the search's ``country``
#: and ``region`` filter and columns, dictionary types, pandas' ``category`` dtype.
KIND_NAMES_ALLOWED: dict[str, frozenset[str]] = {
    "toolkit/sandbox/refs.py": frozenset({"*"}),
    "toolkit/sandbox/refs_data.py": frozenset({"*"}),
    "toolkit/sandbox/seed_data.py": frozenset({"*"}),
    "toolkit/sandbox/seed_targets.py": frozenset({"*"}),
    "toolkit/sandbox/price.py": frozenset({"*"}),
    "toolkit/sandbox/handlers/account.py": frozenset({"country"}),
    "toolkit/client/account.py": frozenset({"country"}),
    "toolkit/client/checks.py": frozenset({"country", "language_code"}),
    "toolkit/frames/dictionaries.py": frozenset({"country", "region"}),
    "toolkit/frames/schemas.py": frozenset({"country", "region", "category"}),
    "toolkit/frames/prices.py": frozenset({"country"}),
    "toolkit/bulk/call_kinds.py": frozenset({"country"}),
    "toolkit/bulk/workbook.py": frozenset({"country"}),
    "toolkit/bulk/workbook_checks.py": frozenset({"country"}),
    "toolkit/bulk/workbook_layout.py": frozenset({"country"}),
    "toolkit/bulk/actions.py": frozenset({"country"}),
    "toolkit/bulk/actions_templates.py": frozenset({"*"}),  # example rows shown to users
    "toolkit/cli.py": frozenset({"country"}),
}


def kind_names_in_code(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """String constants of ``path`` equal to a kind's name, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in names
        and id(node) not in docs
    ]


def test_no_module_outside_spec_names_a_kind_in_code():
    from toolkit import spec

    names = {n for k in spec.BASE_KINDS for n in (k.name, k.column)}
    names |= {k.codes for k in spec.BASE_KINDS if k.codes}
    found = []
    for path in _py_files():
        rel = str(path.relative_to(ROOT))
        if rel == "toolkit/spec.py":
            continue
        allowed = KIND_NAMES_ALLOWED.get(rel, frozenset())
        if "*" in allowed:
            continue
        found += [
            f"{rel}:{n} {v!r}" for n, v in kind_names_in_code(path, names) if v not in allowed
        ]
    assert not found, "kind names in code (read the kind's row in spec.py):\n" + "\n".join(found)


def test_ruff_and_its_complexity_rule_hold_for_the_package():
    """``ruff check toolkit`` with the project's settings (C901 at 10 among them)."""
    import shutil
    import subprocess
    import sys

    if shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists():
        pytest.skip("ruff is not installed (it comes with the dev extra)")
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "concise", "toolkit"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
