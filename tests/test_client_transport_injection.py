"""``Client(transport=...)``: any object of the ``TransportLike`` protocol carries the calls.

The wrapper below records every request and hands it to a real ``Transport`` talking HTTP to
a real sandbox on 127.0.0.1.
"""

from __future__ import annotations

import logging
import pickle
import threading
import traceback
from typing import Any

import pytest

from toolkit import ApiError, AuthError, Client, ConfigError, NotFoundError, spec
from toolkit.client import Request, Transport, TransportLike
from toolkit.sandbox import Sandbox


class Recording:
    """Counts and records the calls, then delegates to a real transport."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.requests: list[Request] = []
        self.room_asked: list[str] = []
        self.closed = 0
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return self.inner.base_url

    @property
    def key_source(self) -> str:
        return self.inner.key_source

    def call(self, req: Request) -> Any:
        with self._lock:
            self.requests.append(req)
        return self.inner.call(req)

    def url_room(self, path: str) -> int:
        self.room_asked.append(path)
        return self.inner.url_room(path)

    def close(self) -> None:
        self.closed += 1
        self.inner.close()

    def __repr__(self) -> str:
        return f"<Recording {self.inner!r}>"

    def operations(self) -> list[str]:
        return [r.operation for r in self.requests]


@pytest.fixture(scope="module")
def sandbox() -> Any:
    """A sandbox of this module's own: the tests change lists and statuses."""
    with Sandbox(campaigns=5, accounts=2) as sb:
        yield sb


@pytest.fixture()
def recording(sandbox: Sandbox) -> Recording:
    return Recording(Transport(sandbox.url, sandbox.api_keys[0], backoff=0.01, max_backoff=0.05))


def test_the_wrapper_is_a_transport_like(recording):
    assert isinstance(recording, TransportLike)
    assert isinstance(recording.inner, TransportLike)


def test_every_call_goes_through_the_injected_transport(sandbox, recording):
    client = Client(transport=recording)
    assert client.transport is recording
    assert client.base_url == sandbox.url

    campaigns = client.campaigns.list(ad_format="push")
    assert campaigns and all(c["ad_format"] == "Push" for c in campaigns)
    assert recording.operations() == ["campaign.list"]
    assert recording.requests[0].method == "GET"
    assert recording.requests[0].params == {"ad_format": "push"}

    ids = [c["id"] for c in campaigns[:3]]
    result = client.lists.add_batch(ids, "subid_black", ["ab12cd"])
    assert result.failed == [] and sorted(result.succeeded) == sorted(ids)
    assert recording.operations()[1:] == ["list.add_batch.subid_black"]
    assert recording.room_asked == []  # the batch operation may be posted: no URL limit asked

    assert "ab12cd" in client.lists.get(ids[0], "subid_black")
    assert recording.operations()[2:] == ["list.read.subid_black"]


def test_errors_come_through_the_injected_transport(recording):
    client = Client(transport=recording)
    with pytest.raises(NotFoundError):
        client.campaigns.get(999_999_999)
    assert recording.operations() == ["campaign.item"]


def test_get_only_batches_ask_the_transport_for_url_room(recording):
    client = Client(transport=recording)
    ids = [c["id"] for c in client.campaigns.list(status="approved")[:2]]
    result = client.campaigns.pause_batch(ids)  # sent by GET only: chunked by URL room
    assert sorted(result.succeeded + result.failed) == sorted(ids)
    assert recording.room_asked == [spec.operations_by_name()["campaign.pause_batch"].path]
    assert recording.operations() == ["campaign.list", "campaign.pause_batch"]


def test_close_and_context_manager_close_the_transport(recording):
    with Client(transport=recording) as client:
        client.campaigns.list()
    assert recording.closed == 1


def test_key_source_and_reprs_never_show_the_key(sandbox, recording, caplog):
    key = sandbox.api_keys[0]
    client = Client(transport=recording)
    caplog.set_level(logging.DEBUG)
    client.campaigns.list()
    for text in (
        repr(client),
        repr(recording),
        repr(client.transport),
        client.key_source,
        str(vars(recording)),
        caplog.text,
    ):
        assert key not in text
    assert "argument" in client.key_source
    with pytest.raises(TypeError):
        pickle.dumps(client)


def test_a_refused_key_through_the_wrapper_names_its_source_not_the_key(sandbox):
    bad = "0123456789abcdef" * 2
    client = Client(transport=Recording(Transport(sandbox.url, bad)))
    with pytest.raises(AuthError) as info:
        client.campaigns.list()
    text = "".join(traceback.format_exception(info.value))
    assert bad not in text and bad not in repr(info.value)
    assert info.value.key_source is not None


def test_an_injected_transport_may_answer_by_itself(recording):
    """A transport need not talk HTTP: a replay answers from what it was given."""

    class Replay(Recording):
        def call(self, req: Request) -> Any:
            self.requests.append(req)
            return {"status": "error", "errorList": ["Campaign not found #5"]}

    replay = Replay(recording.inner)
    with pytest.raises(ApiError):
        Client(transport=replay).campaigns.get(5)
    assert replay.operations() == ["campaign.item"]


def test_transport_arguments_are_checked(sandbox, recording):
    with pytest.raises(ConfigError, match="lacks"):
        Client(transport=object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="either a transport"):
        Client(sandbox.url, transport=recording)
    with pytest.raises(ConfigError, match="either a transport"):
        Client(api_key=sandbox.api_keys[0], transport=recording)
    with pytest.raises(ConfigError, match="configure a Transport"):
        Client(transport=recording, retries=1)
    client = Client(transport=recording, max_batch_campaigns=2)  # the client's own options
    assert client.options.max_batch_campaigns == 2


def test_default_client_still_builds_its_transport(sandbox):
    client = Client(sandbox.url, sandbox.api_keys[0], retries=1)
    assert isinstance(client.transport, Transport)
    assert client.transport.retries == 1
    with pytest.raises(ConfigError, match="base URL"):
        Client(api_key=sandbox.api_keys[0])
    with pytest.raises(ConfigError, match="api-key"):
        Client(sandbox.url)
