"""Targeting of every kind and the source/subId lists, single-campaign and batch.

One method per operation family with a ``kind`` (or ``list``) drawn from :mod:`toolkit.spec`,
instead of 13 near-identical methods.

>>> client.targeting.add(cid, "os", [1, 2])                              # doctest: +SKIP
>>> client.targeting.add(cid, "country", {"US": 0.05, "CA": 0.04})       # doctest: +SKIP
>>> client.targeting.add_batch(ids, "cidr", ["10.0.0.0/8"], list_type="black")  # doctest: +SKIP
>>> client.lists.add_batch(ids, "subid_black", ["ab12", "cd34"])         # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import checks
from .base import Resource
from .results import BatchResult

Items = Sequence[Any] | Mapping[str, float]


def _check_param(check_exist: bool) -> str | None:
    return None if check_exist else "skip"


class Targeting(Resource):
    """``client.targeting``: category, quality, country, os, browser, ... (spec.TARGET_KINDS)."""

    def _prepare(
        self, kind: str, items: Items, list_type: str | None, campaign_ids: Sequence[int], add: bool
    ) -> tuple[Any, Any, dict[str, Any]]:
        k = checks.kind(kind)
        if k.bids and add and not isinstance(items, Mapping):
            raise checks.ValidationError(
                f"{k.name} items on add map each item to its bid: {{'US': 0.05}}"
            )
        formats = [self._client.known_format(c) for c in campaign_ids]
        values, list_type = checks.target_items(k, items, list_type, formats)
        if not isinstance(values, Mapping):
            values = list(checks._as_list(values))
        extra = {"type": list_type} if k.typed else {}
        return k, values, extra

    def add(
        self, campaign_id: int, kind: str, items: Items, *, list_type: str | None = None
    ) -> dict[str, Any]:
        """Add items of ``kind`` to one campaign (country: a map of code to bid)."""
        k, values, extra = self._prepare(kind, items, list_type, [campaign_id], True)
        return self._call(
            f"target.add.{k.name}", {"id": int(campaign_id), "items": values, **extra}
        )

    def drop(
        self,
        campaign_id: int,
        kind: str,
        items: Items,
        *,
        list_type: str | None = None,
        check_exist: bool = True,
    ) -> dict[str, Any]:
        """Remove items; with ``check_exist=False`` a missing item is not an error."""
        k, values, extra = self._prepare(kind, items, list_type, [campaign_id], False)
        if isinstance(values, Mapping):
            values = list(values)
        params = {
            "id": int(campaign_id),
            "items": values,
            **extra,
            "checkExist": _check_param(check_exist),
        }
        return self._call(f"target.drop.{k.name}", params)

    def add_batch(
        self, campaign_ids: Sequence[int], kind: str, items: Items, *, list_type: str | None = None
    ) -> BatchResult:
        """Add the same items to many campaigns in as few calls as the limits allow."""
        k, values, extra = self._prepare(kind, items, list_type, campaign_ids, True)
        return self._batch(f"target.add_batch.{k.name}", campaign_ids, values, extra)

    def drop_batch(
        self,
        campaign_ids: Sequence[int],
        kind: str,
        items: Items,
        *,
        list_type: str | None = None,
        check_exist: bool = True,
    ) -> BatchResult:
        k, values, extra = self._prepare(kind, items, list_type, campaign_ids, False)
        if isinstance(values, Mapping):
            values = list(values)
        extra = {**extra, "checkExist": _check_param(check_exist)}
        return self._batch(f"target.drop_batch.{k.name}", campaign_ids, values, extra)


class Lists(Resource):
    """``client.lists``: ``source_black``, ``source_white``, ``subid_black``, ``subid_white``."""

    def get(self, campaign_id: int, list: str) -> list[str]:  # noqa: A002
        """The items of one list of a campaign."""
        lk = checks.list_kind(list)
        return self._call(f"list.read.{lk.name}", {"id": int(campaign_id)})["items"]

    def add(self, campaign_id: int, list: str, items: Sequence[Any]) -> dict[str, Any]:  # noqa: A002
        lk = checks.list_kind(list)
        values = checks.list_items(lk, items)
        return self._call(f"list.add.{lk.name}", {"id": int(campaign_id), "items": values})

    def drop(
        self,
        campaign_id: int,
        list: str,
        items: Sequence[Any],
        *,
        check_exist: bool = True,  # noqa: A002
    ) -> dict[str, Any]:
        lk = checks.list_kind(list)
        values = checks.list_items(lk, items)
        params = {"id": int(campaign_id), "items": values, "checkExist": _check_param(check_exist)}
        return self._call(f"list.drop.{lk.name}", params)

    def add_batch(
        self,
        campaign_ids: Sequence[int],
        list: str,
        items: Sequence[Any],  # noqa: A002
    ) -> BatchResult:
        """Add the same items to many campaigns' list (source lists share the single path)."""
        lk = checks.list_kind(list)
        values = checks.list_items(lk, items)
        name, path = _batch_op(lk, "add")
        return self._batch(name, campaign_ids, values, path=path)

    def drop_batch(
        self,
        campaign_ids: Sequence[int],
        list: str,  # noqa: A002
        items: Sequence[Any],
        *,
        check_exist: bool = True,
    ) -> BatchResult:
        lk = checks.list_kind(list)
        values = checks.list_items(lk, items)
        name, path = _batch_op(lk, "drop")
        extra = {"checkExist": _check_param(check_exist)}
        return self._batch(name, campaign_ids, values, extra, path=path)


def _batch_op(lk: Any, action: str) -> tuple[str, str | None]:
    """Operation name and path of a list batch: source lists batch on the single path."""
    if lk.entity == "source":
        return f"list.{action}.{lk.name}", getattr(lk, f"batch_{action}_path")
    return f"list.{action}_batch.{lk.name}", None
