"""The transport's short ways of building a request give what the general ones give.

``encode_query`` writes plain parameters (ints, unreserved text) itself; ``KeyAuth`` appends
the encoded key to a prepared URL instead of rebuilding it; a plain ``requests.Session`` has
its request prepared without ``Session.request``'s per-call merging, while a session class
that overrides ``request`` is still called through it. Each is checked against the general
way, and against the real sandbox over HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import qs_codec
import requests

import toolkit
from toolkit.client.apikey import ApiKey
from toolkit.client.transport import KeyAuth, Transport, _query_value, encode_query, wire_value
from toolkit.client.wire import Exchange, _plain, _prepared
from toolkit.sandbox import Sandbox


@pytest.fixture(scope="module")
def quiet_sb() -> Iterator[Sandbox]:
    """A sandbox the tests only read."""
    with Sandbox(campaigns=3, seed=5) as sandbox:
        yield sandbox


def general_query(params: dict[str, Any]) -> str:
    """``encode_query``'s general way (qs_codec with brackets), for comparison."""
    data = {k: _query_value(wire_value(v)) for k, v in params.items() if v is not None}
    return qs_codec.encode(data, qs_codec.EncodeOptions(list_format=qs_codec.ListFormat.BRACKETS))


@pytest.mark.parametrize(
    "params",
    [
        {"id": 1000001, "mode": "full"},
        {"id": -5, "status": "", "x": None},
        {"name": "a b", "id": 7},
        {"name": "x%y", "mode": "full"},
        {"q": "é", "flag": True},
        {"bid": 0.1 + 0.2, "items": ["a", "b"]},
        {"a~b": "c.d_e-f"},
        {"a b": "c"},
        {},
    ],
)
def test_encode_query_equals_the_general_encoding(params: dict[str, Any]) -> None:
    assert encode_query(params) == general_query(params)


@pytest.mark.parametrize("key", ["k" * 32, "ab%cd+ef/gh?ij&kl=mn", "é-ünï~cøde_12", "a.b~c*d'e(f)"])
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:5000/api/campaign/item?id=1&mode=full",
        "http://127.0.0.1:5000/api/account/balance",
        "http://h/api/x?items%5B%5D=a%20b&y=%C3%A9",
        "http://h/api/x?q=1#part",
    ],
)
def test_key_auth_puts_the_key_where_requests_would(key: str, url: str) -> None:
    expected = requests.PreparedRequest()
    expected.prepare(method="GET", url=url)
    expected.prepare_url(expected.url, {"api-key": key})
    got = requests.PreparedRequest()
    got.prepare(method="GET", url=url, auth=KeyAuth(ApiKey(key)))
    assert got.url == expected.url


@pytest.mark.parametrize(
    "send",
    [
        Exchange("GET", "http://127.0.0.1:5000/api/campaign/item?id=1&mode=full", None, {}, None),
        Exchange("POST", "http://127.0.0.1:5000/api/x?id=1", b'{"a":1}', {"X-A": "1"}, None),
        Exchange("POST", "http://127.0.0.1:5000/api/x", {"f": "v", "g": "w"}, {}, None),
        Exchange("POST", "http://127.0.0.1:5000/api/x", None, {}, None),
    ],
)
def test_prepared_request_equals_the_sessions_own(send: Exchange) -> None:
    transport = Transport("http://127.0.0.1:5000", "k" * 32)
    session = transport.session
    session.headers["X-Session"] = "kept"
    session.cookies.set("c", "1")
    own = session.prepare_request(
        requests.Request(
            send.method,
            send.url,
            data=send.body,
            headers=send.headers,
            files=send.files,
            auth=transport._auth,
        )
    )
    short = _prepared(session, send, send.url, transport._auth)
    assert (short.method, short.url, dict(short.headers), short.body) == (
        own.method,
        own.url,
        dict(own.headers),
        own.body,
    )
    assert short.hooks == own.hooks


class CountingSession(requests.Session):
    """A session whose ``request`` does something of its own (counts the calls)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def request(self, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        self.calls += 1
        return super().request(*args, **kwargs)


def test_a_session_that_overrides_request_is_called_through_it(quiet_sb: Sandbox) -> None:
    session = CountingSession()
    transport = Transport(quiet_sb.url, quiet_sb.api_keys[0], session=session)
    assert not _plain(session)
    client = toolkit.Client(transport=transport)
    client.account.balance()
    client.campaigns.list()
    assert session.calls == 2


def test_a_plain_session_sends_its_headers_and_hooks(quiet_sb: Sandbox) -> None:
    client = toolkit.connect(api_key=quiet_sb.api_keys[0], base_url=quiet_sb.url)
    session = client.transport.session
    assert _plain(session)
    seen: list[requests.Response] = []
    session.headers["X-Trace"] = "t-1"
    session.hooks["response"].append(lambda r, *a, **k: seen.append(r))
    ids = [int(c["id"]) for c in client.campaigns.list()]
    assert client.campaigns.get(ids[0], "full")["id"] == ids[0]
    assert len(seen) == 2
    assert all(r.request.headers["X-Trace"] == "t-1" for r in seen)
    assert all(r.request.url.count("api-key=") == 1 for r in seen)
