"""The examples in the docstrings of every module of ``toolkit/`` run, one test per module.

Modules are found on disk, so a new module's examples run without being listed here.
Examples marked ``# doctest: +SKIP`` (those that need a live account or a running sandbox)
are counted, not run: ``python tests/test_doctests.py`` prints the counts per module.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import toolkit

FLAGS = doctest.ELLIPSIS


def module_names() -> list[str]:
    names = ["toolkit"]
    for info in pkgutil.walk_packages(toolkit.__path__, prefix="toolkit."):
        names.append(info.name)
    return sorted(names)


def doctests_of(module: ModuleType) -> list[doctest.DocTest]:
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, module.__name__)
    return [t for t in tests if t.examples]


def counts(module: ModuleType) -> tuple[int, int]:
    """``(examples that run, examples skipped)`` in a module's docstrings."""
    run = skipped = 0
    for test in doctests_of(module):
        for example in test.examples:
            if example.options.get(doctest.SKIP):
                skipped += 1
            else:
                run += 1
    return run, skipped


@pytest.mark.parametrize("name", module_names())
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in doctests_of(module):
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()


def test_modules_are_found() -> None:
    names = module_names()
    assert {"toolkit", "toolkit.errors", "toolkit.client.transport", "toolkit.spec"} <= set(names)


def test_importing_every_module_starts_nothing() -> None:
    """Collecting the examples imports every module: no server, thread or sandbox starts."""
    code = (
        "import importlib, threading, toolkit.client.client as c\n"
        "from tests.test_doctests import module_names\n"
        "for name in module_names(): importlib.import_module(name)\n"
        "print(threading.active_count(), c._SANDBOX)\n"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.split() == ["1", "None"], out.stdout + out.stderr


if __name__ == "__main__":  # pragma: no cover
    total_run = total_skipped = 0
    for name in module_names():
        ran, skipped = counts(importlib.import_module(name))
        total_run += ran
        total_skipped += skipped
        if ran or skipped:
            print(f"{name}: {ran} run, {skipped} skipped")
    print(f"total: {total_run} run, {total_skipped} skipped")
