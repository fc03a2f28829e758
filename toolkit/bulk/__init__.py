"""Bulk edits: the workbook, plans of batch calls, applying them, the journal and undo.

>>> from toolkit.bulk import make_plan, undo, repair
>>> plan = make_plan(client, {"lists": edited_lists})                 # doctest: +SKIP
>>> result = plan.apply(client)                                       # doctest: +SKIP
>>> undo(client, result.run_id)                                       # doctest: +SKIP
>>> repair(client, result.run_id)  # finish what faults left          # doctest: +SKIP

Modules, bottom up: :mod:`~toolkit.bulk.calls` (a plan's calls),
:mod:`~toolkit.bulk.call_kinds` (per call target: build, send, invert, read back),
:mod:`~toolkit.bulk.outcomes`, :mod:`~toolkit.bulk.journal` (stores and reads runs),
:mod:`~toolkit.bulk.read_back`, :mod:`~toolkit.bulk.apply`, :mod:`~toolkit.bulk.plan`
(the planner, ``toolkit.plan``: :mod:`~toolkit.bulk.plan_scope`, then
:mod:`~toolkit.bulk.plan_diff`, then :mod:`~toolkit.bulk.plan_build`),
:mod:`~toolkit.bulk.undo` and :mod:`~toolkit.bulk.repair`. The account and action workbooks
sit above them, in :mod:`toolkit.bulk.workbook`.
"""

from ..errors import PlanRefused
from .apply import apply_plan
from .calls import Call
from .journal import Journal
from .outcomes import ApplyResult, Outcome
from .plan import Plan, make_plan
from .repair import repair
from .run_counts import history
from .undo import undo

__all__ = [
    "ApplyResult",
    "Call",
    "Journal",
    "Outcome",
    "Plan",
    "PlanRefused",
    "apply_plan",
    "history",
    "make_plan",
    "repair",
    "undo",
]
