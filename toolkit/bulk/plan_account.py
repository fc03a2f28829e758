"""The check that a plan is applied on the service and account it was made on.

A plan is computed from one account's live state (``plan.account``, the user id its balance
answered; ``plan.service``, the service as a journal names it). Sent with the client of
another account, its calls would change that account from the state of the first: so
:func:`~toolkit.bulk.apply.apply_plan` refuses it in one line before anything is journaled
or sent. The client's user id is the one its last balance answer gave (loading an account
or making a plan reads it), else one read of the balance: applying a plan with the client
that made it costs no request more.

A plan that records no account (made from a snapshot without a balance) or no service (put
together by hand) is applied as before.

>>> check_plan_bound(plan, client)                                    # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import PlanAccountError, ToolkitError
from .journal import service_of

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client


def check_plan_bound(plan: Any, client: Client) -> None:
    """Raise :class:`~toolkit.errors.PlanAccountError` when ``plan`` was made on another
    service or account than ``client``'s. A balance that cannot be read raises the client's
    error (``ApiError``, ``TransportError``) as it is: nothing was sent either way."""
    made = getattr(plan, "service", None)
    if made is not None:
        now = service_of(client)
        if made.rstrip("/") != now.rstrip("/"):
            raise PlanAccountError(made, now, "service")
    account = getattr(plan, "account", None)
    if account is None:
        return
    connected = client.account.user_id()
    if connected is None:
        raise ToolkitError(
            f"the plan was made on account {int(account)}, and the service's balance answers"
            " no user id for this client: cannot tell its account; nothing sent"
        )
    if connected != int(account):
        raise PlanAccountError(int(account), connected)


__all__ = ["check_plan_bound"]
