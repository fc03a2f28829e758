"""Campaigns: list, detail, create, update, start/pause/archive (single and batch)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import spec
from . import checks
from .base import Resource
from .results import BatchResult

SETTINGS = ("frequency_capping", "url", "note", "vpaid", "placement", "mode")


def _setting(params: dict[str, Any], ad_format: str | None, key: str, value: Any) -> list[str]:
    """Put one campaign setting into ``params``; its problems."""
    problems: list[str] = []
    limit_names = {n: lim for lim in spec.LIMITS.values() for n in (lim.param, lim.alias) if n}
    if key in limit_names:
        lim = limit_names[key]
        if ad_format and ad_format not in lim.formats:
            problems.append(f"{key} is not available for {spec.FORMATS[ad_format].label}")
        if value != "":
            problems += checks.number(key, value, positive=False)
        params[lim.param] = value
    elif key == "allow_proxy":
        params[key] = 1 if value in (True, 1, "1", "yes") else 0
    elif key in ("web_view", "vpaid"):
        params[key] = "yes" if value in (True, 1, "1", "yes") else "no"
    elif key in SETTINGS:
        params[key] = value
    else:
        problems.append(f"unknown campaign setting {key!r}")
    restricted = spec.SETTING_FORMATS.get(key)
    if restricted and ad_format and ad_format not in restricted:
        problems.append(f"{key} is not available for {spec.FORMATS[ad_format].label}")
    return problems


class Campaigns(Resource):
    """``client.campaigns``.

    >>> cid = client.campaigns.create("push", "US push", vertical_id=1,   # doctest: +SKIP
    ...     target={"category": [1], "quality": ["high"], "country": {"US": 0.05}})["id"]
    >>> client.campaigns.start(cid)                                       # doctest: +SKIP
    """

    def list(
        self,
        *,
        status: str | None = None,
        work_status: str | None = None,
        ad_format: str | None = None,
        mode: str | None = None,
        name: str | None = None,
        url: str | None = None,
    ) -> list[dict[str, Any]]:
        """Campaigns of the account, filtered; ``name`` and ``url`` match substrings."""
        params = {
            "status": checks.choice("status", status, [s.lower() for s in spec.CAMPAIGN_STATUSES]),
            "work_status": checks.choice(
                "work_status", work_status, [s.lower() for s in spec.WORK_STATUSES]
            ),
            "ad_format": checks.choice("ad_format", ad_format, spec.FORMAT_CODES),
            "mode": checks.choice("mode", mode, [m.lower() for m in spec.MODES]),
            "name": name,
            "url": url,
        }
        items = self._call("campaign.list", params)["items"]
        for item in items:
            self._client.remember_format(item)
        return items

    def get(self, campaign_id: int, mode: str = "short") -> dict[str, Any]:
        """The detailed view of one campaign in mode ``short``, ``count`` or ``full``."""
        mode = checks.choice("mode", mode, ("short", "count", "full"))
        item = self._call("campaign.item", {"id": int(campaign_id), "mode": mode})["item"]
        self._client.remember_format(item)
        return item

    def create(
        self,
        ad_format: str,
        name: str,
        vertical_id: int,
        *,
        target: Mapping[str, Any] | None = None,
        work_status: str | None = None,
        **settings: Any,
    ) -> dict[str, Any]:
        """Create a campaign; ``settings`` are the interface's parameters.

        ``allow_proxy``, ``web_view`` and ``vpaid`` take booleans; limits take either spelling
        (``limit_sum_day`` or ``limit_day_sum``). Not retried once sent (a repeat could
        create a duplicate).
        """
        ad_format = checks.choice("ad_format", ad_format, spec.FORMAT_CODES)
        params = self._params(ad_format, name, vertical_id, target, work_status, settings)
        params["adFormat"] = ad_format
        item = self._call("campaign.create", params, safe=False)["item"]
        self._client.remember_format(item)
        return item

    def update(
        self,
        campaign_id: int,
        name: str,
        vertical_id: int,
        *,
        target: Mapping[str, Any] | None = None,
        work_status: str | None = None,
        ad_format: str | None = None,
        **settings: Any,
    ) -> dict[str, Any]:
        """Update a campaign; parameters not given stay as they are.

        A limit given as ``None`` is left alone; to clear it pass ``""``.
        """
        ad_format = ad_format or self._client.known_format(campaign_id)
        params = self._params(ad_format, name, vertical_id, target, work_status, settings)
        params["id"] = int(campaign_id)
        return self._call("campaign.update", params)["item"]

    def _params(
        self,
        ad_format: str | None,
        name: str,
        vertical_id: int,
        target: Mapping[str, Any] | None,
        work_status: str | None,
        settings: Mapping[str, Any],
    ) -> dict[str, Any]:
        problems: list[str] = []
        if not str(name).strip():
            problems.append("name must not be empty")
        params: dict[str, Any] = {"name": name, "vertical_id": int(vertical_id)}
        params["work_status"] = checks.choice("work_status", work_status, ("paused", "started"))
        for key, value in settings.items():
            if value is not None:
                problems += _setting(params, ad_format, key, value)
        if target:
            params["target"] = self._target(ad_format, target, problems)
        checks.raise_if(problems)
        return params

    @staticmethod
    def _target(ad_format: str | None, target: Mapping[str, Any], problems: list[str]) -> dict:
        out: dict[str, Any] = {}
        for key, items in target.items():
            if key not in spec.create_target_kinds():
                problems.append(
                    f"target accepts {', '.join(spec.create_target_kinds())}, not {key!r}"
                )
                continue
            kind = spec.TARGET_KINDS[key]
            try:
                checks.target_items(kind, items, None, [ad_format])
            except checks.ValidationError as exc:
                problems += [f"target {key}: {p}" for p in exc.problems]
            out[key] = dict(items) if isinstance(items, Mapping) else list(items)
        return out

    # ------------------------------------------------------------------ work status

    def start(self, campaign_id: int) -> dict[str, Any]:
        return self._call("campaign.start", {"id": int(campaign_id)})

    def pause(self, campaign_id: int) -> dict[str, Any]:
        return self._call("campaign.pause", {"id": int(campaign_id)})

    def archive(self, campaign_id: int) -> dict[str, Any]:
        return self._call("campaign.archive", {"id": int(campaign_id)})

    def start_batch(self, campaign_ids: Sequence[int]) -> BatchResult:
        return self._batch("campaign.start_batch", campaign_ids)

    def pause_batch(self, campaign_ids: Sequence[int]) -> BatchResult:
        return self._batch("campaign.pause_batch", campaign_ids)

    def archive_batch(self, campaign_ids: Sequence[int]) -> BatchResult:
        return self._batch("campaign.archive_batch", campaign_ids)
