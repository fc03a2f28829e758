"""Hostile and unusual HTTP against the sandbox: each request gets a clear JSON answer, at once.

Requests are written byte by byte on a raw socket (or sent with ``requests`` where it can say
what is meant), so that nothing on the client side cleans them up first. Every request has a
client-side timeout: a request the sandbox does not answer in time fails the test.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from toolkit.sandbox import Sandbox, limits
from toolkit.sandbox.httpserver import MIN_THREADS

from .conftest import Api

TIMEOUT_S = 5  # a client-side bound: a request not answered by then fails the test


class Answer:
    """A status, headers and the body decoded as JSON (the test fails if it is not JSON)."""

    def __init__(self, status: int, headers: dict[str, str], data: bytes) -> None:
        self.status = status
        self.headers = headers
        self.data = data
        assert headers.get("content-type", "").startswith("application/json"), (status, data[:300])
        self.body = json.loads(data.decode("utf-8"))

    @property
    def errors(self) -> list[str]:
        assert self.body["status"] == "error", self.body
        assert isinstance(self.body["errorList"], list) and self.body["errorList"], self.body
        return self.body["errorList"]


def raw(
    sb: Sandbox,
    method: str,
    target: bytes | str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    *,
    send_body: bool = True,
) -> Answer:
    """Send one request as raw bytes and read its answer."""
    if isinstance(target, str):
        target = target.encode("utf-8")
    head = [method.encode("ascii") + b" " + target + b" HTTP/1.1", b"Host: 127.0.0.1"]
    fields = {"Content-Length": str(len(body)), **(headers or {})}
    head += [f"{k}: {v}".encode("latin-1") for k, v in fields.items() if v is not None]
    port = int(sb.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S) as sock:
        sock.sendall(b"\r\n".join(head) + b"\r\n\r\n" + (body if send_body else b""))
        response = http.client.HTTPResponse(sock)
        response.begin()
        data = response.read()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, data)


def key_of(api: Api) -> str:
    return f"api-key={api.key}"


# --------------------------------------------------------------------------- chunked bodies


def test_chunked_json_body_updates_the_campaign(api):
    """``requests`` sends a generator body chunked; the update must really happen."""
    cid = api.new_campaign("push")
    body = json.dumps({"id": cid, "name": "chunked", "vertical_id": 1, "limit_sum": 123.5})

    def pieces() -> Iterator[bytes]:
        data = body.encode()
        for start in range(0, len(data), 7):
            yield data[start : start + 7]

    r = api.http.post(
        api.base + "/api/campaign/update",
        params={"api-key": api.key},
        data=pieces(),
        headers={"Content-Type": "application/json"},
        timeout=TIMEOUT_S,
    )
    assert r.json()["status"] == "ok", r.text
    item = api.item(cid, "short")
    assert (item["name"], item["limit_sum"]) == ("chunked", 123.5)


def test_chunked_form_body_on_a_raw_socket(sandbox, api):
    cid = api.new_campaign("push")
    form = f"id={cid}&items[]=5".encode()
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(form), form)
    answer = raw(
        sandbox,
        "POST",
        f"/api/campaign/add-os?{key_of(api)}",
        chunked,
        {
            "Content-Length": None,
            "Transfer-Encoding": "chunked",
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    assert answer.body == {"status": "ok"}
    assert "5" in api.item(cid)["os"]


# --------------------------------------------------------------------------- raw query bytes


def test_raw_utf8_in_the_query_string_is_read_as_utf8(sandbox, api):
    answer = raw(
        sandbox, "GET", f"/api/campaign/search?{key_of(api)}&type=city&search=Zürich&limit=5"
    )
    assert answer.status == 200, answer.body
    assert "Zürich (CH)" in answer.body.values()  # the search answers {id: name}
    # the same request percent-encoded gives the same answer
    r = api.get("/api/campaign/search", type="city", search="Zürich", limit=5)
    assert r.json() == answer.body


def test_raw_utf8_in_a_form_body_is_read_as_utf8(sandbox, api):
    cid = api.new_campaign("push")
    answer = raw(
        sandbox,
        "POST",
        f"/api/campaign/update?{key_of(api)}",
        f"id={cid}&name=Zürich ünd Köln&vertical_id=1".encode(),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert answer.body["status"] == "ok", answer.body
    assert api.item(cid, "short")["name"] == "Zürich ünd Köln"


@pytest.mark.parametrize(
    "query",
    [b"search=M\xfcnchen", b"search=\xc3", b"search=\xed\xa0\x80", b"sea\xffrch=abc"],
    ids=["latin-1", "truncated", "surrogate", "in-a-name"],
)
def test_invalid_utf8_bytes_in_the_query_string_are_a_clear_400(sandbox, api, query):
    target = f"/api/campaign/search?{key_of(api)}&type=city&".encode() + query
    answer = raw(sandbox, "GET", target)
    assert answer.status == 400
    assert "not valid UTF-8" in answer.errors[0]


# --------------------------------------------------------------------------- bounds


BIG = "9" * 20
HUGE = "9" * 5000


def hostile_cases(cid: int) -> list[tuple[str, str, str, bytes, str, int, str]]:
    """(id, method, path and query, content type, body, expected status, text of the error)."""
    form = "application/x-www-form-urlencoded"
    js = "application/json"
    return [
        ("cpa-rule id 2^66", "GET", f"drop-cpa-rule?id={cid}&items[]={BIG}", "", b"", 400,
         "must be an integer from"),
        ("creative id 10^20", "GET", "/api/creative/archive?id=100000000000000000000", "", b"",
         400, "must be an integer from"),
        ("batch id 2^63", "GET", "drop-region-batch?campaignId[]=9223372036854775808&items[]=1",
         "", b"", 400, "must be an integer from"),
        ("id of 5000 digits", "GET", f"item?id={HUGE}", "", b"", 400, "must be an integer"),
        ("negative id 2^63+1", "GET", "item?id=-9223372036854775809", "", b"", 400,
         "must be an integer from"),
        ("JSON id 2^63", "POST", "update", js,
         b'{"id": 9223372036854775808, "name": "x", "vertical_id": 1}', 400,
         "must be an integer from"),
        ("JSON number of 5000 digits", "POST", "add-os", js,
         b'{"id": ' + HUGE.encode() + b', "items": [1]}', 400, "Malformed JSON body"),
        ("JSON float 1e300 as id", "POST", "add-os", js, b'{"id": 1e300, "items": [1]}', 400,
         "must be an integer from"),
        ("cpa edit id 2^70", "POST", "add-cpa-rule", js,
         json.dumps({"id": cid, "mode": "edit", "items": [{"id": 2**70, "amount": 1}]}).encode(),
         200, "no valid id"),
        ("search limit 10^20", "GET", f"search?type=city&search=abc&limit={BIG}", "", b"", 400,
         "must be an integer from"),
        ("brackets 2000 deep", "GET", "drop-black-list?id=1&items" + "[a]" * 2000 + "=1", "",
         b"", 400, "nested deeper than"),
        ("brackets 16000 deep", "GET", "drop-black-list?id=1&items" + "[a]" * 16000 + "=1", "",
         b"", 400, "nested deeper than"),
        ("brackets one level too deep", "GET",
         "drop-black-list?id=1&items" + "[a]" * limits.MAX_DEPTH + "=1", "", b"", 400,
         "nested deeper than"),
        ("JSON nested 100000 deep", "POST", "add-os", js, b'{"id": ' + b"[" * 100_000 + b"]"
         * 100_000 + b"}", 400, "nested deeper than"),
        ("JSON nested one level too deep", "POST", "add-os", js,
         b'{"items": ' + b"[" * limits.MAX_DEPTH + b"]" * limits.MAX_DEPTH + b"}", 400,
         "nested deeper than"),
        ("form with too many pairs", "POST", "add-black-list", form,
         b"&".join([b"a=1"] * (limits.MAX_PARAMS + 1)), 400, "Too many parameters"),
        ("JSON with too many values", "POST", "add-black-list", js,
         b'{"items": [' + b",".join([b"1"] * (limits.MAX_PARAMS + 1)) + b"]}", 400,
         "Too many values in the JSON body"),
        ("lone surrogate in a JSON key", "POST", "add-country", js,
         b'{"id": %d, "items": {"\\ud800": 1}}' % cid, 400, "surrogate"),
        ("lone surrogate in a JSON value", "POST", "update", js,
         b'{"id": %d, "name": "a\\udfffb", "vertical_id": 1}' % cid, 400, "surrogate"),
        ("multipart garbage", "POST", "/api/creative/create", "multipart/form-data; boundary=xx",
         b"--xx\r\nContent-Disposition: form-data; name\x00=\r\n\r\n\xff\xfe--xx", 400,
         "multipart"),
        ("multipart without boundary", "POST", "/api/creative/create", "multipart/form-data",
         b"garbage", 400, "multipart"),
        ("multipart truncated", "POST", "/api/creative/update", "multipart/form-data; boundary=b",
         b"--b\r\nContent-Disposition: form-data; name=\"id\"\r\n\r\n12", 400, "multipart"),
        ("multipart text field of 600 kB", "POST", "/api/creative/create",
         "multipart/form-data; boundary=b",
         b'--b\r\nContent-Disposition: form-data; name="name"\r\n\r\n' + b"x" * 600_000
         + b"\r\n--b--\r\n", 400, "text field over"),
        ("NUL in a JSON string id", "POST", "add-os", js, b'{"id": "1\\u0000", "items": [1]}', 400,
         "must be an integer"),
        ("NUL in a query id", "GET", "item?id=%00", "", b"", 400, "must be an integer"),
        ("JSON NaN id", "POST", "add-os", js, b'{"id": NaN, "items": [1]}', 400,
         "must be an integer"),
        ("JSON list as id", "POST", "add-os", js, b'{"id": [1], "items": [1]}', 400,
         "must be an integer"),
        ("JSON object as items", "POST", "add-black-list", js,
         b'{"id": %d, "items": {"a": {"b": 1}}}' % cid, 400, "plain value"),
        ("bad JSON", "POST", "add-os", js, b'{"id": 1,', 400, "Malformed JSON body"),
    ]  # fmt: skip


def _cases() -> list[Any]:
    return [pytest.param(*case, id=case[0]) for case in hostile_cases(0)]


@pytest.fixture(scope="module")
def hostile_cid(api) -> int:
    return api.new_campaign("push")


@pytest.mark.parametrize("name,method,target,ctype,body,status,needle", _cases())
def test_hostile_request_gets_a_clear_json_error(
    sandbox, api, hostile_cid, name, method, target, ctype, body, status, needle
):
    case = next(c for c in hostile_cases(hostile_cid) if c[0] == name)
    _, method, target, ctype, body, status, needle = case
    path = target if target.startswith("/") else "/api/campaign/" + target
    sep = "&" if "?" in path else "?"
    answer = raw(
        sandbox, method, f"{path}{sep}{key_of(api)}", body, {"Content-Type": ctype or None}
    )
    assert answer.status == status, answer.body
    assert any(needle in e for e in answer.errors), answer.errors


def test_a_form_body_with_50000_bracketed_keys_is_answered_at_once(fresh_sandbox):
    # a sandbox of its own: 50,000 listed sources would slow every later test of the session
    api = Api(fresh_sandbox.url, fresh_sandbox.api_keys[0])
    hostile_cid = api.new_campaign("push")
    body = "&".join(f"items[k{i}]={i + 1}" for i in range(50_000)).encode()
    answer = raw(
        fresh_sandbox,
        "POST",
        f"/api/campaign/add-black-list?{key_of(api)}&id={hostile_cid}",
        body,
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert answer.status == 200 and answer.body == {"status": "ok"}
    assert len(api.ok("/api/campaign/black-list", id=hostile_cid)["items"]) == 50_000
    api.ok("/api/campaign/drop-black-list", id=hostile_cid, items=[1, 2])


def test_a_body_over_the_bound_is_refused_before_it_is_sent(sandbox, api):
    length = limits.MAX_BODY + 1
    answer = raw(
        sandbox,
        "POST",
        f"/api/creative/create?{key_of(api)}",
        b"",
        {"Content-Type": "multipart/form-data; boundary=x", "Content-Length": str(length)},
        send_body=False,
    )
    assert answer.status == 413
    assert "too large" in answer.errors[0]


def test_a_chunked_body_over_the_bound_is_refused(sandbox, api):
    piece = b"a" * (1 << 20)
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(17)) + b"0\r\n\r\n"
    answer = raw(
        sandbox,
        "POST",
        f"/api/campaign/add-os?{key_of(api)}",
        chunks,
        {"Content-Length": None, "Transfer-Encoding": "chunked", "Content-Type": "text/plain"},
    )
    assert answer.status == 413
    assert "too large" in answer.errors[0]


@pytest.mark.parametrize(
    "length,needle", [("abc", "Content-Length"), ("-1", "Content-Length"), ("1, 2", "Content")]
)
def test_a_bad_content_length_is_a_json_400(sandbox, api, length, needle):
    answer = raw(
        sandbox,
        "POST",
        f"/api/campaign/add-os?{key_of(api)}",
        b"{}",
        {"Content-Length": length, "Content-Type": "application/json"},
    )
    assert answer.status == 400
    assert needle in answer.errors[0]


def test_an_over_long_request_line_is_a_json_414(sandbox, api):
    target = f"/api/campaign/list?{key_of(api)}&name=" + "a" * (limits.MAX_REQUEST_LINE + 10)
    answer = raw(sandbox, "GET", target)
    assert answer.status == 414
    assert "Request line too long" in answer.errors[0]


def test_over_long_headers_are_a_json_431(sandbox, api):
    headers = {f"X-Filler-{i}": "b" * 8000 for i in range(limits.MAX_HEADERS // 8000 + 2)}
    answer = raw(sandbox, "GET", f"/api/campaign/list?{key_of(api)}", b"", headers)
    assert answer.status == 431
    assert "headers too large" in answer.errors[0]


def test_a_key_never_appears_in_an_error_answer(sandbox, api):
    target = f"/api/campaign/list?{key_of(api)}&name=" + "a" * (limits.MAX_REQUEST_LINE + 10)
    answer = raw(sandbox, "GET", target)
    assert api.key not in answer.data.decode()


# --------------------------------------------------------------------------- the server


def test_hung_requests_do_not_hold_up_the_others(fresh_sandbox):
    """More held requests than the server starts threads for, a slow client, then one more."""
    sb = fresh_sandbox
    sb.faults.configure({"rules": [{"hang_s": 60, "path": "/api/campaign/balance"}]})
    url = sb.url + "/api/campaign/"
    params = {"api-key": sb.api_keys[0]}
    answers: list[int] = []

    def held() -> None:
        r = requests.get(url + "balance", params=params, timeout=TIMEOUT_S * 4)
        answers.append(r.status_code)

    hung = [threading.Thread(target=held, daemon=True) for _ in range(MIN_THREADS + 4)]
    for thread in hung:
        thread.start()
    try:
        time.sleep(0.3)  # the requests are held by the server
        # a slow client too: half a request line on a connection of its own
        slow = socket.create_connection(("127.0.0.1", int(sb.url.rsplit(":", 1)[1])))
        slow.sendall(b"GET /api/campaign/list?api-k")
        r = requests.get(url + "list", params=params, timeout=TIMEOUT_S)
        assert r.status_code == 200 and r.json()["items"]
        slow.close()
    finally:
        sb.faults.clear()
    stopped = threading.Event()

    def stop() -> None:
        sb.stop()
        stopped.set()

    threading.Thread(target=stop, daemon=True).start()
    assert stopped.wait(TIMEOUT_S), "stop() did not return while requests were held"
    for thread in hung:
        thread.join(TIMEOUT_S)
    assert answers == [503] * len(hung)  # each held request answered when the sandbox stopped


def test_a_held_request_is_answered_503_when_the_sandbox_stops():
    sb = Sandbox(campaigns=1).start()
    sb.faults.configure({"rules": [{"hang_s": 60}]})
    out: dict[str, Any] = {}

    def call() -> None:
        r = requests.get(
            sb.url + "/api/campaign/list", params={"api-key": sb.api_keys[0]}, timeout=TIMEOUT_S
        )
        out["status"], out["body"] = r.status_code, r.json()

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    time.sleep(0.3)
    sb.stop()
    caller.join(TIMEOUT_S)
    assert out.get("status") == 503 and out["body"]["status"] == "error"


def test_a_new_sandbox_can_listen_on_the_port_of_one_just_stopped():
    first = Sandbox(campaigns=1).start()
    url = first.url
    port = int(url.rsplit(":", 1)[1])
    http = requests.Session()  # a kept-alive connection, closed by the server on stop
    assert http.get(url + "/_sandbox/health", timeout=TIMEOUT_S).json()["status"] == "ok"
    first.stop()
    second = Sandbox(campaigns=1, port=port).start()
    try:
        assert second.url == url
        r = requests.get(second.url + "/_sandbox/health", timeout=TIMEOUT_S)
        assert r.json() == {"status": "ok"}
    finally:
        second.stop()
        http.close()


def test_port_zero_picks_a_free_port_and_the_url_names_it():
    with Sandbox(campaigns=1, port=0) as sb:
        port = int(sb.url.rsplit(":", 1)[1])
        assert port > 0 and sb.url == f"http://127.0.0.1:{port}"
        assert requests.get(sb.url + "/_sandbox/health", timeout=TIMEOUT_S).json()["status"] == "ok"


def test_the_server_logs_no_url_and_no_key(fresh_sandbox, caplog):
    sb = fresh_sandbox
    key = sb.api_keys[0]
    caplog.set_level(logging.DEBUG)
    api = Api(sb.url, key)
    raw(sb, "GET", f"/api/campaign/list?api-key={key}&name=" + "a" * (limits.MAX_REQUEST_LINE + 1))
    raw(sb, "POST", f"/api/campaign/add-os?api-key={key}", b"{}", {"Content-Length": "x"})
    api.get("/api/campaign/list")
    # a client that goes away while its request is held
    sb.faults.configure({"rules": [{"hang_s": 0.5, "count": 1}]})
    with pytest.raises(requests.exceptions.ReadTimeout):
        requests.get(sb.url + "/api/campaign/list", params={"api-key": key}, timeout=(2, 0.1))
    time.sleep(0.8)
    server = [r for r in caplog.records if not r.name.startswith("urllib3")]
    for record in server:
        text = record.getMessage()
        assert key not in text and "api-key" not in text, (record.name, text)
