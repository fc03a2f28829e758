"""A target kind added to the table at run time is routed, called and loaded.

Adding a kind is one row of :data:`toolkit.spec.TARGET_KINDS`: a sandbox started after the row
is added routes its four operations and shows it in the detail views, the client calls it,
and the loaders return it in the ``targets`` table (and count it where its row says).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import toolkit
from toolkit import spec
from toolkit.frames.schemas import SCHEMAS
from toolkit.sandbox import Sandbox

from .conftest import Api

#: A kind the interface does not have: int items, no dictionary, no reference data.
NEW = spec.TargetKind(
    "device-model",
    int,
    "deviceModel",
    count_fields={"": "deviceModel"},
    help="device model id",
)


@pytest.fixture(scope="module")
def new_kind() -> Iterator[spec.TargetKind]:
    spec.add_target_kind(NEW)
    try:
        yield NEW
    finally:
        spec.remove_target_kind(NEW.name)


@pytest.fixture(scope="module")
def sandbox_with_kind(new_kind: spec.TargetKind) -> Iterator[Sandbox]:
    with Sandbox(campaigns=4, accounts=1) as sb:
        yield sb


@pytest.fixture(scope="module")
def api(sandbox_with_kind: Sandbox) -> Api:
    return Api(sandbox_with_kind.url, sandbox_with_kind.api_keys[0])


@pytest.fixture(scope="module")
def client(sandbox_with_kind: Sandbox) -> Iterator[Any]:
    sb = sandbox_with_kind
    with toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url) as c:
        yield c


def test_the_row_names_its_paths_and_spellings(new_kind: spec.TargetKind) -> None:
    assert spec.target_kind("device_model") is new_kind
    assert spec.kind_of_column("device_model") is new_kind
    assert spec.OPERATIONS_BY_PATH["/api/campaign/add-device-model-batch"].batch
    assert "deviceModel" in spec.COUNT_FIELDS
    assert new_kind in spec.item_kinds()


def test_the_sandbox_routes_add_and_drop(api: Api) -> None:
    cid = api.new_campaign("push")
    assert api.ok("/api/campaign/add-device-model", id=cid, items=[12, 11])
    assert api.item(cid)["deviceModel"] == [11, 12]
    assert api.item(cid, "count")["deviceModel"] == 2
    taken = api.errors("/api/campaign/add-device-model", id=cid, items=[11])
    assert taken == [spec.MSG_SAVE_TAKEN.format(item=11, campaign_id=cid)]
    assert api.ok("/api/campaign/drop-device-model", id=cid, items=[11])
    assert api.item(cid)["deviceModel"] == [12]
    missing = api.errors("/api/campaign/drop-device-model", id=cid, items=[11])
    assert missing == [spec.MSG_DROP_MISSING.format(item=11, campaign_id=cid)]


def test_the_sandbox_takes_any_positive_id_of_a_kind_without_reference_data(api: Api) -> None:
    cid = api.new_campaign("video")
    errors = api.errors("/api/campaign/add-device-model", id=cid, items=[0, -3, 7])
    assert errors == [
        f"Invalid device-model item: 0; CampaignId: {cid}",
        f"Invalid device-model item: -3; CampaignId: {cid}",
    ]
    assert api.item(cid)["deviceModel"] == []  # a request with a bad item changes nothing


def test_the_sandbox_routes_the_batch_operations(api: Api) -> None:
    ids = [api.new_campaign("push"), api.new_campaign("pops")]
    body = api.ok("/api/campaign/add-device-model-batch", campaignId=ids, items=[5, 6])
    assert body["result"] == {"success": ids, "failed": []}
    assert [api.item(c)["deviceModel"] for c in ids] == [[5, 6], [5, 6]]
    body = api.ok("/api/campaign/drop-device-model-batch", campaignId=ids, items=[5])
    assert body["result"] == {"success": ids, "failed": []}
    assert [api.item(c)["deviceModel"] for c in ids] == [[6], [6]]


def test_the_client_calls_the_new_kind(client: Any, api: Api) -> None:
    a, b = api.new_campaign("push"), api.new_campaign("inpage")
    client.targeting.add(a, "device-model", [21, 22])
    assert client.campaigns.get(a, "full")["deviceModel"] == [21, 22]
    client.targeting.drop(a, "device_model", [21])
    assert client.campaigns.get(a, "full")["deviceModel"] == [22]
    result = client.targeting.add_batch([a, b], "device_model", [30])
    assert result.ok and sorted(result.succeeded) == sorted([a, b])
    result = client.targeting.drop_batch([a, b], "device-model", [30])
    assert result.ok
    assert api.item(b)["deviceModel"] == []


def test_the_loaders_return_the_new_kind(client: Any, api: Api) -> None:
    cid = api.new_campaign("push")
    client.targeting.add(cid, "device-model", [41, 40])
    account = toolkit.load_account(client, progress=False)
    targets = account.targets
    assert "device_model" in list(targets["kind"].cat.categories)
    assert targets["kind"].dtype == SCHEMAS["targets"]["kind"]
    rows = targets[(targets["campaign_id"] == cid) & (targets["kind"] == "device_model")]
    assert rows["value"].tolist() == ["40", "41"]
    assert rows["label"].isna().all() and rows["list_type"].isna().all()
    campaigns = account.campaigns.set_index("id")
    assert "n_device_model" in SCHEMAS["campaigns"]
    assert campaigns.loc[cid, "n_device_model"] == 2
