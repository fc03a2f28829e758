"""The client's transport over real HTTP: errors, retries, backoff, rate limit, configuration,
logging and keeping the api-key secret.

Faults (5xx, 429, hangs) come from the sandbox's fault injection on a sandbox of the test's own.
"""

from __future__ import annotations

import importlib
import logging
import re
import socket
import time
import traceback
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import toolkit
from toolkit import (
    ApiError,
    AuthError,
    ConfigError,
    NotFoundError,
    RateLimitError,
    ToolkitError,
    TransportError,
    ValidationError,
)
from toolkit.client import Request
from toolkit.datadir import sandbox_state

client_module = importlib.import_module("toolkit.client.client")

FAST = {"backoff": 0.01, "max_backoff": 0.05}
CALL_LINE = re.compile(r"^(GET|POST) (/api/[\w/-]+) -> (\d{3}) in (\d+) ms$")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x01icon" * 8


@pytest.fixture()
def sb(fresh_sandbox) -> Iterator[Any]:
    """A sandbox of the test's own; its faults are cleared after the test."""
    try:
        yield fresh_sandbox
    finally:
        fresh_sandbox.faults.clear()


def connect(sb: Any, key: str | None = None, **options: Any) -> toolkit.Client:
    return toolkit.connect(api_key=key or sb.api_keys[0], base_url=sb.url, **options)


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def requests_seen(sb: Any, path: str) -> dict[int, int]:
    """HTTP status -> how many requests to ``path`` the sandbox answered."""
    out: dict[int, int] = {}
    for key, n in sb.stats().items():
        _, p, status = key.split(" ")
        if p == path:
            out[int(status)] = out.get(int(status), 0) + n
    return out


def api_new_campaign(sb: Any, name: str) -> int:
    with connect(sb) as c:
        return c.campaigns.create(
            "push", name, 1, target={"category": [1], "quality": ["high"], "country": {"US": 0.5}}
        )["id"]


# --------------------------------------------------------------------------- the error tree


def test_exception_tree():
    for cls in (ConfigError, ValidationError, TransportError, ApiError):
        assert issubclass(cls, ToolkitError)
    for cls in (AuthError, NotFoundError, RateLimitError):
        assert issubclass(cls, ApiError)
    assert issubclass(ValidationError, ValueError)


def test_wrong_key_is_auth_error_and_not_retried(sb):
    with (
        connect(sb, "0123456789abcdef0123456789abcdef", **FAST) as c,
        pytest.raises(AuthError) as info,
    ):
        c.campaigns.list()
    exc = info.value
    assert (exc.operation, exc.http_status, exc.error_list) == (
        "campaign.list",
        401,
        ["Invalid api-key"],
    )
    assert requests_seen(sb, "/api/campaign/list") == {401: 1}


def test_not_found_for_unknown_and_foreign_campaigns(sandbox):
    theirs = toolkit.connect(api_key=sandbox.api_keys[1], base_url=sandbox.url)
    foreign = theirs.campaigns.list()[0]["id"]
    foreign_creative = theirs.creatives.list()[0]["id"]
    with connect(sandbox) as c:
        for cid in (foreign, 987_654_321):
            with pytest.raises(NotFoundError) as info:
                c.campaigns.get(cid)
            assert info.value.error_list == [f"Campaign not found #{cid}"]
            assert (info.value.operation, info.value.http_status) == ("campaign.item", 200)
            with pytest.raises(NotFoundError):
                c.campaigns.start(cid)
            with pytest.raises(NotFoundError):
                c.lists.get(cid, "subid_black")
            with pytest.raises(NotFoundError):
                c.targeting.add(cid, "os", [1])
        with pytest.raises(NotFoundError):
            c.creatives.get(foreign_creative)
        with pytest.raises(NotFoundError) as info:
            c.transport.call(Request("nothing", "GET", "/api/campaign/nothing", {}))
        assert info.value.http_status == 404
        assert info.value.error_list == ["Unknown operation: /api/campaign/nothing"]
    theirs.close()


def test_business_and_bad_request_errors_are_api_errors(sandbox):
    with connect(sandbox) as c:
        cid = c.campaigns.create("push", "untargeted", 1)["id"]
        with pytest.raises(ApiError) as info:
            c.campaigns.start(cid)
        exc = info.value
        assert type(exc) is ApiError
        assert (exc.operation, exc.http_status) == ("campaign.start", 200)
        assert exc.error_list and all("can not be started" in m for m in exc.error_list)
        assert str(exc).startswith("campaign.start: ")

        with pytest.raises(ApiError) as info:
            c.transport.call(Request("campaign.item", "GET", "/api/campaign/item", {"id": "x"}))
        assert info.value.http_status == 400
        assert "must be an integer" in info.value.error_list[0]

        c.targeting.add(cid, "quality", ["low"])
        with pytest.raises(ApiError) as info:
            c.targeting.add(cid, "quality", ["low", "high"])
        assert [o["outcome"] for o in info.value.outcomes] == ["already_exists"]
        assert sorted(c.campaigns.get(cid, "full")["quality"]) == ["high", "low"]


# --------------------------------------------------------------------------- retries


def test_read_is_retried_on_503_and_succeeds(sb):
    sb.faults.configure({"rules": [{"status": 503, "count": 2, "path": "/api/campaign/list"}]})
    with connect(sb, retries=3, **FAST) as c:
        assert len(c.campaigns.list()) == 5
    assert requests_seen(sb, "/api/campaign/list") == {503: 2, 200: 1}


@pytest.mark.parametrize("status", [500, 502, 504])
def test_read_is_retried_on_other_5xx(sb, status):
    sb.faults.configure({"rules": [{"status": status, "count": 1}]})
    with connect(sb, retries=1, **FAST) as c:
        assert c.account.balance()["currency"] == "USD"
    assert requests_seen(sb, "/api/campaign/balance") == {status: 1, 200: 1}


def test_5xx_beyond_the_retries_is_an_api_error(sb):
    sb.faults.configure({"rules": [{"status": 500}]})
    with connect(sb, retries=2, **FAST) as c, pytest.raises(ApiError) as info:
        c.account.balance()
    assert (info.value.operation, info.value.http_status) == ("account.balance", 500)
    assert info.value.error_list == ["Service temporarily unavailable"]
    assert requests_seen(sb, "/api/campaign/balance") == {500: 3}

    sb.faults.configure({"rules": [{"status": 502}]})
    with connect(sb, retries=0) as c, pytest.raises(ApiError) as info:
        c.account.balance()
    assert info.value.http_status == 502
    assert info.value.error_list == ["HTTP 502 (text/html answer)"]


def test_429_honours_retry_after(sb):
    sb.faults.configure({"rules": [{"status": 429, "count": 1, "retry_after": 1}]})
    with connect(sb, retries=2, backoff=0.01) as c:
        started = time.monotonic()
        assert c.account.balance()["currency"] == "USD"
        took = time.monotonic() - started
    assert took >= 1.0
    assert requests_seen(sb, "/api/campaign/balance") == {429: 1, 200: 1}


def test_429_beyond_the_retries_is_rate_limit_error(sb):
    sb.faults.configure({"rules": [{"status": 429, "retry_after": 0}]})
    with connect(sb, retries=2, **FAST) as c, pytest.raises(RateLimitError) as info:
        c.campaigns.list()
    assert (info.value.http_status, info.value.retry_after) == (429, 0)
    assert info.value.error_list == ["Too many requests"]
    assert requests_seen(sb, "/api/campaign/list") == {429: 3}


def test_429_asking_for_too_long_a_wait_is_not_waited_for(sb):
    sb.faults.configure({"rules": [{"status": 429, "retry_after": 30}]})
    with connect(sb, retries=3, max_retry_after=1, **FAST) as c:
        started = time.monotonic()
        with pytest.raises(RateLimitError) as info:
            c.campaigns.list()
        assert time.monotonic() - started < 1
    assert info.value.retry_after == 30
    assert requests_seen(sb, "/api/campaign/list") == {429: 1}


def test_429_is_retried_for_unsafe_writes_too(sb):
    sb.faults.configure({"rules": [{"status": 429, "count": 1, "retry_after": 0}]})
    with connect(sb, retries=1, **FAST) as c:
        item = c.campaigns.create("push", "after 429", 1)
    assert item["name"] == "after 429"
    assert requests_seen(sb, "/api/campaign/create") == {429: 1, 200: 1}


def test_unsafe_writes_are_not_retried_on_503(sb):
    cid = api_new_campaign(sb, "target")
    rule = {"status": 503, "count": 1}
    rule_ = {
        "type": "sum",
        "cond": "greater",
        "amount": 5,
        "lead_type": "lead",
        "lead_cond": "less",
        "lead_amount": 1,
    }
    with connect(sb, retries=3, **FAST) as c:
        before = len(c.campaigns.list())
        sb.faults.configure({"rules": [rule]})
        with pytest.raises(ApiError) as info:
            c.campaigns.create("push", "never twice", 1)
        assert (info.value.operation, info.value.http_status) == ("campaign.create", 503)
        assert requests_seen(sb, "/api/campaign/create") == {503: 1, 200: 1}  # 200: the setup
        assert len(c.campaigns.list()) == before

        sb.faults.configure({"rules": [rule]})
        with pytest.raises(ApiError) as info:
            c.cpa_rules.add(cid, [rule_])
        assert info.value.http_status == 503
        assert requests_seen(sb, "/api/campaign/add-cpa-rule") == {503: 1}
        assert c.cpa_rules.list(cid) == []

        sb.faults.configure({"rules": [rule]})
        with pytest.raises(ApiError):
            c.creatives.create(cid, name="n", title="t", url="https://example.com", icon=PNG)
        assert requests_seen(sb, "/api/creative/create") == {503: 1}


def test_safe_writes_are_retried_on_503(sb):
    cid = api_new_campaign(sb, "target")
    sb.faults.configure({"rules": [{"status": 503, "count": 1}]})
    with connect(sb, retries=2, **FAST) as c:
        assert c.lists.add(cid, "subid_black", ["abc1"]) == {"status": "ok"}
        assert requests_seen(sb, "/api/campaign/add-sub-id-black") == {503: 1, 200: 1}
        sb.faults.configure({"rules": [{"status": 503, "count": 1}]})
        result = c.targeting.add_batch([cid], "os", [1])
        assert result.ok and result.calls == 1
        assert requests_seen(sb, "/api/campaign/add-os-batch") == {503: 1, 200: 1}
        sb.faults.configure({"rules": [{"status": 504, "count": 1}]})
        assert c.campaigns.pause(cid) == {"status": "ok"}
        assert c.lists.get(cid, "subid_black") == ["abc1"]


def test_backoff_grows_exponentially_and_is_capped(sb, caplog):
    caplog.set_level(logging.DEBUG, logger="toolkit")
    sb.faults.configure({"rules": [{"status": 503, "count": 4, "path": "/api/campaign/list"}]})
    with connect(sb, retries=4, backoff=0.04, max_backoff=0.2) as c:
        c.transport._rng.uniform = lambda low, high: high  # the top of each jitter range
        started = time.monotonic()
        c.campaigns.list()
        took = time.monotonic() - started
    waits = [
        float(m)
        for m in re.findall(r"retrying campaign\.list after HTTP 503 in ([\d.]+) s", caplog.text)
    ]
    assert waits == [0.04, 0.08, 0.16, 0.2]
    assert took >= sum(waits)


def test_backoff_jitter_stays_within_its_range(sb, caplog):
    caplog.set_level(logging.DEBUG, logger="toolkit")
    sb.faults.configure({"rules": [{"status": 503, "count": 4}]})
    with connect(sb, retries=4, backoff=0.02, max_backoff=1) as c:
        c.account.balance()
    waits = [float(m) for m in re.findall(r"after HTTP 503 in ([\d.]+) s", caplog.text)]
    assert len(waits) == 4
    for n, wait in enumerate(waits):
        assert 0 <= wait <= 0.02 * 2**n + 0.005


# --------------------------------------------------------------------------- no answer


def test_nothing_listening_is_transport_error():
    url = f"http://127.0.0.1:{closed_port()}"
    with toolkit.connect(api_key="k" * 32, base_url=url, retries=0) as c:
        started = time.monotonic()
        with pytest.raises(TransportError) as info:
            c.campaigns.list()
        assert time.monotonic() - started < 2
    assert info.value.operation == "campaign.list"
    assert "connection refused" in str(info.value)
    unsafe = toolkit.connect(api_key="k" * 32, base_url=url, retries=2, **FAST)
    with pytest.raises(TransportError) as info:
        unsafe.campaigns.create("push", "x", 1)  # never sent: retried even though unsafe
    unsafe.close()
    assert "3 tries" in str(info.value)


# A hang rule with a status answers without touching the store once it wakes: by then the
# test's sandbox may have stopped and closed it.


def test_hang_beyond_the_read_timeout_is_transport_error_in_time(sb):
    sb.faults.configure({"rules": [{"hang_s": 3, "status": 503, "count": 1}]})
    with connect(sb, timeout=(1, 0.3), retries=0) as c:
        started = time.monotonic()
        with pytest.raises(TransportError) as info:
            c.campaigns.list()
        took = time.monotonic() - started
    assert 0.3 <= took < 1.5
    assert info.value.operation == "campaign.list"
    assert "read timeout" in str(info.value)


def test_read_is_retried_after_a_hang(sb):
    sb.faults.configure({"rules": [{"hang_s": 2, "status": 503, "count": 1}]})
    with connect(sb, timeout=(1, 0.3), retries=1, **FAST) as c:
        started = time.monotonic()
        assert c.account.balance()["currency"] == "USD"
        assert time.monotonic() - started < 1.5


def test_unsafe_write_is_not_repeated_after_a_hang(sb):
    sb.faults.configure({"rules": [{"hang_s": 0.6, "count": 1}]})
    name = f"once {uuid.uuid4().hex[:8]}"
    with connect(sb, timeout=(1, 0.2), retries=3, **FAST) as c:
        with pytest.raises(TransportError):
            c.campaigns.create("push", name, 1)
        time.sleep(0.8)  # the hung request is still processed by the service
        assert [x["name"] for x in c.campaigns.list(name=name)] == [name]


# --------------------------------------------------------------------------- rate limit, pool


def test_rate_limit_spaces_the_calls(sandbox):
    with connect(sandbox, rate_limit=5) as c:
        started = time.monotonic()
        for _ in range(10):
            c.account.balance()
        took = time.monotonic() - started
    assert took >= 1.6


def test_connections_are_pooled(sandbox, caplog):
    caplog.set_level(logging.DEBUG, logger="urllib3")
    with connect(sandbox) as c:
        for _ in range(5):
            c.account.balance()
    assert caplog.text.count("Starting new HTTP connection") == 1


# --------------------------------------------------------------------------- connect()


@pytest.fixture()
def no_env(monkeypatch, tmp_path):
    """No key or URL in the environment, and a config file that does not exist."""
    monkeypatch.delenv("CAMPAIGN_API_KEY", raising=False)
    monkeypatch.delenv("CAMPAIGN_API_URL", raising=False)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    return tmp_path


def test_connect_without_a_key_starts_the_sandbox_once(no_env, monkeypatch, caplog):
    monkeypatch.setattr(client_module, "_SANDBOX", None)  # independent of earlier tests
    caplog.set_level(logging.INFO, logger="toolkit")
    first = toolkit.connect()
    try:
        second = toolkit.connect(retries=1)
        assert first.sandbox is not None and first.sandbox is second.sandbox
        assert first.base_url == second.base_url == first.sandbox.url
        assert "sandbox" in repr(first)
        lines = [r for r in caplog.records if "built-in sandbox, demo account" in r.getMessage()]
        assert len(lines) == 1 and lines[0].name.startswith("toolkit")
        assert first.sandbox.url in lines[0].getMessage()
        assert f"state in {sandbox_state()}" in lines[0].getMessage()
        assert first.campaigns.list() and second.account.balance()["currency"] == "USD"
        assert second.options.retries == 1
        first.close()
        second.close()
    finally:
        client_module._SANDBOX.stop()


def test_connect_reads_the_config_file(no_env, sandbox, monkeypatch):
    path = no_env / "config.toml"
    path.write_text(
        f'[default]\napi_key = "{sandbox.api_keys[1]}"\nbase_url = "{sandbox.url}"\n'
        "retries = 1\ntimeout = [2, 10]\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(path))
    with toolkit.connect() as c:
        assert c.base_url == sandbox.url and c.sandbox is None
        assert c.options.retries == 1 and c.options.timeout == (2, 10)
        theirs = c.account.balance()
    with toolkit.connect(api_key=sandbox.api_keys[0]) as c:  # an argument wins over the file
        assert c.account.balance() != theirs


def test_connect_reads_the_environment(no_env, sandbox, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_API_KEY", sandbox.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sandbox.url)
    path = no_env / "config.toml"
    path.write_text('[default]\napi_key = "wrong"\nbase_url = "http://127.0.0.1:1"\n')
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(path))
    with toolkit.connect() as c:  # the environment wins over the file
        assert c.base_url == sandbox.url
        assert c.account.balance()["currency"] == "USD"


def test_connect_configuration_errors(no_env, sandbox, monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="toolkit")
    monkeypatch.setattr(client_module, "_SANDBOX", None)
    with pytest.raises(ConfigError, match="no api-key"):
        toolkit.connect(base_url=sandbox.url)
    assert client_module._SANDBOX is None, "no sandbox is started for a configuration error"
    assert "built-in sandbox" not in caplog.text
    with pytest.raises(ConfigError, match="no base URL"):
        toolkit.connect(api_key="abc")
    monkeypatch.setenv("CAMPAIGN_API_KEY", "abc")
    with pytest.raises(ConfigError, match="no base URL"):
        toolkit.connect()
    with pytest.raises(ConfigError, match="unknown client options"):
        toolkit.connect(api_key="abc", base_url=sandbox.url, colour="red")
    path = no_env / "config.toml"
    path.write_text(f'[default]\napi_key = "abc"\nbase_url = "{sandbox.url}"\ncolour = 1\n')
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(path))
    with pytest.raises(ConfigError, match="colour"):
        toolkit.connect()
    path.write_text("[default\napi_key = ")
    with pytest.raises(ConfigError, match="not valid TOML"):
        toolkit.connect()


# --------------------------------------------------------------------------- secrecy, logs


def chain(exc: BaseException | None) -> Iterator[BaseException]:
    """An exception and every exception linked to it as cause or context."""
    while exc is not None:
        yield exc
        exc = exc.__cause__ or exc.__context__


def test_the_key_is_never_shown(sb, caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("urllib3", "urllib3.connectionpool", "requests", "toolkit"):
        caplog.set_level(logging.DEBUG, logger=name)
    secret, wrong = sb.api_keys[0], "feedfacecafebeef" * 2
    url = f"http://127.0.0.1:{closed_port()}"
    theirs = toolkit.connect(api_key=sb.api_keys[1], base_url=sb.url).campaigns.list()[0]["id"]
    errors: list[BaseException] = []
    clients = [
        connect(sb, wrong),
        connect(sb, retries=1, timeout=(1, 0.3), **FAST),
        toolkit.connect(api_key=secret, base_url=url, retries=1, **FAST),
    ]
    bad, good, nowhere = clients
    sb.faults.configure(
        {
            "rules": [
                {"status": 500, "count": 2, "path": "/api/campaign/balance"},
                {"hang_s": 1.5, "status": 503, "count": 2, "path": "/api/campaign/list-refs-data"},
            ]
        }
    )
    for action in (
        bad.campaigns.list,
        lambda: good.campaigns.get(theirs),
        lambda: good.campaigns.get(theirs + 10**8),
        good.account.balance,
        lambda: good.account.dictionary("os"),
        lambda: good.lists.add(theirs, "subid_black", [f"{i:x}" for i in range(2000)]),
        nowhere.account.balance,
        lambda: nowhere.lists.add(1, "subid_black", [f"{i:x}" for i in range(2000)]),
    ):
        with pytest.raises(ToolkitError) as info:
            action()
        errors.append(info.value)
    kinds = [type(e) for e in errors]
    assert kinds == [
        AuthError,
        NotFoundError,
        NotFoundError,
        ApiError,
        TransportError,
        NotFoundError,
        TransportError,
        TransportError,
    ]
    assert "api-key" in caplog.text  # urllib3 logged the request lines, redacted
    for key in (secret, wrong):
        assert key not in caplog.text
        for record in caplog.records:
            assert key not in record.getMessage()
        for exc in errors:
            assert key not in "".join(traceback.format_exception(exc))
            for linked in chain(exc):
                assert key not in str(linked) and key not in repr(linked)
        for c in clients:
            assert key not in repr(c) and key not in str(c) and key not in repr(c.transport)
            assert key not in repr(c.options) and key not in repr(vars(c))
    for c in clients:
        c.close()


def test_each_call_is_logged_at_debug(sandbox, caplog):
    caplog.set_level(logging.DEBUG, logger="toolkit")
    with connect(sandbox) as c:
        cid = c.campaigns.create("push", "logged", 1)["id"]
        c.lists.add(cid, "subid_white", [f"{i:x}" for i in range(2000)])
        with pytest.raises(NotFoundError):
            c.campaigns.get(123)
    with connect(sandbox, "0" * 32) as c, pytest.raises(AuthError):
        c.account.balance()
    lines = [
        r
        for r in caplog.records
        if r.name.startswith("toolkit") and CALL_LINE.match(r.getMessage())
    ]
    assert all(r.levelno == logging.DEBUG for r in lines)
    found = [CALL_LINE.match(r.getMessage()).groups()[:3] for r in lines]
    assert found == [
        ("GET", "/api/campaign/create", "200"),
        ("POST", "/api/campaign/add-sub-id-white", "200"),
        ("GET", "/api/campaign/item", "200"),
        ("GET", "/api/campaign/balance", "401"),
    ]
    handler_seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            handler_seen.append(record)

    toolkit_log = logging.getLogger("toolkit")
    keep = Keep(logging.DEBUG)
    toolkit_log.addHandler(keep)
    try:
        with connect(sandbox) as c:
            c.account.balance()
    finally:
        toolkit_log.removeHandler(keep)
    assert [CALL_LINE.match(r.getMessage()).group(1, 2, 3) for r in handler_seen] == [
        ("GET", "/api/campaign/balance", "200")
    ]
