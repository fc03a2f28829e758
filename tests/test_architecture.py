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
    assert ("toolkit.bulk.plan_scope", "toolkit.spec") in found  # from .. import spec


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
    upward = imports_up(edges(), table)
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def imports_up(all_edges: list[Edge], table: dict[str, int]) -> list[str]:
    """The imports of ``all_edges`` that go up the layers of ``table``."""
    upward = []
    for e in all_edges:
        src, dst = layer_of(e.source, table), layer_of(e.target, table)
        if e.target == "toolkit" or e.source.startswith(e.target + "."):
            continue
        if src is not None and dst is not None and dst > src:
            upward.append(f"{e.source}:{e.line} imports {e.target} (layer {src} -> {dst})")
    return upward


def test_the_workbook_sits_above_the_planner_which_reads_only_its_layout_and_account():
    """``bulk/workbook/`` hands its tables to the planner and imports the rest of ``bulk/``;
    of the workbook, the planner may import only ``layout`` and ``account``."""
    table = layers()
    room, core = "toolkit.bulk.workbook", "toolkit.bulk.plan"
    assert layer_of(f"{room}.book", table) == layer_of(core, table) + 1  # type: ignore[operator]
    assert layer_of("toolkit.rules", table) > layer_of(f"{room}.actions", table)  # type: ignore[operator]
    planted = [Edge(core, f"{room}.{m}", 1, False, False) for m in ("layout", "account", "book")]
    planted += [Edge(f"{room}.actions", core, 2, True, False)]
    planted += [Edge(f"{room}.actions", "toolkit.rules.model", 3, False, False)]
    assert imports_up(planted, table) == [
        f"{core}:1 imports {room}.book (layer 5 -> 6)",
        f"{room}.actions:3 imports toolkit.rules.model (layer 6 -> 7)",
    ]


#: The planner's steps, in the order ``make_plan`` takes them (docs/architecture.md): what
#: the desired tables cover, what changes, the calls. No module of a step imports a module
#: of another step (the data goes one way, through ``plan.py`` and the lower modules).
PLANNER_STEPS: dict[str, frozenset[str]] = {
    "scope": frozenset({"toolkit.bulk.plan_scope", "toolkit.bulk.changed_rows"}),
    "diff": frozenset({"toolkit.bulk.plan_diff", "toolkit.bulk.diff"}),
    "build": frozenset({"toolkit.bulk.plan_build", "toolkit.bulk.plan_records"}),
}
#: What two steps share, below every step: it imports none of them.
PLANNER_SHARED = frozenset(
    {"toolkit.bulk.diff_types", "toolkit.bulk.key_codes", "toolkit.bulk.record_fields"}
)


def step_crossings(all_edges: list[Edge], steps: dict[str, frozenset[str]]) -> list[str]:
    """The imports from a module of one step to a module of another."""
    step_of = {m: step for step, mods in steps.items() for m in mods}
    return [
        f"{e.source}:{e.line} ({step_of[e.source]}) imports {e.target} ({step_of[e.target]})"
        for e in all_edges
        if e.source in step_of and e.target in step_of and step_of[e.source] != step_of[e.target]
    ]


def steps_called(path: Path, function: str, steps: dict[str, frozenset[str]]) -> list[str]:
    """The steps whose functions ``function`` of ``path`` calls, in the order of the lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    mod = module_name(path)
    step_of = {m: step for step, mods in steps.items() for m in mods}
    names = {
        alias.asname or alias.name: step_of[target]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for target in _resolve(mod, False, node, set(step_of))
        for alias in node.names
    }
    body = next(n for n in ast.walk(tree) if getattr(n, "name", None) == function)
    calls = sorted(
        (n.lineno, names[n.func.id])
        for n in ast.walk(body)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
    )
    return [step for _, step in calls]


def test_the_planner_steps_go_one_way():
    known = modules()
    assert all(m in known for mods in (*PLANNER_STEPS.values(), PLANNER_SHARED) for m in mods)
    found = edges()
    assert step_crossings(found, PLANNER_STEPS) == []
    steps = frozenset().union(*PLANNER_STEPS.values())
    assert [e for e in found if e.source in PLANNER_SHARED and e.target in steps] == []
    planted = [Edge("toolkit.bulk.plan_diff", "toolkit.bulk.plan_scope", 1, False, False)]
    assert step_crossings(planted, PLANNER_STEPS)  # the check sees a wrong-way import
    order = steps_called(known["toolkit.bulk.plan"], "make_plan", PLANNER_STEPS)
    assert order == sorted(order, key=list(PLANNER_STEPS).index), order
    assert set(order) == set(PLANNER_STEPS), order


def test_the_sandbox_never_imports_the_client_or_above():
    bad = [
        f"{e.source}:{e.line} -> {e.target}"
        for e in edges()
        if e.source.startswith("toolkit.sandbox")
        and not e.target.startswith("toolkit.sandbox")
        and e.target not in ("toolkit.spec", "toolkit.errors", "toolkit.wal")
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
    "toolkit/bulk/workbook/book.py": frozenset({"country"}),
    "toolkit/bulk/workbook/checks.py": frozenset({"country"}),
    "toolkit/bulk/workbook/layout.py": frozenset({"country"}),
    "toolkit/bulk/workbook/actions.py": frozenset({"country"}),
    "toolkit/bulk/workbook/actions_templates.py": frozenset({"*"}),  # example rows shown to users
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
