"""Fault injection for tests and benchmarks: added latency, HTTP 5xx, 429, a gateway's own
statuses (408, 520-524), odd bodies (cut, or JSON of the wrong shape), hangs, a rate limit.

Rules apply to ``/api/`` requests in order; the first rule that matches a request fires.
A rule fires for its next ``count`` matching requests (or for every one when ``count`` is
``None``), for a share ``rate`` of them drawn from a seeded generator (so a run repeats), or
both.

>>> faults = Faults()
>>> faults.configure({"rules": [{"status": 503, "count": 1}]})
>>> faults.pick("/api/campaign/list").status, faults.pick("/api/campaign/list")
(503, None)

A rate limit of R lets at most R ``/api/`` requests of one api-key through in any sliding
window of one second; :meth:`Faults.admit` says how long a refused one should wait.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, fields
from typing import Any

from . import control_fields as check
from .errors import BadRequest

FAULT_STATUSES = (408, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524)
#: Statuses answered with an HTML page, as a gateway or proxy sends them on its own.
GATEWAY_PAGES: dict[int, str] = {
    408: "Request Timeout",
    502: "Bad Gateway",
    520: "Web server is returning an unknown error",
    521: "Web server is down",
    522: "Connection timed out",
    523: "Origin is unreachable",
    524: "A timeout occurred",
}
#: Odd bodies answered instead of the real one: the real answer cut in half (``cut``, needs
#: ``after``), JSON of the wrong shape with HTTP 200, or a gateway's JSON refusal that echoes
#: the request's URL, api-key included (``echo``, HTTP ``status`` or 502).
FAULT_BODIES = ("cut", "[]", "{}", "echo")
MAX_HANG_S = 120.0
MAX_RATE_LIMIT = 100_000
RATE_WINDOW_S = 1.0
SETTINGS = frozenset({"latency_ms", "seed", "rules", "rate_limit"})


@dataclass
class FaultRule:
    """One fault: answer ``status`` (with ``Retry-After`` for 429; an HTML page for a
    gateway's 408, 502 and 520-524), answer an odd ``body`` with HTTP 200 (``cut``: the
    real answer cut in half; ``[]`` or ``{}``: JSON of the wrong shape; ``echo``: a gateway's
    JSON refusal quoting the request's URL, with ``status`` or 502), answer HTTP 307 to
    ``redirect`` (a path or URL; the request's query string is kept), or hang ``hang_s``
    seconds. Every field is checked (type and range) and a bad one refused naming it.

    ``path`` limits the rule to paths starting with it; ``method`` to one HTTP method.
    With ``after``, the request is carried out first and the fault comes after it (a write
    that lands although its answer is lost: a gateway's 502 or 504, or a hang past the
    client's timeout); without it, a status or body fault answers before anything is done.

    >>> FaultRule(body="{}", after=True, count=1).body
    '{}'
    """

    status: int | None = None
    hang_s: float | None = None
    count: int | None = None
    rate: float | None = None
    path: str | None = None
    method: str | None = None
    retry_after: float | None = None
    after: bool = False
    body: str | None = None
    redirect: str | None = None

    def __post_init__(self) -> None:
        self._check_fields()
        if self.status is None and self.hang_s is None and self.body is None and not self.redirect:
            raise BadRequest("A fault rule needs 'status', 'body', 'redirect' or 'hang_s'")
        if self.redirect is not None and (self.status is not None or self.body is not None):
            raise BadRequest("A fault rule with 'redirect' answers HTTP 307: no 'status' or 'body'")
        if self.body is not None and self.status is not None and self.body != "echo":
            raise BadRequest(
                "A fault rule answers 'status' or 'body' (with HTTP 200), not both;"
                f" got status {self.status} and body {self.body!r}"
            )
        if self.body == "cut" and self.after is not True:
            raise BadRequest(
                "Fault 'body' \"cut\" cuts the answer of a request carried out,"
                " so it needs 'after': true"
            )

    def _check_fields(self) -> None:
        """Each field's type and range (JSON gives any type); whole numbers become ints."""
        for name, field_check in _FIELD_CHECKS.items():
            value = getattr(self, name)
            if value is not None or name == "after":
                setattr(self, name, field_check(value, f"Fault '{name}'"))

    @property
    def answers(self) -> bool:
        """True when the rule answers for the service (a status, a body or a redirect)."""
        return self.status is not None or self.body is not None or self.redirect is not None

    def matches(self, path: str, method: str) -> bool:
        if self.path is not None and not path.startswith(self.path):
            return False
        return self.method is None or self.method.upper() == method


def _status(value: Any, name: str) -> int:
    if isinstance(value, bool) or value not in FAULT_STATUSES:
        raise BadRequest(f"{name} must be one of {FAULT_STATUSES}, got {value!r}"[:200])
    return int(value)


def _body(value: Any, name: str) -> str:
    if not isinstance(value, str) or value not in FAULT_BODIES:
        raise BadRequest(f"{name} must be one of {list(FAULT_BODIES)}, got {value!r}"[:200])
    return value


#: How each field of a rule is checked (and kept), when it is given.
_FIELD_CHECKS: dict[str, Any] = {
    "status": _status,
    "body": _body,
    "hang_s": lambda v, n: check.number(v, n, 0, MAX_HANG_S, above=True),
    "rate": lambda v, n: check.number(v, n, 0, 1),
    "count": lambda v, n: check.whole(v, n, 0, check.MAX_COUNT),
    "retry_after": lambda v, n: check.number(v, n, 0, check.MAX_RETRY_AFTER),
    "path": check.path,
    "method": check.method,
    "redirect": check.redirect_target,
    "after": check.flag,
}


class RateWindow:
    """At most ``rate`` requests per key in any sliding window of one second (a log of the
    accepted requests' times per key: exact, unlike a fixed window that lets twice as many
    through across a window's edge).

    >>> window = RateWindow(2)
    >>> window.admit("k", now=0.0), window.admit("k", now=0.1), window.admit("k", now=0.4)
    (None, None, 0.6)
    >>> window.admit("k", now=1.0), window.admit("other", now=1.0)
    (None, None)
    """

    MAX_KEYS = 10_000  # keys tracked at once; idle ones are dropped past it

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self._accepted: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def admit(self, key: str, now: float | None = None) -> float | None:
        """None when the request may go on (it is counted), else the seconds until a slot
        of ``key`` frees (the oldest accepted request leaves the window)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            log = self._accepted.get(key)
            if log is None:
                if len(self._accepted) >= self.MAX_KEYS:
                    self._forget_idle(now)
                log = self._accepted[key] = deque()
            while log and log[0] <= now - RATE_WINDOW_S:
                log.popleft()
            if len(log) < self.rate:
                log.append(now)
                return None
            return log[0] + RATE_WINDOW_S - now

    def _forget_idle(self, now: float) -> None:
        idle = [k for k, log in self._accepted.items() if not log or log[-1] <= now - RATE_WINDOW_S]
        for k in idle:
            del self._accepted[k]


def retry_after_text(seconds: float) -> str:
    """A ``Retry-After`` value: seconds rounded up to the millisecond (``0.013``), so that a
    client that waits exactly that long finds a free slot.

    >>> retry_after_text(0.0123), retry_after_text(1), retry_after_text(0)
    ('0.013', '1.000', '0.001')
    """
    return f"{max(1, math.ceil(round(seconds * 1000, 6))) / 1000:.3f}"


class Faults:
    """The faults, the added latency and the rate limit of one sandbox; safe to use from
    many threads."""

    def __init__(self, latency_ms: float = 0, seed: int = 0, rate_limit: int | None = None) -> None:
        self.latency_ms = float(latency_ms)
        self.rules: list[FaultRule] = []
        self.limit: RateWindow | None = None
        if rate_limit is not None:
            self.limit = RateWindow(_rate_limit(rate_limit))
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.stopping = threading.Event()

    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` unless the sandbox stops first; True when it is stopping."""
        return self.stopping.wait(seconds)

    def configure(self, data: dict[str, Any]) -> None:
        """Set ``latency_ms``, ``seed``, ``rate_limit`` (requests per second per api-key, or
        None for none) and/or replace ``rules`` (a list of rule objects)."""
        if not isinstance(data, dict):
            raise BadRequest("Fault settings must be a JSON object")
        unknown = sorted(set(data) - SETTINGS)
        if unknown:
            raise BadRequest(f"Unknown fault settings {unknown}; known: {sorted(SETTINGS)}")
        rules = _rules(data["rules"]) if "rules" in data else None
        limit = None
        if data.get("rate_limit") is not None:
            limit = RateWindow(_rate_limit(data["rate_limit"]))
        latency = _latency(data["latency_ms"]) if "latency_ms" in data else None
        rng = random.Random(check.seed(data["seed"])) if "seed" in data else None
        with self._lock:  # everything was checked: now all of it changes, or nothing did
            if latency is not None:
                self.latency_ms = latency
            if rng is not None:
                self._rng = rng
            if rules is not None:
                self.rules = rules
            if "rate_limit" in data:
                self.limit = limit

    def clear(self) -> None:
        with self._lock:
            self.rules = []
            self.latency_ms = 0.0
            self.limit = None

    def admit(self, key: str) -> float | None:
        """Under a rate limit: None when a request of ``key`` may go on, else the seconds
        until a slot frees (for ``Retry-After``). Always None without a rate limit."""
        limit = self.limit
        return None if limit is None else limit.admit(key)

    def pick(self, path: str, method: str = "GET") -> FaultRule | None:
        """The rule that fires for this request, if any (its count is used up)."""
        with self._lock:
            for rule in self.rules:
                if not rule.matches(path, method):
                    continue
                if rule.count is not None and rule.count <= 0:
                    continue
                if rule.rate is not None and self._rng.random() >= rule.rate:
                    continue
                if rule.count is not None:
                    rule.count -= 1
                return rule
        return None

    def describe(self) -> dict[str, Any]:
        with self._lock:
            return {
                "latency_ms": self.latency_ms,
                "rate_limit": self.limit.rate if self.limit is not None else None,
                "rules": [asdict(r) for r in self.rules],
            }


def _rules(raw_rules: Any) -> list[FaultRule]:
    """Fault rules from their JSON objects."""
    if not isinstance(raw_rules, list):
        raise BadRequest("'rules' must be a list of fault rules")
    known = {f.name for f in fields(FaultRule)}
    rules = []
    for i, raw in enumerate(raw_rules):
        if not isinstance(raw, dict) or set(raw) - known:
            raise BadRequest(f"rules[{i}] must be an object with keys among {sorted(known)}")
        try:
            rules.append(FaultRule(**raw))
        except TypeError as exc:
            raise BadRequest(f"rules[{i}]: {exc}") from None
        except BadRequest as exc:
            raise BadRequest(f"rules[{i}]: {exc}") from None
    return rules


def _latency(value: Any) -> float:
    return float(check.number(value, "'latency_ms'", 0, check.MAX_LATENCY_MS))


def _rate_limit(value: Any) -> int:
    """A rate limit: a whole number of requests per second, from 1 to :data:`MAX_RATE_LIMIT`."""
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or not 1 <= value <= MAX_RATE_LIMIT:
        raise BadRequest(
            f"'rate_limit' must be a whole number of requests per second from 1 to"
            f" {MAX_RATE_LIMIT}, or null for none; got {value!r}"
        )
    return int(value)
