"""campaign-toolkit: manage push, popunder, in-page and video ad campaigns in bulk.

>>> import toolkit
>>> client = toolkit.connect()    # no key configured: the built-in sandbox   # doctest: +SKIP
>>> account = toolkit.load_account(client)    # every table as DataFrames    # doctest: +SKIP

The local sandbox of the service is :class:`toolkit.sandbox.Sandbox`.
"""

from typing import TYPE_CHECKING

from .client import BatchResult, Client, connect
from .errors import (
    ApiError,
    AuthError,
    ConfigError,
    NotFoundError,
    RateLimitError,
    ToolkitError,
    TransportError,
    ValidationError,
)

if TYPE_CHECKING:  # pragma: no cover
    from .bulk import Plan, PlanRefused, history, plan, repair, undo
    from .bulk.workbook import export_workbook, read_workbook
    from .frames import Account, load_account

__version__ = "0.1.0"
__all__ = [
    "Account",
    "ApiError",
    "AuthError",
    "BatchResult",
    "Client",
    "ConfigError",
    "NotFoundError",
    "Plan",
    "PlanRefused",
    "RateLimitError",
    "ToolkitError",
    "TransportError",
    "ValidationError",
    "__version__",
    "connect",
    "export_workbook",
    "history",
    "load_account",
    "plan",
    "read_workbook",
    "repair",
    "undo",
]

_LAZY = {
    "Account": "frames",
    "load_account": "frames",
    "Plan": "bulk",
    "PlanRefused": "bulk",
    "plan": "bulk",
    "undo": "bulk",
    "repair": "bulk",
    "history": "bulk",
    "export_workbook": "bulk.workbook",
    "read_workbook": "bulk.workbook",
}


def __getattr__(name: str) -> object:
    """The loaders and the bulk layer import pandas: loaded on first use, so that
    ``import toolkit`` (and the command line) stays quick."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
