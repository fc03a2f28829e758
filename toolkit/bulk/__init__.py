"""Bulk edits: the workbook, plans of batch calls, applying them, the journal and undo.

>>> import toolkit
>>> plan = toolkit.plan(client, {"lists": edited_lists})              # doctest: +SKIP
>>> result = plan.apply(client)                                       # doctest: +SKIP
>>> toolkit.undo(client, result.run_id)                               # doctest: +SKIP
>>> toolkit.repair(client, result.run_id)  # finish what faults left  # doctest: +SKIP
"""

from .apply import apply_plan
from .journal import Journal, history, undo
from .outcomes import ApplyResult, Outcome
from .plan import Call, Plan, PlanRefused, make_plan, plan
from .repair import repair

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
    "plan",
    "repair",
    "undo",
]
