"""What the views and the sender of ``bulk/`` read of a plan, a run's result and a read
workbook: protocols, so that :mod:`~toolkit.bulk.preview`, :mod:`~toolkit.bulk.apply`,
:mod:`~toolkit.bulk.result_book` and :mod:`~toolkit.bulk.workbook.view` need not import the
modules whose classes (:class:`~toolkit.bulk.plan.Plan`,
:class:`~toolkit.bulk.outcomes.ApplyResult`, :class:`~toolkit.bulk.workbook.WorkbookTables`)
call them: the imports go one way, even for a type checker.

>>> from toolkit.bulk.plan import Plan
>>> isinstance(Plan([], None, [], ()), PlanLike)
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pandas as pd

from .calls import Call
from .edits import Edit


@runtime_checkable
class PlanLike(Protocol):
    """A plan as its preview and its sender read it (:class:`~toolkit.bulk.plan.Plan`)."""

    calls: list[Call]
    conflicts: pd.DataFrame
    warnings: list[str]
    names: Mapping[int, str]
    prefer: str | None
    purpose: str
    reasons: Mapping[tuple[int, str, str], str]
    written: Mapping[Any, str]

    def edits(self) -> Sequence[Edit]: ...

    def changes(self) -> pd.DataFrame: ...

    def summary(self) -> str: ...


class OutcomeLike(Protocol):
    """One item's outcome as the result workbook reads it
    (:class:`~toolkit.bulk.outcomes.Outcome`)."""

    seq: int
    step: str
    action: str
    target: str
    list_type: str | None
    campaign_id: int
    item: Any
    bid: float | None
    outcome: str
    message: str | None
    previous: Any


class ResultLike(Protocol):
    """A run's result as its views read it (:class:`~toolkit.bulk.outcomes.ApplyResult`)."""

    outcomes: Sequence[OutcomeLike]
    differences: Sequence[str]

    def to_frame(self) -> pd.DataFrame: ...

    def summary(self) -> str: ...


class TablesLike(Protocol):
    """A read workbook as its view reads it (:class:`~toolkit.bulk.workbook.WorkbookTables`)."""

    desired: Mapping[str, pd.DataFrame]
    base: Mapping[str, pd.DataFrame]
    missing: set[str] | frozenset[str]
    sheets: Mapping[str, list[str]]
    path: Path
    meta: Mapping[str, Any]
    has_base: bool
    ignored: Sequence[str]


__all__ = ["OutcomeLike", "PlanLike", "ResultLike", "TablesLike"]
