"""Every method of the client against the sandbox over real HTTP.

Answers are compared with what plain HTTP (the ``api`` fixture) returns for the same campaign;
how a call was sent (GET with a query string, or POST with a JSON body) and how many calls a
batch needed are read from the sandbox's request counters.
"""

from __future__ import annotations

import io
import json
import math
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pytest
import requests

import toolkit
from toolkit import ApiError, BatchResult, NotFoundError, ValidationError
from toolkit.client import checks
from toolkit.client.transport import MAX_URL
from toolkit.sandbox import Sandbox

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x01icon" * 8
PNG2 = b"\x89PNG\r\n\x1a\n" + b"\x02\x03image" * 8
MISSING = 987_654_321
COUNTRIES = sorted(checks.country_codes())


# --------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def client(sandbox) -> Iterator[toolkit.Client]:
    with toolkit.connect(api_key=sandbox.api_keys[0], base_url=sandbox.url) as c:
        yield c


def calls(sandbox, action: Callable[[], Any]) -> tuple[Any, Counter[str]]:
    """Run ``action``; its answer and the requests the sandbox saw meanwhile."""
    before = Counter(sandbox.stats())
    answer = action()
    return answer, Counter(sandbox.stats()) - before


def hexid(n: int = 8) -> str:
    return uuid.uuid4().hex[:n]


def new_campaign(api, ad_format: str = "push", targeted: bool = True) -> int:
    return api.new_campaign(ad_format, targeted=targeted)


def country_bids(item: dict[str, Any]) -> dict[str, float]:
    """Country code -> bid from a detail view's ``countrySet``."""
    return {code: s["price"] for s in item["countrySet"] for code in s["geo"].values()}


def rows(result: BatchResult) -> set[tuple[int, str, str | None]]:
    """``(campaign_id, outcome, item)`` of every row of ``to_frame()``."""
    frame = result.to_frame()
    assert list(frame.columns) == ["campaign_id", "outcome", "item", "message"]
    assert str(frame["campaign_id"].dtype) == "Int64"
    assert list(frame["outcome"].cat.categories) == [
        "ok",
        "already_exists",
        "not_exists",
        "campaign_not_found",
        "invalid",
        "other",
    ]
    assert len(frame) == len(result.succeeded) + sum(len(result.errors[c]) for c in result.failed)
    return {
        (int(r.campaign_id), str(r.outcome), None if pd.isna(r.item) else str(r.item))
        for r in frame.itertuples()
    }


# --------------------------------------------------------------------------- campaigns


def test_campaign_list_matches_plain_http(client, api):
    assert client.campaigns.list() == api.get("/api/campaign/list").json()["items"]
    mine = client.campaigns.list(ad_format="push", mode="cpc", work_status="paused")
    plain = api.get(
        "/api/campaign/list", ad_format="push", mode="cpc", work_status="paused"
    ).json()["items"]
    assert mine == plain
    assert all(c["ad_format"] == "Push" and c["mode"] == "CPC" for c in mine)


def test_campaign_list_filters_by_name_and_status(client, api):
    for params in ({"name": "Push"}, {"status": "approved"}, {"url": "example"}):
        assert (
            client.campaigns.list(**params)
            == api.get("/api/campaign/list", **params).json()["items"]
        )


@pytest.mark.parametrize("mode", ["short", "count", "full"])
def test_campaign_get_matches_plain_http(client, api, mode):
    for cid in [c["id"] for c in api.get("/api/campaign/list").json()["items"][:4]]:
        assert client.campaigns.get(cid, mode) == api.item(cid, mode)


def test_campaign_get_unknown_campaign_is_not_found(client):
    with pytest.raises(NotFoundError) as info:
        client.campaigns.get(MISSING)
    assert info.value.error_list == [f"Campaign not found #{MISSING}"]


def test_campaign_create_small_write_is_a_get_with_exact_numbers(client, api, sandbox):
    name = f"client push {hexid()}"
    item, seen = calls(
        sandbox,
        lambda: client.campaigns.create(
            "push",
            name,
            1,
            target={"category": [1, 3], "quality": ["high"], "country": {"US": 0.1 + 0.2}},
            limit_sum=0.1 + 0.7,
            limit_day_sum=12.5,
            limit_click_day=100,
            allow_proxy=False,
            note="from the client",
            frequency_capping=3,
        ),
    )
    assert seen == {"GET /api/campaign/create 200": 1}
    assert item["name"] == name and item["ad_format"] == "Push" and item["status"] == "New"
    assert item["work_status"] == "Paused" and item["allow_proxy"] == "Deny"
    detail = api.item(item["id"])
    assert detail["limit_sum"] == 0.8 and detail["limit_day_sum"] == 12.5
    assert detail["limit_day_click"] == 100 and detail["frequency_capping"] == 3
    assert detail["note"] == "from the client"
    assert country_bids(detail) == {"US": 0.3}
    assert sorted(detail["category"]) == ["1", "3"] and detail["quality"] == ["high"]
    assert client.campaigns.get(item["id"], "full") == detail


def test_campaign_create_pops_with_web_view_and_cpc_mode(client, api):
    item = client.campaigns.create(
        "pops", f"pops {hexid()}", 2, url="https://example.com/lp", web_view=True, mode="cpc"
    )
    assert item["ad_format"] == "Popunder" and item["mode"] == "CPC"
    assert item["web_view"] == "Enable" and item["url"] == "https://example.com/lp"
    assert api.item(item["id"], "short")["mode"] == "CPC"


def test_campaign_booleans_are_sent_as_the_service_expects(client, api):
    sent: list[str] = []

    def hook(response: requests.Response, *args: Any, **kwargs: Any) -> None:
        sent.append(response.request.url)

    client.transport.session.hooks["response"].append(hook)
    try:
        item = client.campaigns.create(
            "video",
            f"video {hexid()}",
            1,
            vpaid=True,
            web_view=False,
            allow_proxy=True,
            placement="instream",
            url="https://example.com/vast.xml",
            note=None,
        )
    finally:
        client.transport.session.hooks["response"].remove(hook)
    query = requests.utils.urlparse(sent[0]).query.split("&")
    assert {"vpaid=yes", "web_view=no", "allow_proxy=1", "placement=instream"} <= set(query)
    assert not any(part.startswith("note") for part in query)  # None is left out
    assert (item["web_view"], item["allow_proxy"], item["ad_format"]) == (
        "Disable",
        "Allow",
        "Video",
    )
    assert client.campaigns.get(item["id"]) == api.item(item["id"], "short")


def test_campaign_create_large_target_goes_as_json_body(client, api, sandbox):
    cats = list(api.ok("/api/campaign/list-refs-data", type="category")["category"]["push"])
    codes = [
        v.rsplit("(", 1)[1][:2]
        for v in api.ok("/api/campaign/list-refs-data", type="country")["country"].values()
    ]
    bids = {code: round(0.01 * (i % 50 + 1), 2) + 0.001 for i, code in enumerate(codes)}
    item, seen = calls(
        sandbox,
        lambda: client.campaigns.create(
            "push",
            f"wide {hexid()}",
            1,
            target={
                "category": [int(c) for c in cats],
                "quality": ["low", "high"],
                "country": bids,
            },
        ),
    )
    assert seen == {"POST /api/campaign/create 200": 1}
    assert country_bids(api.item(item["id"])) == {c: float(f"{b:.15g}") for c, b in bids.items()}


def test_campaign_update_changes_settings_and_clears_a_limit(client, api):
    cid = new_campaign(api)
    client.campaigns.update(cid, "renamed", 3, note="n2", limit_day_sum=5.5, limit_sum=0.1 * 3)
    detail = api.item(cid)
    assert (detail["name"], detail["note"], detail["limit_day_sum"], detail["limit_sum"]) == (
        "renamed",
        "n2",
        5.5,
        0.3,
    )
    answer = client.campaigns.update(cid, "renamed", 3, limit_day_sum="")
    assert answer["id"] == cid
    detail = api.item(cid)
    assert detail["limit_day_sum"] is None and detail["limit_sum"] == 0.3


def test_campaign_start_pause_archive(client, api):
    cid = new_campaign(api)
    for action, state in (("start", "Started"), ("pause", "Paused"), ("archive", "Archived")):
        assert getattr(client.campaigns, action)(cid) == {"status": "ok"}
        assert api.item(cid, "short")["work_status"] == state


def test_campaign_start_without_targeting_is_an_api_error(client, api):
    cid = new_campaign(api, targeted=False)
    with pytest.raises(ApiError) as info:
        client.campaigns.start(cid)
    assert info.value.operation == "campaign.start"
    assert "can not be started" in info.value.error_list[0]
    with pytest.raises(NotFoundError):
        client.campaigns.pause(MISSING)


def test_campaign_batches_mixed_success(client, api, other):
    a, b = new_campaign(api), new_campaign(api)
    theirs = other.get("/api/campaign/list").json()["items"][0]["id"]
    for action, state in (("start", "Started"), ("pause", "Paused"), ("archive", "Archived")):
        result = getattr(client.campaigns, f"{action}_batch")([a, b, MISSING, theirs])
        assert result.succeeded == [a, b]
        assert sorted(result.failed) == sorted([MISSING, theirs])
        assert not result.ok and result.calls == 1
        assert rows(result) == {
            (a, "ok", None),
            (b, "ok", None),
            (MISSING, "campaign_not_found", None),
            (theirs, "campaign_not_found", None),
        }
        assert {api.item(c, "short")["work_status"] for c in (a, b)} == {state}


def test_start_batch_of_a_thousand_ids_splits_get_urls_under_the_limit(client, api, sandbox):
    mine = [new_campaign(api) for _ in range(3)]
    ids = mine + [50_000_000 + i for i in range(997)]
    urls: list[str] = []

    def hook(response: requests.Response, *args: Any, **kwargs: Any) -> None:
        urls.append(response.request.url)

    client.transport.session.hooks["response"].append(hook)
    try:
        result, seen = calls(sandbox, lambda: client.campaigns.start_batch(ids))
    finally:
        client.transport.session.hooks["response"].remove(hook)
    assert result.calls > 1
    assert seen == {"GET /api/campaign/start-batch 200": result.calls}
    assert len(urls) == result.calls and max(len(u) for u in urls) <= MAX_URL
    assert result.succeeded == mine
    assert sorted(result.failed) == ids[3:]
    assert set(result.to_frame()["outcome"]) == {"ok", "campaign_not_found"}
    assert {api.item(c, "short")["work_status"] for c in mine} == {"Started"}


# --------------------------------------------------------------------------- targeting


@pytest.fixture(scope="module")
def refs(api) -> dict[str, Any]:
    def first(kind: str, text: str, **extra: Any) -> int:
        found = api.get("/api/campaign/search", type=kind, search=text, **extra).json()
        return int(next(iter(found)))

    return {
        "city": first("city", "Berlin", country=["DE"]),
        "region": first("region", "California", country=["US"]),
        "isp": first("isp-mobile", "Voda"),
        "en": int(
            next(
                k
                for k, v in api.ok("/api/campaign/list-refs-data", type="language")[
                    "language"
                ].items()
                if v.endswith("(en)")
            )
        ),
    }


# kind -> (format, items to add, list type, how the full detail view shows them)
KINDS: dict[str, tuple[str, Any, str | None, Callable[[dict, dict], Any]]] = {
    "category": ("push", [5, 6], None, lambda d, r: sorted(d["category"]) == ["1", "5", "6"]),
    "quality": (
        "push",
        ["premium", "low"],
        None,
        lambda d, r: sorted(d["quality"]) == ["high", "low", "premium"],
    ),
    "country": (
        "push",
        {"DE": 0.1 + 0.2, "FR": 1.1},
        None,
        lambda d, r: country_bids(d) == {"US": 0.5, "DE": 0.3, "FR": 1.1},
    ),
    "connection-type": ("push", ["wifi"], None, lambda d, r: d["connectionType"] == ["wifi"]),
    "language": ("push", ["en"], None, lambda d, r: d["language"] == [r["en"]]),
    "os": ("push", [1, 2], None, lambda d, r: sorted(d["os"]) == ["1", "2"]),
    "browser": ("push", [1], None, lambda d, r: list(d["browser"]) == ["1"]),
    "subs-age": ("push", [1, 4], None, lambda d, r: sorted(d["subsAge"]) == [1, 4]),
    "city": ("pops", "city", None, lambda d, r: d["city"] == [r["city"]]),
    "region": ("inpage", "region", None, lambda d, r: d["region"] == [r["region"]]),
    "isp-mobile": ("push", "isp", None, lambda d, r: list(d["ispMobile"]) == [str(r["isp"])]),
    "cidr": (
        "video",
        ["10.0.0.0/8", "2001:db8::/32", "1.1.1.1-1.1.1.9"],
        "white",
        lambda d, r: sorted(d["whiteCidr"]) == ["1.1.1.1-1.1.1.9", "10.0.0.0/8", "2001:db8::/32"],
    ),
    "domain": (
        "pops",
        ["example.com", "*.ads.example.org"],
        "black",
        lambda d, r: sorted(d["blackDomain"]) == ["*.ads.example.org", "example.com"],
    ),
}


def kind_items(kind: str, refs: dict[str, Any]) -> Any:
    items = KINDS[kind][1]
    return [refs[items]] if isinstance(items, str) else items


@pytest.mark.parametrize("kind", list(KINDS))
def test_targeting_add_and_drop_each_kind(client, api, refs, kind):
    ad_format, _, list_type, shown = KINDS[kind]
    items = kind_items(kind, refs)
    cid = new_campaign(api, ad_format)
    assert client.targeting.add(cid, kind, items, list_type=list_type) == {"status": "ok"}
    detail = api.item(cid)
    assert shown(detail, refs), detail
    assert client.campaigns.get(cid, "full") == detail
    with pytest.raises(ApiError) as info:
        client.targeting.add(cid, kind, items, list_type=list_type)
    assert {o["outcome"] for o in info.value.outcomes} == {"already_exists"}
    assert client.targeting.drop(cid, kind, items, list_type=list_type) == {"status": "ok"}
    with pytest.raises(ApiError) as info:
        client.targeting.drop(cid, kind, items, list_type=list_type)
    assert {o["outcome"] for o in info.value.outcomes} == {"not_exists"}
    assert info.value.http_status == 200 and info.value.operation == f"target.drop.{kind}"
    skipped = client.targeting.drop(cid, kind, items, list_type=list_type, check_exist=False)
    assert skipped == {"status": "ok"}


def test_country_bid_is_written_exactly(client, api, sandbox):
    cid = new_campaign(api)
    sent: list[str] = []

    def hook(response: requests.Response, *args: Any, **kwargs: Any) -> None:
        sent.append(response.request.url)

    bids = {"GB": 0.1 + 0.2, "IT": Decimal("0.30"), "ES": 1e-05 * 3, "PT": 7}
    client.transport.session.hooks["response"].append(hook)
    try:
        _, seen = calls(sandbox, lambda: client.targeting.add(cid, "country", bids))
    finally:
        client.transport.session.hooks["response"].remove(hook)
    assert seen == {"GET /api/campaign/add-country 200": 1}
    query = requests.utils.urlparse(sent[0]).query.split("&")
    assert {"items%5BGB%5D=0.3", "items%5BIT%5D=0.30", "items%5BES%5D=0.00003"} <= set(query)
    assert "items%5BPT%5D=7" in query
    expected = {"US": 0.5, "GB": 0.3, "IT": 0.3, "ES": 0.00003, "PT": 7}
    assert country_bids(api.item(cid)) == expected
    assert country_bids(client.campaigns.get(cid, "full")) == expected


def test_numbers_from_numpy_and_pandas_are_accepted(client, api, sandbox):
    """Values picked out of DataFrames are numpy scalars, not Python ints and floats."""
    cid = new_campaign(api)
    frame = pd.DataFrame({"country": ["DE", "FR"], "bid": [2, 3]})
    client.targeting.add(cid, "os", np.array([1, 2]))
    client.targeting.add(cid, "country", {"DE": frame.at[0, "bid"], "IT": np.float32(0.3)})
    client.lists.add(cid, "source_black", frame["bid"].to_numpy() + 100)
    client.bid_rules.add(cid, ["ab"], bid=frame.at[1, "bid"])
    client.bid_rules.add(cid, ["cd"], bid=np.float64(0.1) + np.float64(0.2))
    _, seen = calls(
        sandbox, lambda: client.lists.add(cid, "source_white", np.arange(10**7, 10**7 + 400))
    )
    assert seen == {"POST /api/campaign/add-white-list 200": 1}
    detail = api.item(cid)
    assert sorted(detail["os"]) == ["1", "2"]
    assert country_bids(detail) == {"US": 0.5, "DE": 2, "IT": 0.3}
    assert sorted(detail["blacklist"]) == ["102", "103"] and len(detail["whitelist"]) == 400
    rules = {r["items"][0]: r["bid"] for r in client.bid_rules.list(cid)}
    assert rules == {"ab": 3, "cd": 0.3}
    result = client.targeting.add_batch(pd.Series([cid]), "quality", np.array(["premium"]))
    assert result.ok and result.succeeded == [cid]


def test_targeting_batches_mixed_outcomes(client, api):
    a, b = new_campaign(api), new_campaign(api)
    client.targeting.add(a, "quality", ["premium"])
    added = client.targeting.add_batch([a, b, MISSING], "quality", ["premium", "low"])
    assert added.calls == 1 and added.succeeded == [b] and sorted(added.failed) == [a, MISSING]
    assert rows(added) == {
        (b, "ok", None),
        (a, "already_exists", "premium"),
        (MISSING, "campaign_not_found", None),
    }
    assert sorted(api.item(a)["quality"]) == ["high", "low", "premium"]

    dropped = client.targeting.drop_batch([a, b], "country", ["US", "CA"])
    assert rows(dropped) == {(a, "not_exists", "CA"), (b, "not_exists", "CA")}
    assert "countrySet" in api.item(a) and country_bids(api.item(a)) == {}
    skipped = client.targeting.drop_batch([a, b], "quality", ["regular"], check_exist=False)
    assert skipped.ok and skipped.succeeded == [a, b]

    bids = client.targeting.add_batch([a, b], "country", {"NL": 0.7 + 0.1})
    assert bids.ok
    assert country_bids(api.item(b)) == {"NL": 0.8}
    typed = client.targeting.add_batch([a], "cidr", ["192.168.0.0/16"], list_type="black")
    assert typed.ok and api.item(a)["blackCidr"] == ["192.168.0.0/16"]


def test_targeting_category_and_domain_batch_name_the_item(client, api):
    a, b = new_campaign(api, "pops"), new_campaign(api, "pops")
    client.targeting.add(a, "domain", ["taken.example.com"])
    result = client.targeting.add_batch([a, b], "domain", ["taken.example.com"])
    assert rows(result) == {(b, "ok", None), (a, "already_exists", "taken.example.com")}
    cat = int(next(iter(api.item(a)["category"])))
    result = client.targeting.add_batch([a], "category", [cat])
    assert rows(result) == {(a, "already_exists", str(cat))}


# --------------------------------------------------------------------------- lists


@pytest.mark.parametrize("name", ["source_black", "source_white", "subid_black", "subid_white"])
def test_lists_read_add_drop(client, api, name):
    path = {
        "source_black": "black-list",
        "source_white": "white-list",
        "subid_black": "sub-id-black",
        "subid_white": "sub-id-white",
    }[name]
    seeded = [c["id"] for c in api.get("/api/campaign/list").json()["items"]]
    for cid in seeded[:5]:
        assert client.lists.get(cid, name) == api.ok(f"/api/campaign/{path}", id=cid)["items"]
    cid = new_campaign(api)
    items = [1234, 5678] if name.startswith("source") else [hexid(), hexid()]
    assert client.lists.add(cid, name, items) == {"status": "ok"}
    assert sorted(client.lists.get(cid, name)) == sorted(str(i) for i in items)
    with pytest.raises(ApiError) as info:
        client.lists.add(cid, name, items[:1])
    assert [(o["outcome"], o["item"]) for o in info.value.outcomes] == [
        ("already_exists", str(items[0]))
    ]
    assert client.lists.drop(cid, name, items) == {"status": "ok"}
    assert client.lists.get(cid, name) == []
    with pytest.raises(ApiError) as info:
        client.lists.drop(cid, name, items[1:])
    assert [(o["outcome"], o["item"]) for o in info.value.outcomes] == [
        ("not_exists", str(items[1]))
    ]
    assert client.lists.drop(cid, name, items, check_exist=False) == {"status": "ok"}


def test_large_list_write_goes_as_json_post(client, api, sandbox):
    cid = new_campaign(api)
    many = [f"{i:08x}" for i in range(3000)]
    _, seen = calls(sandbox, lambda: client.lists.add(cid, "subid_black", many))
    assert seen == {"POST /api/campaign/add-sub-id-black 200": 1}
    assert sorted(api.ok("/api/campaign/sub-id-black", id=cid)["items"]) == many
    _, seen = calls(sandbox, lambda: client.lists.add(cid, "subid_black", ["abcdef"]))
    assert seen == {"GET /api/campaign/add-sub-id-black 200": 1}
    _, seen = calls(sandbox, lambda: client.lists.drop(cid, "subid_black", many))
    assert seen == {"POST /api/campaign/drop-sub-id-black 200": 1}
    assert client.lists.get(cid, "subid_black") == ["abcdef"]


def test_query_parameters_stay_in_the_query_of_a_json_post(client, api):
    """``id``, ``adFormat``, ``type`` and ``checkExist`` are query parameters of the interface;
    only the rest moves into a JSON body when the query would be too long."""
    cid = new_campaign(api, "video")
    sent: list[requests.PreparedRequest] = []

    def hook(response: requests.Response, *args: Any, **kwargs: Any) -> None:
        sent.append(response.request)

    many = [f"10.{i // 256}.{i % 256}.0/24" for i in range(400)]
    client.transport.session.hooks["response"].append(hook)
    try:
        client.targeting.add(cid, "cidr", many, list_type="white")
        client.targeting.drop(
            cid, "cidr", many + ["11.0.0.0/8"], list_type="white", check_exist=False
        )
        client.campaigns.create("push", "wide", 1, note="n" * 5000)
        client.account.price("video", country=COUNTRIES)
    finally:
        client.transport.session.hooks["response"].remove(hook)
    assert [r.method for r in sent] == ["POST"] * 4
    queries = [set(requests.utils.urlparse(r.url).query.split("&")) for r in sent]
    bodies = [json.loads(r.body) for r in sent]
    assert {f"id={cid}", "type=white"} <= queries[0] and "items" in bodies[0]
    assert {f"id={cid}", "type=white", "checkExist=skip"} <= queries[1]
    assert "adFormat=push" in queries[2] and bodies[2]["note"] == "n" * 5000
    assert "adFormat=video" in queries[3] and len(bodies[3]["country"]) == len(COUNTRIES)
    for body in bodies:
        assert not {"id", "type", "checkExist", "adFormat"} & set(body)
    assert api.item(cid)["whiteCidr"] == []


def test_large_source_list_batch_goes_as_json_post(client, api, sandbox):
    ids = [new_campaign(api) for _ in range(3)]
    sources = list(range(10_000_001, 10_001_001))  # max_batch_items: one call
    result, seen = calls(sandbox, lambda: client.lists.add_batch(ids, "source_white", sources))
    assert seen == {"POST /api/campaign/add-white-list 200": 1}
    assert result.ok and result.succeeded == ids and result.calls == 1
    for cid in ids:
        assert sorted(map(int, api.ok("/api/campaign/white-list", id=cid)["items"])) == sources
    result, seen = calls(sandbox, lambda: client.lists.drop_batch(ids, "source_white", sources))
    assert seen == {"POST /api/campaign/drop-white-list 200": 1}
    assert result.ok and all(client.lists.get(cid, "source_white") == [] for cid in ids)


@pytest.mark.parametrize("name", ["source_black", "subid_white"])
def test_list_batches_mixed_outcomes(client, api, sandbox, name):
    a, b = new_campaign(api), new_campaign(api)
    items = ["111", "222"] if name.startswith("source") else ["aa11", "bb22"]
    client.lists.add(a, name, items[:1])
    added, seen = calls(sandbox, lambda: client.lists.add_batch([a, b, MISSING], name, items))
    path = "add-black-list" if name == "source_black" else "add-sub-id-white-batch"
    assert seen == {f"GET /api/campaign/{path} 200": 1}
    assert added.succeeded == [b] and sorted(added.failed) == [a, MISSING]
    assert rows(added) == {
        (b, "ok", None),
        (a, "already_exists", items[0]),
        (MISSING, "campaign_not_found", None),
    }
    assert sorted(client.lists.get(a, name)) == sorted(items)
    again = client.lists.add_batch([a, b], name, items)  # one row per campaign and message
    assert rows(again) == {(c, "already_exists", i) for c in (a, b) for i in items}
    assert len(again.to_frame()) == 4 and again.succeeded == []

    client.lists.drop(b, name, items[1:])
    dropped = client.lists.drop_batch([a, b], name, items)
    assert rows(dropped) == {(a, "ok", None), (b, "not_exists", items[1])}
    assert client.lists.get(a, name) == [] and client.lists.get(b, name) == []
    skipped = client.lists.drop_batch([a, b], name, items, check_exist=False)
    assert skipped.ok and sorted(skipped.succeeded) == [a, b]


def test_batch_chunks_by_campaigns_and_items(sandbox, api):
    ids = [new_campaign(api) for _ in range(5)]
    items = [hexid(), hexid(), hexid()]
    expected = math.ceil(5 / 2) * math.ceil(3 / 2)
    with toolkit.connect(
        api_key=sandbox.api_keys[0], base_url=sandbox.url, max_batch_campaigns=2, max_batch_items=2
    ) as small:
        result, seen = calls(sandbox, lambda: small.lists.add_batch(ids, "subid_black", items))
        assert seen == {"GET /api/campaign/add-sub-id-black-batch 200": expected}
        assert result.calls == expected and result.ok and result.succeeded == ids
        for cid in ids:
            assert sorted(api.ok("/api/campaign/sub-id-black", id=cid)["items"]) == sorted(items)

        bids = {"DE": 0.1 + 0.2, "FR": 0.2, "IT": 0.3}
        result, seen = calls(sandbox, lambda: small.targeting.add_batch(ids, "country", bids))
        assert seen == {"GET /api/campaign/add-country-batch 200": expected}
        assert result.calls == expected and result.ok
        assert country_bids(api.item(ids[4])) == {"US": 0.5, "DE": 0.3, "FR": 0.2, "IT": 0.3}

        # one campaign fails in one item chunk only: it is failed, not succeeded
        small.lists.add(ids[0], "subid_black", ["ffff01"])
        result = small.lists.add_batch(ids, "subid_black", ["ffff01", "ffff02", "ffff03"])
        assert result.calls == expected
        assert result.failed == [ids[0]] and result.succeeded == ids[1:]
        assert rows(result) >= {(ids[0], "already_exists", "ffff01")}


def test_chunks_fit_a_service_that_refuses_larger_batches():
    with Sandbox(campaigns=3, max_batch_campaigns=2, max_items=2) as strict:
        key = strict.api_keys[0]
        with toolkit.connect(api_key=key, base_url=strict.url) as loose:
            ids = [c["id"] for c in loose.campaigns.list()]
            with pytest.raises(ApiError) as info:
                loose.lists.add_batch(ids, "subid_black", ["a1", "a2", "a3"])
            assert info.value.error_list[0].startswith("Too many campaigns in one request: 3")
            assert info.value.outcomes[0]["outcome"] == "invalid"
        with toolkit.connect(
            api_key=key, base_url=strict.url, max_batch_campaigns=2, max_batch_items=2
        ) as fitted:
            result = fitted.lists.add_batch(ids, "subid_black", ["a1", "a2", "a3"])
            assert result.ok and result.calls == 4 and sorted(result.succeeded) == sorted(ids)
            assert result.to_frame()["outcome"].tolist() == ["ok"] * 3


# --------------------------------------------------------------------------- rules


def test_bid_rules(client, api, sandbox):
    cid = new_campaign(api)
    assert client.bid_rules.list(cid) == []
    assert client.bid_rules.add(cid, ["1234", "abcdef"], bid=0.1 + 0.2) == {"status": "ok"}
    rules = client.bid_rules.list(cid)
    assert rules == api.ok("/api/campaign/bid-rules", id=cid)["rules"]
    assert [(sorted(r["items"]), r["bid"]) for r in rules] == [(["1234", "abcdef"], 0.3)]
    with pytest.raises(ApiError) as info:
        client.bid_rules.add(cid, ["abcdef"], bid=1)
    assert info.value.outcomes[0]["outcome"] == "already_exists"
    assert client.bid_rules.drop(cid, ["1234"]) == {"status": "ok"}
    with pytest.raises(ApiError) as info:
        client.bid_rules.drop(cid, ["1234"])
    assert info.value.outcomes[0]["outcome"] == "not_exists"
    assert client.bid_rules.drop(cid, ["1234"], check_exist=False) == {"status": "ok"}

    many = [f"{i:06x}" for i in range(1000)]
    _, seen = calls(sandbox, lambda: client.bid_rules.add(cid, many, bid=0.7 + 0.1))
    assert seen == {"POST /api/campaign/add-bid-rule 200": 1}
    bids = {
        item: r["bid"]
        for r in api.ok("/api/campaign/bid-rules", id=cid)["rules"]
        for item in r["items"]
    }
    assert {bids[i] for i in many} == {0.8}


RULE = {
    "type": "sum",
    "cond": "greater",
    "amount": 0.1 + 0.2,
    "lead_type": "lead",
    "lead_cond": "less",
    "lead_amount": 1,
}


def test_cpa_rules(client, api):
    cid = new_campaign(api)
    assert client.cpa_rules.list(cid) == []
    second = {**RULE, "type": "click", "lead_type": "roi", "amount": 10}
    assert client.cpa_rules.add(cid, [RULE, second]) == {"status": "ok"}
    rules = client.cpa_rules.list(cid)
    assert rules == api.ok("/api/campaign/cpa-rules", id=cid)["rules"]
    assert sorted((r["type"], r["amount"]) for r in rules) == [("click", 10), ("sum", 0.3)]
    first = next(r for r in rules if r["type"] == "sum")
    assert client.cpa_rules.edit(cid, [{"id": first["id"], "amount": 7.25}]) == {"status": "ok"}
    edited = next(r for r in client.cpa_rules.list(cid) if r["id"] == first["id"])
    assert edited == {**first, "amount": 7.25}
    assert client.cpa_rules.drop(cid, [first["id"]]) == {"status": "ok"}
    assert [r["type"] for r in client.cpa_rules.list(cid)] == ["click"]
    with pytest.raises(ApiError) as info:
        client.cpa_rules.drop(cid, [first["id"]])
    assert info.value.outcomes[0]["outcome"] == "not_exists"
    assert client.cpa_rules.drop(cid, [first["id"]], check_exist=False) == {"status": "ok"}


# --------------------------------------------------------------------------- creatives


def download(url: str) -> bytes:
    r = requests.get(url, timeout=10)
    assert r.status_code == 200
    return r.content


def test_creative_create_from_path_bytes_and_file_object(client, api, sandbox, tmp_path):
    cid = new_campaign(api)
    icon = tmp_path / "icon.png"
    icon.write_bytes(PNG)
    made = []
    by_path, seen = calls(
        sandbox,
        lambda: client.creatives.create(
            cid, name="by path", title="Path", url="https://example.com/a", icon=icon
        ),
    )
    assert seen == {"POST /api/creative/create 200": 1}
    made.append(by_path)
    made.append(
        client.creatives.create(
            cid,
            name="by bytes",
            title="Bytes",
            url="https://example.com/b",
            icon=PNG,
            image=PNG2,
            text="some text",
        )
    )
    with open(icon, "rb") as fh:
        made.append(
            client.creatives.create(
                cid,
                name="by file",
                title="File",
                url="https://example.com/c",
                icon=fh,
                work_status="started",
            )
        )
    made.append(
        client.creatives.create(
            cid, name="by buffer", title="Buffer", url="https://example.com/d", icon=io.BytesIO(PNG)
        )
    )
    for item in made:
        assert item["campaign_id"] == cid and item["status"] == "New"
        assert download(item["icon_url"]) == PNG
        assert (
            client.creatives.get(item["id"]) == api.ok("/api/creative/item", id=item["id"])["item"]
        )
    assert download(made[1]["image_url"]) == PNG2
    assert made[1]["text"] == "some text" and made[2]["work_status"] == "Started"
    listed = client.creatives.list(cid)
    assert listed == api.get("/api/creative/list", campaignId=cid).json()["items"]
    assert sorted(c["title"] for c in listed) == ["Buffer", "Bytes", "File", "Path"]
    assert (
        client.creatives.list(cid, title="Byt")
        == api.get("/api/creative/list", campaignId=cid, title="Byt").json()["items"]
    )
    assert len(client.creatives.list(cid, work_status="started")) == 1


def test_creative_update_and_work_status(client, api):
    cid = new_campaign(api)
    crid = client.creatives.create(cid, name="c", title="Old", url="https://example.com", icon=PNG)[
        "id"
    ]
    updated = client.creatives.update(
        crid,
        name="c2",
        title="New title",
        text="new text",
        url="https://example.com/new",
        icon=PNG2,
    )
    assert updated["title"] == "New title" and updated["text"] == "new text"
    assert download(updated["icon_url"]) == PNG2
    assert api.ok("/api/creative/item", id=crid)["item"]["url"] == "https://example.com/new"
    kept = client.creatives.update(crid, name="c3", title="Again", url="https://example.com/x")
    assert download(kept["icon_url"]) == PNG2
    for action, state in (("start", "Started"), ("pause", "Paused"), ("archive", "Archived")):
        assert getattr(client.creatives, action)(crid) == {"status": "ok"}
        assert api.ok("/api/creative/item", id=crid)["item"]["work_status"] == state
    with pytest.raises(NotFoundError) as info:
        client.creatives.get(MISSING)
    assert info.value.error_list == [f"Creative not found #{MISSING}"]


def test_creative_fields_travel_in_the_multipart_body(client, api, sandbox):
    cid = new_campaign(api)
    sent: list[requests.PreparedRequest] = []

    def hook(response: requests.Response, *args: Any, **kwargs: Any) -> None:
        sent.append(response.request)

    long_url = "https://example.com/landing?" + "&".join(f"p{i}={i:04d}" for i in range(500))
    client.transport.session.hooks["response"].append(hook)
    try:
        item = client.creatives.create(
            cid, name="long", title="Ünïcode title", url=long_url, text="t" * 160, icon=PNG
        )
        client.creatives.update(item["id"], name="long", title="No file", url=long_url)
    finally:
        client.transport.session.hooks["response"].remove(hook)
    assert len(long_url) > MAX_URL
    assert [r.method for r in sent] == ["POST", "POST"]
    assert all(len(r.url) <= MAX_URL and "title" not in r.url for r in sent)
    assert sent[0].headers["Content-Type"].startswith("multipart/form-data")
    assert sent[1].headers["Content-Type"] == "application/x-www-form-urlencoded"
    detail = api.ok("/api/creative/item", id=item["id"])["item"]
    assert (detail["title"], detail["url"]) == ("No file", long_url)
    assert item["title"] == "Ünïcode title" and item["text"] == "t" * 160
    assert download(detail["icon_url"]) == PNG


def test_video_creative_with_video_file(client, api, tmp_path):
    cid = new_campaign(api, "video")
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x01" * 333)
    item = client.creatives.create(
        cid, name="v", title="Video", url="https://example.com", video=clip
    )
    detail = client.creatives.get(item["id"])
    assert detail == api.ok("/api/creative/item", id=item["id"])["item"]
    assert detail["convert"] == "success" and detail["files"]


# --------------------------------------------------------------------------- account


def test_balance_dictionaries_search_price(client, api):
    assert client.account.balance() == api.get("/api/campaign/balance").json()
    every = api.ok("/api/campaign/list-refs-data")
    del every["status"]
    assert client.account.dictionaries() == every
    assert client.account.dictionary("os") == every["os"]
    assert client.account.dictionary("category")["push"] == every["category"]["push"]
    found = client.account.search("city", "Berlin", country=["DE"], limit=5)
    assert (
        found
        == api.get(
            "/api/campaign/search", type="city", search="Berlin", country=["DE"], limit=5
        ).json()
    )
    assert 1 <= len(found) <= 5
    assert (
        client.account.search("isp-mobile", "Voda")
        == api.get("/api/campaign/search", type="isp-mobile", search="Voda").json()
    )
    price = client.account.price("push", country=["US", "DE"], quality=["high"], subs_age=[1])
    plain = api.get(
        "/api/campaign/price", adFormat="push", country=["US", "DE"], quality=["high"], subsAge=[1]
    ).json()["price"]
    assert price == plain
    assert price["minimum"]["price"] <= price["recommend"]["price"]


def test_large_price_query_goes_as_json_post(client, api, sandbox):
    codes = [v.rsplit("(", 1)[1][:2] for v in client.account.dictionary("country").values()]
    price, seen = calls(
        sandbox, lambda: client.account.price("pops", country=codes, os=list(range(1, 6)))
    )
    assert seen == {"POST /api/campaign/price 200": 1}
    r = api.post_json(
        "/api/campaign/price", {"country": codes, "os": list(range(1, 6))}, adFormat="pops"
    )
    assert price == r.json()["price"]


# --------------------------------------------------------------------------- validation


@pytest.fixture(scope="module")
def formats(client, api) -> dict[str, int]:
    """One campaign per format whose format the client knows (it read them)."""
    ids = {f: new_campaign(api, f) for f in ("push", "pops", "video")}
    for cid in ids.values():
        client.campaigns.get(cid)
    return ids


VALIDATION: dict[str, Callable[[toolkit.Client, dict[str, int]], Any]] = {
    "unknown quality": lambda c, f: c.targeting.add(f["push"], "quality", ["ultra"]),
    "domain on push": lambda c, f: c.targeting.add(f["push"], "domain", ["example.com"]),
    "subs-age on pops": lambda c, f: c.targeting.add_batch([f["pops"]], "subs-age", [1]),
    "city on video": lambda c, f: c.targeting.add(f["video"], "city", [2950159]),
    "title of 66": lambda c, f: c.creatives.create(
        f["push"], name="x", title="t" * 66, url="https://example.com", icon=PNG
    ),
    "text of 161": lambda c, f: c.creatives.update(1, name="x", title="ok", text="t" * 161),
    "search of 2": lambda c, f: c.account.search("city", "Be"),
    "limit of 101": lambda c, f: c.account.search("city", "Berlin", limit=101),
    "non-hex subId": lambda c, f: c.lists.add(f["push"], "subid_black", ["abc", "xyz"]),
    "non-hex subId batch": lambda c, f: c.lists.add_batch([f["push"]], "subid_white", ["g1"]),
    "bad source id": lambda c, f: c.lists.add(f["push"], "source_black", [-5]),
    "bad cidr": lambda c, f: c.targeting.add(f["video"], "cidr", ["10.0.0.1/8"]),
    "bad domain": lambda c, f: c.targeting.add(f["pops"], "domain", ["not a domain"]),
    "unknown country": lambda c, f: c.targeting.add(f["push"], "country", {"ZZ": 0.1}),
    "country drop unknown": lambda c, f: c.targeting.drop(f["push"], "country", ["XQ"]),
    "zero bid": lambda c, f: c.targeting.add(f["push"], "country", {"US": 0}),
    "unknown kind": lambda c, f: c.targeting.add(f["push"], "colour", ["red"]),
    "unknown list": lambda c, f: c.lists.add(f["push"], "greylist", ["ab"]),
    "unknown list read": lambda c, f: c.lists.get(f["push"], "greylist"),
    "unknown language": lambda c, f: c.targeting.add(f["push"], "language", ["xx"]),
    "unknown connection": lambda c, f: c.targeting.add(f["push"], "connection-type", ["5g"]),
    "empty items": lambda c, f: c.targeting.add(f["push"], "os", []),
    "list type on os": lambda c, f: c.targeting.add(f["push"], "os", [1], list_type="white"),
    "unknown ad format": lambda c, f: c.campaigns.create("banner", "x", 1),
    "limit not for format": lambda c, f: c.campaigns.create("pops", "x", 1, limit_show=5),
    "web_view on push": lambda c, f: c.campaigns.create("push", "x", 1, web_view=True),
    "unknown setting": lambda c, f: c.campaigns.create("push", "x", 1, colour="red"),
    "bad target kind": lambda c, f: c.campaigns.create("push", "x", 1, target={"city": [1]}),
    "bad target value": lambda c, f: c.campaigns.create(
        "push", "x", 1, target={"quality": ["best"]}
    ),
    "bad status filter": lambda c, f: c.campaigns.list(status="running"),
    "bad detail mode": lambda c, f: c.campaigns.get(f["push"], "everything"),
    "bad bid": lambda c, f: c.bid_rules.add(f["push"], ["ab"], bid=-1),
    "bad bid rule item": lambda c, f: c.bid_rules.add(f["push"], ["zz"], bid=1),
    "cpa rule field": lambda c, f: c.cpa_rules.add(f["push"], [{**RULE, "cond": "equal"}]),
    "cpa rule missing field": lambda c, f: c.cpa_rules.add(f["push"], [{"type": "sum"}]),
    "cpa edit without id": lambda c, f: c.cpa_rules.edit(f["push"], [{"amount": 1}]),
    "creative no file": lambda c, f: c.creatives.create(
        f["push"], name="x", title="x", icon="/no/such/file.png"
    ),
    "unknown dictionary": lambda c, f: c.account.dictionary("planets"),
    "price param": lambda c, f: c.account.price("push", planet=["mars"]),
    "price subs-age on pops": lambda c, f: c.account.price("pops", subsAge=[1]),
    "search query over 4 KB": lambda c, f: c.account.search("city", "Berlin", country=COUNTRIES),
    "list filter over 4 KB": lambda c, f: c.campaigns.list(name="x" * 5000),
    "search country filter": lambda c, f: c.account.search("isp-mobile", "Voda", country=["DE"]),
}


@pytest.mark.parametrize("case", list(VALIDATION))
def test_validation_error_before_sending(client, sandbox, formats, case):
    before = sandbox.stats()
    with pytest.raises(ValidationError) as info:
        VALIDATION[case](client, formats)
    assert sandbox.stats() == before, "a request reached the sandbox"
    assert info.value.problems and str(info.value)


def test_validation_lists_every_problem(client, formats):
    with pytest.raises(ValidationError) as info:
        client.targeting.add(formats["push"], "country", {"ZZ": 0.1, "US": -1, "QQ": 2})
    assert len(info.value.problems) == 3
    assert isinstance(info.value, ValueError)
