"""The one object that talks HTTP: session, encoding, timeouts, retries, rate limit, redaction.

Resource methods only build paths and parameters and call :meth:`Transport.call`.

Retry policy (see docs/client.md):

- every request is retried when it surely never reached the service (the connection was
  refused or could not be opened in time) and on HTTP 429 (honouring ``Retry-After``);
- *safe* requests (reads, and writes whose repetition is harmless: add/drop of items, updates,
  start/pause/archive) are also retried on read timeouts, dropped connections, HTTP 5xx, a
  gateway's own 408 and 52x, and a 2xx whose body does not read (cut part-way, not JSON);
- *unsafe* writes (creating a campaign or a creative, adding CPA rules) are not retried once
  they may have reached the service, since a repeat could create a duplicate.

An answer that is neither a well-formed success (a 2xx with a JSON body) nor a well-formed
refusal by the service (a 4xx with a JSON ``status: error`` body and its ``errorList``) may
come after the request was carried out: from then on the call's final error carries
``maybe_sent=True``, whatever a later try answers (a 429, a refusal).

Waits grow exponentially with full jitter: ``uniform(0, min(max_backoff, backoff * 2**n))``.

Each answer is read at once into a :class:`~toolkit.client.wire.Answer` without the api-key
(no frame holds a ``requests.Response``, whose URL carries it); redirects are followed on the
base URL's host only, one elsewhere is a :class:`~toolkit.errors.TransportError`.

Under a rate limit (HTTP 429), an :class:`~toolkit.client.adaptive.AdaptiveRate` shared by
every thread of the transport paces the requests (``adaptive=True``, the default): the threads
wait out each ``Retry-After`` together and the request rate is cut on a burst of 429s and
raised slowly while none comes (AIMD), instead of each thread retrying on its own into the
same refusal. It costs nothing while no 429 comes.
"""

from __future__ import annotations

import json
import logging
import numbers
import random
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlencode

import qs_codec
import requests
import urllib3
from requests.adapters import HTTPAdapter

from ..errors import (
    ApiError,
    AuthError,
    MalformedAnswerError,
    NotFoundError,
    RateLimitError,
    TransportError,
    ValidationError,
)
from .adaptive import AdaptiveRate
from .answers import Reading
from .apikey import FROM_ARGUMENT, ApiKey, refuse_pickle
from .redaction import install as install_redaction
from .redaction import redact
from .results import single_error
from .wire import Answer, Exchange, RedirectRefused, exchange

log = logging.getLogger("toolkit.client")

MAX_URL = 4096
# Parameters the interface passes in the query string even when the rest goes in a JSON body.
QUERY_PARAMS = frozenset({"id", "adFormat", "type", "checkExist"})
#: Statuses a safe request is retried on, and after which a request may have been carried
#: out: the service failed on the way (5xx), or a gateway answered for it (its own 408,
#: 520-524, ...).
RETRY_STATUSES = frozenset({408, *range(500, 600)})

install_redaction()


# --------------------------------------------------------------------------- values


def format_number(value: float | Decimal) -> str:
    """A number as the user meant it: ``0.1 + 0.2`` -> ``0.3``, never in exponent form.

    >>> format_number(0.1 + 0.2), format_number(1e-05), format_number(Decimal("2.50"))
    ('0.3', '0.00001', '2.50')
    """
    if isinstance(value, Decimal):
        return format(value, "f")
    text = format(Decimal(f"{value:.15g}"), "f")
    return text


def wire_value(value: Any) -> Any:
    """Prepare a value for a query string or a JSON body: exact numbers, 1/0 booleans.

    Numbers of other types (numpy's, out of a DataFrame) become ints and decimals too.
    """
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, float):
        return Decimal(format_number(value))
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):  # numpy.float32 prints as the user wrote it
        try:
            return Decimal(str(value))
        except ArithmeticError:
            return Decimal(format_number(float(value)))
    if isinstance(value, Mapping):
        return {str(k): wire_value(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [wire_value(v) for v in value]
    return value


def _query_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dict):
        return {k: _query_value(v) for k, v in value.items()}
    if isinstance(value, list):
        if any(isinstance(v, dict) for v in value):  # records: items[K][field]=v
            return {str(i): _query_value(v) for i, v in enumerate(value)}
        return [_query_value(v) for v in value]
    return value


def encode_query(params: Mapping[str, Any]) -> str:
    """Bracketed query string: ``a[]=1&a[]=2``, ``m[US]=0.5``, ``items[0][type]=sum``.

    >>> encode_query({"id": 7, "items": ["a b", "c"], "bid": 0.1 + 0.2})
    'id=7&items%5B%5D=a%20b&items%5B%5D=c&bid=0.3'
    """
    plain = _plain_query(params)
    if plain is not None:
        return plain
    data = {k: _query_value(wire_value(v)) for k, v in params.items() if v is not None}
    return qs_codec.encode(data, qs_codec.EncodeOptions(list_format=qs_codec.ListFormat.BRACKETS))


#: Text that a query string carries as it is (RFC 3986 unreserved characters).
_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*\Z").match


def _plain_query(params: Mapping[str, Any]) -> str | None:
    """``k=v&...`` when every key and value is an int or text that needs no encoding (most
    reads: ``id=7&mode=full``), as :func:`encode_query` writes it; None otherwise."""
    pairs = [(k, str(v) if type(v) is int else v) for k, v in params.items() if v is not None]
    if all(type(t) is str and _UNRESERVED(t) for pair in pairs for t in pair):
        return "&".join(f"{k}={v}" for k, v in pairs)
    return None


def encode_json(params: Mapping[str, Any]) -> bytes:
    """A JSON body with numbers written exactly (``0.3``, not ``0.30000000000000004``)."""
    data = wire_value({k: v for k, v in params.items() if v is not None})
    text = json.dumps(_to_json(data), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8")


def _to_json(value: Any) -> Any:
    """Decimals become floats: a decimal of up to 15 digits reads back as the same float."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    return value


# --------------------------------------------------------------------------- rate limit


class RateLimiter:
    """At most ``rate`` requests per second across threads (a token bucket of ``burst``).

    The default burst of 1 spaces requests evenly, ``1 / rate`` seconds apart, so that no
    one-second window holds more than ``rate`` of them (a bucket of ``rate`` tokens would let
    twice as many through in the first second).
    """

    def __init__(self, rate: float, burst: int = 1) -> None:
        if rate <= 0:
            raise ValueError(f"rate must be > 0 requests per second, got {rate}")
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        self.rate = float(rate)
        self.capacity = float(burst)
        self._tokens = self.capacity
        self._stamp = time.monotonic()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        while True:
            with self._lock:
                now = time.monotonic()
                self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
                self._stamp = now
                if self._tokens >= 1:
                    self._tokens -= 1
                    return
                wait = (1 - self._tokens) / self.rate
            time.sleep(wait)


# --------------------------------------------------------------------------- transport


@dataclass(frozen=True)
class Request:
    """One call: which operation, how to send it, and whether a repeat is harmless."""

    operation: str
    method: str
    path: str
    params: Mapping[str, Any]
    safe: bool = True
    post_allowed: bool = False
    files: Mapping[str, tuple[str, bytes, str]] | None = None
    form: Mapping[str, Any] | None = None  # body fields sent beside ``files``


@runtime_checkable
class TransportLike(Protocol):
    """What the client and its resources need of a transport; :class:`Transport` is one.

    Pass any object with these members as ``Client(transport=...)``: a wrapper that records
    or counts the calls and hands them to a :class:`Transport`, a transport of another HTTP
    library, a replay of recorded answers. ``call`` sends one :class:`Request` and returns the
    parsed JSON answer or raises an exception of :mod:`toolkit.errors`; it must keep the
    api-key out of what it raises, logs and shows.
    """

    @property
    def base_url(self) -> str:
        """The service's base URL, without the key."""
        ...

    @property
    def key_source(self) -> str:
        """Where the api-key came from, its length and fingerprint; never the key."""
        ...

    def call(self, req: Request) -> Any:
        """Send one request (with whatever retries it does); the parsed JSON answer."""
        ...

    def url_room(self, path: str) -> int:
        """Characters left for parameters in a GET to ``path`` (batch calls chunk by it)."""
        ...

    def close(self) -> None:
        """Release connections; the client's ``close()`` calls it."""
        ...


@dataclass
class _Tries:
    """The retries of one call so far, and whether a try may have reached the service."""

    attempt: int = 0
    reached: bool = False


class KeyAuth(requests.auth.AuthBase):
    """Puts the api-key into the query string while ``requests`` prepares a request.

    This is the only place the key is revealed: the URL with the key lives on inside
    ``requests`` and ``urllib3`` only, never in a local variable of the toolkit's frames.
    """

    def __init__(self, key: ApiKey) -> None:
        self.key = key

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        url = request.url or ""
        if "#" in url:  # the key goes before the fragment: let requests rebuild the URL
            request.prepare_url(url, {"api-key": self.key.reveal()})
        else:  # the prepared URL is already quoted: the encoded key is appended as is
            join = "&" if "?" in url else "?"
            request.url = f"{url}{join}{urlencode({'api-key': self.key.reveal()})}"
        return request

    def __repr__(self) -> str:
        return f"<KeyAuth {self.key!r}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        refuse_pickle("a KeyAuth")


class Transport:
    """Base URL, key, pooled session, timeouts, retries with backoff, rate limit, redaction.

    ``api_key`` is a string or an :class:`~toolkit.client.apikey.ApiKey`; it is kept as an
    ``ApiKey`` and added to each request by :class:`KeyAuth`. A transport is not pickled.

    ``adaptive`` (default True) paces every thread's requests after a 429 (see
    :mod:`toolkit.client.adaptive`); ``self.gate`` is that pacer, None when switched off
    (then each thread waits out its own 429s, as a fixed pool does).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | ApiKey,
        *,
        timeout: float | tuple[float, float] = (5.0, 60.0),
        retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_retry_after: float = 120.0,
        rate_limit: float | None = None,
        pool_size: int = 16,
        session: requests.Session | None = None,
        adaptive: bool = True,
    ) -> None:
        api_key = ApiKey.of(api_key, FROM_ARGUMENT) or ApiKey("", FROM_ARGUMENT)
        self.base_url = base_url.rstrip("/")
        self._key = api_key
        self._auth = KeyAuth(api_key)
        # room the key takes in a URL: "&api-key=..." (its length only)
        self._key_room = 1 + len(encode_query({"api-key": api_key.reveal()}))
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.limiter = RateLimiter(rate_limit) if rate_limit else None
        self.gate = AdaptiveRate() if adaptive else None
        self.pool_size = pool_size
        self.session = session or requests.Session()
        # proxies from the environment are read once here, not again on every request
        self.session.proxies.update(requests.utils.get_environ_proxies(self.base_url))
        self.session.trust_env = False
        adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self._rng = random.Random()

    def __repr__(self) -> str:
        return f"<Transport {self.base_url} key=***>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        refuse_pickle("a Transport")

    @property
    def key_source(self) -> str:
        """Where the key came from, its length and fingerprint (never the key)."""
        return self._key.describe()

    def close(self) -> None:
        self.session.close()

    # ------------------------------------------------------------------ encoding

    def prepare(self, req: Request) -> tuple[str, str, Any, dict[str, str]]:
        """``(method, url, body, headers)``; long queries go into a JSON body when allowed
        (:data:`QUERY_PARAMS` stay in the query).

        A request with ``files`` is a POST whose ``form`` fields travel in the body (multipart
        with the files, or form-urlencoded without any); only ``params`` stay in the query.
        The URL has no key: :class:`KeyAuth` adds it inside ``requests``.
        """
        query = encode_query(req.params)
        url = f"{self.base_url}{req.path}"
        if req.files is not None:
            fields = (req.form or {}).items()
            form = {k: str(_query_value(wire_value(v))) for k, v in fields if v is not None}
            return "POST", f"{url}?{query}" if query else url, form, {}
        if req.method == "GET" and len(url) + 1 + len(query) + self._key_room <= MAX_URL:
            return "GET", f"{url}?{query}" if query else url, None, {}
        if req.post_allowed or req.method == "POST":
            headers = {"Content-Type": "application/json"}
            fixed = encode_query({k: v for k, v in req.params.items() if k in QUERY_PARAMS})
            body = encode_json({k: v for k, v in req.params.items() if k not in QUERY_PARAMS})
            return "POST", f"{url}?{fixed}" if fixed else url, body, headers
        raise ValidationError(
            f"{req.operation}: the query would be {len(url) + len(query) + self._key_room} "
            f"characters (limit {MAX_URL}); send fewer items per call"
        )

    def url_room(self, path: str) -> int:
        """Characters left for parameters in a GET to ``path``."""
        return MAX_URL - len(self.base_url) - len(path) - len(encode_query({"api-key": "x" * 64}))

    # ------------------------------------------------------------------ calling

    def call(self, req: Request) -> Any:
        """Send ``req`` with retries; the parsed JSON answer, or an exception of the tree."""
        method, url, body, headers = self.prepare(req)
        files = None
        if req.files is not None:
            files = {name: (fn, data, mime) for name, (fn, data, mime) in req.files.items()}
        send = Exchange(method, url, body, headers, files)
        tries = _Tries()
        while True:
            if self.limiter is not None:
                self.limiter.acquire()
            sent = self.gate.wait() if self.gate is not None else 0.0
            response = self._send_once(send, req, tries)
            if response is None:
                tries.attempt += 1
                continue
            read = Reading.of(response)
            if not read.success and not read.refusal:  # it may have been carried out
                tries.reached = True
            if self._retry_status(req, response, read, sent, tries):
                tries.attempt += 1
                continue
            return self._answer(req, response, read, tries)

    def _send_once(self, send: Exchange, req: Request, tries: _Tries) -> Answer | None:
        """One try: the answer (read, without the key), or None after waiting for a retry of
        a failed request. Redirects are followed on the base URL's host only."""
        started = time.perf_counter()
        failure: str | None = None
        retry_reason: str | None = None
        interrupted = False
        response: Answer | None = None
        try:
            response = exchange(
                self.session,
                send,
                auth=self._auth,
                timeout=self.timeout,
                key=self._key,
                home=self.base_url,
            )
        except RedirectRefused as exc:
            failure = str(exc)
        except requests.RequestException as exc:
            failure, retry_reason = self._failed(exc, send, req, tries, started)
        except KeyboardInterrupt:
            interrupted = True
        except Exception as exc:  # not a requests error, but raised inside requests/urllib3
            failure = redact(f"{type(exc).__name__}: {exc}", self._key)
            tries.reached = True
        # Raised outside the except blocks: the original exception, whose frames inside
        # requests and urllib3 hold the URL with the key, must not ride along as
        # __context__ (error trackers and ``--showlocals`` print those frames' locals).
        if interrupted:
            raise KeyboardInterrupt
        if failure is not None:
            raise TransportError(failure, req.operation, maybe_sent=tries.reached)
        if response is None:
            self._sleep(tries.attempt, None, req, retry_reason or "a failed request")
            return None
        took = (time.perf_counter() - started) * 1000
        log.debug("%s %s -> %s in %.0f ms", send.method, req.path, response.status_code, took)
        return response

    def _failed(
        self,
        exc: requests.RequestException,
        send: Exchange,
        req: Request,
        tries: _Tries,
        started: float,
    ) -> tuple[str | None, str | None]:
        """``(failure, None)`` when a request error ends the call, ``(None, reason)`` when
        it is retried."""
        took = (time.perf_counter() - started) * 1000
        never_sent = _never_sent(exc)
        tries.reached = tries.reached or not never_sent
        reason = _describe(exc, self._key)
        log.debug("%s %s -> %s in %.0f ms", send.method, req.path, reason, took)
        if tries.attempt < self.retries and (req.safe or never_sent):
            return None, reason
        count = tries.attempt + 1
        return f"{reason} ({count} {'try' if count == 1 else 'tries'})", None

    def _retry_status(
        self, req: Request, response: Answer, read: Reading, sent: float, tries: _Tries
    ) -> bool:
        """True when the answer is retried (after the wait it calls for): a 429; for a safe
        request, a status of :data:`RETRY_STATUSES` or a 2xx whose body does not read."""
        status = response.status_code
        if status == 429:
            if self._throttled(req, response, sent, tries.attempt):
                return True
        elif self.gate is not None:
            self.gate.accepted()
        cut = 200 <= status < 300 and not read.readable
        if (status in RETRY_STATUSES or cut) and req.safe and tries.attempt < self.retries:
            self._sleep(
                tries.attempt, None, req, "an unreadable answer" if cut else f"HTTP {status}"
            )
            return True
        return False

    def _throttled(self, req: Request, response: Answer, sent: float, attempt: int) -> bool:
        """An HTTP 429: the gate slows every thread down; True when this request is retried."""
        retry_after = _retry_after(response)
        waitable = retry_after is None or retry_after <= self.max_retry_after
        gate = self.gate
        if gate is not None:  # every thread waits it out; the rate is cut
            fallback = min(self.max_backoff, self.backoff * 2**attempt)
            gate.throttled(sent, retry_after if waitable else None, fallback)
        if attempt >= self.retries or not waitable:
            return False
        if gate is None:
            self._sleep(attempt, retry_after, req, "HTTP 429")
        else:
            log.debug("retrying %s after HTTP 429 (retry %d)", req.operation, attempt + 1)
        return True

    def _sleep(self, attempt: int, retry_after: float | None, req: Request, why: str) -> None:
        wait = self._rng.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))
        if retry_after is not None:
            wait = max(wait, retry_after)
        log.debug(
            "retrying %s after %s in %.2f s (retry %d)", req.operation, why, wait, attempt + 1
        )
        time.sleep(wait)

    def _answer(self, req: Request, response: Answer, read: Reading, tries: _Tries) -> Any:
        """The answer's JSON, or the error it means; ``maybe_sent`` on the error when this
        or an earlier try may have been carried out."""
        status, body, maybe = read.status, read.body, tries.reached
        if not read.readable:
            if 200 <= status < 300:
                got = redact(f"an unreadable answer: {read.why}", self._key)
                raise MalformedAnswerError(req.operation, "a JSON body", got)
            ctype = response.headers.get("Content-Type", "?").split(";")[0]
            raise ApiError(
                req.operation, status, [f"HTTP {status} ({ctype} answer)"], maybe_sent=maybe
            )
        if read.success:
            if maybe and isinstance(body, dict) and body.get("status") == "error":
                # a refusal of this try says nothing of an earlier one that may have landed
                raw = body.get("errorList") or []
                shown = [
                    redact(str(m), self._key)
                    for m in (raw.values() if isinstance(raw, dict) else raw)
                ]
                refused = {**body, "errorList": shown}
                raise single_error(req.operation, refused, http_status=status, maybe_sent=True)
            return body
        messages: list[str] = []
        if isinstance(body, dict) and body.get("status") == "error":
            raw = body.get("errorList") or []
            messages = [
                redact(str(m), self._key) for m in (raw.values() if isinstance(raw, dict) else raw)
            ]
        if status == 401:
            raise AuthError(
                req.operation,
                status,
                messages or ["unauthorized"],
                key_source=self._key.source,
                key_detail=self._key.detail,
                maybe_sent=maybe,
            )
        if status == 404:
            raise NotFoundError(req.operation, status, messages or ["not found"], maybe_sent=maybe)
        if status == 429:
            raise RateLimitError(
                req.operation, status, messages, _retry_after(response), maybe_sent=maybe
            )
        raise ApiError(req.operation, status, messages or [f"HTTP {status}"], maybe_sent=maybe)


def _retry_after(response: Answer) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _never_sent(exc: requests.RequestException) -> bool:
    """True when the request surely did not reach the service."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    if isinstance(exc, requests.exceptions.ConnectionError):
        reason = getattr(exc.args[0], "reason", None) if exc.args else None
        return isinstance(reason, urllib3.exceptions.NewConnectionError)
    return False


def _describe(exc: requests.RequestException, key: ApiKey) -> str:
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return "connection timed out"
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return "no answer within the read timeout"
    if isinstance(exc, requests.exceptions.ConnectionError):
        if _never_sent(exc):
            return "connection refused or unreachable"
        return "connection dropped"
    return redact(f"{type(exc).__name__}: {exc}", key)
