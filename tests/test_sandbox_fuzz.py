"""A bounded fuzz of every operation of the interface with hostile parameter values.

For each path of :func:`toolkit.spec.operations` (aliases included) and each of its methods,
hypothesis draws parameters among the names the handlers read, with hostile values (64-bit
edges, numbers of thousands of digits, NaN and infinities, NUL bytes, lone surrogates, deep
nesting, wrong types, real campaign ids so that requests reach the handlers) and sends them
as a query string (percent-encoded or raw bytes), a JSON body, a form body or, for creatives,
a multipart body. Every answer must be JSON, never HTTP 500, and come back before the
client's timeout (a timeout fails the test). The sandbox is a fresh one seeded the same way
each run, and each path's examples come from a seed of its own, so a run repeats.
"""

from __future__ import annotations

import http.client
import json
import math
import socket
import zlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote_from_bytes

import pytest
import requests
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from toolkit import spec
from toolkit.sandbox import Sandbox

TIMEOUT_S = 10  # a client-side bound: a request not answered by then fails the test
EXAMPLES_PER_PATH = 8

NAMES = [
    "id", "campaignId", "items", "name", "adFormat", "vertical_id", "target", "type", "search",
    "limit", "mode", "checkExist", "country", "bid", "title", "text", "url", "work_status",
    "status", "youtubeUrl", "allow_proxy", "frequency_capping", "web_view", "placement",
    "limit_sum", "limit_show", "limit_click", "limit_sum_day", "limit_day_sum", "note",
]  # fmt: skip

HOSTILE_TEXT = [
    "", " ", "\x00", "a\x00b", "9" * 5000, "9223372036854775808", "-9223372036854775809",
    "99999999999999999999", "1e400", "-1e400", "nan", "NaN", "inf", "-0", "0x1f", "١٢٣",
    "1_000", "[]", "{}", "null", "true", "%ff", "%00", "\ud800", "a\udfffb", "ü" * 300,
    "push", "US", "high", "add", "edit", "skip", "city", "abc", "<script>", "'; DROP TABLE x",
]  # fmt: skip

HOSTILE_INTS = [0, -1, 1, 2**31, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**20, 10**300]


def valid_params(cid: int) -> dict[str, Any]:
    """Values most handlers accept, for the hostile ones to replace."""
    return {
        "id": cid,
        "campaignId": [cid],
        "name": "fuzz",
        "vertical_id": 1,
        "adFormat": "push",
        "items": ["1"],
        "type": "city",
        "search": "abc",
        "title": "fuzz",
        "url": "https://example.com/x",
    }


def nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


def scalars(ids: list[int]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(HOSTILE_TEXT),
        st.sampled_from(HOSTILE_INTS),
        st.sampled_from(ids),
        st.integers(),
        st.floats(),
        st.booleans(),
        st.none(),
        st.text(max_size=12),
    )


def values(ids: list[int]) -> st.SearchStrategy[Any]:
    leaf = scalars(ids)
    tree = st.recursive(
        leaf,
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.sampled_from(["US", "0", "a", "", "\x00", "1e9"]), inner, max_size=3
            )
        ),
        max_leaves=10,
    )
    deep = st.builds(nested, st.integers(20, 200), leaf)
    curated = st.sampled_from([*HOSTILE_TEXT, *HOSTILE_INTS])
    return st.one_of(curated, curated, tree, tree, deep)


# --------------------------------------------------------------------------- encodings


def to_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return str(value)


def pairs(name: str, value: Any) -> Iterator[tuple[str, str]]:
    """The interface's bracket form: ``a[]=``, ``a[k]=``, ``a[i][k]=``."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from pairs(f"{name}[{k}]", v)
    elif isinstance(value, list):
        plain = all(not isinstance(v, (dict, list)) for v in value)
        for i, v in enumerate(value):
            yield from pairs(f"{name}[]" if plain else f"{name}[{i}]", v)
    else:
        yield name, to_text(value)


def query(params: dict[str, Any], raw: bool) -> bytes:
    out = []
    for key, value in (p for name, v in params.items() for p in pairs(name, v)):
        k, v = (s.encode("utf-8", "surrogatepass") for s in (key, value))
        if raw:  # bytes beyond ASCII sent as they are, as curl does
            out.append(
                k.replace(b"&", b"%26").replace(b"=", b"%3D").replace(b" ", b"+")
                + b"="
                + v.replace(b"&", b"%26").replace(b" ", b"+").replace(b"#", b"%23")
            )
        else:
            out.append(quote_from_bytes(k, safe="[]") + "=" + quote_from_bytes(v, safe=""))
            out[-1] = out[-1].encode("ascii")
    return b"&".join(out)  # fmt: skip


@pytest.fixture(scope="module")
def fuzz_sandbox() -> Iterator[Sandbox]:
    """A sandbox of its own: the fuzz changes state, and starts from the same seed each run."""
    with Sandbox(campaigns=8, accounts=2, seed=7) as sb:
        yield sb


@pytest.fixture(scope="module")
def campaign_ids(fuzz_sandbox: Sandbox) -> list[int]:
    r = requests.get(
        fuzz_sandbox.url + "/api/campaign/list",
        params={"api-key": fuzz_sandbox.api_keys[0]},
        timeout=TIMEOUT_S,
    )
    return [c["id"] for c in r.json()["items"]][:4]


def _routes() -> list[Any]:
    out = []
    for op in spec.operations():
        for path in (op.path, *op.aliases):
            for method in op.methods:
                out.append(pytest.param(path, method, id=f"{method} {path}"))
    return out


class Answer:
    def __init__(self, status: int, content_type: str, data: bytes) -> None:
        self.status, self.content_type, self.data = status, content_type, data


def raw_get(sb: Sandbox, method: str, target: bytes) -> Answer:
    """One request written byte by byte (``requests`` would re-quote a raw query string)."""
    port = int(sb.url.rsplit(":", 1)[1])
    head = method.encode() + b" " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S) as sock:
        sock.sendall(head + b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        response = http.client.HTTPResponse(sock)
        response.begin()
        data = response.read()
    return Answer(response.status, response.getheader("Content-Type", ""), data)


def send(
    sb: Sandbox, http_session: requests.Session, path: str, method: str, how: str, params: dict
) -> Answer:
    url = f"{sb.url}{path}?api-key={sb.api_keys[0]}"
    if how in ("query", "raw query"):
        target = f"{path}?api-key={sb.api_keys[0]}&".encode() + query(params, how == "raw query")
        return raw_get(sb, method, target)
    if how == "json":
        data = json.dumps(params, ensure_ascii=True).encode()
        r = http_session.request(
            method, url, data=data, headers={"Content-Type": "application/json"}, timeout=TIMEOUT_S
        )
    elif how == "form":
        r = http_session.request(
            method,
            url,
            data=query(params, raw=False),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            timeout=TIMEOUT_S,
        )
    else:
        fields = [(k, v.encode("utf-8", "surrogatepass")) for k, v in query_pairs(params)]
        files = {"iconFile": ("i.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "image/png")}
        r = http_session.request(method, url, data=fields, files=files, timeout=TIMEOUT_S)
    return Answer(r.status_code, r.headers.get("Content-Type", ""), r.content)


def query_pairs(params: dict[str, Any]) -> list[tuple[str, str]]:
    return [p for name, v in params.items() for p in pairs(name, v)]


def check(r: Answer, path: str, params: dict) -> None:
    assert r.status != 500, (path, params, r.data[:300])
    assert r.content_type.startswith("application/json"), (path, r.status, r.data[:300])
    body = json.loads(r.data.decode("utf-8"))
    assert isinstance(body, dict), (path, body)
    if r.status >= 400:
        assert body["status"] == "error" and body["errorList"], (path, body)


@pytest.mark.parametrize("path,method", _routes())
def test_every_operation_answers_hostile_parameters_with_json(
    fuzz_sandbox, campaign_ids, path, method
):
    session = requests.Session()
    hows = ["query", "raw query"] if method == "GET" else ["json", "form", "query"]
    if path.startswith("/api/creative/") and method == "POST":
        hows = ["multipart", "form", "query"]

    valid = valid_params(campaign_ids[0])
    over_valid = st.builds(  # one hostile value over valid ones: requests reach the handlers
        lambda name, value: {**valid, name: value},
        st.sampled_from(sorted(valid)),
        values(campaign_ids),
    )
    anything = st.dictionaries(st.sampled_from(NAMES), values(campaign_ids), max_size=4)

    @settings(
        max_examples=EXAMPLES_PER_PATH,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @seed(zlib.crc32(f"{method} {path}".encode()))  # other examples per path, the same each run
    @given(how=st.sampled_from(hows), params=st.one_of(over_valid, anything))
    def run(how: str, params: dict[str, Any]) -> None:
        check(send(fuzz_sandbox, session, path, method, how, params), path, params)

    run()
