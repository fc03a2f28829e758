"""Hostile bodies for the sandbox's control endpoints and multipart parts, over real HTTP.

Every field of a control body is checked (type and range) before anything changes: a bad one
is answered 400 naming the field, and the faults, the accounts and the moderation states are
as they were. A multipart part without a field name is a 400 that says so, not a 500.
The ``echo`` and ``redirect`` faults answer as a careless gateway does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from toolkit.sandbox import Sandbox

from .conftest import Api

TIMEOUT_S = 10
BALANCE = "/api/campaign/balance"


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=3, seed=4) as sandbox:
        yield sandbox


def control(sb: Sandbox, name: str, body: Any) -> requests.Response:
    """POST a control body: a dict as JSON, a str as it is (JSON ``1e400``, ``NaN``)."""
    data = body.encode() if isinstance(body, str) else None
    return requests.post(
        f"{sb.url}/_sandbox/{name}",
        json=None if isinstance(body, str) else body,
        data=data,
        headers={"Content-Type": "application/json"},
        timeout=TIMEOUT_S,
    )


def refused(r: requests.Response, field: str) -> str:
    assert r.status_code == 400, (r.status_code, r.text)
    message = " ".join(r.json()["errorList"])
    assert field in message, message
    return message


# --------------------------------------------------------------------------- faults


BAD_FAULTS = {
    "path a number": ({"rules": [{"status": 503, "path": 123}]}, "'path'"),
    "path without slash": ({"rules": [{"status": 503, "path": "api"}]}, "'path'"),
    "latency 1e20": ({"latency_ms": 1e20}, "'latency_ms'"),
    "latency negative": ({"latency_ms": -1}, "'latency_ms'"),
    "latency a string": ({"latency_ms": "5"}, "'latency_ms'"),
    "latency NaN": ('{"latency_ms": NaN}', "'latency_ms'"),
    "count 1e400": ('{"rules": [{"status": 503, "count": 1e400}]}', "'count'"),
    "count fraction": ({"rules": [{"status": 503, "count": 1.5}]}, "'count'"),
    "count a string": ({"rules": [{"status": 503, "count": "3"}]}, "'count'"),
    "count negative": ({"rules": [{"status": 503, "count": -1}]}, "'count'"),
    "rate 2": ({"rules": [{"status": 503, "rate": 2}]}, "'rate'"),
    "rate true": ({"rules": [{"status": 503, "rate": True}]}, "'rate'"),
    "hang 1e9": ({"rules": [{"hang_s": 1e9}]}, "'hang_s'"),
    "hang a list": ({"rules": [{"hang_s": [1]}]}, "'hang_s'"),
    "retry_after negative": ({"rules": [{"status": 429, "retry_after": -1}]}, "'retry_after'"),
    "retry_after 1e400": ('{"rules": [{"status": 429, "retry_after": 1e400}]}', "'retry_after'"),
    "method a number": ({"rules": [{"status": 503, "method": 5}]}, "'method'"),
    "method unknown": ({"rules": [{"status": 503, "method": "FETCH"}]}, "'method'"),
    "after a string": ({"rules": [{"status": 503, "after": "yes"}]}, "'after'"),
    "after null": ({"rules": [{"status": 503, "after": None}]}, "'after'"),
    "status a string": ({"rules": [{"status": "503"}]}, "'status'"),
    "status true": ({"rules": [{"status": True}]}, "'status'"),
    "body a number": ({"rules": [{"body": 5}]}, "'body'"),
    "redirect ftp": ({"rules": [{"redirect": "ftp://example.com/"}]}, "'redirect'"),
    "redirect with status": ({"rules": [{"redirect": "/x", "status": 503}]}, "'redirect'"),
    "seed a list": ({"latency_ms": 5, "seed": [1]}, "'seed'"),
    "seed fraction": ({"seed": 1.5}, "'seed'"),
    "good then bad rule": ({"rules": [{"status": 503}, {"status": 503, "path": 1}]}, "rules[1]"),
}


@pytest.mark.parametrize("body,field", BAD_FAULTS.values(), ids=BAD_FAULTS.keys())
def test_a_bad_fault_setting_is_refused_and_nothing_changes(sb, body, field):
    requests.delete(f"{sb.url}/_sandbox/faults", timeout=TIMEOUT_S)
    before = requests.get(f"{sb.url}/_sandbox/faults", timeout=TIMEOUT_S).json()
    refused(control(sb, "faults", body), field)
    assert requests.get(f"{sb.url}/_sandbox/faults", timeout=TIMEOUT_S).json() == before
    assert Api(sb.url, sb.api_keys[0]).get(BALANCE).status_code == 200  # no 500, no wait


def test_good_fault_settings_within_bounds_are_kept(sb):
    body = {
        "latency_ms": 60_000,
        "seed": 7,
        "rules": [
            {"status": 503.0, "count": 2.0, "path": "/api/x", "method": "post", "rate": 1},
            {"hang_s": 120, "retry_after": 3600, "status": 429, "after": False},
        ],
    }
    try:
        r = control(sb, "faults", body)
        assert r.status_code == 200, r.text
        first, second = r.json()["rules"]
        assert (first["status"], first["count"], first["method"]) == (503, 2, "POST")
        assert (second["hang_s"], second["retry_after"], r.json()["latency_ms"]) == (
            120,
            3600,
            60_000,
        )
    finally:
        requests.delete(f"{sb.url}/_sandbox/faults", timeout=TIMEOUT_S)


# --------------------------------------------------------------------------- reset, moderate


BAD_RESETS = {
    "campaigns 1e400": ('{"campaigns": 1e400}', "'campaigns'"),
    "campaigns a string": ({"campaigns": "x"}, "'campaigns'"),
    "campaigns negative": ({"campaigns": -1}, "'campaigns'"),
    "campaigns a million": ({"campaigns": 1_000_000}, "'campaigns'"),
    "accounts zero": ({"accounts": 0}, "'accounts'"),
    "seed a string": ({"seed": "x"}, "'seed'"),
    "seed 2**64": ({"seed": 2**64}, "'seed'"),
    "unknown field": ({"campains": 3}, "campains"),
}


@pytest.mark.parametrize("body,field", BAD_RESETS.values(), ids=BAD_RESETS.keys())
def test_a_bad_reset_is_refused_and_nothing_changes(sb, body, field):
    keys = sb.api_keys
    ids = [c["id"] for c in Api(sb.url, keys[0]).get("/api/campaign/list").json()["items"]]
    refused(control(sb, "reset", body), field)
    assert sb.api_keys == keys
    items = Api(sb.url, keys[0]).get("/api/campaign/list").json()["items"]
    assert [c["id"] for c in items] == ids


def demo_campaign(sb: Sandbox) -> dict[str, Any]:
    return Api(sb.url, sb.api_keys[0]).get("/api/campaign/list").json()["items"][0]


BAD_MODERATIONS = {
    "id 1e400": ('{"type": "campaign", "id": 1e400, "status": "Approved"}', "'id'"),
    "id a string": ({"id": "7"}, "'id'"),
    "id true": ({"id": True}, "'id'"),
    "type a number": ({"type": 5}, "'type'"),
    "status a list": ({"status": ["Approved"]}, "'status'"),
    "status_note a number": ({"status_note": 5}, "'status_note'"),
    "convert a number": ({"convert": 1}, "'convert'"),
    "unknown field": ({"note": "x"}, "note"),
}


@pytest.mark.parametrize("change,field", BAD_MODERATIONS.values(), ids=BAD_MODERATIONS.keys())
def test_a_bad_moderation_is_refused_and_nothing_changes(sb, change, field):
    campaign = demo_campaign(sb)
    status = "Declined" if campaign["status"] != "Declined" else "Approved"
    if isinstance(change, str):
        body: Any = change
    else:
        body = {"type": "campaign", "id": campaign["id"], "status": status, **change}
    refused(control(sb, "moderate", body), field)
    assert demo_campaign(sb)["status"] == campaign["status"]


# --------------------------------------------------------------------------- multipart


def multipart(sb: Sandbox, part_head: bytes) -> requests.Response:
    body = b"--XX\r\n" + part_head + b"\r\n\r\nhello\r\n--XX--\r\n"
    return requests.post(
        f"{sb.url}/api/creative/create",
        params={"api-key": sb.api_keys[0]},
        data=body,
        headers={"Content-Type": "multipart/form-data; boundary=XX"},
        timeout=TIMEOUT_S,
    )


@pytest.mark.parametrize(
    "head,words",
    [
        (b"Content-Disposition: form-data", "part 1 has no name="),
        (b'Content-Disposition: form-data; filename="a.png"', "part 1 has no name="),
        (b"Content-Type: text/plain", "part 1 has no Content-Disposition"),
    ],
    ids=["no-name", "filename-only", "no-disposition"],
)
def test_a_multipart_part_without_a_name_is_a_clear_400(sb, head, words):
    count = len(Api(sb.url, sb.api_keys[0]).get("/api/creative/list").json()["items"])
    refused(multipart(sb, head), words)
    assert len(Api(sb.url, sb.api_keys[0]).get("/api/creative/list").json()["items"]) == count


def test_a_named_part_still_reaches_the_handler(sb):
    r = multipart(sb, b'Content-Disposition: form-data; name="title"')
    assert r.status_code == 200 and r.json()["status"] == "error", r.text  # its own checks


# --------------------------------------------------------------------------- gateway faults


def test_echo_and_redirect_faults_answer_as_a_careless_gateway(sb, faults):
    api = Api(sb.url, sb.api_keys[0])
    faults.configure({"rules": [{"body": "echo", "count": 1}]})
    r = api.get(BALANCE)
    assert r.status_code == 502
    assert r.json()["errorList"] == [
        f"Bad gateway: upstream failed on GET {sb.url}{BALANCE}?api-key={sb.api_keys[0]}"
    ]
    faults.configure({"rules": [{"redirect": "http://127.0.0.1:9/x?from=gw", "count": 1}]})
    r = api.http.get(sb.url + BALANCE, params={"api-key": "k"}, allow_redirects=False, timeout=5)
    assert (r.status_code, r.headers["Location"]) == (307, "http://127.0.0.1:9/x?from=gw&api-key=k")
