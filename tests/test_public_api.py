"""The public API: ``toolkit.__all__`` is exactly what docs/api.md documents, and every
name of it imports."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import toolkit

API_DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
DOCUMENTED = re.compile(r"^- `([A-Za-z_][A-Za-z0-9_]*)`: \S")


def documented() -> list[str]:
    names = [
        m.group(1) for line in API_DOC.read_text().splitlines() if (m := DOCUMENTED.match(line))
    ]
    assert len(names) == len(set(names)), "a name documented twice"
    return names


def test_all_is_exactly_the_documented_names():
    assert sorted(toolkit.__all__) == sorted(documented())
    assert len(toolkit.__all__) == len(set(toolkit.__all__))


@pytest.mark.parametrize("name", sorted(toolkit.__all__))
def test_every_public_name_imports(name):
    value = getattr(toolkit, name)
    assert value is not None
    if name != "__version__":
        module = toolkit.PUBLIC[name]
        assert value is getattr(sys.modules[module], name)
        assert not isinstance(value, type(sys)), f"toolkit.{name} is a module"


def test_dir_shows_every_public_name():
    assert set(toolkit.__all__) <= set(dir(toolkit))


def test_errors_are_the_tree_of_errors_py():
    from toolkit import errors

    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, toolkit.ToolkitError), name
            assert name in errors.__doc__, f"{name} is missing from the tree in errors.py"
    assert toolkit.WorkbookError is errors.WorkbookError
    assert toolkit.PlanRefused is errors.PlanRefused
    from toolkit.bulk import PlanRefused

    assert PlanRefused is toolkit.PlanRefused


def test_from_import_and_plan_is_the_function():
    from toolkit import Plan, WorkbookError, plan, read_workbook, undo

    assert callable(plan) and callable(undo) and callable(read_workbook)
    assert isinstance(Plan, type) and issubclass(WorkbookError, ValueError)


def test_import_toolkit_leaves_pandas_unloaded():
    code = (
        "import sys, toolkit; toolkit.Client; toolkit.WorkbookError; print('pandas' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_subpackages_are_reached_from_import_toolkit_on_first_use():
    code = (
        "import sys, toolkit; before = 'ipywidgets' in sys.modules; "
        "opened = callable(toolkit.widgets.open); "
        "print(before, opened, 'ipywidgets' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True"]


def test_rules_and_stats_are_reached_from_import_toolkit_as_the_docs_write_them():
    code = (
        "import toolkit; print(callable(toolkit.rules.to_actions), "
        "callable(toolkit.rules.with_outcomes), callable(toolkit.stats.engine.configure))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "True"]


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        toolkit.nope  # noqa: B018


def test_the_workbook_package_gives_exactly_the_names_of_its_book_and_set_book():
    """``toolkit.bulk.workbook`` re-exports :mod:`toolkit.bulk.workbook.book` and the names
    of :mod:`toolkit.bulk.workbook.set_book` it lists lazily, from a list of its own: the
    lists must not drift apart (``export_workbook`` is the one of set_book: an account or a
    set of accounts)."""
    import toolkit.bulk.workbook as package
    from toolkit.bulk.workbook import book, set_book

    of_set = package._OF_SET
    assert of_set <= set(set_book.__all__)
    assert sorted(package.__all__) == sorted(set(book.__all__) | of_set)
    for name in package.__all__:
        origin = set_book if name in of_set else book
        assert getattr(package, name) is getattr(origin, name), name
