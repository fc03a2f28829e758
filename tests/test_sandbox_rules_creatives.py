"""Bid rules, CPA rules and creatives of the sandbox over HTTP."""

from __future__ import annotations

import re
import uuid

import pytest
import requests

from toolkit import spec

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x01icon" * 8
JPEG = b"\xff\xd8\xff\xe0" + b"image" * 20
MP4 = b"\x00\x00\x00\x18ftypmp42" + b"\x01" * 333
FILE_FIELDS = {
    "t_event",
    "type",
    "mime",
    "codec",
    "codec_name",
    "bit_rate",
    "duration",
    "width",
    "height",
    "url",
}


def token() -> str:
    return uuid.uuid4().hex[:12]


# --------------------------------------------------------------------------- bid rules


def bid_rules(api, cid: int) -> list[dict]:
    return api.ok("/api/campaign/bid-rules", id=cid)["rules"]


def as_map(rules: list[dict]) -> dict[str, float]:
    """Item -> bid."""
    return {item: r["bid"] for r in rules for item in r["items"]}


def test_bid_rules_read_shape(api):
    cid = api.new_campaign("push")
    body = api.ok("/api/campaign/bid-rules", id=cid)
    assert body == {"status": "ok", "rules": []}
    api.ok("/api/campaign/add-bid-rule", id=cid, items=["1234", "abcdef"], bid="0.35")
    rules = bid_rules(api, cid)
    assert len(rules) == 1
    assert set(rules[0]) == {"items", "bid"}
    assert sorted(rules[0]["items"]) == ["1234", "abcdef"]
    assert all(isinstance(i, str) for i in rules[0]["items"])
    assert rules[0]["bid"] == 0.35


def test_add_bid_rule_query_and_json_forms_make_one_rule_each(api):
    cid = api.new_campaign("pops")
    api.ok("/api/campaign/add-bid-rule", id=cid, items=["a1", "b2"], bid=0.2)
    r = api.post_json("/api/campaign/add-bid-rule", {"items": ["c3", "5555"], "bid": 0.4}, id=cid)
    assert r.json() == {"status": "ok"}
    rules = bid_rules(api, cid)
    assert sorted((sorted(r["items"]), r["bid"]) for r in rules) == [
        (["5555", "c3"], 0.4),
        (["a1", "b2"], 0.2),
    ]


def test_add_bid_rule_item_already_taken_keeps_the_others(api):
    cid = api.new_campaign("push")
    api.ok("/api/campaign/add-bid-rule", id=cid, items=["a1", "b2"], bid=0.3)
    errors = api.errors("/api/campaign/add-bid-rule", id=cid, items=["a1", "c3", "b2"], bid=0.9)
    assert errors == [
        f"Error on save item a1; CampaignId: {cid}; Item has already been taken",
        f"Error on save item b2; CampaignId: {cid}; Item has already been taken",
    ]
    assert as_map(bid_rules(api, cid)) == {"a1": 0.3, "b2": 0.3, "c3": 0.9}


def test_add_bid_rule_refuses_non_hex_items_and_changes_nothing(api):
    cid = api.new_campaign("push")
    api.ok("/api/campaign/add-bid-rule", id=cid, items=["aa"], bid=0.3)
    before = bid_rules(api, cid)
    errors = api.errors("/api/campaign/add-bid-rule", id=cid, items=["bb", "xyz", "1g"], bid=0.5)
    assert len(errors) == 2
    assert any("xyz" in e for e in errors) and any("1g" in e for e in errors)
    assert not any("bb" in e for e in errors)
    assert bid_rules(api, cid) == before


@pytest.mark.parametrize("bid", ["0", "-1"])
def test_add_bid_rule_refuses_bid_not_above_zero(api, bid):
    cid = api.new_campaign("push")
    errors = api.errors("/api/campaign/add-bid-rule", id=cid, items=["ab"], bid=bid)
    assert len(errors) == 1 and bid in errors[0]
    assert bid_rules(api, cid) == []


@pytest.mark.parametrize("path", ["/api/campaign/drop-bid-rule", "/api/campaign/drop-bid-rlue"])
def test_drop_bid_rule_and_alias(api, path):
    cid = api.new_campaign("push")
    api.ok("/api/campaign/add-bid-rule", id=cid, items=["a1", "b2"], bid=0.3)
    api.ok("/api/campaign/add-bid-rule", id=cid, items=["c3"], bid=0.6)
    api.ok(path, id=cid, items=["b2", "c3"])
    assert bid_rules(api, cid) == [{"items": ["a1"], "bid": 0.3}]
    r = api.post_json(path, {"items": ["a1"]}, id=cid)
    assert r.json() == {"status": "ok"}
    assert bid_rules(api, cid) == []


def test_drop_bid_rule_missing_item(api):
    cid = api.new_campaign("push")
    api.ok("/api/campaign/add-bid-rule", id=cid, items=["a1", "b2"], bid=0.3)
    errors = api.errors("/api/campaign/drop-bid-rule", id=cid, items=["ff", "a1", "ee"])
    assert errors == [
        f"Error on find item: ff; campaignId: {cid}",
        f"Error on find item: ee; campaignId: {cid}",
    ]
    assert as_map(bid_rules(api, cid)) == {"b2": 0.3}
    assert api.ok("/api/campaign/drop-bid-rule", id=cid, items=["ff", "b2"], checkExist="skip")
    assert bid_rules(api, cid) == []
    r = api.post_json("/api/campaign/drop-bid-rlue", {"items": ["dd"]}, id=cid, checkExist="skip")
    assert r.json() == {"status": "ok"}


def test_bid_rules_of_another_account(api, other):
    cid = api.new_campaign("push")
    api.ok("/api/campaign/add-bid-rule", id=cid, items=["a1"], bid=0.3)
    missing = [f"Campaign not found #{cid}"]
    assert other.errors("/api/campaign/bid-rules", id=cid) == missing
    assert other.errors("/api/campaign/add-bid-rule", id=cid, items=["b2"], bid=0.3) == missing
    assert other.errors("/api/campaign/drop-bid-rule", id=cid, items=["a1"]) == missing
    assert as_map(bid_rules(api, cid)) == {"a1": 0.3}


# --------------------------------------------------------------------------- CPA rules

RULE_A = {
    "type": "sum",
    "cond": "greater",
    "amount": 10,
    "lead_type": "lead",
    "lead_cond": "less",
    "lead_amount": 1,
}
RULE_B = {
    "type": "click",
    "cond": "less",
    "amount": 500,
    "lead_type": "roi",
    "lead_cond": "greater",
    "lead_amount": 25.5,
}
CPA_KEYS = {"id", "campaign_id", *spec.CPA_FIELDS}


def cpa_rules(api, cid: int) -> list[dict]:
    return api.ok("/api/campaign/cpa-rules", id=cid)["rules"]


def fields(rule: dict) -> dict:
    return {k: rule[k] for k in spec.CPA_FIELDS}


def add_cpa_json(api, cid: int, mode: str, items) -> dict:
    r = api.post_json("/api/campaign/add-cpa-rule", {"mode": mode, "items": items}, id=cid)
    assert r.status_code == 200, r.text
    return r.json()


def test_add_cpa_rules_json_array_form(api):
    cid = api.new_campaign("push")
    assert cpa_rules(api, cid) == []
    assert add_cpa_json(api, cid, "add", [RULE_A, RULE_B]) == {"status": "ok"}
    rules = cpa_rules(api, cid)
    assert len(rules) == 2
    for rule in rules:
        assert set(rule) == CPA_KEYS
        assert isinstance(rule["id"], int) and rule["campaign_id"] == cid
    assert sorted((fields(r) for r in rules), key=lambda r: r["type"]) == [RULE_B, RULE_A]
    assert len({r["id"] for r in rules}) == 2


def test_add_cpa_rules_query_form(api):
    cid = api.new_campaign("video")
    items = {
        "first": {k: str(v) for k, v in RULE_A.items()},
        "7": {**{k: str(v) for k, v in RULE_B.items()}, "lead_type": "starts"},
    }
    api.ok("/api/campaign/add-cpa-rule", id=cid, mode="add", items=items)
    got = sorted((fields(r) for r in cpa_rules(api, cid)), key=lambda r: r["type"])
    assert got == [{**RULE_B, "lead_type": "starts"}, RULE_A]


def test_edit_cpa_rule_with_id_field_changes_only_given_fields(api):
    cid = api.new_campaign("push")
    add_cpa_json(api, cid, "add", [RULE_A, RULE_B])
    a, b = sorted(cpa_rules(api, cid), key=lambda r: r["type"] != "sum")
    answer = add_cpa_json(api, cid, "edit", [{"id": a["id"], "amount": 42, "cond": "less"}])
    assert answer == {"status": "ok"}
    after = {r["id"]: r for r in cpa_rules(api, cid)}
    assert after[a["id"]] == {**a, "amount": 42, "cond": "less"}
    assert after[b["id"]] == b


def test_edit_cpa_rule_query_form_key_is_the_id(api):
    cid = api.new_campaign("pops")
    add_cpa_json(api, cid, "add", [RULE_A, RULE_B])
    a, b = sorted(cpa_rules(api, cid), key=lambda r: r["type"] != "sum")
    api.ok(
        "/api/campaign/add-cpa-rule",
        id=cid,
        mode="edit",
        items={str(b["id"]): {"lead_amount": "3.5", "lead_type": "cpa"}},
    )
    after = {r["id"]: r for r in cpa_rules(api, cid)}
    assert after[b["id"]] == {**b, "lead_amount": 3.5, "lead_type": "cpa"}
    assert after[a["id"]] == a


def test_edit_unknown_cpa_rule_changes_nothing(api):
    cid = api.new_campaign("push")
    add_cpa_json(api, cid, "add", [RULE_A])
    before = cpa_rules(api, cid)
    known = before[0]["id"]
    unknown = known + 1_000_000
    answer = add_cpa_json(
        api, cid, "edit", [{"id": known, "amount": 99}, {"id": unknown, "amount": 1}]
    )
    assert answer == {
        "status": "error",
        "errorList": [f"Error on find item: {unknown}; campaignId: {cid}"],
    }
    assert cpa_rules(api, cid) == before


def test_edit_cpa_rule_of_another_campaign_is_unknown(api):
    mine = api.new_campaign("push")
    elsewhere = api.new_campaign("push")
    add_cpa_json(api, elsewhere, "add", [RULE_A])
    rid = cpa_rules(api, elsewhere)[0]["id"]
    answer = add_cpa_json(api, mine, "edit", [{"id": rid, "amount": 1}])
    assert answer["errorList"] == [f"Error on find item: {rid}; campaignId: {mine}"]
    assert cpa_rules(api, elsewhere)[0]["amount"] == 10


def test_add_cpa_rule_lists_every_invalid_value(api):
    cid = api.new_campaign("push")
    bad = {
        "type": "views",
        "cond": "equal",
        "amount": "lots",
        "lead_type": "lead",
        "lead_cond": "more",
        "lead_amount": 1,
    }
    answer = add_cpa_json(api, cid, "add", [RULE_A, bad])
    assert answer["status"] == "error"
    errors = answer["errorList"]
    assert len(errors) == 4, errors
    for value in ("views", "equal", "lots", "more"):
        assert sum(value in e for e in errors) == 1, (value, errors)
    assert cpa_rules(api, cid) == []


def test_add_cpa_rule_needs_every_field(api):
    cid = api.new_campaign("push")
    partial = {k: v for k, v in RULE_A.items() if k not in ("cond", "lead_amount")}
    answer = add_cpa_json(api, cid, "add", [partial])
    assert answer["status"] == "error"
    assert len(answer["errorList"]) == 2
    assert any("'cond'" in e for e in answer["errorList"])
    assert any("'lead_amount'" in e for e in answer["errorList"])
    assert cpa_rules(api, cid) == []


@pytest.mark.parametrize(
    "ad_format, rule, allowed",
    [
        ("pops", {"type": "show"}, False),
        ("push", {"type": "show"}, True),
        ("inpage", {"type": "show"}, True),
        ("video", {"type": "show", "lead_type": "starts"}, True),
        ("push", {"lead_type": "starts"}, False),
        ("pops", {"lead_type": "starts"}, False),
        ("inpage", {"lead_type": "starts"}, False),
    ],
)
def test_cpa_values_per_format(api, ad_format, rule, allowed):
    cid = api.new_campaign(ad_format)
    answer = add_cpa_json(api, cid, "add", [{**RULE_A, **rule}])
    if allowed:
        assert answer == {"status": "ok"}
        assert fields(cpa_rules(api, cid)[0]) == {**RULE_A, **rule}
    else:
        assert answer["status"] == "error"
        assert len(answer["errorList"]) == 1
        assert next(iter(rule.values())) in answer["errorList"][0]
        assert cpa_rules(api, cid) == []


def test_edit_cpa_rule_to_show_refused_for_pops(api):
    cid = api.new_campaign("pops")
    add_cpa_json(api, cid, "add", [RULE_A])
    before = cpa_rules(api, cid)
    answer = add_cpa_json(api, cid, "edit", [{"id": before[0]["id"], "type": "show"}])
    assert answer["status"] == "error" and "show" in answer["errorList"][0]
    assert cpa_rules(api, cid) == before


@pytest.mark.parametrize("path", ["/api/campaign/drop-cpa-rule", "/api/campaign/drop-cpa-rlue"])
def test_drop_cpa_rule_and_alias(api, path):
    cid = api.new_campaign("push")
    add_cpa_json(api, cid, "add", [RULE_A, RULE_B])
    a, b = (r["id"] for r in cpa_rules(api, cid))
    api.ok(path, id=cid, items=[a])
    assert [r["id"] for r in cpa_rules(api, cid)] == [b]
    missing = a + 1_000_000
    assert api.errors(path, id=cid, items=[missing, b]) == [
        f"Error on find item: {missing}; campaignId: {cid}"
    ]
    assert cpa_rules(api, cid) == []
    api.ok(path, id=cid, items=[missing], checkExist="skip")
    r = api.post_json(path, {"items": [str(missing)]}, id=cid, checkExist="skip")
    assert r.json() == {"status": "ok"}


def test_cpa_rules_of_another_account(api, other):
    cid = api.new_campaign("push")
    add_cpa_json(api, cid, "add", [RULE_A])
    before = cpa_rules(api, cid)
    missing = [f"Campaign not found #{cid}"]
    assert other.errors("/api/campaign/cpa-rules", id=cid) == missing
    r = other.post_json("/api/campaign/add-cpa-rule", {"mode": "add", "items": [RULE_B]}, id=cid)
    assert r.json() == {"status": "error", "errorList": missing}
    assert other.errors("/api/campaign/drop-cpa-rule", id=cid, items=[before[0]["id"]]) == missing
    assert cpa_rules(api, cid) == before


# --------------------------------------------------------------------------- creatives


def create_creative(api, cid: int, data: dict, files=None) -> dict:
    data = {"name": f"creative {token()}", **data}
    r = api.post_form("/api/creative/create", data=data, files=files, campaignId=cid)
    assert r.status_code == 200, r.text
    return r.json()


def push_creative(api, cid: int, **data) -> dict:
    data = {"title": "Title", "url": "https://example.com/click", **data}
    answer = create_creative(
        api,
        cid,
        data,
        files={
            "iconFile": ("icon.png", PNG, "image/png"),
            "imageFile": ("image.jpg", JPEG, "image/jpeg"),
        },
    )
    assert answer["status"] == "ok", answer
    return answer["item"]


def creative(api, crid: int) -> dict:
    return api.ok("/api/creative/item", id=crid)["item"]


def creatives_of(api, cid: int, **filters) -> list[dict]:
    r = api.get("/api/creative/list", campaignId=cid, **filters)
    assert r.status_code == 200, r.text
    return r.json()["items"]


def download(url: str) -> bytes:
    r = requests.get(url, timeout=30)
    assert r.status_code == 200, url
    return r.content


def test_create_push_creative_multipart(api):
    cid = api.new_campaign("push")
    item = push_creative(api, cid, title="Hello", text="Some text")
    assert tuple(item) == spec.CREATIVE_WRITE_FIELDS
    assert item["campaign_id"] == cid
    assert (item["title"], item["text"], item["url"]) == (
        "Hello",
        "Some text",
        "https://example.com/click",
    )
    assert item["status"] == "New" and item["work_status"] == "Paused"
    assert item["status_note"] is None
    assert isinstance(item["ctr"], (int, float))
    assert TIMESTAMP.match(item["t_created"])
    assert download(item["icon_url"]) == PNG
    assert download(item["image_url"]) == JPEG
    detail = creative(api, item["id"])
    assert {k: detail[k] for k in spec.CREATIVE_WRITE_FIELDS} == item


def test_create_inpage_creative_with_work_status(api):
    cid = api.new_campaign("inpage")
    answer = create_creative(
        api,
        cid,
        {"title": "In page", "url": "https://example.com/ip", "work_status": "started"},
        files={"iconFile": ("icon.png", PNG, "image/png")},
    )
    assert answer["status"] == "ok", answer
    assert answer["item"]["work_status"] == "Started"
    assert answer["item"]["image_url"] is None


def test_create_video_creative_with_video_file(api):
    cid = api.new_campaign("video")
    answer = create_creative(
        api,
        cid,
        {"title": "Video", "url": "https://example.com/v"},
        files={"videoFile": ("clip.mp4", MP4, "video/mp4")},
    )
    assert answer["status"] == "ok", answer
    assert tuple(answer["item"]) == spec.CREATIVE_WRITE_FIELDS
    detail = creative(api, answer["item"]["id"])
    assert detail["type"] == "video"
    assert detail["convert"] in spec.VIDEO_CONVERT_STATES
    assert type(detail["duration"]) is int and detail["duration"] > 0
    assert download(detail["video_url"]) == MP4
    assert detail["files"], detail
    for f in detail["files"]:
        assert set(f) == FILE_FIELDS
        assert f["type"] == "video"
        assert TIMESTAMP.match(f["t_event"])
        for name in ("bit_rate", "duration", "width", "height"):
            assert type(f[name]) is int and f[name] > 0, (name, f)
        for name in ("mime", "codec", "codec_name", "url"):
            assert isinstance(f[name], str) and f[name]
        assert f["duration"] == detail["duration"]
        assert download(f["url"])


def test_create_video_creative_with_youtube_url(api):
    cid = api.new_campaign("video")
    yt = f"https://www.youtube.com/watch?v={token()}"
    answer = create_creative(api, cid, {"title": "Tube", "youtubeUrl": yt})
    assert answer["status"] == "ok", answer
    crid = answer["item"]["id"]
    detail = creative(api, crid)
    assert detail["type"] == "youtube"
    assert detail["video_url"] == yt
    assert detail["convert"] in spec.VIDEO_CONVERT_STATES
    assert isinstance(detail["files"], list)
    assert [c["id"] for c in api.get("/api/creative/list", url=yt[-12:]).json()["items"]] == [crid]


def test_video_creative_needs_a_video(api):
    cid = api.new_campaign("video")
    answer = create_creative(api, cid, {"title": "No video", "url": "https://example.com/"})
    assert answer["status"] == "error"
    assert any("videoFile" in e for e in answer["errorList"])
    assert creatives_of(api, cid) == []


def test_creative_list_shape(api):
    cid = api.new_campaign("push")
    push_creative(api, cid)
    r = api.get("/api/creative/list")
    body = r.json()
    assert set(body) == {"items"}
    assert body["items"]
    for item in body["items"]:
        assert tuple(item) == spec.CREATIVE_LIST_FIELDS
        assert TIMESTAMP.match(item["t_created"])
    mine = creatives_of(api, cid)
    assert len(mine) == 1 and mine[0]["campaign_id"] == cid


def test_creative_list_filters(api, sandbox):
    cid = api.new_campaign("push")
    other_cid = api.new_campaign("push")
    t = token()
    a = push_creative(api, cid, title=f"Alpha {t}", text="plain", url="https://a.example.com/")
    b = push_creative(api, cid, title="Beta", text=f"text {t}", url=f"https://b.example.com/{t}")
    c = push_creative(api, other_cid, title="Gamma", url="https://c.example.com/")
    assert sorted(i["id"] for i in creatives_of(api, cid)) == sorted([a["id"], b["id"]])
    assert [i["id"] for i in creatives_of(api, other_cid)] == [c["id"]]
    every = api.get("/api/creative/list").json()["items"]
    assert {a["id"], b["id"], c["id"]} <= {i["id"] for i in every}

    assert [i["id"] for i in api.get("/api/creative/list", title=t).json()["items"]] == [a["id"]]
    assert [i["id"] for i in api.get("/api/creative/list", text=t).json()["items"]] == [b["id"]]
    assert [i["id"] for i in api.get("/api/creative/list", url=t).json()["items"]] == [b["id"]]

    sandbox.moderate("creative", a["id"], "Approved")
    approved = creatives_of(api, cid, status="approved")
    assert [i["id"] for i in approved] == [a["id"]]
    assert [i["id"] for i in creatives_of(api, cid, status="new")] == [b["id"]]
    assert creatives_of(api, cid, status="declined") == []

    api.ok("/api/creative/archive", id=b["id"])
    assert [i["id"] for i in creatives_of(api, cid, work_status="archived")] == [b["id"]]
    assert [i["id"] for i in creatives_of(api, cid, work_status="paused")] == [a["id"]]
    for item in api.get("/api/creative/list", work_status="archived").json()["items"]:
        assert item["work_status"] == "Archived"


@pytest.mark.parametrize("param", ["status", "work_status"])
def test_creative_list_invalid_filter(api, param):
    errors = api.errors("/api/creative/list", **{param: "bogus"})
    assert len(errors) == 1 and f"'{param}'" in errors[0]


def test_title_and_text_too_long_are_both_listed(api):
    cid = api.new_campaign("push")
    answer = create_creative(
        api,
        cid,
        {"title": "T" * 66, "text": "x" * 161, "url": "https://example.com/"},
        files={"iconFile": ("icon.png", PNG, "image/png")},
    )
    assert answer["status"] == "error"
    errors = answer["errorList"]
    assert len(errors) == 2, errors
    assert any("itle" in e and "66" in e for e in errors)
    assert any("ext" in e and "161" in e for e in errors)
    assert creatives_of(api, cid) == []
    item = push_creative(api, cid, title="T" * 65, text="x" * 160)
    assert (len(item["title"]), len(item["text"])) == (65, 160)


def test_push_creative_needs_icon_file(api):
    cid = api.new_campaign("push")
    answer = create_creative(api, cid, {"title": "No icon", "url": "https://example.com/"})
    assert answer["status"] == "error"
    assert len(answer["errorList"]) == 1 and "iconFile" in answer["errorList"][0]
    answer = create_creative(
        api,
        cid,
        {"title": "Image only", "url": "https://example.com/"},
        files={"imageFile": ("image.jpg", JPEG, "image/jpeg")},
    )
    assert answer["status"] == "error"
    assert creatives_of(api, cid) == []


def test_creative_json_body_is_400(api):
    cid = api.new_campaign("push")
    body = {"name": "json", "title": "Json", "url": "https://example.com/"}
    r = api.post_json("/api/creative/create", body, campaignId=cid)
    assert r.status_code == 400
    assert r.json()["status"] == "error" and r.json()["errorList"]
    crid = push_creative(api, cid)["id"]
    r = api.post_json("/api/creative/update", body, id=crid)
    assert r.status_code == 400
    assert creative(api, crid)["title"] == "Title"
    assert len(creatives_of(api, cid)) == 1


def test_update_keeps_files_not_sent_again(api):
    cid = api.new_campaign("push")
    item = push_creative(api, cid)
    r = api.post_form("/api/creative/update", data={"name": "n", "title": "Renamed"}, id=item["id"])
    updated = r.json()
    assert updated["status"] == "ok", updated
    assert tuple(updated["item"]) == spec.CREATIVE_WRITE_FIELDS
    assert updated["item"]["title"] == "Renamed"
    for name in ("icon_url", "image_url", "url", "text", "t_created", "campaign_id"):
        assert updated["item"][name] == item[name], name
    new_icon = PNG + b"v2"
    r = api.post_form(
        "/api/creative/update",
        data={"name": "n", "title": "Renamed"},
        files={"iconFile": ("icon2.png", new_icon, "image/png")},
        id=item["id"],
    )
    again = r.json()["item"]
    assert again["icon_url"] != item["icon_url"]
    assert download(again["icon_url"]) == new_icon
    assert again["image_url"] == item["image_url"]
    assert download(again["image_url"]) == JPEG


def test_update_video_creative_keeps_its_video(api):
    cid = api.new_campaign("video")
    crid = create_creative(
        api,
        cid,
        {"title": "V", "url": "https://example.com/v"},
        files={"videoFile": ("clip.mp4", MP4, "video/mp4")},
    )["item"]["id"]
    before = creative(api, crid)
    r = api.post_form("/api/creative/update", data={"name": "n", "title": "V2"}, id=crid)
    assert r.json()["status"] == "ok", r.text
    after = creative(api, crid)
    assert after["title"] == "V2"
    for name in ("type", "convert", "duration", "video_url", "files"):
        assert after[name] == before[name], name


def test_creative_start_pause_archive(api):
    cid = api.new_campaign("push")
    crid = push_creative(api, cid)["id"]
    for action, state in (
        ("start", "Started"),
        ("pause", "Paused"),
        ("archive", "Archived"),
        ("start", "Started"),
        ("archive", "Archived"),
        ("pause", "Paused"),
    ):
        assert api.ok(f"/api/creative/{action}", id=crid) == {"status": "ok"}
        assert creative(api, crid)["work_status"] == state, action


def test_declined_creative_can_not_start(api, sandbox):
    cid = api.new_campaign("push")
    crid = push_creative(api, cid)["id"]
    sandbox.moderate("creative", crid, "Declined")
    assert creative(api, crid)["status"] == "Declined"
    errors = api.errors("/api/creative/start", id=crid)
    assert len(errors) == 1 and str(crid) in errors[0] and "Declined" in errors[0]
    assert creative(api, crid)["work_status"] == "Paused"
    api.ok("/api/creative/archive", id=crid)
    assert creative(api, crid)["work_status"] == "Archived"
    sandbox.moderate("creative", crid, "Approved")
    api.ok("/api/creative/start", id=crid)
    assert creative(api, crid)["work_status"] == "Started"


def test_campaign_work_status_does_not_move_creatives(api):
    cid = api.new_campaign("push")
    crid = push_creative(api, cid)["id"]
    api.ok("/api/creative/start", id=crid)
    api.ok("/api/campaign/archive", id=cid)
    assert creative(api, crid)["work_status"] == "Started"


def test_another_accounts_creative_is_not_found(api, other):
    cid = api.new_campaign("push")
    crid = push_creative(api, cid)["id"]
    missing = [f"Creative not found #{crid}"]
    assert other.errors("/api/creative/item", id=crid) == missing
    for action in ("start", "pause", "archive"):
        assert other.errors(f"/api/creative/{action}", id=crid) == missing
    r = other.post_form("/api/creative/update", data={"name": "x", "title": "Hijack"}, id=crid)
    assert r.json() == {"status": "error", "errorList": missing}
    assert crid not in [i["id"] for i in other.get("/api/creative/list").json()["items"]]
    assert other.get("/api/creative/list", campaignId=cid).json()["items"] == []
    answer = create_creative(
        other,
        cid,
        {"title": "x", "url": "https://example.com/"},
        files={"iconFile": ("icon.png", PNG, "image/png")},
    )
    assert answer == {"status": "error", "errorList": [f"Campaign not found #{cid}"]}
    detail = creative(api, crid)
    assert detail["title"] == "Title" and detail["work_status"] == "Paused"
