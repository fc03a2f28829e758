"""campaign-toolkit: manage push, popunder, in-page and video ad campaigns in bulk.

>>> import toolkit
>>> client = toolkit.connect()    # no key configured: the built-in sandbox   # doctest: +SKIP
>>> account = toolkit.load_account(client)    # every table as DataFrames    # doctest: +SKIP

The public names (``toolkit.__all__``, described in docs/api.md) come from one table,
:data:`PUBLIC`: each name and the module that defines it. The client and the errors are
imported with ``toolkit``; the loaders and the bulk layer, which import pandas, on first use,
so that ``import toolkit`` (and the command line) stays quick.

>>> toolkit.WorkbookError.__module__, "plan" in toolkit.__all__
('toolkit.errors', True)

The local sandbox of the service is :class:`toolkit.sandbox.Sandbox`.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: Every public name -> the module it is taken from.
PUBLIC: dict[str, str] = {
    # the client
    "BatchResult": "toolkit.client",
    "Client": "toolkit.client",
    "connect": "toolkit.client",
    "profiles": "toolkit.client",
    # errors
    "AccountMismatchError": "toolkit.errors",
    "ApiError": "toolkit.errors",
    "AuthError": "toolkit.errors",
    "ConfigError": "toolkit.errors",
    "IncompleteReadError": "toolkit.errors",
    "MalformedAnswerError": "toolkit.errors",
    "NotFoundError": "toolkit.errors",
    "PlanAccountError": "toolkit.errors",
    "PlanRefused": "toolkit.errors",
    "RateLimitError": "toolkit.errors",
    "SnapshotError": "toolkit.errors",
    "StatsError": "toolkit.errors",
    "RulesError": "toolkit.errors",
    "RuleProblem": "toolkit.errors",
    "StatsProblem": "toolkit.errors",
    "ToolkitError": "toolkit.errors",
    "TransportError": "toolkit.errors",
    "ValidationError": "toolkit.errors",
    "WorkbookError": "toolkit.errors",
    "WorkbookProblem": "toolkit.errors",
    # loading an account (pandas)
    "Account": "toolkit.frames",
    "AccountSet": "toolkit.frames",
    "load_account": "toolkit.frames",
    "load_accounts": "toolkit.frames",
    # bulk edits (pandas)
    "Plan": "toolkit.bulk",
    "plan": "toolkit.bulk.plan",
    "history": "toolkit.bulk",
    "repair": "toolkit.bulk",
    "undo": "toolkit.bulk",
    "export_workbook": "toolkit.bulk.workbook",
    "read_workbook": "toolkit.bulk.workbook",
    # several accounts at once (pandas)
    "PlanSet": "toolkit.bulk.plan_set",
    "plan_accounts": "toolkit.bulk.workbook",
    "read_set_workbook": "toolkit.bulk.workbook",
    "undo_set": "toolkit.bulk.undo_set",
    "repair_set": "toolkit.bulk.undo_set",
    # tracker statistics (pandas)
    "read_stats": "toolkit.stats",
    "load_rules": "toolkit.rules",
    "evaluate_rules": "toolkit.rules",
    "evaluate_rules_set": "toolkit.rules",
    "backtest": "toolkit.rules",
    # bid reports (pandas)
    "BidReport": "toolkit.reports",
    "SetReport": "toolkit.reports",
    "bid_report": "toolkit.reports",
    "price_history": "toolkit.reports",
}

#: Modules whose public names are imported with ``toolkit`` (they do not import pandas).
EAGER: frozenset[str] = frozenset({"toolkit.client", "toolkit.errors"})

__all__ = sorted(PUBLIC) + ["__version__"]

#: Subpackages reachable as attributes once ``toolkit`` is imported (``toolkit.widgets.open``),
#: imported on first use: the forms need ipywidgets, the reports matplotlib.
SUBPACKAGES: frozenset[str] = frozenset(
    {"widgets", "reports", "sandbox", "bulk", "frames", "stats", "rules"}
)


def _load(name: str) -> Any:
    return getattr(importlib.import_module(PUBLIC[name]), name)


globals().update({name: _load(name) for name, module in PUBLIC.items() if module in EAGER})

# in a notebook, log lines and the toolkit's warnings are the cell's output, not stderr
from .notebook_output import install as _notebook_output  # noqa: E402

_notebook_output()


def __getattr__(name: str) -> Any:
    """A public name of a module loaded on first use (see :data:`PUBLIC`)."""
    if name in PUBLIC:
        value = _load(name)
        globals()[name] = value
        return value
    if name in SUBPACKAGES:
        return importlib.import_module(f"toolkit.{name}")
    raise AttributeError(f"module 'toolkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
