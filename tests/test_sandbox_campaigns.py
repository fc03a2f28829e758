"""Campaigns of the sandbox over HTTP: list, detail, create, update, start/pause/archive."""

from __future__ import annotations

import re
import uuid

import pytest
import requests

from toolkit import spec
from toolkit.sandbox import Sandbox

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$")
LABELS = {"push": "Push", "pops": "Popunder", "inpage": "In-page Push", "video": "Video"}
DEFAULT_CAPPING = {"pops": 0, "push": 1, "video": 5, "inpage": 1}
FORMATS = tuple(LABELS)


def unique(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def refs(api):
    body = api.ok("/api/campaign/list-refs-data")
    return body


def category_ids(refs, ad_format: str) -> list[int]:
    group = "push" if ad_format == "inpage" else ad_format
    return [int(k) for k in refs["category"][group]]


def code_of(label: str) -> str:
    """``United States (US)`` -> ``US``."""
    m = re.search(r"\(([A-Za-z]{2})\)$", label)
    assert m, label
    return m.group(1)


def list_ids(api, **filters) -> list[int]:
    r = api.get("/api/campaign/list", **filters)
    assert r.status_code == 200, r.text
    return [c["id"] for c in r.json()["items"]]


def create(api, ad_format: str, body: dict) -> dict:
    r = api.post_json("/api/campaign/create", body, adFormat=ad_format)
    assert r.status_code == 200, r.text
    return r.json()


def create_ok(api, ad_format: str, **fields) -> dict:
    body = {"name": unique(ad_format), "vertical_id": 1, **fields}
    if ad_format == "pops":
        body.setdefault("url", "https://example.com/pops")
    answer = create(api, ad_format, body)
    assert answer["status"] == "ok", answer
    return answer["item"]


def moderate(sandbox, kind: str, oid: int, status: str) -> None:
    r = requests.post(
        sandbox.url + "/_sandbox/moderate",
        json={"type": kind, "id": oid, "status": status},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "ok"


# --------------------------------------------------------------------------- list


def test_list_answers_items_only_with_list_fields(api):
    api.new_campaign("pops")
    api.new_campaign("video", url="https://vast.example.com/tag.xml")
    r = api.get("/api/campaign/list")
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"items"}
    seen = set()
    for item in body["items"]:
        expected = set(spec.CAMPAIGN_LIST_FIELDS)
        if item["ad_format"] == "Popunder":
            expected.add("url")
        if item["ad_format"] == "Video":
            expected.add("vast_tag")
        assert set(item) == expected, item
        assert item["ad_format"] in LABELS.values()
        assert TIMESTAMP.match(item["t_created"]), item["t_created"]
        seen.add(item["ad_format"])
    assert {"Popunder", "Video"} <= seen


def test_list_video_vast_tag_is_the_tag_url(api):
    tag = f"https://vast.example.com/{unique()}.xml"
    cid = api.new_campaign("video", url=tag)
    item = next(c for c in api.get("/api/campaign/list").json()["items"] if c["id"] == cid)
    assert item["vast_tag"] == tag


@pytest.mark.parametrize("ad_format", FORMATS)
def test_list_filter_ad_format(api, ad_format):
    cid = api.new_campaign(ad_format)
    items = api.get("/api/campaign/list", ad_format=ad_format).json()["items"]
    assert cid in [c["id"] for c in items]
    assert {c["ad_format"] for c in items} == {LABELS[ad_format]}


def test_list_filter_status(api, sandbox):
    declined = api.new_campaign("push")
    fresh = api.new_campaign("push")
    moderate(sandbox, "campaign", declined, "Declined")
    items = api.get("/api/campaign/list", status="declined").json()["items"]
    assert declined in [c["id"] for c in items]
    assert fresh not in [c["id"] for c in items]
    assert {c["status"] for c in items} == {"Declined"}
    new_items = api.get("/api/campaign/list", status="new").json()["items"]
    assert fresh in [c["id"] for c in new_items]
    assert declined not in [c["id"] for c in new_items]
    assert {c["status"] for c in new_items} == {"New"}


def test_list_filter_work_status(api):
    archived = api.new_campaign("push")
    started = api.new_campaign("push")
    paused = api.new_campaign("push")
    api.ok("/api/campaign/archive", id=archived)
    api.ok("/api/campaign/start", id=started)
    for value, cid in (("archived", archived), ("started", started), ("paused", paused)):
        items = api.get("/api/campaign/list", work_status=value).json()["items"]
        ids = [c["id"] for c in items]
        assert cid in ids
        assert {archived, started, paused} - {cid} & set(ids) == set()
        assert {c["work_status"] for c in items} == {value.capitalize()}


def test_list_filter_mode(api):
    cpc = api.new_campaign("push", mode="cpc")
    cpm = api.new_campaign("push")
    cpc_items = api.get("/api/campaign/list", mode="cpc").json()["items"]
    assert cpc in [c["id"] for c in cpc_items]
    assert cpm not in [c["id"] for c in cpc_items]
    assert {c["mode"] for c in cpc_items} == {"CPC"}
    cpm_items = api.get("/api/campaign/list", mode="cpm").json()["items"]
    assert cpm in [c["id"] for c in cpm_items]
    assert {c["mode"] for c in cpm_items} == {"CPM"}


def test_list_filter_name_substring(api):
    token = uuid.uuid4().hex[:12]
    a = api.new_campaign("push", name=f"alpha {token} one")
    b = api.new_campaign("pops", name=f"{token}-two")
    api.new_campaign("push", name="unrelated name")
    items = api.get("/api/campaign/list", name=token).json()["items"]
    assert sorted(c["id"] for c in items) == sorted([a, b])
    assert all(token in c["name"] for c in items)


def test_list_filter_url_substring(api):
    token = uuid.uuid4().hex[:12]
    a = api.new_campaign("pops", url=f"https://{token}.example.com/land")
    b = api.new_campaign("video", url=f"https://vast.example.com/{token}.xml")
    api.new_campaign("pops", url="https://elsewhere.example.com/")
    ids = list_ids(api, url=token)
    assert sorted(ids) == sorted([a, b])
    for cid in ids:
        assert token in api.item(cid, "short")["url"]


@pytest.mark.parametrize(
    "param, allowed",
    [
        ("status", spec.CAMPAIGN_STATUSES),
        ("work_status", spec.WORK_STATUSES),
        ("ad_format", spec.FORMAT_CODES),
        ("mode", spec.MODES),
    ],
)
def test_list_invalid_filter_value_is_a_business_error(api, param, allowed):
    errors = api.errors("/api/campaign/list", **{param: "bogus"})
    assert len(errors) == 1
    assert f"'{param}'" in errors[0] and "bogus" in errors[0]
    for value in allowed:
        assert value.lower() in errors[0].lower()


# --------------------------------------------------------------------------- detail


DETAIL_ONLY = {"countrySet", "category", "quality", "blacklist", "whitelist", "os", "browser"}


def test_item_short_mode_is_the_default(api):
    cid = api.new_campaign("push", limit_sum=50)
    default = api.ok("/api/campaign/item", id=cid)["item"]
    short = api.item(cid, "short")
    assert default == short
    assert not DETAIL_ONLY & set(short)
    for name in ("limit_day_sum", "limit_day_show", "limit_sum", "limit_show"):
        assert name in short
        assert name + "_value" in short
    assert short["limit_sum"] == 50
    assert short["id"] == cid and short["ad_format"] == "Push"
    assert TIMESTAMP.match(short["t_created"])


def test_item_count_mode_counts_are_ints(api):
    cid = api.new_campaign("push")
    api.ok("/api/campaign/add-black-list", id=cid, items=[11, 12, 13])
    api.ok("/api/campaign/add-white-list", id=cid, items=[21])
    api.ok("/api/campaign/add-sub-id-black", id=cid, items=["ab", "cd"])
    api.ok("/api/campaign/add-cidr", id=cid, type="white", items=["10.0.0.0/8"])
    api.ok("/api/campaign/add-cidr", id=cid, type="black", items=["192.168.1.1"])
    api.ok("/api/campaign/add-os", id=cid, items=[1, 2])
    api.ok("/api/campaign/add-browser", id=cid, items=[1])
    item = api.item(cid, "count")
    expected = {
        "blacklist": 3,
        "whitelist": 1,
        "subIdBlack": 2,
        "subIdWhite": 0,
        "whiteCidr": 1,
        "os": 2,
        "browser": 1,
    }
    for name in spec.count_fields():
        assert type(item[name]) is int, (name, item[name])
    assert {k: item[k] for k in expected} == expected
    assert "countrySet" not in item and "category" not in item


@pytest.mark.parametrize("ad_format", FORMATS)
def test_item_full_country_set_groups_by_bid(api, refs, ad_format):
    cid = api.new_campaign(ad_format)
    api.ok("/api/campaign/add-country", id=cid, items={"DE": "0.5", "FR": "0.7"})
    item = api.item(cid)
    sets = item["countrySet"]
    by_price = {s["price"]: s for s in sets}
    assert len(sets) == len(by_price) == 2
    assert sorted(by_price[0.5]["geo"].values()) == ["DE", "US"]
    assert list(by_price[0.7]["geo"].values()) == ["FR"]
    for s in sets:
        keys = {"price", "l_d_sum", "geo"}
        if ad_format in ("push", "inpage", "video"):
            keys.add("l_d_show")
        if ad_format in ("push", "inpage", "pops"):
            keys.add("l_d_click")
        assert set(s) == keys
        assert s["l_d_sum"] is None
        assert s.get("l_d_show") is None and s.get("l_d_click") is None
        for country_id, code in s["geo"].items():
            assert code_of(refs["country"][country_id]) == code


@pytest.mark.parametrize("ad_format", FORMATS)
def test_item_full_fields_per_format(api, refs, ad_format):
    cid = api.new_campaign(ad_format)
    item = api.item(cid)
    always = {
        "countrySet",
        "category",
        "quality",
        "blacklist",
        "whitelist",
        "subIdBlack",
        "subIdWhite",
        "whiteCidr",
        "blackCidr",
        "os",
        "browser",
        "ispMobile",
    }
    assert always <= set(item)
    assert ("subsAge" in item) == (ad_format == "push")
    assert ("blackDomain" in item) == (ad_format in ("video", "pops"))
    assert ("whiteDomain" in item) == (ad_format in ("video", "pops"))
    for absent in ("city", "region", "language", "connectionType"):
        assert absent not in item
    cat = category_ids(refs, ad_format)[0]
    group = "push" if ad_format == "inpage" else ad_format
    assert item["category"] == {str(cat): refs["category"][group][str(cat)]}
    assert item["quality"] == ["high"]
    for name in ("os", "browser", "ispMobile"):
        assert item[name] == []


def test_item_full_empty_maps_are_empty_lists(api):
    cid = api.new_campaign("push", targeted=False)
    item = api.item(cid)
    for name in ("category", "os", "browser", "ispMobile"):
        assert item[name] == [], name
    assert item["countrySet"] == [] and item["quality"] == []


def test_item_full_optional_targets_when_set(api, refs):
    cid = api.new_campaign("push")
    city = next(iter(api.get("/api/campaign/search", type="city", search="Berlin").json()))
    region = next(iter(api.get("/api/campaign/search", type="region", search="Calif").json()))
    isp = next(iter(api.get("/api/campaign/search", type="isp-mobile", search="Vodafone").json()))
    api.ok("/api/campaign/add-city", id=cid, items=[city])
    api.ok("/api/campaign/add-region", id=cid, items=[region])
    api.ok("/api/campaign/add-language", id=cid, items=["en", "de"])
    api.ok("/api/campaign/add-connection-type", id=cid, items=["wifi"])
    api.ok("/api/campaign/add-isp-mobile", id=cid, items=[isp])
    api.ok("/api/campaign/add-os", id=cid, items=[1, 2])
    api.ok("/api/campaign/add-browser", id=cid, items=[3])
    api.ok("/api/campaign/add-subs-age", id=cid, items=[1, 4])
    api.ok("/api/campaign/add-cidr", id=cid, type="black", items=["10.1.0.0/16"])
    api.ok("/api/campaign/add-black-list", id=cid, items=[77])
    api.ok("/api/campaign/add-sub-id-white", id=cid, items=["beef"])
    item = api.item(cid)
    assert item["city"] == [int(city)]
    assert item["region"] == [int(region)]
    assert item["connectionType"] == ["wifi"]
    assert sorted(code_of(refs["language"][str(i)]).lower() for i in item["language"]) == [
        "de",
        "en",
    ]
    assert all(type(i) is int for i in item["language"])
    assert item["os"] == {"1": refs["os"]["1"], "2": refs["os"]["2"]}
    assert item["browser"] == {"3": refs["browser"]["3"]}
    assert list(item["ispMobile"]) == [isp]
    assert item["subsAge"] == [1, 4]
    assert item["blackCidr"] == ["10.1.0.0/16"] and item["whiteCidr"] == []
    assert item["blacklist"] == ["77"] and item["subIdWhite"] == ["beef"]


def test_item_full_video_never_has_city(api):
    cid = api.new_campaign("video")
    city = next(iter(api.get("/api/campaign/search", type="city", search="Berlin").json()))
    errors = api.errors("/api/campaign/add-city", id=cid, items=[city])
    assert errors == [f"Targeting 'city' is not available for Video campaigns; CampaignId: {cid}"]
    api.ok("/api/campaign/add-domain", id=cid, type="white", items=["Example.COM"])
    item = api.item(cid)
    assert "city" not in item
    assert item["whiteDomain"] == ["example.com"] and item["blackDomain"] == []


def test_item_invalid_mode_is_a_business_error(api):
    cid = api.new_campaign("push")
    errors = api.errors("/api/campaign/item", id=cid, mode="everything")
    assert "'mode'" in errors[0]


# --------------------------------------------------------------------------- create


def test_create_query_string_form(api, refs):
    cats = category_ids(refs, "push")[:2]
    name = unique("query form")
    r = api.get(
        "/api/campaign/create",
        adFormat="push",
        name=name,
        vertical_id=2,
        frequency_capping=3,
        note="from the query",
        target={
            "category": cats,
            "quality": ["high", "low"],
            "country": {"US": "0.5", "DE": "0.8"},
            "os": [1],
            "browser": [2],
        },
    )
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok", body
    item = body["item"]
    assert tuple(item) == spec.CAMPAIGN_WRITE_FIELDS
    assert item["name"] == name and item["note"] == "from the query"
    assert item["frequency_capping"] == 3
    assert item["vertical"] == refs["vertical"]["2"]
    detail = api.item(item["id"])
    assert sorted(int(k) for k in detail["category"]) == sorted(cats)
    assert sorted(detail["quality"]) == ["high", "low"]
    bids = {code: s["price"] for s in detail["countrySet"] for code in s["geo"].values()}
    assert bids == {"US": 0.5, "DE": 0.8}
    assert list(detail["os"]) == ["1"] and list(detail["browser"]) == ["2"]


def test_create_json_form(api, refs):
    cats = category_ids(refs, "video")[:1]
    name = unique("json form")
    answer = create(
        api,
        "video",
        {
            "name": name,
            "vertical_id": 3,
            "url": "https://vast.example.com/t.xml",
            "vpaid": "yes",
            "placement": "instream",
            "web_view": "yes",
            "allow_proxy": 0,
            "limit_sum": 100.5,
            "target": {"category": cats, "quality": ["premium"], "country": {"GB": 1.25}},
        },
    )
    assert answer["status"] == "ok", answer
    item = answer["item"]
    assert tuple(item) == spec.CAMPAIGN_WRITE_FIELDS
    assert item["name"] == name and item["ad_format"] == "Video"
    assert item["url"] == "https://vast.example.com/t.xml"
    assert item["limit_sum"] == 100.5
    assert item["web_view"] == "Enable"
    assert item["allow_proxy"] != "Allow"
    detail = api.item(item["id"])
    assert [int(k) for k in detail["category"]] == cats
    assert detail["quality"] == ["premium"]
    assert detail["countrySet"][0]["price"] == 1.25
    assert list(detail["countrySet"][0]["geo"].values()) == ["GB"]
    assert detail["vast_tag"] == "https://vast.example.com/t.xml"


@pytest.mark.parametrize("ad_format", FORMATS)
def test_create_labels_and_defaults(api, ad_format):
    item = create_ok(api, ad_format)
    assert tuple(item) == spec.CAMPAIGN_WRITE_FIELDS
    assert item["ad_format"] == LABELS[ad_format]
    assert item["frequency_capping"] == DEFAULT_CAPPING[ad_format]
    assert item["work_status"] == "Paused"
    assert item["status"] == "New"
    assert item["status_note"] is None
    assert item["mode"] == "CPM"
    assert item["allow_proxy"] == "Allow"
    assert item["web_view"] != "Enable"
    assert item["user_id"] == api.item(item["id"], "short")["user_id"]
    assert TIMESTAMP.match(item["t_created"]), item["t_created"]
    listed = {c["id"]: c for c in api.get("/api/campaign/list").json()["items"]}
    assert listed[item["id"]]["ad_format"] == LABELS[ad_format]
    assert TIMESTAMP.match(listed[item["id"]]["t_created"])


@pytest.mark.parametrize("ad_format", ["pops", "video"])
def test_create_web_view_enable_label(api, ad_format):
    item = create_ok(api, ad_format, web_view="yes", allow_proxy=1)
    assert item["web_view"] == "Enable"
    assert item["allow_proxy"] == "Allow"


def test_create_mode_and_explicit_capping(api):
    item = create_ok(api, "push", mode="cpc", frequency_capping=0)
    assert item["mode"] == "CPC"
    assert item["frequency_capping"] == 0


def test_create_null_settings_are_not_given(api):
    """JSON null for a setting is answered like an absent one, never as a server error."""
    item = create_ok(api, "pops", web_view=None, mode=None, allow_proxy=None)
    assert item["mode"] == "CPM" and item["allow_proxy"] == "Allow"
    assert item["web_view"] != "Enable"
    item = create_ok(api, "video", vpaid=None, placement=None)
    assert item["ad_format"] == "Video"


@pytest.mark.parametrize(
    "params, shown",
    [
        (
            {"limit_sum_day": "7.5", "limit_show_day": "1000"},
            {"limit_day_sum": 7.5, "limit_day_show": 1000},
        ),
        (
            {"limit_day_sum": "8.5", "limit_day_show": "2000"},
            {"limit_day_sum": 8.5, "limit_day_show": 2000},
        ),
        ({"limit_click_day": "30"}, {"limit_day_click": 30}),
        ({"limit_day_click": "40"}, {"limit_day_click": 40}),
    ],
)
def test_create_daily_limits_under_both_spellings(api, params, shown):
    r = api.get("/api/campaign/create", adFormat="push", name=unique(), vertical_id=1, **params)
    body = r.json()
    assert body["status"] == "ok", body
    if "limit_day_sum" in shown:
        assert body["item"]["limit_day_sum"] == shown["limit_day_sum"]
    if "limit_day_click" in shown:
        assert body["item"]["limit_day_click"] == shown["limit_day_click"]
    detail = api.item(body["item"]["id"], "short")
    for name, value in shown.items():
        assert detail[name] == value


def test_create_campaign_limits_shown(api):
    item = create_ok(api, "pops", limit_sum=10, limit_click=500)
    assert item["limit_sum"] == 10 and item["limit_click"] == 500
    detail = api.item(item["id"], "short")
    assert detail["limit_click"] == 500 and detail["limit_show"] is None


@pytest.mark.parametrize(
    "ad_format, params, bad",
    [
        ("pops", {"limit_show": 10}, ["limit_show"]),
        ("pops", {"limit_day_show": 5}, ["limit_day_show"]),
        ("video", {"limit_click_day": 5}, ["limit_click_day"]),
        ("video", {"limit_click": 5}, ["limit_click"]),
        ("video", {"limit_day_click": 5}, ["limit_day_click"]),
        ("push", {"web_view": "yes"}, ["web_view"]),
        ("inpage", {"web_view": "no"}, ["web_view"]),
        ("push", {"vpaid": "yes"}, ["vpaid"]),
        ("pops", {"vpaid": "no"}, ["vpaid"]),
        ("inpage", {"placement": "all"}, ["placement"]),
        (
            "pops",
            {"limit_show": 10, "limit_day_show": 3, "vpaid": "yes", "limit_click": 4},
            ["limit_show", "limit_day_show", "vpaid"],
        ),
        (
            "video",
            {"limit_click": 1, "limit_click_day": 2, "web_view": "yes", "limit_show": 9},
            ["limit_click", "limit_click_day"],
        ),
        ("push", {"web_view": "yes", "vpaid": "no", "limit_show": 9}, ["web_view", "vpaid"]),
    ],
)
def test_create_refuses_what_the_format_does_not_allow(api, ad_format, params, bad):
    before = len(list_ids(api))
    name = unique("refused")
    answer = create(
        api, ad_format, {"name": name, "vertical_id": 1, "url": "https://e.com/", **params}
    )
    assert answer["status"] == "error", answer
    label = LABELS[ad_format]
    expected = {f"Parameter '{p}' is not available for {label} campaigns" for p in bad}
    assert set(answer["errorList"]) == expected
    assert len(answer["errorList"]) == len(bad)
    assert len(list_ids(api)) == before
    assert list_ids(api, name=name) == []


def test_create_lists_every_bad_value_and_creates_nothing(api):
    before = len(list_ids(api))
    answer = create(
        api,
        "push",
        {
            "name": unique(),
            "vertical_id": 99999,
            "limit_sum": -1,
            "target": {"quality": ["superb"], "country": {"XX": 0.5}},
        },
    )
    assert answer["status"] == "error"
    errors = answer["errorList"]
    assert len(errors) == 4, errors
    for needle in ("vertical_id", "limit_sum", "superb", "XX"):
        assert any(needle in e for e in errors), (needle, errors)
    assert len(list_ids(api)) == before


@pytest.mark.parametrize("missing", ["name", "vertical_id"])
def test_create_requires_name_and_vertical(api, missing):
    body = {"name": unique(), "vertical_id": 1}
    del body[missing]
    before = len(list_ids(api))
    answer = create(api, "push", body)
    assert answer == {"status": "error", "errorList": [f"Parameter '{missing}' is required"]}
    assert len(list_ids(api)) == before


def test_create_started_needs_targeting(api, refs):
    before = len(list_ids(api))
    answer = create(api, "push", {"name": unique(), "vertical_id": 1, "work_status": "started"})
    assert answer["status"] == "error"
    assert all("can not be started" in e for e in answer["errorList"])
    assert len(list_ids(api)) == before
    target = {
        "category": category_ids(refs, "push")[:1],
        "quality": ["low"],
        "country": {"US": 0.1},
    }
    item = create_ok(api, "push", work_status="started", target=target)
    assert item["work_status"] == "Started"
    assert api.item(item["id"], "short")["work_status"] == "Started"


# --------------------------------------------------------------------------- update


def update(api, cid: int, body: dict) -> dict:
    r = api.post_json("/api/campaign/update", body, id=cid)
    assert r.status_code == 200, r.text
    return r.json()


def test_update_leaves_unchanged_params(api, refs):
    cid = api.new_campaign(
        "pops",
        note="keep me",
        frequency_capping=4,
        limit_sum=100,
        limit_click=10,
        web_view="yes",
        allow_proxy=0,
        url="https://keep.example.com/",
    )
    before = api.item(cid)
    name = unique("renamed")
    answer = update(api, cid, {"name": name, "vertical_id": 5})
    assert answer["status"] == "ok", answer
    item = answer["item"]
    assert tuple(item) == spec.CAMPAIGN_WRITE_FIELDS
    assert item["name"] == name and item["vertical"] == refs["vertical"]["5"]
    assert item["note"] == "keep me" and item["frequency_capping"] == 4
    assert item["limit_sum"] == 100 and item["limit_click"] == 10
    assert item["web_view"] == "Enable" and item["allow_proxy"] != "Allow"
    assert item["url"] == "https://keep.example.com/"
    after = api.item(cid)
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {"name", "vertical"}


def test_update_in_query_form(api):
    cid = api.new_campaign("push")
    r = api.get(
        "/api/campaign/update",
        id=cid,
        name="query update",
        vertical_id=1,
        note="n2",
        frequency_capping=7,
    )
    body = r.json()
    assert body["status"] == "ok", body
    detail = api.item(cid, "short")
    assert (detail["name"], detail["note"], detail["frequency_capping"]) == (
        "query update",
        "n2",
        7,
    )


@pytest.mark.parametrize("missing", ["name", "vertical_id"])
def test_update_requires_name_and_vertical(api, missing):
    cid = api.new_campaign("push")
    before = api.item(cid)
    body = {"name": unique(), "vertical_id": 2, "note": "changed"}
    del body[missing]
    answer = update(api, cid, body)
    assert answer == {"status": "error", "errorList": [f"Parameter '{missing}' is required"]}
    assert api.item(cid) == before


def test_update_target_replaces_named_kinds_only(api, refs):
    cid = api.new_campaign("push")
    api.ok("/api/campaign/add-os", id=cid, items=[1])
    before = api.item(cid)
    answer = update(
        api,
        cid,
        {
            "name": before["name"],
            "vertical_id": 1,
            "target": {"quality": ["low", "regular"], "country": {"DE": 0.9, "FR": 0.9}},
        },
    )
    assert answer["status"] == "ok", answer
    after = api.item(cid)
    assert sorted(after["quality"]) == ["low", "regular"]
    assert len(after["countrySet"]) == 1
    assert after["countrySet"][0]["price"] == 0.9
    assert sorted(after["countrySet"][0]["geo"].values()) == ["DE", "FR"]
    assert after["category"] == before["category"]
    assert after["os"] == before["os"] == {"1": refs["os"]["1"]}


def test_update_null_or_empty_clears_a_limit(api):
    cid = api.new_campaign("push", limit_sum=100, limit_sum_day=10, limit_show=1000)
    name = api.item(cid, "short")["name"]
    answer = update(api, cid, {"name": name, "vertical_id": 1, "limit_sum": None})
    assert answer["status"] == "ok", answer
    assert answer["item"]["limit_sum"] is None
    assert answer["item"]["limit_day_sum"] == 10
    body = api.ok("/api/campaign/update", id=cid, name=name, vertical_id=1, limit_day_sum="")
    assert body["item"]["limit_day_sum"] is None
    detail = api.item(cid, "short")
    assert detail["limit_sum"] is None and detail["limit_day_sum"] is None
    assert detail["limit_show"] == 1000


def test_update_null_setting_leaves_it_unchanged(api):
    cid = api.new_campaign("pops", web_view="yes", mode="cpc")
    name = api.item(cid, "short")["name"]
    answer = update(api, cid, {"name": name, "vertical_id": 1, "web_view": None, "mode": None})
    assert answer["status"] == "ok", answer
    assert answer["item"]["web_view"] == "Enable" and answer["item"]["mode"] == "CPC"


def test_update_refuses_settings_of_other_formats_and_changes_nothing(api):
    cid = api.new_campaign("push")
    before = api.item(cid)
    answer = update(
        api, cid, {"name": unique(), "vertical_id": 1, "web_view": "yes", "limit_sum": 5}
    )
    assert answer == {
        "status": "error",
        "errorList": ["Parameter 'web_view' is not available for Push campaigns"],
    }
    assert api.item(cid) == before


def test_update_missing_campaign(api):
    answer = update(api, 987654321, {"name": "x", "vertical_id": 1})
    assert answer == {"status": "error", "errorList": ["Campaign not found #987654321"]}


# --------------------------------------------------------------------------- work status


def work_status(api, cid: int) -> str:
    return api.item(cid, "short")["work_status"]


def test_start_pause_archive_single(api):
    cid = api.new_campaign("inpage")
    for action, state in (
        ("start", "Started"),
        ("start", "Started"),
        ("pause", "Paused"),
        ("archive", "Archived"),
        ("start", "Started"),
        ("archive", "Archived"),
        ("pause", "Paused"),
    ):
        assert api.ok(f"/api/campaign/{action}", id=cid) == {"status": "ok"}
        assert work_status(api, cid) == state, action


@pytest.mark.parametrize(
    "target, missing",
    [
        ({}, "category, quality, country"),
        ({"category": "c", "country": {"US": 0.5}}, "quality"),
        ({"quality": ["high"]}, "category, country"),
    ],
)
def test_start_needs_category_quality_country(api, refs, target, missing):
    if "category" in target:
        target = {**target, "category": category_ids(refs, "push")[:1]}
    body = {"name": unique(), "vertical_id": 1}
    if target:
        body["target"] = target
    cid = create(api, "push", body)["item"]["id"]
    assert api.errors("/api/campaign/start", id=cid) == [
        f"Campaign #{cid} can not be started: no {missing} targeting"
    ]
    assert work_status(api, cid) == "Paused"


@pytest.mark.parametrize("status", ["Declined", "Stopped"])
def test_start_refused_after_moderation_python(api, sandbox, status):
    cid = api.new_campaign("push")
    api.ok("/api/campaign/start", id=cid)
    api.ok("/api/campaign/pause", id=cid)
    sandbox.moderate("campaign", cid, status)
    assert api.errors("/api/campaign/start", id=cid) == [
        f"Campaign #{cid} can not be started: its status is {status}"
    ]
    assert work_status(api, cid) == "Paused"
    api.ok("/api/campaign/archive", id=cid)
    assert work_status(api, cid) == "Archived"
    assert api.item(cid, "short")["status"] == status


def test_start_refused_after_moderation_http(api, sandbox):
    cid = api.new_campaign("video")
    moderate(sandbox, "campaign", cid, "Declined")
    assert api.item(cid, "short")["status"] == "Declined"
    assert api.errors("/api/campaign/start", id=cid) == [
        f"Campaign #{cid} can not be started: its status is Declined"
    ]
    moderate(sandbox, "campaign", cid, "Approved")
    api.ok("/api/campaign/start", id=cid)
    assert work_status(api, cid) == "Started"


@pytest.mark.parametrize("action", ["start", "pause", "archive"])
def test_single_work_action_on_missing_or_foreign_campaign(api, other, action):
    theirs = other.new_campaign("push")
    for cid in (987654321, theirs):
        assert api.errors(f"/api/campaign/{action}", id=cid) == [
            f"Error on find campaign #{cid} in account"
        ]
    assert work_status(other, theirs) == "Paused"


def check_batch_shape(body):
    assert set(body) == {"status", "mode", "result"}
    assert body["status"] == "ok" and body["mode"] == "batch"
    assert set(body["result"]) == {"success", "failed"}
    for entry in body["result"]["failed"]:
        assert set(entry) == {"id", "errorList"}
        assert isinstance(entry["id"], int)


@pytest.mark.parametrize(
    "action, state", [("start", "Started"), ("pause", "Paused"), ("archive", "Archived")]
)
def test_batch_work_actions_with_mixed_results(api, other, action, state):
    a = api.new_campaign("push")
    b = api.new_campaign("pops")
    theirs = other.new_campaign("push")
    missing = 987654320
    r = api.get(f"/api/campaign/{action}-batch", campaignId=[a, missing, b, theirs, a])
    assert r.status_code == 200
    body = r.json()
    check_batch_shape(body)
    assert sorted(body["result"]["success"]) == sorted([a, b])
    failed = {f["id"]: f["errorList"] for f in body["result"]["failed"]}
    assert failed == {
        missing: [f"Error on find campaign #{missing} in account"],
        theirs: [f"Error on find campaign #{theirs} in account"],
    }
    assert work_status(api, a) == work_status(api, b) == state
    assert work_status(other, theirs) == "Paused"


def test_start_batch_reports_campaigns_that_can_not_start(api, sandbox):
    good = api.new_campaign("push")
    bare = api.new_campaign("push", targeted=False)
    declined = api.new_campaign("push")
    sandbox.moderate("campaign", declined, "Declined")
    body = api.get("/api/campaign/start-batch", campaignId=[good, bare, declined]).json()
    check_batch_shape(body)
    assert body["result"]["success"] == [good]
    failed = {f["id"]: f["errorList"] for f in body["result"]["failed"]}
    assert failed == {
        bare: [f"Campaign #{bare} can not be started: no category, quality, country targeting"],
        declined: [f"Campaign #{declined} can not be started: its status is Declined"],
    }
    assert work_status(api, good) == "Started"
    assert work_status(api, bare) == work_status(api, declined) == "Paused"


def test_archived_campaigns_can_start_again_in_batch(api):
    a, b = api.new_campaign("push"), api.new_campaign("video")
    api.ok("/api/campaign/archive-batch", campaignId=[a, b])
    assert work_status(api, a) == work_status(api, b) == "Archived"
    body = api.ok("/api/campaign/start-batch", campaignId=[a, b])
    assert sorted(body["result"]["success"]) == sorted([a, b])
    assert work_status(api, a) == work_status(api, b) == "Started"
    api.ok("/api/campaign/archive-batch", campaignId=[a, b])
    body = api.ok("/api/campaign/pause-batch", campaignId=[a, b])
    assert body["result"]["failed"] == []
    assert work_status(api, a) == work_status(api, b) == "Paused"


# --------------------------------------------------------------------------- auto approve


def test_auto_approve(api):
    Api = type(api)
    with Sandbox(campaigns=1, auto_approve=True) as sb:
        auto = Api(sb.url, sb.api_keys[0])
        cid = auto.new_campaign("push")
        assert auto.item(cid, "short")["status"] == "Approved"
        listed = {c["id"]: c for c in auto.get("/api/campaign/list").json()["items"]}
        assert listed[cid]["status"] == "Approved"
        auto.ok("/api/campaign/start", id=cid)
        assert auto.item(cid, "short")["work_status"] == "Started"
        approved = auto.get("/api/campaign/list", status="approved").json()["items"]
        assert cid in [c["id"] for c in approved]
        r = auto.post_form(
            "/api/creative/create",
            data={"name": "c", "title": "Auto", "url": "https://example.com/"},
            files={"iconFile": ("icon.png", b"\x89PNG-icon", "image/png")},
            campaignId=cid,
        )
        crid = r.json()["item"]["id"]
        assert auto.ok("/api/creative/item", id=crid)["item"]["status"] == "Approved"
    # the shared sandbox does not approve on its own
    cid = api.new_campaign("push")
    assert api.item(cid, "short")["status"] == "New"


# --------------------------------------------------------------------------- accounts


def test_account_isolation(api, other):
    mine = api.new_campaign("push")
    theirs = other.new_campaign("pops")
    assert other.errors("/api/campaign/item", id=mine) == [f"Campaign not found #{mine}"]
    assert other.errors("/api/campaign/item", id=mine, mode="full") == [
        f"Campaign not found #{mine}"
    ]
    answer = update(other, mine, {"name": "hijack", "vertical_id": 1})
    assert answer == {"status": "error", "errorList": [f"Campaign not found #{mine}"]}
    assert api.item(mine, "short")["name"] != "hijack"
    their_ids = list_ids(other)
    assert mine not in their_ids and theirs in their_ids
    assert theirs not in list_ids(api)
    assert mine not in list_ids(other, name=api.item(mine, "short")["name"])
    users = {c["user_id"] for c in other.get("/api/campaign/list").json()["items"]}
    assert users == {other.item(theirs, "short")["user_id"]}
    assert api.item(mine, "short")["user_id"] not in users
