"""The sandbox's rate limit over real HTTP: at most R ``/api/`` requests per api-key in any
sliding one-second window; past it HTTP 429 with ``Retry-After`` and nothing done."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import requests

from toolkit.sandbox import Sandbox

from .conftest import Api

R = 20


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=2, accounts=2, seed=5) as sandbox:
        yield sandbox


@pytest.fixture()
def limited(sb: Sandbox) -> Iterator[Sandbox]:
    """The module's sandbox with a rate limit of R; cleared after the test."""
    sb.faults.configure({"rate_limit": R})
    yield sb
    sb.faults.clear()


def test_a_burst_past_the_limit_gets_429_with_retry_after(limited):
    api = Api(limited.url, limited.api_keys[0])
    answers = [api.get("/api/campaign/balance") for _ in range(R + 5)]
    codes = [r.status_code for r in answers]
    assert codes[:R] == [200] * R  # a burst within one second, far under a second here
    refused = [r for r in answers if r.status_code == 429]
    assert refused, codes
    for r in refused:
        wait = float(r.headers["Retry-After"])
        assert 0 < wait <= 1
        assert r.json() == {
            "status": "error",
            "errorList": ["Too many requests: rate limit exceeded"],
        }


def test_waiting_out_retry_after_finds_a_free_slot(limited):
    api = Api(limited.url, limited.api_keys[0])
    r = None
    for _ in range(R + 1):
        r = api.get("/api/campaign/balance")
        if r.status_code == 429:
            break
    assert r is not None and r.status_code == 429
    time.sleep(float(r.headers["Retry-After"]))
    assert api.get("/api/campaign/balance").status_code == 200


def test_a_refused_write_does_nothing(limited):
    api = Api(limited.url, limited.api_keys[0])
    cid = int(api.get("/api/campaign/list").json()["items"][0]["id"])
    while api.get("/api/campaign/balance").status_code != 429:  # fill the window
        pass
    r = api.get("/api/campaign/add-black-list", id=cid, items=[987654321])
    assert r.status_code == 429
    limited.faults.configure({"rate_limit": None})
    listed = api.item(cid)["blacklist"]
    assert "987654321" not in [str(x) for x in listed]


def test_the_limit_is_per_api_key(limited):
    first = Api(limited.url, limited.api_keys[0])
    second = Api(limited.url, limited.api_keys[1])
    while first.get("/api/campaign/balance").status_code != 429:  # bounded: R + 1 calls
        pass
    assert second.get("/api/campaign/balance").status_code == 200
    assert first.get("/api/campaign/balance").status_code == 429


def test_control_endpoints_are_not_limited(limited):
    api = Api(limited.url, limited.api_keys[0])
    while api.get("/api/campaign/balance").status_code != 429:
        pass
    for _ in range(R + 5):
        assert requests.get(limited.url + "/_sandbox/health", timeout=10).status_code == 200


def test_no_one_second_window_holds_more_than_r_accepted_requests(limited):
    """Four threads call as fast as they can for about 2.5 s. A request was accepted between
    its sending and its answer, so any accepted requests sent at or after t and answered
    before t + 1 were accepted within one second: there may be at most R of them."""
    key = limited.api_keys[0]
    spans: list[tuple[float, float, int]] = []
    lock = threading.Lock()
    deadline = time.monotonic() + 2.5

    def hammer() -> None:
        session = requests.Session()
        for _ in range(2000):  # bounded; the deadline ends it first
            if time.monotonic() >= deadline:
                return
            sent = time.monotonic()
            r = session.get(
                limited.url + "/api/campaign/balance", params={"api-key": key}, timeout=10
            )
            with lock:
                spans.append((sent, time.monotonic(), r.status_code))

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    accepted = sorted((s, e) for s, e, code in spans if code == 200)
    refused = sum(1 for *_, code in spans if code == 429)
    assert {code for *_, code in spans} == {200, 429}
    assert len(accepted) > R and refused > len(accepted)  # the limit held the rest back
    for start, _ in accepted:
        inside = sum(1 for s, e in accepted if s >= start and e < start + 1)
        assert inside <= R, (start, inside)
    counted = limited.stats()
    assert counted.get("GET /api/campaign/balance 429", 0) >= refused


@pytest.mark.parametrize("bad", [0, -1, 1.5, "10", True, [5], 100_001])
def test_rate_limit_settings_are_validated(sb, bad):
    url = sb.url + "/_sandbox/faults"
    r = requests.post(url, json={"rate_limit": bad, "latency_ms": 3}, timeout=10)
    assert r.status_code == 400, bad
    assert "'rate_limit' must be a whole number" in r.json()["errorList"][0]
    assert sb.faults.describe()["latency_ms"] == 0  # nothing half-applied
    with pytest.raises(ValueError, match="rate_limit"):
        Sandbox(rate_limit=bad)


def test_unknown_fault_settings_are_refused(sb):
    r = requests.post(sb.url + "/_sandbox/faults", json={"rate_limt": 5}, timeout=10)
    assert r.status_code == 400
    assert "Unknown fault settings ['rate_limt']" in r.json()["errorList"][0]


def test_rate_limit_is_set_shown_and_cleared_over_http(sb):
    url = sb.url + "/_sandbox/faults"
    try:
        assert requests.post(url, json={"rate_limit": 7}, timeout=10).json()["rate_limit"] == 7
        assert requests.get(url, timeout=10).json()["rate_limit"] == 7
        kept = requests.post(url, json={"latency_ms": 0}, timeout=10).json()
        assert kept["rate_limit"] == 7  # other settings leave it alone
        assert (
            requests.post(url, json={"rate_limit": None}, timeout=10).json()["rate_limit"] is None
        )
        requests.post(url, json={"rate_limit": 7}, timeout=10)
        assert requests.delete(url, timeout=10).json()["rate_limit"] is None
    finally:
        sb.faults.clear()


def test_a_sandbox_started_with_a_rate_limit_keeps_it():
    with Sandbox(campaigns=1, accounts=1, rate_limit=3) as small:
        api = Api(small.url, small.api_keys[0])
        codes = [api.get("/api/campaign/balance").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]


def test_command_line_rate_limit_option(capsys):
    from toolkit.cli import main

    args = ["sandbox", "--port", "0", "--campaigns", "1", "--once"]
    assert main([*args, "--rate-limit", "5"]) == 0
    assert "Rate limit: 5 requests per second per api-key" in capsys.readouterr().out
    assert main([*args, "--rate-limit", "0"]) == 2
    err = capsys.readouterr().err
    assert "'rate_limit' must be a whole number" in err and "Traceback" not in err
