"""Where a bid stands between the minimum and the recommended price, and the traffic it buys.

A bid ``b`` against the minimum ``m`` and the recommended price ``r`` (same unit):

- ``position = (b - m) / (r - m)``: 0 at the minimum, 1 at the recommended price (NaN when
  ``r == m``);
- ``zone``, checked in this order:

  0. ``no traffic``: the service estimates no traffic at either price (``Tm == Tr == 0``):
     the campaign's targeting (a region or language) excludes the country, and no bid
     buys anything there. Such a row is never proposed;
  1. ``below minimum``: ``b < m``;
  2. ``overpaying``: ``b > overpay * r`` (``overpay`` is a ratio, 1.5 by default);
  3. ``at recommended``: ``|b - r| <= tolerance * r`` (``tolerance`` 0.02: within 2%);
  4. ``above recommended``: ``b > r``;
  5. ``between``: the rest (``m <= b < r``, not within the tolerance of ``r``).

  The boundaries belong to the kinder zone: a bid exactly at the minimum is ``between``, one
  exactly at ``(1 ± tolerance) * r`` is ``at recommended``, one exactly at ``overpay * r`` is
  ``above recommended``.

- ``traffic_at``: an **estimate** of the daily traffic at the bid, from the two points the
  service gives, ``(m, Tm)`` and ``(r, Tr)``: 0 below the minimum; linear from ``Tm`` to ``Tr``
  between them; above ``r`` a saturating curve that leaves ``r`` with the same slope
  ``s = (Tr - Tm) / (r - m)`` and never gains more than ``GAIN`` (one half) of ``Tr - Tm``::

      T(b) = Tr + GAIN * (Tr - Tm) * (1 - exp(-(b - r) / (GAIN * (r - m))))

  (when ``r == m``: ``Tr`` from the minimum up).

>>> zone(0.10, 0.10, 0.20), zone(0.0999, 0.10, 0.20), zone(0.196, 0.10, 0.20)
('between', 'below minimum', 'at recommended')
>>> zone(0.30, 0.10, 0.20), zone(0.3001, 0.10, 0.20)
('above recommended', 'overpaying')
>>> zone(0.30, 0.10, 0.20, traffic=(0, 0)), zone(0.30, 0.10, 0.20, traffic=(0, 5))
('no traffic', 'above recommended')
>>> round(traffic_at(0.15, 0.10, 0.20, 100, 300), 6)
200.0
>>> traffic_at(0.05, 0.10, 0.20, 100, 300), traffic_at(0.20, 0.10, 0.20, 100, 300)
(0.0, 300.0)
>>> 300 < traffic_at(10.0, 0.10, 0.20, 100, 300) <= 400
True
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

#: The zones: ``no traffic`` (the targeting excludes the country, whatever the bid), then
#: in order from the lowest bid to the highest.
ZONES: tuple[str, ...] = (
    "no traffic",
    "below minimum",
    "between",
    "at recommended",
    "above recommended",
    "overpaying",
)
NO_TRAFFIC, BELOW, BETWEEN, AT, ABOVE, OVERPAYING = ZONES
ZONE_DTYPE = pd.CategoricalDtype(list(ZONES), ordered=True)
#: Default ratio over the recommended price past which a bid is overpaying.
DEFAULT_OVERPAY = 1.5
#: Default share of the recommended price within which a bid is at it.
DEFAULT_TOLERANCE = 0.02
#: How much traffic a bid above the recommended price may still win, as a share of the
#: traffic gained from the minimum to the recommended price.
GAIN = 0.5
#: Slack of the float comparisons (prices have 4 decimals).
EPS = 1e-9


def check_bounds(overpay: float, tolerance: float) -> None:
    if not 0 <= tolerance < 1:
        raise ValueError(f"tolerance must be from 0 to 1 (0.02 is 2%), got {tolerance!r}")
    if not overpay > 1 + tolerance:
        raise ValueError(
            f"overpay is a ratio over the recommended price, more than 1 + tolerance "
            f"({1 + tolerance:g}); got {overpay!r}"
        )


def zone(
    bid: float,
    minimum: float,
    recommended: float,
    overpay: float = DEFAULT_OVERPAY,
    tolerance: float = DEFAULT_TOLERANCE,
    traffic: tuple[object, object] | None = None,
) -> str | None:
    """The zone of a bid (None when a number is missing); ``traffic``, the estimated traffic
    at the minimum and at the recommended price, both 0: ``no traffic``."""
    if no_traffic(*(traffic or (None, None))):
        return NO_TRAFFIC
    if any(_missing(v) for v in (bid, minimum, recommended)):
        return None
    if bid < minimum - EPS:
        return BELOW
    if bid > overpay * recommended + EPS:
        return OVERPAYING
    if abs(bid - recommended) <= tolerance * recommended + EPS:
        return AT
    if bid > recommended:
        return ABOVE
    return BETWEEN


def no_traffic(minimum_traffic: object, recommended_traffic: object) -> bool:
    """True when the service estimates no traffic at either price (both exactly 0): the
    campaign's targeting excludes the country."""
    if _missing(minimum_traffic) or _missing(recommended_traffic):
        return False
    return float(minimum_traffic) == 0 and float(recommended_traffic) == 0  # type: ignore[arg-type]


def position(bid: float, minimum: float, recommended: float) -> float:
    """``(bid - minimum) / (recommended - minimum)``; NaN when the two prices are equal."""
    if any(_missing(v) for v in (bid, minimum, recommended)) or recommended == minimum:
        return math.nan
    return (bid - minimum) / (recommended - minimum)


def traffic_at(bid: float, minimum: float, recommended: float, low: float, high: float) -> float:
    """Estimated daily traffic at ``bid`` from ``(minimum, low)`` and ``(recommended,
    high)``; see the module's text for the curve. NaN when a number is missing."""
    if any(_missing(v) for v in (bid, minimum, recommended, low, high)):
        return math.nan
    if bid < minimum - EPS:
        return 0.0
    span = recommended - minimum
    if span <= 0:
        return float(high)
    if bid <= recommended:
        return float(low + (high - low) * max(bid - minimum, 0.0) / span)
    scale = GAIN * span
    return float(high + GAIN * (high - low) * (1 - math.exp(-(bid - recommended) / scale)))


def zones(
    frame: pd.DataFrame, overpay: float, tolerance: float, comparable: pd.Series
) -> pd.DataFrame:
    """``position``, ``zone``, the gaps and ``traffic_estimate`` of a frame with ``bid``,
    ``minimum``, ``recommended``, ``minimum_traffic`` and ``recommended_traffic``; rows
    not ``comparable`` get NaN and NA, except the zone ``no traffic`` (0 traffic at both
    prices, whatever the unit)."""
    rows = zip(
        frame["bid"],
        frame["minimum"],
        frame["recommended"],
        frame["minimum_traffic"].astype("float64"),
        frame["recommended_traffic"].astype("float64"),
        comparable,
        strict=True,
    )
    out: dict[str, list[object]] = {k: [] for k in ("position", "zone", "traffic_estimate")}
    for b, m, r, lo, hi, ok in rows:
        out["position"].append(position(b, m, r) if ok else math.nan)
        none = NO_TRAFFIC if no_traffic(lo, hi) else None
        out["zone"].append(zone(b, m, r, overpay, tolerance, (lo, hi)) if ok else none)
        out["traffic_estimate"].append(
            traffic_at(b, m, r, lo, hi) if ok else 0.0 if none else math.nan
        )
    keep = np.asarray(comparable, dtype=bool)
    bid = frame["bid"].to_numpy(dtype="float64")
    result = pd.DataFrame(index=frame.index)
    result["position"] = np.asarray(out["position"], dtype="float64")
    result["zone"] = pd.Series(out["zone"], index=frame.index, dtype=object).astype(ZONE_DTYPE)
    for name in ("minimum", "recommended"):
        price = frame[name].to_numpy(dtype="float64")
        gap = np.where(keep, bid - price, np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            pct = np.where(keep & (price > 0), gap / price * 100.0, np.nan)
        result[f"gap_{name}"] = gap
        result[f"gap_{name}_pct"] = pct
    result["traffic_estimate"] = np.asarray(out["traffic_estimate"], dtype="float64")
    return result


def traffic_of(frame: pd.DataFrame, bid: object) -> np.ndarray:
    """Impressions a day at ``bid`` (a number, or one per row) on each row's curve
    (:func:`traffic_at`) of a report frame; NaN for a row that is not comparable."""
    bids = np.broadcast_to(np.asarray(bid, float), len(frame))
    rows = zip(
        bids,
        frame["minimum"],
        frame["recommended"],
        frame["minimum_traffic"].astype("float64"),
        frame["recommended_traffic"].astype("float64"),
        frame["comparable"].astype(bool),
        strict=True,
    )
    return np.array(
        [traffic_at(x, m, r, lo, hi) if ok else math.nan for x, m, r, lo, hi, ok in rows],
        dtype=float,
    )


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


__all__ = [
    "DEFAULT_OVERPAY",
    "DEFAULT_TOLERANCE",
    "GAIN",
    "ZONES",
    "ZONE_DTYPE",
    "NO_TRAFFIC",
    "check_bounds",
    "no_traffic",
    "position",
    "traffic_at",
    "traffic_of",
    "zone",
    "zones",
]
