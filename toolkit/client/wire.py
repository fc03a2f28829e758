"""One HTTP exchange as the transport keeps it: the answer read at once with the api-key taken
out (:class:`Answer`), and the redirects followed on the configured host only (:func:`exchange`).

``requests`` keeps the URL with the key on its ``Response`` (``url``, ``request.url``, the
urllib3 response under ``raw``), and a gateway may echo that URL in its error body. The
transport holds a ``Response`` only while it reads it: :func:`exchange` turns it into an
:class:`Answer` whose text, headers and URL are redacted, closes it and drops it. No frame's
locals then hold the key when an error is raised, so a traceback printed with its locals
(``pytest --showlocals``, error trackers) cannot show it.

A redirect (301, 302, 303, 307, 308) is followed on the configured host only (same scheme,
host and port), at most :data:`MAX_REDIRECTS` times, without the ``api-key`` its ``Location``
may carry (the key is added again, as to every request). A redirect to another host would take
the key there: :class:`RedirectRefused` is raised instead, naming the target without its query.
Only reads, and 307/308 (which keep the method and body), are followed; a 301/302/303 to a
write is answered as it came (it may have been carried out).

>>> same_origin("https://api.example.com/x?a=1", "https://API.example.com:443")
True
>>> same_origin("http://api.example.com/x", "https://api.example.com")
False
>>> without_key("/api/campaign/list?api-key=***&id=7")
'/api/campaign/list?id=7'
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests
from requests.cookies import RequestsCookieJar, merge_cookies
from requests.sessions import merge_hooks
from requests.structures import CaseInsensitiveDict
from requests.utils import guess_json_utf

from .apikey import ApiKey
from .redaction import redact

MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
#: Redirects that keep the method and the body: followed for any request.
KEEPING = frozenset({307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_KEY_PARAM = re.compile(r"api[-_]?key", re.IGNORECASE)


class RedirectRefused(Exception):
    """A redirect the transport does not follow: to another host, or one too many."""


@dataclass(frozen=True, repr=False)
class Answer:
    """An HTTP answer, read: status, headers, body text and URL, each without the api-key.

    It answers what the transport asks of a ``requests.Response`` (``status_code``,
    ``headers``, ``json()``) and keeps nothing that holds the key.
    """

    status_code: int
    headers: Mapping[str, str]
    text: str
    size: int
    url: str

    @classmethod
    def read(cls, response: requests.Response, key: ApiKey) -> Answer:
        """The answer of ``response`` with the key taken out of everything kept.

        A body of a 2xx loses only the key itself (and its URL-encoded forms; a key of fewer
        than 8 characters is left there, it could be a word of the data); a body of any other
        status is redacted fully (``api-key=...`` of any key too)."""
        status = response.status_code
        content = response.content or b""
        encoding = response.encoding or guess_json_utf(content) or "utf-8"
        try:
            text = content.decode(encoding, errors="replace")
        except LookupError:  # a charset Python does not know
            text = content.decode("utf-8", errors="replace")
        headers = CaseInsensitiveDict(response.headers)
        every = "\n".join(headers.values())  # one redaction for all, each only if it finds one
        if redact(every, key) != every:
            headers = CaseInsensitiveDict({k: redact(v, key) for k, v in headers.items()})
        text = key.redact(text, long_only=True) if 200 <= status < 300 else redact(text, key)
        return cls(status, headers, text, len(content), redact(response.url or "", key))

    def json(self) -> Any:
        """The body as JSON; ``ValueError`` when it is empty, cut or not JSON."""
        return json.loads(self.text)

    def __repr__(self) -> str:
        return f"<Answer HTTP {self.status_code}, {self.size} bytes>"


@dataclass(frozen=True)
class Exchange:
    """What one request sends: method, URL (without the key), body, headers, files."""

    method: str
    url: str
    body: Any
    headers: dict[str, str]
    files: dict[str, tuple[str, bytes, str]] | None


def exchange(
    session: requests.Session,
    send: Exchange,
    *,
    auth: requests.auth.AuthBase,
    timeout: float | tuple[float, float],
    key: ApiKey,
    home: str,
) -> Answer:
    """Send ``send`` (``auth`` adds the key) and follow its redirects on ``home``'s origin.

    ``requests`` errors propagate; :class:`RedirectRefused` for a redirect off ``home`` or
    past :data:`MAX_REDIRECTS`."""
    url = send.url
    for _ in range(MAX_REDIRECTS + 1):
        answer = _once(session, send, url, auth=auth, timeout=timeout, key=key)
        location = answer.headers.get("Location")
        if answer.status_code not in REDIRECT_STATUSES or not location:
            return answer
        if send.method != "GET" and answer.status_code not in KEEPING:
            return answer
        target = urljoin(answer.url, location)
        if not same_origin(target, home):
            raise RedirectRefused(
                f"refused to follow a redirect (HTTP {answer.status_code}) off {home} "
                f"to {without_query(target)}: the api-key would go with it"
            )
        url = without_key(target)
    raise RedirectRefused(f"more than {MAX_REDIRECTS} redirects (the last to {without_query(url)})")


def _once(
    session: requests.Session,
    send: Exchange,
    url: str,
    *,
    auth: requests.auth.AuthBase,
    timeout: float | tuple[float, float],
    key: ApiKey,
) -> Answer:
    if _plain(session):
        response = session.send(
            _prepared(session, send, url, auth), timeout=timeout, allow_redirects=False
        )
    else:
        response = session.request(
            send.method,
            url,
            data=send.body,
            headers=send.headers,
            files=send.files,
            timeout=timeout,
            auth=auth,
            allow_redirects=False,
        )
    try:
        return Answer.read(response, key)
    finally:
        response.close()
        del response  # the Response holds the URL with the key


def _plain(session: requests.Session) -> bool:
    """True for a session whose ``request`` is ``requests``' own and that reads no settings
    from the environment: :func:`_prepared` and ``send`` then do what ``request`` would."""
    kind = type(session)
    return (
        isinstance(session, requests.Session)
        and kind.request is requests.Session.request
        and kind.prepare_request is requests.Session.prepare_request
        and not session.trust_env
    )


def _prepared(
    session: requests.Session, send: Exchange, url: str, auth: requests.auth.AuthBase
) -> requests.PreparedRequest:
    """The request ``session.request`` would prepare, without its per-call merging of
    settings through generic mapping checks (0.15 ms of the client's 2 ms of CPU per call).
    """
    headers = CaseInsensitiveDict(session.headers)
    headers.update(send.headers)
    for name in [k for k, v in headers.items() if v is None]:
        del headers[name]
    prepared = requests.PreparedRequest()
    prepared.prepare(
        method=send.method.upper(),
        url=url,
        headers=headers,
        files=send.files or [],
        data=[] if send.body is None else send.body,
        params=session.params or None,
        auth=auth,
        cookies=merge_cookies(RequestsCookieJar(), session.cookies),
        hooks=merge_hooks({}, session.hooks),
    )
    return prepared


def origin(url: str) -> str:
    """``scheme://host:port`` of ``url`` (the default port written out)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return f"{scheme}://{(parts.hostname or '').lower()}:{_port(parts.port, scheme)}"


def same_origin(url: str, home: str) -> bool:
    """True when ``url`` has ``home``'s scheme, host and port."""
    return origin(url) == origin(home)


def _port(port: int | None, scheme: str) -> int | None:
    return port if port is not None else _DEFAULT_PORTS.get(scheme)


def without_query(url: str) -> str:
    """``url`` without its query string and fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def without_key(url: str) -> str:
    """``url`` without any ``api-key`` parameter (the transport adds its own)."""
    parts = urlsplit(url)
    kept = [p for p in parts.query.split("&") if p and not _KEY_PARAM.fullmatch(p.split("=")[0])]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "&".join(kept), ""))
