"""The benchmarks' independent statistics generator (``tests/benchmarks/truth_gen.py``),
loaded as a module for the tests that draw statistics with a known truth from it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parent / "benchmarks" / "truth_gen.py"
_spec = importlib.util.spec_from_file_location("truth_gen", _PATH)
assert _spec is not None and _spec.loader is not None
truth_gen = sys.modules.get("truth_gen") or importlib.util.module_from_spec(_spec)
if "truth_gen" not in sys.modules:
    sys.modules["truth_gen"] = truth_gen
    _spec.loader.exec_module(truth_gen)

__all__ = ["truth_gen"]
