"""Adaptive pacing under a service's rate limit: every thread of one transport goes through it.

Why the request *rate*, not the number of requests in flight: a rate limit counts requests
per second, and how many requests in flight make a rate depends on how long the answers take.
With answers in 2 ms, one thread alone sends 500 requests a second, so no limit on the
threads in flight could hold it under a limit of 200; a paced rate holds it whatever the
latency, and caps the requests in flight as a side effect (rate x latency).

The scheme is AIMD, as TCP's congestion control:

- **No 429 yet: nothing.** :meth:`AdaptiveRate.wait` returns at once (one attribute read),
  :meth:`AdaptiveRate.accepted` appends a time to a bounded deque. Nothing is paced and no
  lock is taken, so the gate costs nothing measurable while the service never says 429.
- **A 429: multiplicative decrease, once per window.** The first 429 switches pacing on, at
  ``decrease`` x the rate the service accepted over the last second (counted from the answers
  that were not 429; with fewer than :data:`MIN_EVIDENCE` of them nothing is paced, and only
  the wait below is shared). A later 429 cuts the paced rate again only when its request was sent
  after the last cut: the 429s of one burst (requests already in flight when the first came
  back) cut it once, not once each. A cut never goes below ``decrease`` squared of the paced
  rate (a second with a pause in it under-counts what the service accepts).
- **Retry-After is shared.** Every 429 moves a "not before" time shared by all threads to
  when its ``Retry-After`` ends (or, without one, the transport's backoff), so the other
  threads wait it out too instead of sending into the same refusal: no storm.
- **Additive increase.** While no 429 comes, the paced rate grows linearly, by ``increase`` x
  the rate set at the last cut per second (at least 1 request per second more each second),
  so it finds the limit again within about ``(1 - decrease) / (decrease * increase)``
  seconds, and tracks a limit that was raised.
- **Pacing** spaces requests ``1 / rate`` apart, in the order threads ask, from one schedule
  shared by the threads; a cut while a thread waits for its slot sends it back to take a new
  one. After ``settle_s`` seconds without a 429 pacing stops, back to the free path.

Under a sliding-window limit of R per second the paced rate saws between ``decrease`` x R
and R, about ``(1 + decrease) / 2`` of R on average, with a few 429s per cut (the requests in
flight when the limit is crossed).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

#: How many answer times are kept to measure the accepted rate (bounds the estimate to
#: this many requests per second; the additive increase goes past it if a service allows).
RECENT = 4096
#: Fewer answers than this in the second before a 429 tell no rate: the 429's wait is shared,
#: nothing is paced (a lone 429 of an overloaded service, or a limit of a few per second).
MIN_EVIDENCE = 4
MAX_SLOT_TRIES = 1000


class AdaptiveRate:
    """AIMD pacing of the requests of one transport, shared by all its threads.

    The transport calls :meth:`wait` before each request, :meth:`accepted` after each answer
    that is not a 429, and :meth:`throttled` after a 429.

    >>> gate = AdaptiveRate()
    >>> gate.wait(), gate.rate                 # no 429 yet: free
    (0.0, None)
    >>> for _ in range(50):
    ...     gate.accepted()
    >>> gate.throttled(gate.wait(), retry_after=0.01, fallback=0.5)
    >>> gate.rate                               # 0.9 x the 50 accepted in the last second
    45.0
    """

    def __init__(
        self,
        *,
        decrease: float = 0.9,
        increase: float = 0.05,
        settle_s: float = 30.0,
        min_rate: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not 0 < decrease < 1:
            raise ValueError(f"decrease must be in (0, 1), got {decrease}")
        if increase <= 0:
            raise ValueError(f"increase must be > 0, got {increase}")
        self.decrease = decrease
        self.increase = increase
        self.settle_s = settle_s
        self.min_rate = min_rate
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._answers: deque[float] = deque(maxlen=RECENT)
        self._engaged = False
        self._rate_at_cut = 0.0
        self._step = 0.0
        self._grow_from = 0.0  # the time the linear increase starts (the end of the wait)
        self._cut_at = -math.inf
        self._not_before = 0.0
        self._next_at = 0.0
        self._generation = 0
        #: 429s seen, and cuts of the rate they made (a burst's 429s make one).
        self.throttled_count = 0
        self.cuts = 0

    def __repr__(self) -> str:
        rate = self.rate
        state = "free" if rate is None else f"{rate:.1f}/s"
        return f"<AdaptiveRate {state} 429s={self.throttled_count} cuts={self.cuts}>"

    @property
    def rate(self) -> float | None:
        """The paced rate in requests per second now; None while the gate is off, ``inf``
        while it only makes the threads wait out a ``Retry-After`` together."""
        with self._lock:
            return self._current(self._clock()) if self._engaged else None

    # ------------------------------------------------------------------ the transport's calls

    def wait(self) -> float:
        """Block until the caller may send; the time it was let go (for :meth:`throttled`)."""
        if not self._engaged:  # the free path: no 429 came (or none for settle_s)
            return 0.0
        return self._paced()

    def accepted(self) -> None:
        """The service answered a request (anything but 429)."""
        self._answers.append(self._clock())

    def throttled(self, sent: float, retry_after: float | None, fallback: float) -> None:
        """A 429 came back for a request let go at ``sent``: share its wait, cut the rate.

        ``retry_after`` is the answer's ``Retry-After`` in seconds (None: absent, or too long
        to wait, then ``fallback`` is waited). The rate is cut when the request was sent after
        the last cut, i.e. once per burst.
        """
        with self._lock:
            now = self._clock()
            self.throttled_count += 1
            wait = fallback if retry_after is None else retry_after
            self._not_before = max(self._not_before, now + wait)
            if sent >= self._cut_at:
                base = self._rate_to_cut(now)
                self._rate_at_cut = max(self.min_rate, base * self.decrease)
                self._step = max(1.0, self.increase * self._rate_at_cut)
                self._cut_at = now
                self._engaged = True
                self.cuts += 1
            self._grow_from = self._not_before
            self._next_at = self._not_before  # a new schedule from the end of the wait
            self._generation += 1

    # ------------------------------------------------------------------ inside

    def _current(self, now: float) -> float:
        if math.isinf(self._rate_at_cut):
            return math.inf
        return self._rate_at_cut + self._step * max(0.0, now - self._grow_from)

    def _rate_to_cut(self, now: float) -> float:
        """The rate a new cut starts from: what the service accepted over the last second,
        no more than the paced rate and no less than ``decrease`` x it (a second with a wait
        in it under-counts); ``inf`` when neither is known (too few answers, not paced)."""
        seen = self._accepted_last_second(now)
        if seen < MIN_EVIDENCE:
            seen = math.inf  # too few answers to tell a rate: share the wait only
        paced = self._current(now) if self._engaged else math.inf
        if math.isinf(paced):
            return seen
        return min(paced, max(seen, paced * self.decrease))

    def _accepted_last_second(self, now: float) -> float:
        since = now - 1.0
        count = 0
        for t in reversed(self._answers.copy()):  # a copy: other threads append meanwhile
            if t <= since:
                break
            count += 1
        return float(count)

    def _paced(self) -> float:
        for _ in range(MAX_SLOT_TRIES):  # a cut while waiting sends the thread back here
            with self._lock:
                now = self._clock()
                if not self._engaged:
                    return 0.0
                if now - self._cut_at > self.settle_s and now >= self._not_before:
                    self._engaged = False  # long without a 429: free again
                    self._cut_at = -math.inf
                    return 0.0
                slot = max(now, self._not_before, self._next_at)
                self._next_at = slot + 1.0 / self._current(slot)
                generation = self._generation
            if slot <= now:
                return now
            self._sleep(slot - now)
            with self._lock:
                if generation == self._generation:
                    return self._clock()
        return self._clock()
