"""Campaign targeting and source/subId lists of the sandbox, over real HTTP.

Every target kind of ``spec.TARGET_KINDS`` goes through the same checks, driven from one table:
add, show in ``item?mode=full``, add again, drop, drop again, ``checkExist=skip``, batches with
a mix of campaigns, format restrictions, validation and parameter types. Valid items come from
the sandbox's own dictionaries and search operation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest

from toolkit import spec

Api = Any  # the conftest helper (fixtures `api` and `other`)

FORMS = ("query", "json")
LABELS = {"push": "Push", "pops": "Popunder", "video": "Video", "inpage": "In-page Push"}
MISSING_ID = 987_654_321
TAKEN = "; CampaignId: {cid}; Item has already been taken"


# --------------------------------------------------------------------------- helpers


def send(api: Api, form: str, path: str, body: dict[str, Any], **query: Any) -> dict[str, Any]:
    """Call ``path`` with ``body`` in the query string (GET) or as a JSON body (POST).

    ``query`` always goes in the query string (``checkExist``, as the interface says).
    """
    r = api.get(path, **body, **query) if form == "query" else api.post_json(path, body, **query)
    assert r.status_code == 200, r.text
    return r.json()


def assert_ok(body: dict[str, Any]) -> None:
    assert body == {"status": "ok"}, body


def assert_errors(body: dict[str, Any], expected: list[str]) -> None:
    assert body["status"] == "error", body
    assert body["errorList"] == expected


def batch_result(body: dict[str, Any]) -> dict[str, Any]:
    assert body["status"] == "ok", body
    assert body["mode"] == "batch", body
    return body["result"]


def messages(error_list: list[str] | dict[str, str]) -> list[str]:
    """Messages of a batch ``errorList``, in either of the interface's two forms."""
    return list(error_list.values()) if isinstance(error_list, dict) else list(error_list)


# --------------------------------------------------------------------------- the kinds


@dataclass(frozen=True)
class Case:
    """One target kind (and list type for typed kinds) with the format used to exercise it."""

    kind: str
    fmt: str
    list_type: str | None = None

    @property
    def id(self) -> str:
        return self.kind + (f"-{self.list_type}" if self.list_type else "")

    @property
    def field(self) -> str:
        """Key of the kind in the detail view, as the interface and docs/sandbox.md name it."""
        if self.list_type:
            base = {"cidr": "Cidr", "domain": "Domain"}[self.kind]
            return self.list_type + base
        return {
            "category": "category",
            "quality": "quality",
            "country": "countrySet",
            "connection-type": "connectionType",
            "language": "language",
            "os": "os",
            "browser": "browser",
            "subs-age": "subsAge",
            "city": "city",
            "region": "region",
            "isp-mobile": "ispMobile",
        }[self.kind]

    @property
    def other_field(self) -> str | None:
        if not self.list_type:
            return None
        other = "white" if self.list_type == "black" else "black"
        return other + self.field[len(self.list_type) :]

    @property
    def extra(self) -> dict[str, str]:
        return {"type": self.list_type} if self.list_type else {}


CASES: tuple[Case, ...] = (
    Case("category", "inpage"),
    Case("quality", "push"),
    Case("country", "pops"),
    Case("connection-type", "video"),
    Case("language", "push"),
    Case("os", "video"),
    Case("browser", "inpage"),
    Case("subs-age", "push"),
    Case("city", "pops"),
    Case("region", "inpage"),
    Case("isp-mobile", "push"),
    Case("cidr", "video", "black"),
    Case("cidr", "pops", "white"),
    Case("domain", "video", "black"),
    Case("domain", "pops", "white"),
)
CASE_IDS = [c.id for c in CASES]


def test_cases_cover_every_target_kind() -> None:
    assert {c.kind for c in CASES} == set(spec.TARGET_KINDS)
    for kind in spec.TARGET_KINDS.values():
        if kind.typed:
            assert {c.list_type for c in CASES if c.kind == kind.name} == set(spec.LIST_TYPES)
    for case in CASES:
        kind = spec.TARGET_KINDS[case.kind]
        assert kind.allowed_for(case.fmt)
        if not case.list_type:
            assert kind.detail_field == case.field
        else:
            assert kind.typed_fields[case.list_type] == case.field


@dataclass(frozen=True)
class Refs:
    """Valid items taken from the sandbox's dictionaries and search."""

    dicts: dict[str, Any]
    city: int
    region: int
    isp: int

    def category_id(self, fmt: str) -> int:
        group = {"inpage": "push"}.get(fmt, fmt)
        return int(next(iter(self.dicts["category"][group])))

    def category_name(self, fmt: str, cid: int) -> str:
        group = {"inpage": "push"}.get(fmt, fmt)
        return self.dicts["category"][group][str(cid)]

    @property
    def country(self) -> str:
        """A country code of the dictionary other than the ``US`` of new campaigns."""
        for label in self.dicts["country"].values():
            code = re.fullmatch(r".+ \(([A-Z]{2})\)", label).group(1)
            if code != "US":
                return code
        raise AssertionError("no country")

    @property
    def language(self) -> str:
        return (
            "de" if "de" in self.dicts["language_code"] else next(iter(self.dicts["language_code"]))
        )

    def language_id(self, code: str) -> int:
        ids = [k for k, v in self.dicts["language"].items() if v.endswith(f" ({code})")]
        assert len(ids) == 1, ids
        return int(ids[0])

    def value(self, case: Case) -> Any:
        """The item as sent for ``case``."""
        return {
            "category": lambda: self.category_id(case.fmt),
            "quality": lambda: "premium",
            "country": lambda: self.country,
            "connection-type": lambda: "carrier",
            "language": lambda: self.language,
            "os": lambda: int(next(iter(self.dicts["os"]))),
            "browser": lambda: int(next(iter(self.dicts["browser"]))),
            "subs-age": lambda: int(sorted(self.dicts["subs_age"], key=int)[1]),
            "city": lambda: self.city,
            "region": lambda: self.region,
            "isp-mobile": lambda: self.isp,
            "cidr": lambda: "192.0.2.0/24",
            "domain": lambda: "news.example.com",
        }[case.kind]()

    def add_items(self, case: Case, value: Any, bid: float = 0.35) -> Any:
        return {value: bid} if case.kind == "country" else [value]

    def shown(self, case: Case, item: dict[str, Any], value: Any) -> bool:
        """Whether the detail view shows ``value`` under the kind's field."""
        if case.field not in item:
            return False
        shown = item[case.field]
        if case.kind == "country":
            return any(value in s["geo"].values() for s in shown)
        if case.kind in ("category", "os", "browser", "isp-mobile"):
            return isinstance(shown, dict) and str(value) in shown
        if case.kind == "language":
            return self.language_id(value) in shown
        return value in shown

    def taken(self, case: Case, value: Any, cid: int) -> str:
        suffix = TAKEN.format(cid=cid)
        if case.kind == "quality":
            return f"Error on save quality item {value}{suffix}"
        if case.kind == "category":
            name = self.category_name(case.fmt, value)
            return f"Error on save category item #{value} {name}{suffix}"
        if case.kind == "country":
            return f"Error on save country item #{value}{suffix}"
        if case.kind == "domain":
            return f"Error on save domain item {value}{suffix}"
        return f"Error on save item {value}{suffix}"

    @staticmethod
    def missing(case: Case, value: Any, cid: int) -> str:
        if case.kind in ("quality", "category", "country"):
            return f"Error on find {case.kind} item: {value}; CampaignId: {cid}"
        return f"Error on drop item {value}; CampaignId: {cid}; Item not exists"


@pytest.fixture(scope="module")
def refs(api: Api) -> Refs:
    dicts = api.ok("/api/campaign/list-refs-data")

    def first(kind: str, text: str, **extra: Any) -> int:
        r = api.get("/api/campaign/search", type=kind, search=text, **extra)
        assert r.status_code == 200, r.text
        found = r.json()
        assert found, (kind, text)
        return int(next(iter(found)))

    return Refs(
        dicts=dicts,
        city=first("city", "Berlin", country=["DE"]),
        region=first("region", "California", country=["US"]),
        isp=first("isp-mobile", "Vodafone"),
    )


@pytest.fixture(scope="module")
def others(other: Api) -> dict[str, int]:
    """One campaign per format in the second account."""
    return {fmt: other.new_campaign(fmt, targeted=False) for fmt in spec.FORMAT_CODES}


@pytest.fixture(scope="module")
def untouched(api: Api) -> dict[str, int]:
    """One fresh campaign per format for requests that must change nothing."""
    return {fmt: api.new_campaign(fmt, targeted=False) for fmt in spec.FORMAT_CODES}


# --------------------------------------------------------------------------- single campaign


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_single_add_show_drop(api: Api, refs: Refs, case: Case, form: str) -> None:
    cid = api.new_campaign(case.fmt, targeted=False)
    value = refs.value(case)
    kind = spec.TARGET_KINDS[case.kind]
    add, drop = kind.add_path, kind.drop_path
    assert not refs.shown(case, api.item(cid), value)

    assert_ok(send(api, form, add, {"id": cid, "items": refs.add_items(case, value)}, **case.extra))
    item = api.item(cid)
    assert refs.shown(case, item, value), item
    if case.other_field:
        assert item[case.other_field] == []

    again = send(api, form, add, {"id": cid, "items": refs.add_items(case, value)}, **case.extra)
    assert_errors(again, [refs.taken(case, value, cid)])

    assert_ok(send(api, form, drop, {"id": cid, "items": [value]}, **case.extra))
    item = api.item(cid)
    assert not refs.shown(case, item, value), item
    if kind.detail == "optional":
        assert case.field not in item

    again = send(api, form, drop, {"id": cid, "items": [value]}, **case.extra)
    assert_errors(again, [refs.missing(case, value, cid)])
    skipped = send(api, form, drop, {"id": cid, "items": [value]}, checkExist="skip", **case.extra)
    assert_ok(skipped)
    required = send(
        api, form, drop, {"id": cid, "items": [value]}, checkExist="required", **case.extra
    )
    assert_errors(required, [refs.missing(case, value, cid)])


def test_single_add_keeps_new_items_when_some_are_taken(api: Api) -> None:
    cid = api.new_campaign("push")  # has quality "high"
    body = api.get("/api/campaign/add-quality", id=cid, items=["low", "high", "premium"]).json()
    assert_errors(body, [f"Error on save quality item high{TAKEN.format(cid=cid)}"])
    assert sorted(api.item(cid)["quality"]) == ["high", "low", "premium"]


def test_single_drop_keeps_dropping_past_missing_items(api: Api) -> None:
    cid = api.new_campaign("push")
    api.ok("/api/campaign/add-os", id=cid, items=[1, 2])
    body = api.get("/api/campaign/drop-os", id=cid, items=[1, 3, 2]).json()
    assert_errors(body, [f"Error on drop item 3; CampaignId: {cid}; Item not exists"])
    assert api.item(cid)["os"] == []


@pytest.mark.parametrize("kind", ["cidr", "domain"])
def test_typed_kinds_default_to_black(api: Api, kind: str) -> None:
    cid = api.new_campaign("pops", targeted=False)
    value = "198.51.100.7" if kind == "cidr" else "ads.example.org"
    api.ok(f"/api/campaign/add-{kind}", id=cid, items=[value])
    item = api.item(cid)
    field = "Cidr" if kind == "cidr" else "Domain"
    assert item[f"black{field}"] == [value]
    assert item[f"white{field}"] == []
    # the white list does not hold it: dropping there is a missing item
    errors = api.errors(f"/api/campaign/drop-{kind}", id=cid, items=[value], type="white")
    assert errors == [f"Error on drop item {value}; CampaignId: {cid}; Item not exists"]
    api.ok(f"/api/campaign/drop-{kind}", id=cid, items=[value])
    assert api.item(cid)[f"black{field}"] == []


def test_domain_is_kept_lower_case(api: Api) -> None:
    cid = api.new_campaign("video", targeted=False)
    api.ok("/api/campaign/add-domain", id=cid, items=["Shop.Example.COM", "*.cdn.example.net"])
    assert sorted(api.item(cid)["blackDomain"]) == ["*.cdn.example.net", "shop.example.com"]
    errors = api.errors("/api/campaign/add-domain", id=cid, items=["shop.example.com"])
    assert errors == [f"Error on save domain item shop.example.com{TAKEN.format(cid=cid)}"]


def test_cidr_accepts_every_documented_form(api: Api) -> None:
    cid = api.new_campaign("push", targeted=False)
    values = ["203.0.113.9", "10.0.0.0/8", "2001:db8::1", "2001:db8::/32", "10.1.1.1-10.1.1.9"]
    api.ok("/api/campaign/add-cidr", id=cid, items=values, type="white")
    assert sorted(api.item(cid)["whiteCidr"]) == sorted(values)


def test_language_is_sent_as_code_and_shown_as_id(api: Api, refs: Refs) -> None:
    cid = api.new_campaign("push", targeted=False)
    api.ok("/api/campaign/add-language", id=cid, items=["en", "fr"])
    assert sorted(api.item(cid)["language"]) == sorted(
        [refs.language_id("en"), refs.language_id("fr")]
    )
    # the id is not accepted in place of the code
    lid = refs.language_id("en")
    errors = api.errors("/api/campaign/drop-language", id=cid, items=[str(lid)])
    assert errors == [f"Invalid language item: {lid}; CampaignId: {cid}"]


def test_country_bid_change_is_drop_then_add(api: Api) -> None:
    cid = api.new_campaign("push")  # US at 0.5
    errors = api.errors("/api/campaign/add-country", id=cid, items={"US": "0.9"})
    assert errors == [f"Error on save country item #US{TAKEN.format(cid=cid)}"]
    assert api.item(cid)["countrySet"][0]["price"] == 0.5

    api.ok("/api/campaign/drop-country", id=cid, items=["US"])
    assert api.item(cid)["countrySet"] == []
    api.ok("/api/campaign/add-country", id=cid, items={"US": "0.9", "CA": "0.5"})
    sets = api.item(cid)["countrySet"]
    assert {s["price"]: list(s["geo"].values()) for s in sets} == {0.9: ["US"], 0.5: ["CA"]}
    assert sets[0]["geo"] == {"840": "US"}


@pytest.mark.parametrize("form", FORMS)
def test_alias_add_region(api: Api, refs: Refs, form: str) -> None:
    cid = api.new_campaign("push", targeted=False)
    assert_ok(send(api, form, "/api/region/add-region", {"id": cid, "items": [refs.region]}))
    assert api.item(cid)["region"] == [refs.region]
    again = send(api, form, "/api/region/add-region", {"id": cid, "items": [refs.region]})
    assert_errors(again, [f"Error on save item {refs.region}{TAKEN.format(cid=cid)}"])


@pytest.mark.parametrize("form", FORMS)
def test_alias_add_cidr(api: Api, form: str) -> None:
    cid = api.new_campaign("inpage", targeted=False)
    body = send(
        api, form, "/api/region/add-cidr", {"id": cid, "items": ["198.51.100.0/24"]}, type="white"
    )
    assert_ok(body)
    item = api.item(cid)
    assert item["whiteCidr"] == ["198.51.100.0/24"]
    assert item["blackCidr"] == []
    assert_ok(send(api, form, "/api/region/add-cidr", {"id": cid, "items": ["198.51.100.1"]}))
    assert api.item(cid)["blackCidr"] == ["198.51.100.1"]


def test_detail_fields_per_format(api: Api) -> None:
    """docs/sandbox.md #16: which target fields the full view shows for each format."""
    for fmt in spec.FORMAT_CODES:
        item = api.item(api.new_campaign(fmt, targeted=False))
        assert ("subsAge" in item) == (fmt == "push"), fmt
        assert ("blackDomain" in item) == (fmt in ("video", "pops")), fmt
        assert ("whiteDomain" in item) == (fmt in ("video", "pops")), fmt
        assert item["blackCidr"] == [] and item["whiteCidr"] == []
        assert item["ispMobile"] == []
        for optional in ("city", "region", "language", "connectionType"):
            assert optional not in item, (fmt, optional)


def test_count_mode_counts_targets(api: Api) -> None:
    cid = api.new_campaign("push", targeted=False)
    api.ok("/api/campaign/add-os", id=cid, items=[1, 2, 3])
    api.ok("/api/campaign/add-browser", id=cid, items=[1])
    api.ok("/api/campaign/add-cidr", id=cid, items=["192.0.2.1", "192.0.2.2"], type="white")
    api.ok("/api/campaign/add-cidr", id=cid, items=["192.0.2.3"])
    counts = api.item(cid, mode="count")
    assert (counts["os"], counts["browser"], counts["whiteCidr"]) == (3, 1, 2)


def test_enumerated_parameters_are_case_insensitive(api: Api) -> None:
    cid = api.new_campaign("pops", targeted=False)
    api.ok("/api/campaign/add-domain", id=cid, items=["a.example.com"], type="WHITE")
    assert api.item(cid)["whiteDomain"] == ["a.example.com"]
    api.ok(
        "/api/campaign/drop-domain",
        id=cid,
        items=["b.example.com"],
        type="White",
        checkExist="SKIP",
    )
    errors = api.errors(
        "/api/campaign/drop-domain",
        id=cid,
        items=["b.example.com"],
        type="white",
        checkExist="maybe",
    )
    assert len(errors) == 1 and "maybe" in errors[0]
    assert api.item(cid)["whiteDomain"] == ["a.example.com"]


# --------------------------------------------------------------------------- batches


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_batch_mix_of_campaigns(
    api: Api, other: Api, refs: Refs, others: dict[str, int], case: Case, form: str
) -> None:
    kind = spec.TARGET_KINDS[case.kind]
    value = refs.value(case)
    items = refs.add_items(case, value)
    having = api.new_campaign(case.fmt, targeted=False)
    fresh = api.new_campaign(case.fmt, targeted=False)
    foreign = others[case.fmt]
    api.ok(kind.add_path, id=having, items=items, **case.extra)

    ids = [having, fresh, MISSING_ID, foreign, fresh]
    body = send(
        api,
        form,
        f"/api/campaign/add-{case.kind}-batch",
        {"campaignId": ids, "items": items},
        **case.extra,
    )
    assert batch_result(body) == {
        "success": [fresh],
        "failed": [
            {"id": having, "errorList": [refs.taken(case, value, having)]},
            {"id": MISSING_ID, "errorList": [f"Campaign not found #{MISSING_ID}"]},
            {"id": foreign, "errorList": [f"Campaign not found #{foreign}"]},
        ],
    }
    assert refs.shown(case, api.item(fresh), value)
    assert not refs.shown(case, other.item(foreign), value)

    drop_path = f"/api/campaign/drop-{case.kind}-batch"
    body = send(
        api, form, drop_path, {"campaignId": [having, fresh], "items": [value]}, **case.extra
    )
    assert batch_result(body) == {"success": [having, fresh], "failed": []}
    assert not refs.shown(case, api.item(having), value)
    assert not refs.shown(case, api.item(fresh), value)

    body = send(
        api, form, drop_path, {"campaignId": [having, foreign], "items": [value]}, **case.extra
    )
    assert batch_result(body) == {
        "success": [],
        "failed": [
            {"id": having, "errorList": [refs.missing(case, value, having)]},
            {"id": foreign, "errorList": [f"Campaign not found #{foreign}"]},
        ],
    }
    body = send(
        api,
        form,
        drop_path,
        {"campaignId": [having], "items": [value]},
        checkExist="skip",
        **case.extra,
    )
    assert batch_result(body) == {"success": [having], "failed": []}


# --------------------------------------------------------------------------- format restrictions

RESTRICTED = [
    (kind.name, fmt)
    for kind in spec.TARGET_KINDS.values()
    for fmt in spec.FORMAT_CODES
    if not kind.allowed_for(fmt)
]


def test_restricted_formats_are_the_interface_ones() -> None:
    assert sorted(RESTRICTED) == sorted(
        [
            ("subs-age", "pops"),
            ("subs-age", "video"),
            ("subs-age", "inpage"),
            ("city", "video"),
            ("domain", "push"),
            ("domain", "inpage"),
        ]
    )


def _restricted_value(refs: Refs, kind: str) -> Any:
    return {"subs-age": 1, "city": refs.city, "domain": "news.example.com"}[kind]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("kind", "fmt"), RESTRICTED)
def test_format_restriction_refuses_single(
    api: Api, refs: Refs, untouched: dict[str, int], kind: str, fmt: str, form: str
) -> None:
    cid = untouched[fmt]
    before = api.item(cid)
    expected = [
        f"Targeting '{kind}' is not available for {LABELS[fmt]} campaigns; CampaignId: {cid}"
    ]
    value = _restricted_value(refs, kind)
    for action in ("add", "drop"):
        body = send(api, form, f"/api/campaign/{action}-{kind}", {"id": cid, "items": [value]})
        assert_errors(body, expected)
    assert api.item(cid) == before


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("subs-age", "push", "video"),
        ("city", "inpage", "video"),
        ("domain", "video", "inpage"),
    ],
)
def test_format_restriction_refuses_whole_batch(
    api: Api, refs: Refs, kind: str, good: str, bad: str
) -> None:
    first = api.new_campaign(good, targeted=False)
    wrong = api.new_campaign(bad, targeted=False)
    last = api.new_campaign(good, targeted=False)
    before = {cid: api.item(cid) for cid in (first, wrong, last)}
    value = _restricted_value(refs, kind)
    r = api.get(
        f"/api/campaign/add-{kind}-batch",
        campaignId=[first, wrong, last, MISSING_ID],
        items=[value],
    )
    assert r.status_code == 200
    assert r.json() == {
        "status": "error",
        "errorList": [
            f"Targeting '{kind}' is not available for {LABELS[bad]} campaigns; CampaignId: {wrong}"
        ],
    }
    assert {cid: api.item(cid) for cid in before} == before


# --------------------------------------------------------------------------- validation


@dataclass(frozen=True)
class Bad:
    """A request mixing valid and invalid items of one kind; ``bad`` lists the invalid ones."""

    name: str
    kind: str
    action: str
    fmt: str
    items: Any
    bad: tuple[str, ...]


def bad_cases(refs: Refs) -> dict[str, Bad]:
    push_cat = refs.category_id("push")
    pops_cat = refs.category_id("pops")
    video_cat = refs.category_id("video")
    return {
        b.name: b
        for b in (
            Bad(
                "quality",
                "quality",
                "add",
                "push",
                ["premium", "best", "medium"],
                ("best", "medium"),
            ),
            Bad(
                "country-add",
                "country",
                "add",
                "push",
                {"DE": "0.3", "XX": "0.2", "us": "0.4", "ZZ": "0.1"},
                ("XX", "us", "ZZ"),
            ),
            Bad("country-drop", "country", "drop", "push", ["US", "us", "USA"], ("us", "USA")),
            Bad(
                "cidr",
                "cidr",
                "add",
                "push",
                [
                    "192.0.2.0/24",
                    "10.0.0.1/8",
                    "300.1.1.1",
                    "10.0.0.9-10.0.0.1",
                    "10.0.0.1-2001:db8::1",
                    "2001:db8::1/32",
                    "not-an-ip",
                ],
                (
                    "10.0.0.1/8",
                    "300.1.1.1",
                    "10.0.0.9-10.0.0.1",
                    "10.0.0.1-2001:db8::1",
                    "2001:db8::1/32",
                    "not-an-ip",
                ),
            ),
            Bad(
                "domain",
                "domain",
                "add",
                "video",
                [
                    "good.example.com",
                    "bad domain.com",
                    "http://example.com",
                    "-x-.com",
                    "localhost",
                ],
                ("bad domain.com", "http://example.com", "-x-.com", "localhost"),
            ),
            Bad("os", "os", "add", "push", [1, 999, 0], ("999", "0")),
            Bad("browser", "browser", "add", "push", [1, 5000], ("5000",)),
            Bad(
                "category-other-format",
                "category",
                "add",
                "push",
                [push_cat, pops_cat, video_cat],
                (str(pops_cat), str(video_cat)),
            ),
            Bad(
                "category-drop", "category", "drop", "pops", [pops_cat, push_cat], (str(push_cat),)
            ),
            Bad("language", "language", "add", "push", ["en", "xx", "eng"], ("xx", "eng")),
            Bad("connection-type", "connection-type", "add", "push", ["wifi", "5g"], ("5g",)),
            Bad("subs-age", "subs-age", "add", "push", [1, 5, 0], ("5", "0")),
            Bad("city", "city", "add", "push", [refs.city, 1], ("1",)),
            Bad("region", "region", "add", "push", [refs.region, 999_999], ("999999",)),
            Bad("isp-mobile", "isp-mobile", "add", "push", [refs.isp, 99_999], ("99999",)),
        )
    }


BAD_NAMES = [
    "quality",
    "country-add",
    "country-drop",
    "cidr",
    "domain",
    "os",
    "browser",
    "category-other-format",
    "category-drop",
    "language",
    "connection-type",
    "subs-age",
    "city",
    "region",
    "isp-mobile",
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", BAD_NAMES)
def test_validation_lists_every_bad_value_and_changes_nothing(
    api: Api, refs: Refs, name: str, form: str
) -> None:
    case = bad_cases(refs)[name]
    cid = api.new_campaign(case.fmt)
    before = api.item(cid)
    path = f"/api/campaign/{case.action}-{case.kind}"
    body = send(api, form, path, {"id": cid, "items": case.items})
    assert_errors(body, [f"Invalid {case.kind} item: {v}; CampaignId: {cid}" for v in case.bad])
    assert api.item(cid) == before


def test_validation_in_batch_refuses_the_whole_request(api: Api, refs: Refs) -> None:
    first = api.new_campaign("push")
    second = api.new_campaign("inpage")
    before = {cid: api.item(cid) for cid in (first, second)}
    r = api.post_json(
        "/api/campaign/add-os-batch", {"campaignId": [first, second], "items": [1, 999, 2]}
    )
    assert r.status_code == 200
    assert r.json() == {
        "status": "error",
        "errorList": [
            f"Invalid os item: 999; CampaignId: {first}",
            f"Invalid os item: 999; CampaignId: {second}",
        ],
    }
    assert {cid: api.item(cid) for cid in before} == before


def test_country_bid_must_be_positive(api: Api) -> None:
    cid = api.new_campaign("push", targeted=False)
    errors = api.errors(
        "/api/campaign/add-country", id=cid, items={"DE": "0.2", "FR": "0", "IT": "-1"}
    )
    assert len(errors) == 2
    assert "FR" in errors[0] and errors[0].endswith(f"; CampaignId: {cid}")
    assert "IT" in errors[1] and errors[1].endswith(f"; CampaignId: {cid}")
    assert api.item(cid)["countrySet"] == []


INT_KINDS = [k.name for k in spec.TARGET_KINDS.values() if k.item_type is int]


@pytest.mark.parametrize("kind", INT_KINDS)
def test_wrong_item_type_is_http_400(api: Api, kind: str) -> None:
    cid = api.new_campaign("push", targeted=False)
    before = api.item(cid)
    r = api.get(f"/api/campaign/add-{kind}", id=cid, items=["1", "abc", "2x"])
    assert r.status_code == 400
    assert r.json() == {
        "status": "error",
        "errorList": [
            "Parameter 'items[1]' must be an integer, got 'abc'",
            "Parameter 'items[2]' must be an integer, got '2x'",
        ],
    }
    r = api.post_json(f"/api/campaign/drop-{kind}-batch", {"campaignId": [cid], "items": ["abc"]})
    assert r.status_code == 400
    assert r.json()["errorList"] == ["Parameter 'items[0]' must be an integer, got 'abc'"]
    assert api.item(cid) == before


def test_wrong_bid_type_is_http_400(api: Api) -> None:
    cid = api.new_campaign("push", targeted=False)
    r = api.get("/api/campaign/add-country", id=cid, items={"DE": "cheap"})
    assert r.status_code == 400
    assert r.json()["status"] == "error"
    assert any("items[DE]" in m and "cheap" in m for m in r.json()["errorList"])
    assert api.item(cid)["countrySet"] == []


def test_unknown_type_value_is_refused(api: Api) -> None:
    cid = api.new_campaign("push", targeted=False)
    errors = api.errors("/api/campaign/add-cidr", id=cid, items=["192.0.2.1"], type="grey")
    assert len(errors) == 1 and "grey" in errors[0]
    assert api.item(cid)["blackCidr"] == [] and api.item(cid)["whiteCidr"] == []


# --------------------------------------------------------------------------- account isolation

ISOLATED = [
    ("/api/campaign/add-quality", {"items": ["low"]}),
    ("/api/campaign/drop-quality", {"items": ["low"]}),
    ("/api/campaign/add-country", {"items": {"DE": "0.2"}}),
    ("/api/campaign/add-os", {"items": [1]}),
    ("/api/campaign/add-cidr", {"items": ["192.0.2.1"], "type": "white"}),
    ("/api/campaign/add-black-list", {"items": [42]}),
    ("/api/campaign/drop-white-list", {"items": [42]}),
    ("/api/campaign/add-sub-id-black", {"items": ["abc"]}),
    ("/api/campaign/black-list", {}),
    ("/api/campaign/sub-id-white", {}),
]


@pytest.mark.parametrize(("path", "params"), ISOLATED, ids=[p for p, _ in ISOLATED])
def test_other_accounts_campaign_is_not_found(
    api: Api, other: Api, others: dict[str, int], path: str, params: dict[str, Any]
) -> None:
    foreign = others["push"]
    before = other.item(foreign)
    assert api.errors(path, id=foreign, **params) == [f"Campaign not found #{foreign}"]
    assert api.errors(path, id=MISSING_ID, **params) == [f"Campaign not found #{MISSING_ID}"]
    assert other.item(foreign) == before


# --------------------------------------------------------------------------- lists

LIST_KINDS = list(spec.LISTS.values())
LIST_IDS = [lk.name for lk in LIST_KINDS]


def list_values(lk: spec.ListKind) -> tuple[Any, Any, Any, Any]:
    if lk.entity == "source":
        return 1001, 2002, 3003, 4004
    return "a1b2c3", "ff00", "0123456789abcdef", "deadbeef"


def read(api: Api, lk: spec.ListKind, cid: int) -> list[str]:
    body = api.ok(lk.read_path, id=cid)
    assert set(body) == {"status", "items"}
    assert all(isinstance(i, str) for i in body["items"])
    return body["items"]


def test_list_paths_are_the_interface_ones() -> None:
    assert {
        lk.name: (lk.read_path, lk.add_path, lk.drop_path, lk.batch_add_path, lk.batch_drop_path)
        for lk in LIST_KINDS
    } == {
        "source_black": (
            "/api/campaign/black-list",
            "/api/campaign/add-black-list",
            "/api/campaign/drop-black-list",
            "/api/campaign/add-black-list",
            "/api/campaign/drop-black-list",
        ),
        "source_white": (
            "/api/campaign/white-list",
            "/api/campaign/add-white-list",
            "/api/campaign/drop-white-list",
            "/api/campaign/add-white-list",
            "/api/campaign/drop-white-list",
        ),
        "subid_black": (
            "/api/campaign/sub-id-black",
            "/api/campaign/add-sub-id-black",
            "/api/campaign/drop-sub-id-black",
            "/api/campaign/add-sub-id-black-batch",
            "/api/campaign/drop-sub-id-black-batch",
        ),
        "subid_white": (
            "/api/campaign/sub-id-white",
            "/api/campaign/add-sub-id-white",
            "/api/campaign/drop-sub-id-white",
            "/api/campaign/add-sub-id-white-batch",
            "/api/campaign/drop-sub-id-white-batch",
        ),
    }


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("lk", LIST_KINDS, ids=LIST_IDS)
def test_list_single_add_read_drop(api: Api, lk: spec.ListKind, form: str) -> None:
    cid = api.new_campaign("push", targeted=False)
    x, y, z, _ = list_values(lk)
    twin = next(o for o in LIST_KINDS if o.entity == lk.entity and o is not lk)
    assert read(api, lk, cid) == []

    assert_ok(send(api, form, lk.add_path, {"id": cid, "items": [x, y]}))
    assert sorted(read(api, lk, cid)) == sorted([str(x), str(y)])
    assert sorted(api.item(cid)[lk.detail_field]) == sorted([str(x), str(y)])
    assert read(api, twin, cid) == []
    assert api.item(cid, mode="count")[lk.detail_field] == 2

    body = send(api, form, lk.add_path, {"id": cid, "items": [y, z]})
    assert_errors(body, [f"Error on save item {y}{TAKEN.format(cid=cid)}"])
    assert sorted(read(api, lk, cid)) == sorted([str(x), str(y), str(z)])

    assert_ok(send(api, form, lk.drop_path, {"id": cid, "items": [x]}))
    assert sorted(read(api, lk, cid)) == sorted([str(y), str(z)])
    body = send(api, form, lk.drop_path, {"id": cid, "items": [x, y]})
    assert_errors(body, [f"Error on drop item {x}; CampaignId: {cid}; Item not exists"])
    assert read(api, lk, cid) == [str(z)]
    assert_ok(send(api, form, lk.drop_path, {"id": cid, "items": [x]}, checkExist="skip"))
    assert read(api, lk, cid) == [str(z)]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("lk", LIST_KINDS, ids=LIST_IDS)
def test_list_batch_mix_of_campaigns(
    api: Api, other: Api, others: dict[str, int], lk: spec.ListKind, form: str
) -> None:
    x, y, z, w = list_values(lk)
    having = api.new_campaign("push", targeted=False)
    fresh = api.new_campaign("video", targeted=False)
    foreign = others["push"]
    api.ok(lk.add_path, id=having, items=[y])

    ids = [having, fresh, MISSING_ID, foreign, having]
    body = send(api, form, lk.batch_add_path, {"campaignId": ids, "items": [x, y, z]})
    result = batch_result(body)
    assert result["success"] == [fresh]
    failed = {f["id"]: f["errorList"] for f in result["failed"]}
    assert [f["id"] for f in result["failed"]] == [having, MISSING_ID, foreign]
    # item failures are keyed by the index of the item in the request (docs/sandbox.md #10)
    assert failed[having] == {"1": f"Error on save item {y}{TAKEN.format(cid=having)}"}
    assert messages(failed[MISSING_ID]) == [f"Campaign not found #{MISSING_ID}"]
    assert messages(failed[foreign]) == [f"Campaign not found #{foreign}"]
    assert sorted(read(api, lk, having)) == sorted(map(str, (x, y, z)))
    assert sorted(read(api, lk, fresh)) == sorted(map(str, (x, y, z)))
    assert read(other, lk, foreign) == []

    body = send(api, form, lk.batch_drop_path, {"campaignId": [having, fresh], "items": [w, x, z]})
    result = batch_result(body)
    assert result["success"] == []
    assert result["failed"] == [
        {
            "id": cid,
            "errorList": {"0": f"Error on drop item {w}; CampaignId: {cid}; Item not exists"},
        }
        for cid in (having, fresh)
    ]
    assert read(api, lk, having) == [str(y)]
    assert read(api, lk, fresh) == [str(y)]

    body = send(
        api,
        form,
        lk.batch_drop_path,
        {"campaignId": [having, fresh], "items": [w, y]},
        checkExist="skip",
    )
    assert batch_result(body) == {"success": [having, fresh], "failed": []}
    assert read(api, lk, having) == [] and read(api, lk, fresh) == []


def test_source_list_path_without_campaign_id_is_single(api: Api) -> None:
    cid = api.new_campaign("push", targeted=False)
    body = api.post_json("/api/campaign/add-white-list", {"id": cid, "items": [77]}).json()
    assert body == {"status": "ok"}
    body = api.post_json(
        "/api/campaign/add-white-list", {"campaignId": [cid], "items": [77]}
    ).json()
    assert batch_result(body)["failed"] == [
        {"id": cid, "errorList": {"0": f"Error on save item 77{TAKEN.format(cid=cid)}"}}
    ]


@pytest.mark.parametrize(
    "lk", [spec.LISTS["subid_black"], spec.LISTS["subid_white"]], ids=lambda lk: lk.name
)
def test_subid_must_be_hex(api: Api, lk: spec.ListKind) -> None:
    cid = api.new_campaign("push", targeted=False)
    bad = ["xyz", "12g4", "ab cd", "a" * 65]
    body = api.get(lk.add_path, id=cid, items=["abc123", *bad]).json()
    assert body["status"] == "error"
    assert len(body["errorList"]) == len(bad)
    for value, message in zip(bad, body["errorList"], strict=True):
        assert value in message and str(cid) in message
    assert read(api, lk, cid) == []

    body = api.get(lk.batch_add_path, campaignId=[cid], items=["abc123", "xyz"]).json()
    assert body["status"] == "error" and len(body["errorList"]) == 1
    assert "xyz" in body["errorList"][0]
    assert read(api, lk, cid) == []


@pytest.mark.parametrize(
    "lk", [spec.LISTS["source_black"], spec.LISTS["source_white"]], ids=lambda lk: lk.name
)
def test_source_id_must_be_an_integer(api: Api, lk: spec.ListKind) -> None:
    cid = api.new_campaign("push", targeted=False)
    r = api.get(lk.add_path, id=cid, items=["12", "abc"])
    assert r.status_code == 400
    assert r.json() == {
        "status": "error",
        "errorList": ["Parameter 'items[1]' must be an integer, got 'abc'"],
    }
    r = api.post_json(lk.add_path, {"campaignId": [cid], "items": [12, "1.5x"]})
    assert r.status_code == 400
    assert r.json()["errorList"] == ["Parameter 'items[1]' must be an integer, got '1.5x'"]
    # integers that are not source ids are refused too, with every bad value listed
    body = api.get(lk.add_path, id=cid, items=["12", "0", "-3"]).json()
    assert body["status"] == "error" and len(body["errorList"]) == 2
    assert "0" in body["errorList"][0] and "-3" in body["errorList"][1]
    assert read(api, lk, cid) == []
