"""A target kind added to the table at run time is routed, called, loaded, exported, read
back and planned.

Adding a kind is one row of :data:`toolkit.spec.TARGET_KINDS`: a sandbox started after the row
is added routes its four operations and shows it in the detail views, the client calls it,
the loaders return it in the ``targets`` table (and count it where its row says), the
workbook exports it and reads it back, and a plan edited in the workbook adds and drops it,
applies, and is undone.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest

import toolkit
import toolkit.bulk  # noqa: F401 - loaded before the row is added, so nothing caches it
import toolkit.bulk.workbook.book  # noqa: F401
import toolkit.frames  # noqa: F401
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
    assert spec.operations_by_path()["/api/campaign/add-device-model-batch"].batch
    assert "deviceModel" in spec.count_fields()
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


def _targets_of(tables: Any, cid: int, column: str) -> list[str]:
    t = tables.desired["targets"]
    return sorted(t.loc[(t["campaign_id"] == cid) & (t["kind"] == column), "value"].tolist())


def test_the_workbook_exports_and_reads_back_the_new_kind(
    client: Any, api: Api, tmp_path: Path
) -> None:
    cid = api.new_campaign("pops")
    client.targeting.add(cid, "device-model", [51, 52])
    path = toolkit.export_workbook(client, tmp_path / "kind.xlsx", [cid])
    tables = toolkit.read_workbook(path)
    assert _targets_of(tables, cid, "device_model") == ["51", "52"]
    assert tables.desired["targets"]["kind"].dtype == SCHEMAS["targets"]["kind"]


def _replace_value(path: Path, column: str, old: str, new: str) -> None:
    """Change one value of the targets sheet with openpyxl, as a person in Excel would."""
    wb = openpyxl.load_workbook(path)
    ws = wb["targets"]
    head = {c.value: c.column for c in ws[1]}
    for row in range(2, ws.max_row + 1):
        kind = ws.cell(row, head["kind"]).value
        value = ws.cell(row, head["value"])
        if kind == column and str(value.value) == old:
            value.value = new
            break
    else:
        raise AssertionError(f"no {column} {old} in the targets sheet")
    wb.save(path)


def test_a_plan_adds_and_drops_the_new_kind_and_undo_restores_it(
    client: Any, api: Api, tmp_path: Path
) -> None:
    cid = api.new_campaign("push")
    client.targeting.add(cid, "device-model", [61, 62])
    path = toolkit.export_workbook(client, tmp_path / "edit.xlsx", [cid])
    _replace_value(path, "device_model", "61", "63")
    tables = toolkit.read_workbook(path)
    with pytest.raises(toolkit.PlanRefused, match="device-model: loses 1 of 2"):
        toolkit.plan(client, tables)  # the guards count the new kind as any other
    plan = toolkit.plan(client, tables, allow={"drop_share"})
    calls = plan.to_frame()
    assert sorted(zip(calls["action"], calls["target"], strict=True)) == [
        ("add", "device-model"),
        ("drop", "device-model"),
    ]
    changes = plan.changes()
    assert set(changes["campaign_id"]) == {cid}
    journal = tmp_path / "journal.db"
    result = plan.apply(client, progress=False, journal=journal)
    assert set(result.to_frame()["outcome"]) == {"applied"}
    assert api.item(cid)["deviceModel"] == [62, 63]
    toolkit.undo(client, result.run_id, journal=journal, progress=False)
    assert api.item(cid)["deviceModel"] == [61, 62]
