"""Account-wide operations: balance, dictionaries, search, price estimates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import spec
from . import checks
from .base import Resource


class Account(Resource):
    """``client.account``.

    >>> client.account.balance()                                          # doctest: +SKIP
    {'user_id': 1001, 'currency': 'USD', 'balance': 1234.5}
    >>> client.account.price("push", country=["US"], quality=["high"])    # doctest: +SKIP
    """

    #: The transport (its key) and the user id its last balance answer gave.
    _known: tuple[object, int] | None = None

    def balance(self) -> dict[str, Any]:
        """The account's balance, currency and user id; the user id is kept (see
        :meth:`user_id`)."""
        answer = self._call("account.balance")
        found = answer.get("user_id") if isinstance(answer, dict) else None
        if isinstance(found, int) or (isinstance(found, str) and found.isdigit()):
            self._known = (self._client.transport, int(found))
        return answer

    def user_id(self) -> int | None:
        """The user id of the account this client's key belongs to: the one the last balance
        answer of this client gave (loading an account or making a plan reads it), else one
        read of the balance; None when the service answers none. The kept value belongs to
        the client's transport (its key): a client given another transport reads again.

        >>> client.account.user_id()                                          # doctest: +SKIP
        1001
        """
        known = self._known
        if known is None or known[0] is not self._client.transport:
            self._known = None
            self.balance()
            known = self._known
        return None if known is None else known[1]

    def dictionaries(self, type: str | None = None) -> dict[str, Any]:  # noqa: A002
        """Every dictionary (or one), keyed by type."""
        kind = checks.choice("type", type, spec.DICTIONARY_TYPES)
        answer = self._call("account.dictionaries", {"type": kind})
        return {k: v for k, v in answer.items() if k != "status"}

    def dictionary(self, type: str) -> dict[str, Any]:  # noqa: A002
        """One dictionary: id -> label (``category``: format group -> id -> name)."""
        kind = checks.choice("type", type, spec.DICTIONARY_TYPES)
        return self.dictionaries(kind)[kind]

    def search(
        self,
        type: str,  # noqa: A002
        text: str,
        *,
        country: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> dict[str, str]:
        """Cities, regions or mobile ISPs whose name contains ``text``: id -> label."""
        kind = checks.choice("type", type, spec.search_types())
        problems = []
        if len(text.strip()) < spec.SEARCH_MIN_CHARS:
            problems.append(f"search text needs at least {spec.SEARCH_MIN_CHARS} characters")
        if limit is not None and not 1 <= int(limit) <= spec.SEARCH_LIMIT_MAX:
            problems.append(f"limit must be from 1 to {spec.SEARCH_LIMIT_MAX}, got {limit}")
        filtered = spec.search_country_filter()
        if country and kind not in filtered:
            problems.append(f"country filters only {', '.join(sorted(filtered))}")
        if country:
            k = spec.bid_kind()
            for code in country:
                problems += checks.item_problems(k, code)
        checks.raise_if(problems)
        params = {
            "type": kind,
            "search": text,
            "country": list(country or []) or None,
            "limit": limit,
        }
        return self._call("account.search", params)

    def price(self, ad_format: str, **targeting: Sequence[Any]) -> dict[str, Any]:
        """Minimum and recommended bid with estimated traffic for a targeting.

        Keywords are the price parameters (``country``, ``quality``, ``os``, ``subsAge``, ...);
        target kind names work too (``subs_age``, ``isp_mobile``).
        """
        ad_format = checks.choice("ad_format", ad_format, spec.FORMAT_CODES)
        by_name = {k.price_param: k for k in spec.TARGET_KINDS.values() if k.price_param}
        by_name.update({k.column: k for k in spec.TARGET_KINDS.values() if k.price_param})
        params: dict[str, Any] = {"adFormat": ad_format}
        problems: list[str] = []
        for name, values in targeting.items():
            kind = by_name.get(name)
            if kind is None:
                problems.append(
                    f"unknown price parameter {name!r}; use {', '.join(spec.price_params())}"
                )
                continue
            if values is None:
                continue
            try:
                checks.target_items(kind, values, None, [ad_format])
            except checks.ValidationError as exc:
                problems += [f"{name}: {p}" for p in exc.problems]
            params[kind.price_param] = list(checks._as_list(values))
        checks.raise_if(problems)
        return self._call("account.price", params)["price"]
