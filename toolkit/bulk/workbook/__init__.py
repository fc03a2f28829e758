"""Workbooks: an account as an editable ``.xlsx`` and back, and action workbooks.

>>> from toolkit.bulk.workbook import export_workbook, read_workbook
>>> export_workbook(client, "account.xlsx")                          # doctest: +SKIP
>>> plan = toolkit.plan(client, read_workbook("account.xlsx"))       # doctest: +SKIP

Modules: :mod:`~toolkit.bulk.workbook.book` (export and read as one call each, the read
tables), :mod:`~toolkit.bulk.workbook.layout` (sheets, columns, formats),
:mod:`~toolkit.bulk.workbook.export`, :mod:`~toolkit.bulk.workbook.sheet_xml` (fast sheet
data), :mod:`~toolkit.bulk.workbook.cells` (reading cells), :mod:`~toolkit.bulk.workbook.sheets`
(which sheet holds which table), :mod:`~toolkit.bulk.workbook.sheet_scan` (formulas, merged
cells, percentage formats), :mod:`~toolkit.bulk.workbook.checks`,
:mod:`~toolkit.bulk.workbook.digest`, :mod:`~toolkit.bulk.workbook.account`,
:mod:`~toolkit.bulk.workbook.bid_forms` (relative bids of an account workbook),
:mod:`~toolkit.bulk.workbook.view`; the action workbooks:
:mod:`~toolkit.bulk.workbook.actions`, :mod:`~toolkit.bulk.workbook.action_cells`,
:mod:`~toolkit.bulk.workbook.actions_relative`, :mod:`~toolkit.bulk.workbook.actions_templates`.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .book import (
        COLUMNS,
        EDITABLE,
        KEYS,
        READ_ONLY,
        WorkbookError,
        WorkbookProblem,
        WorkbookTables,
        read_workbook,
    )
    from .set_book import (
        SetWorkbook,
        export_workbook,
        plan_accounts,
        read_set_workbook,
    )

__all__ = [
    "COLUMNS",
    "EDITABLE",
    "KEYS",
    "READ_ONLY",
    "SetWorkbook",
    "WorkbookError",
    "WorkbookProblem",
    "WorkbookTables",
    "export_workbook",
    "plan_accounts",
    "read_set_workbook",
    "read_workbook",
]

#: The names of :mod:`.set_book` (a workbook of several accounts; ``export_workbook``
#: exports one account or a set).
_OF_SET = frozenset({"SetWorkbook", "export_workbook", "plan_accounts", "read_set_workbook"})


def __getattr__(name: str) -> Any:
    """The names of :mod:`.book` and :mod:`.set_book`, loaded on first use: the planner imports
    :mod:`.layout` and :mod:`.account` of this package without its readers and writers."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = ".set_book" if name in _OF_SET else ".book"
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value
