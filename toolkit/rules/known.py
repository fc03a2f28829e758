"""What a tracker knew on each day: an export's conversions and revenue as they stood on an
earlier day, under a conversion delay profile (a simulation, not a record).

An export downloaded on day ``L`` shows click day ``c``'s conversions known by then; under a
:class:`~toolkit.rules.delay.Delay` profile they are the share ``known(L - c)`` of the final
ones. On an earlier day ``d`` a part of them was known: each conversion is given an arrival
lag drawn from the profile (given that it had arrived by ``L``), with a fixed seed, so a
conversion known on ``d`` stays known later and every rule set replayed on the same
:class:`Known` sees the same conversions. Revenue follows its row's conversions (a row's
revenue per conversion stays as it is). Counts that are not whole numbers are split by
their expected shares instead of drawn.

>>> import pandas as pd
>>> from toolkit.rules.delay import Delay
>>> rows = pd.DataFrame({"day": [dt.date(2026, 3, 1)], "conversions": [1000.0],
...                      "revenue": [2000.0]})
>>> known = Known(rows, Delay((0.5, 1.0)), complete=True)
>>> conv, rev = known.on(dt.date(2026, 3, 1))
>>> bool(440 < conv[0] < 560 and rev[0] == 2 * conv[0])
True
>>> known.on(dt.date(2026, 3, 2))[0].tolist()
[1000.0]
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ValidationError
from .delay import Delay, estimate_delay

#: The seed of the arrival lags (the same for every replay of the same statistics).
SEED = 20260301


class Known:
    """The conversions and revenue of each row of ``daily`` (columns ``day``,
    ``conversions``, ``revenue``) as known on a replay day, under ``delay``.

    ``complete``: the statistics hold every conversion (downloaded long after their last
    day); otherwise they are taken as downloaded on ``downloaded`` (default: their last day),
    the freshest days already short of what the profile says was not known yet."""

    def __init__(
        self,
        daily: pd.DataFrame,
        delay: Delay,
        *,
        complete: bool = False,
        downloaded: dt.date | None = None,
        seed: int = SEED,
    ) -> None:
        self.delay = delay
        self.days = pd.to_datetime(pd.Series(daily["day"]).astype(str)).to_numpy("datetime64[D]")
        self.conversions = daily["conversions"].to_numpy(dtype=float)
        self.revenue = daily["revenue"].to_numpy(dtype=float)
        lags = delay.days + 1
        if complete:
            age = np.full(len(self.days), lags - 1)
        else:
            last = np.datetime64(downloaded or self.days.max(), "D")
            age = np.clip((last - self.days).astype(int), 0, lags - 1)
        self.age = age  # each row's age on the day it was downloaded (capped)
        self.cumulative = _arrivals(self.conversions, age, delay, seed)

    def on(self, day: dt.date) -> tuple[np.ndarray, np.ndarray]:
        """Each row's conversions and revenue as known on ``day`` (0 for rows after it)."""
        age = (np.datetime64(day, "D") - self.days).astype(int)
        lag = np.clip(age, 0, self.cumulative.shape[1] - 1)
        conv = self.cumulative[np.arange(len(age)), lag]
        conv = np.where(age < 0, 0.0, conv)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(self.conversions > 0, conv / self.conversions, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            # revenue without conversions: by the profile's expected share
            then = self.delay.known(self.age)
            plain = np.where(then > 0, self.delay.known(age) / then, 1.0)
        share = np.where(self.conversions > 0, share, np.minimum(plain, 1.0))
        return conv, self.revenue * share


def replay_delay(
    delay: Any, daily: pd.DataFrame, *, complete: bool = False, where: str = "delay"
) -> tuple[Delay | None, Known | None]:
    """The profile a replay uses and its :class:`Known` (``None, None`` without ``delay``):
    ``"auto"`` is estimated from ``daily`` as downloaded on its last day
    (:func:`~toolkit.rules.delay.estimate_delay`), anything else parsed
    (:meth:`~toolkit.rules.delay.Delay.parse`)."""
    if delay is None:
        return None, None
    if isinstance(delay, str) and delay.strip().lower() == "auto":
        if complete:
            raise ValidationError(
                f"{where}='auto' reads the delay off the freshest days of an export as it was"
                " downloaded, but complete=True says it holds every conversion; declare the"
                " profile, or drop complete=True"
            )
        profile = estimate_delay(daily, max(daily["day"]))
    else:
        profile = Delay.parse(delay, where)
    return profile, Known(daily, profile, complete=complete)


def _arrivals(conv: np.ndarray, age: np.ndarray, delay: Delay, seed: int) -> np.ndarray:
    """Per row, the conversions arrived by each lag 0..delay.days (cumulative): the row's
    conversions split over the lags up to its age at download, by the profile's shares."""
    shares = np.asarray(delay.shares, dtype=float)
    step = np.diff(shares, prepend=0.0)
    rng = np.random.default_rng(seed)
    out = np.zeros((len(conv), len(shares)))
    whole = bool(np.all(np.mod(conv, 1.0) == 0))
    for a in np.unique(age):
        rows = np.flatnonzero(age == a)
        p = step[: a + 1].copy()
        p = p / p.sum() if p.sum() > 0 else np.eye(a + 1)[a]
        if whole:
            split = rng.multinomial(conv[rows].astype(np.int64), p).astype(float)
        else:
            split = conv[rows, None] * p[None, :]
        out[rows, : a + 1] = split
    return np.cumsum(out, axis=1)


__all__ = ["SEED", "Known", "replay_delay"]
