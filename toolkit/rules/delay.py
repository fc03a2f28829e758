"""Conversion delay: how much of a click day's conversions a tracker knows some days later.

A postback can arrive days after its click, so an export downloaded today shows the freshest
days short of the conversions they will have. A :class:`Delay` profile says, per age of a
click day (0 = the day itself, 1 = the day after, ...), the cumulative share of its
conversions known by then; ages past the profile are complete (1.0).

>>> d = Delay.parse({0: 0.5, 1: 0.8, 3: 1.0})       # age 2 filled linearly: 0.9
>>> d.shares
(0.5, 0.8, 0.9, 1.0)
>>> d.known([-1, 0, 2, 30]).tolist()
[0.0, 0.5, 0.9, 1.0]
>>> Delay.parse("none") is NO_DELAY
True

:func:`estimate_delay` reads a profile off one export as it was downloaded: each age's pooled
conversions per click over the rate of the days old enough to be complete.
"""

from __future__ import annotations

import datetime as dt
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ValidationError

#: Fewer conversions than this on the complete days and :func:`estimate_delay` says so and
#: assumes no delay.
MIN_MATURE_CONVERSIONS = 30
_EPS = 1e-9  # shares within this of each other are equal


@dataclass(frozen=True)
class Delay:
    """The cumulative share of a click day's conversions known at age 0, 1, 2, ... days
    (non-decreasing, each in [0, 1], the last 1.0; older ages are 1.0). Trailing 1.0s are
    dropped, so equal profiles compare equal.

    >>> Delay((0.6, 1.0, 1.0)) == Delay((0.6, 1.0))
    True
    """

    shares: tuple[float, ...]

    def __post_init__(self) -> None:
        shares = tuple(float(s) for s in self.shares)
        _check(shares, "delay")
        while len(shares) > 1 and shares[-2] >= 1.0:
            shares = shares[:-1]
        object.__setattr__(self, "shares", shares)

    @property
    def days(self) -> int:
        """The first age at which every conversion is known (0: no delay)."""
        return len(self.shares) - 1

    def known(self, age_days: Any) -> np.ndarray:
        """The share known at each age in days (vectorised; a fraction of a day counts as
        the whole days before it; negative ages 0.0, ages past the profile 1.0, NaN stays
        NaN).

        >>> Delay((0.5, 1.0)).known(np.array([0, 1, 5]))
        array([0.5, 1. , 1. ])
        """
        age = np.floor(np.asarray(age_days, dtype=float))
        shares = np.asarray(self.shares, dtype=float)
        index = np.clip(np.nan_to_num(age, nan=0.0), 0, len(shares) - 1).astype(int)
        out = np.where(age < 0, 0.0, shares[index])
        return np.where(np.isnan(age), np.nan, out)

    def __str__(self) -> str:
        if self.days == 0:
            return "no delay"
        shown = ", ".join(f"{age}: {share:.2f}" for age, share in enumerate(self.shares))
        return f"delay {{{shown}}}"

    @classmethod
    def parse(cls, value: Any, where: str = "delay") -> Delay:
        """A profile from ``{age: share}`` (ages in days from 0; missing ages filled
        linearly between their neighbours), a list of shares by age ``[0.55, 0.8, 1.0]``,
        ``"none"`` (or ``None``) for :data:`NO_DELAY`, or a :class:`Delay`. Anything else is a
        :class:`~toolkit.errors.ValidationError` (a ``ValueError``) naming ``where``.

        >>> Delay.parse([0.55, 0.8, 1.0]).known(1).item()
        0.8
        >>> Delay.parse({0: 0.5, 2: 0.9}, where="rule 2, delay")
        Traceback (most recent call last):
        ...
        toolkit.errors.ValidationError: rule 2, delay: the last share is 0.9 at age 2; a \
profile ends at 1.0 (every conversion known), e.g. {0: 0.5, 2: 0.9, 3: 1.0}
        """
        if isinstance(value, Delay):
            return value
        if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
            return NO_DELAY
        if isinstance(value, str):
            hint = (
                "; 'auto' is estimated from an export (estimate_delay)"
                if value.strip().lower() == "auto"
                else ""
            )
            raise ValidationError(
                f"{where}: {value!r} is not a delay profile; give {{age: share}} such as "
                f"{{0: 0.55, 1: 0.8, 3: 0.95, 7: 1.0}}, a list of shares by age, or 'none'{hint}"
            )
        if isinstance(value, Mapping):
            shares = _from_mapping(value, where)
        elif isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
            shares = tuple(_share(v, f"{where}[{i}]") for i, v in enumerate(value))
        else:
            raise ValidationError(
                f"{where}: {value!r} ({type(value).__name__}) is not a delay profile; give "
                "{age: share}, a list of shares by age, or 'none'"
            )
        _check(shares, where, value)
        profile = cls(shares)
        return NO_DELAY if profile.days == 0 else profile


def _share(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValidationError(f"{where}: {value!r} is not a share (a number from 0 to 1)")
    share = float(value)
    if not (math.isfinite(share) and 0.0 <= share <= 1.0):
        raise ValidationError(f"{where}: {value!r} is not a share (a number from 0 to 1)")
    return share


def _age(key: Any, where: str) -> int:
    text = key.strip() if isinstance(key, str) else key
    try:
        age = int(text)
    except (TypeError, ValueError):
        age = None
    if isinstance(key, bool) or age is None or str(age) != str(text) or age < 0:
        raise ValidationError(
            f"{where}: {key!r} is not an age (whole days from 0, the click day itself)"
        )
    return age


def _from_mapping(value: Mapping[Any, Any], where: str) -> tuple[float, ...]:
    points = {}
    for key, share in value.items():
        age = _age(key, where)
        points[age] = _share(share, f"{where}[{age}]")
    if not points:
        raise ValidationError(f"{where}: an empty profile; give 'none' for no delay")
    if 0 not in points:
        raise ValidationError(
            f"{where}: no share at age 0 (the click day itself); give it, e.g. {{0: 0.5, ...}}"
        )
    ages = sorted(points)
    filled = np.interp(np.arange(ages[-1] + 1), ages, [points[a] for a in ages])
    return tuple(float(s) for s in filled)


def _check(shares: tuple[float, ...], where: str, value: Any = None) -> None:
    if not shares:
        raise ValidationError(f"{where}: an empty profile; give 'none' for no delay")
    for age, share in enumerate(shares):
        if not (math.isfinite(share) and 0.0 <= share <= 1.0):
            raise ValidationError(f"{where}: share {share!r} at age {age} is not from 0 to 1")
        if age and share < shares[age - 1] - _EPS:
            raise ValidationError(
                f"{where}: the share falls from {shares[age - 1]:g} at age {age - 1} to "
                f"{share:g} at age {age}; shares are cumulative (never falling)"
            )
    if shares[-1] < 1.0 - _EPS:
        example = ""
        if isinstance(value, Mapping):
            ages = ", ".join(
                f"{k}: {v:g}" for k, v in sorted((int(k), v) for k, v in value.items())
            )
            example = f", e.g. {{{ages}, {len(shares)}: 1.0}}"
        raise ValidationError(
            f"{where}: the last share is {shares[-1]:g} at age {len(shares) - 1}; a profile "
            f"ends at 1.0 (every conversion known){example}"
        )


#: No delay: every conversion is known on its click day.
NO_DELAY = Delay((1.0,))


def _monotone(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The non-decreasing fit of ``values`` closest in weighted squares (pool adjacent
    violators)."""
    blocks: list[list[float]] = []  # [mean, weight, length]
    for v, w in zip(values, weights, strict=True):
        blocks.append([float(v), float(w), 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, n2 = blocks.pop()
            v1, w1, n1 = blocks[-1]
            total = w1 + w2
            mean = (v1 * w1 + v2 * w2) / total if total > 0 else (v1 + v2) / 2.0
            blocks[-1] = [mean, total, n1 + n2]
    return np.concatenate([np.full(int(n), v) for v, _, n in blocks])


def _ages(daily: pd.DataFrame, as_of: dt.date) -> np.ndarray:
    if "day" in daily:
        days = pd.to_datetime(pd.Series(daily["day"]).astype(str))
    elif "date" in daily:
        days = pd.to_datetime(daily["date"], utc=True).dt.tz_localize(None)
    else:
        raise ValidationError("estimate_delay: the statistics have no 'date' (or 'day') column")
    if days.isna().any():
        raise ValidationError("estimate_delay: some statistics rows have no date")
    return (pd.Timestamp(as_of) - days.dt.floor("D")).dt.days.to_numpy()


def estimate_delay(
    daily: pd.DataFrame, as_of: dt.date, max_age: int = 14, fallback: Delay | None = None
) -> Delay:
    """The delay profile of ONE export as it was downloaded on ``as_of`` (its freshest days
    still missing conversions): each age's pooled conversions per click over the rate of
    the mature days (older than ``max_age``), made non-decreasing (weighted by clicks),
    capped at 1, complete at ``max_age``. ``daily``: a stats frame (``date``) or
    :func:`~toolkit.rules.backtest.daily_stats` (``day``), with ``clicks`` and
    ``conversions``. Too little to go on (no mature day, fewer than
    :data:`MIN_MATURE_CONVERSIONS` conversions on them, no clicks at some young age): a
    warning saying why, and ``fallback`` (:data:`NO_DELAY` when not given).

    The pooled rate assumes the mix of traffic is alike on young and mature days; a
    campaign that started in the last ``max_age`` days or a rate that drifts shows as
    delay (or its absence).
    """
    if int(max_age) != max_age or max_age < 1:
        raise ValidationError(f"estimate_delay: max_age {max_age!r} is not a whole number >= 1")
    as_of = pd.Timestamp(as_of).date()
    for col in ("clicks", "conversions"):
        if col not in daily:
            raise ValidationError(f"estimate_delay: the statistics have no {col!r} column")
    age = _ages(daily, as_of)
    clicks = daily["clicks"].to_numpy(dtype=float)
    conv = daily["conversions"].to_numpy(dtype=float)
    keep = (age >= 0) & np.isfinite(clicks) & np.isfinite(conv)
    age, clicks, conv = age[keep], np.nan_to_num(clicks[keep]), np.nan_to_num(conv[keep])
    mature = age > max_age
    why = None
    if not mature.any():
        why = (
            f"no day is older than max_age={max_age} days on {as_of}; give a longer export or a "
            "smaller max_age"
        )
    elif conv[mature].sum() < MIN_MATURE_CONVERSIONS:
        why = (
            f"{conv[mature].sum():g} conversions on the days older than {max_age} days "
            f"(fewer than {MIN_MATURE_CONVERSIONS})"
        )
    n = np.bincount(age[~mature], weights=clicks[~mature], minlength=max_age + 1)
    c = np.bincount(age[~mature], weights=conv[~mature], minlength=max_age + 1)
    if why is None and (n <= 0).any():
        why = f"no clicks at age {int(np.argmax(n <= 0))} days"
    if why is not None:
        fallback = NO_DELAY if fallback is None else fallback
        warnings.warn(f"estimate_delay: {why}; assuming {fallback}", UserWarning, stacklevel=2)
        return fallback
    rate = conv[mature].sum() / clicks[mature].sum()
    shares = _monotone(c / n / rate, n)
    shares = np.minimum(shares, 1.0)
    shares[-1] = 1.0
    return Delay(tuple(float(s) for s in shares))


__all__ = ["NO_DELAY", "Delay", "estimate_delay"]
