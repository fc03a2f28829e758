"""Account-wide operations of the sandbox over real HTTP: balance, dictionaries, search, price."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from typing import Any

import pytest
import requests

from toolkit import spec

Api = Any  # the conftest helper (fixtures `api` and `other`)

REFS = "/api/campaign/list-refs-data"
SEARCH = "/api/campaign/search"
PRICE = "/api/campaign/price"

COUNTRY_LABEL = re.compile(r"^(.+) \(([A-Z]{2})\)$")
LANGUAGE_LABEL = re.compile(r"^(.+) \(([a-z]{2})\)$")
CITY_LABEL = re.compile(r"^(.+) \(([A-Z]{2})(?: - (.+))?\)$")
REGION_LABEL = re.compile(r"^(.+) \(([A-Z]{2})\)$")


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def business_error(r: requests.Response) -> list[str]:
    """A business error: HTTP 200, ``status: error``, a non-empty ``errorList`` of strings."""
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "error", body
    assert body["errorList"] and all(isinstance(m, str) for m in body["errorList"])
    return body["errorList"]


# --------------------------------------------------------------------------- balance


def test_balance_shape(api: Api) -> None:
    r = api.get("/api/campaign/balance")
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"user_id", "currency", "balance"}
    assert isinstance(body["user_id"], int) and not isinstance(body["user_id"], bool)
    assert body["currency"] == "USD"
    assert isinstance(body["balance"], (int, float)) and not isinstance(body["balance"], bool)
    assert api.get("/api/campaign/balance").json() == body


def test_balance_is_per_account(api: Api, other: Api) -> None:
    mine = api.get("/api/campaign/balance").json()
    theirs = other.get("/api/campaign/balance").json()
    assert mine["user_id"] != theirs["user_id"]
    assert mine["balance"] != theirs["balance"]
    # the user id is the owner of the account's campaigns
    for who, balance in ((api, mine), (other, theirs)):
        items = who.get("/api/campaign/list").json()["items"]
        assert items
        assert {c["user_id"] for c in items} == {balance["user_id"]}


def test_balance_refuses_post(api: Api) -> None:
    r = api.post_json("/api/campaign/balance", {})
    assert r.status_code == 405


# --------------------------------------------------------------------------- dictionaries


@pytest.fixture(scope="module")
def all_dicts(api: Api) -> dict[str, Any]:
    return api.ok(REFS)


def test_all_dictionaries_at_once(all_dicts: dict[str, Any]) -> None:
    assert set(all_dicts) == {"status", *spec.DICTIONARY_TYPES}
    assert set(spec.DICTIONARY_TYPES) == {
        "country",
        "os",
        "browser",
        "category",
        "vertical",
        "language",
        "language_code",
        "subs_age",
    }


@pytest.mark.parametrize("kind", spec.DICTIONARY_TYPES)
def test_each_dictionary_alone(api: Api, all_dicts: dict[str, Any], kind: str) -> None:
    body = api.ok(REFS, type=kind)
    assert set(body) == {"status", kind}
    assert body[kind] == all_dicts[kind]
    assert body[kind]


@pytest.mark.parametrize("kind", ["os", "browser", "vertical"])
def test_simple_dictionaries_map_ids_to_names(all_dicts: dict[str, Any], kind: str) -> None:
    for key, name in all_dicts[kind].items():
        assert key.isdigit() and int(key) > 0
        assert isinstance(name, str) and name.strip()
    assert len(set(all_dicts[kind].values())) == len(all_dicts[kind])


def test_dictionary_type_is_case_insensitive(api: Api, all_dicts: dict[str, Any]) -> None:
    assert api.ok(REFS, type="Subs_Age")["subs_age"] == all_dicts["subs_age"]


def test_country_dictionary(all_dicts: dict[str, Any]) -> None:
    countries = all_dicts["country"]
    codes = []
    for key, label in countries.items():
        assert key.isdigit(), key
        m = COUNTRY_LABEL.match(label)
        assert m, label
        codes.append(m.group(2))
    assert len(codes) == len(set(codes))
    assert len(codes) > 200
    assert "United States (US)" in countries.values()
    assert countries["840"] == "United States (US)"  # ISO 3166-1 numeric ids
    assert countries["276"] == "Germany (DE)"


def test_language_dictionaries(all_dicts: dict[str, Any]) -> None:
    languages, by_code = all_dicts["language"], all_dicts["language_code"]
    names = {}
    for key, label in languages.items():
        assert key.isdigit(), key
        m = LANGUAGE_LABEL.match(label)
        assert m, label
        names[m.group(2)] = m.group(1)
    assert len(names) == len(languages)
    assert all(re.fullmatch(r"[a-z]{2}", code) for code in by_code)
    assert by_code == names
    assert by_code["en"] == "English"
    assert "English (en)" in languages.values()


def test_category_dictionary_grouped_by_format(all_dicts: dict[str, Any]) -> None:
    groups = all_dicts["category"]
    assert set(groups) == {"push", "pops", "video"}
    seen: set[str] = set()
    for group in groups.values():
        assert group
        assert all(key.isdigit() for key in group)
        assert all(isinstance(name, str) and name for name in group.values())
        assert not seen & set(group), "category ids differ per format"
        seen |= set(group)


def test_subs_age_groups(all_dicts: dict[str, Any]) -> None:
    assert all_dicts["subs_age"] == {
        "1": "1 - 3 days",
        "2": "4 - 7 days",
        "3": "8 - 15 days",
        "4": "16+ days",
    }


def test_unknown_dictionary_type_is_a_business_error(api: Api) -> None:
    errors = business_error(api.get(REFS, type="planets"))
    assert len(errors) == 1 and "planets" in errors[0]


# --------------------------------------------------------------------------- search


def search(api: Api, **params: Any) -> dict[str, str]:
    r = api.get(SEARCH, **params)
    assert r.status_code == 200, r.text
    body = r.json()
    assert "status" not in body, body
    assert all(key.isdigit() and isinstance(v, str) for key, v in body.items()), body
    return body


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("city", "san"),
        ("city", "SAO"),
        ("city", "York"),
        ("region", "cal"),
        ("region", "NORTH"),
        ("isp-mobile", "voda"),
        ("isp-mobile", "MOBI"),
    ],
)
def test_search_matches_text_case_insensitively(api: Api, kind: str, text: str) -> None:
    found = search(api, type=kind, search=text)
    assert found
    for label in found.values():
        if kind == "city":
            m = CITY_LABEL.match(label)
        elif kind == "region":
            m = REGION_LABEL.match(label)
        else:
            m = re.match(r"^(.+?)(?: \([A-Z]{2}\))?$", label)
        assert m, label
        assert fold(text) in fold(m.group(1)), (text, label)


def test_search_is_accent_insensitive(api: Api) -> None:
    found = search(api, type="city", search="sao paulo")
    assert "São Paulo (BR)" in found.values()


def test_city_labels(api: Api) -> None:
    found = search(api, type="city", search="new york")
    assert next(iter(found.values())) == "New York City (US - New York)"
    found = search(api, type="city", search="berlin", country=["DE"])
    assert "Berlin (DE)" in found.values()
    for label in found.values():
        assert CITY_LABEL.match(label).group(2) == "DE"


def test_region_labels(api: Api) -> None:
    found = search(api, type="region", search="california", country=["US"])
    assert list(found.values()) == ["California (US)"]


@pytest.mark.parametrize(
    ("kind", "text", "countries"),
    [
        ("city", "san", ["ES"]),
        ("city", "san", ["MX", "AR"]),
        ("region", "san", ["AR"]),
    ],
)
def test_search_country_filter(api: Api, kind: str, text: str, countries: list[str]) -> None:
    unfiltered = search(api, type=kind, search=text, limit=100)
    found = search(api, type=kind, search=text, country=countries, limit=100)
    assert found
    label = CITY_LABEL if kind == "city" else REGION_LABEL
    assert {label.match(v).group(2) for v in found.values()} <= set(countries)
    assert set(found) - set(unfiltered) or len(unfiltered) < 100, "the filter found nothing new"


def test_search_limit(api: Api) -> None:
    default = search(api, type="city", search="san")
    assert len(default) == spec.SEARCH_LIMIT_DEFAULT == 10
    many = search(api, type="city", search="san", limit=100)
    assert len(many) == spec.SEARCH_LIMIT_MAX == 100
    assert list(many)[:10] == list(default)
    some = search(api, type="city", search="san", limit=25)
    assert list(some) == list(many)[:25]
    assert len(search(api, type="city", search="san", limit=1)) == 1


@pytest.mark.parametrize(
    ("params", "word"),
    [
        ({"type": "city", "search": "san", "limit": 101}, "limit"),
        ({"type": "city", "search": "san", "limit": 0}, "limit"),
        ({"type": "city", "search": "ne"}, "ne"),
        ({"type": "region", "search": "  ab  "}, "ab"),
        ({"type": "isp-mobile", "search": "voda", "country": ["GB"]}, "country"),
        ({"type": "city", "search": "san", "country": ["XX"]}, "XX"),
        ({"type": "town", "search": "san"}, "town"),
    ],
)
def test_search_refusals(api: Api, params: dict[str, Any], word: str) -> None:
    errors = business_error(api.get(SEARCH, **params))
    assert len(errors) == 1 and word in errors[0], errors


@pytest.mark.parametrize("missing", ["type", "search"])
def test_search_required_parameters(api: Api, missing: str) -> None:
    params = {"type": "city", "search": "san"}
    del params[missing]
    assert business_error(api.get(SEARCH, **params)) == [f"Parameter '{missing}' is required"]


def test_search_refusal_lists_every_problem(api: Api) -> None:
    errors = business_error(api.get(SEARCH, type="city", search="ab", limit=500))
    assert len(errors) == 2


def test_search_limit_must_be_an_integer(api: Api) -> None:
    r = api.get(SEARCH, type="city", search="san", limit="ten")
    assert r.status_code == 400
    assert r.json()["errorList"] == ["Parameter 'limit' must be an integer, got 'ten'"]


# --------------------------------------------------------------------------- price


def price(api: Api, ad_format: str, form: str = "query", **params: Any) -> dict[str, Any]:
    if form == "query":
        r = api.get(PRICE, adFormat=ad_format, **params)
    else:
        r = api.post_json(PRICE, params, adFormat=ad_format)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "ok", body
    return body["price"]


def check_shape(est: dict[str, Any]) -> None:
    assert set(est) == {"minimum", "recommend"}
    for part in est.values():
        assert set(part) == {"price", "estimated_traffic"}
        assert isinstance(part["price"], (int, float)) and part["price"] > 0
        assert isinstance(part["estimated_traffic"], int) and part["estimated_traffic"] >= 0
    assert est["minimum"]["price"] <= est["recommend"]["price"]


TARGETING = {"country": ["US", "CA"], "quality": ["high", "premium"], "os": [1, 2]}


@pytest.mark.parametrize("ad_format", spec.FORMAT_CODES)
def test_price_shape_and_forms(api: Api, ad_format: str) -> None:
    r = api.get(PRICE, adFormat=ad_format, **TARGETING)
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"status", "price"} and body["status"] == "ok"
    check_shape(body["price"])
    assert price(api, ad_format, "json", **TARGETING) == body["price"]
    check_shape(price(api, ad_format))


def test_price_accepts_post_query_only(api: Api) -> None:
    r = api.http.post(
        api.base + PRICE,
        params=[("api-key", api.key), ("adFormat", "push"), ("country[]", "US")],
        timeout=30,
    )
    assert r.status_code == 200
    assert r.json()["price"] == price(api, "push", country=["US"])


def test_price_is_deterministic(api: Api, fresh_sandbox: Any) -> None:
    first = price(api, "push", **TARGETING)
    assert price(api, "push", **TARGETING) == first
    reordered = {"os": [2, 1], "quality": ["premium", "high"], "country": ["CA", "US"]}
    assert price(api, "push", "json", **reordered) == first
    url, key = fresh_sandbox.url, fresh_sandbox.api_keys[0]
    r = requests.get(
        url + PRICE,
        params=[("api-key", key), ("adFormat", "push"), *_pairs(TARGETING)],
        timeout=30,
    )
    assert r.json() == {"status": "ok", "price": first}


def _pairs(params: dict[str, list[Any]]) -> list[tuple[str, str]]:
    return [(f"{k}[]", str(v)) for k, vs in params.items() for v in vs]


CHILD = """
import json, sys, requests
from toolkit.sandbox import Sandbox
with Sandbox(campaigns=2, accounts=1) as sb:
    r = requests.get(sb.url + "/api/campaign/price",
                     params=[("api-key", sb.api_keys[0]), *json.loads(sys.argv[1])], timeout=30)
    print(json.dumps(r.json()))
"""


def test_price_is_deterministic_across_processes(api: Api) -> None:
    pairs = [("adFormat", "video"), *_pairs(TARGETING)]
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(pairs)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(out.stdout) == {"status": "ok", "price": price(api, "video", **TARGETING)}


@pytest.mark.parametrize("ad_format", spec.FORMAT_CODES)
@pytest.mark.parametrize(("rich", "poor"), [("US", "IN"), ("DE", "NG"), ("GB", "PK")])
def test_tier_one_country_priced_above_tier_three(
    api: Api, ad_format: str, rich: str, poor: str
) -> None:
    high = price(api, ad_format, country=[rich])
    low = price(api, ad_format, country=[poor])
    assert high["minimum"]["price"] > low["minimum"]["price"]
    assert high["recommend"]["price"] > low["recommend"]["price"]


@pytest.mark.parametrize("ad_format", spec.FORMAT_CODES)
def test_better_quality_costs_more(api: Api, ad_format: str) -> None:
    by_quality = {
        q: price(api, ad_format, country=["US"], quality=[q])["minimum"]["price"]
        for q in spec.QUALITIES
    }
    assert by_quality["premium"] >= by_quality["high"] >= by_quality["low"]
    assert by_quality["premium"] >= by_quality["regular"] >= by_quality["low"]
    assert by_quality["premium"] > by_quality["low"]


@pytest.mark.parametrize(
    "narrower",
    [
        {"city": [5128581]},  # New York City
        {"region": None},
        {"os": [1]},
        {"browser": [1]},
        {"quality": ["premium"]},
        {"language": ["en"]},
        {"ispMobile": None},
        {"subsAge": [1]},
    ],
    ids=lambda p: next(iter(p)),
)
def test_narrower_targeting_lowers_traffic(api: Api, narrower: dict[str, Any]) -> None:
    base = {"country": ["US"]}
    name = next(iter(narrower))
    values = narrower[name]
    if name == "region":
        values = [int(next(iter(search(api, type="region", search="California", country=["US"]))))]
    if name == "ispMobile":
        values = [int(next(iter(search(api, type="isp-mobile", search="Verizon"))))]
    wide = price(api, "push", **base)
    narrow = price(api, "push", **base, **{name: values})
    assert narrow["minimum"]["estimated_traffic"] < wide["minimum"]["estimated_traffic"]
    assert narrow["recommend"]["estimated_traffic"] < wide["recommend"]["estimated_traffic"]


def test_adding_cities_and_os_narrows_step_by_step(api: Api) -> None:
    steps = [
        {"country": ["US"]},
        {"country": ["US"], "city": [5128581, 5391811]},
        {"country": ["US"], "city": [5128581]},
        {"country": ["US"], "city": [5128581], "os": [1, 2]},
        {"country": ["US"], "city": [5128581], "os": [2]},
    ]
    traffic = [price(api, "push", "json", **s)["minimum"]["estimated_traffic"] for s in steps]
    assert traffic == sorted(traffic, reverse=True)
    assert len(set(traffic)) == len(traffic), traffic


@pytest.mark.parametrize("ad_format", ["pops", "video", "inpage"])
def test_subs_age_refused_for_non_push(api: Api, ad_format: str) -> None:
    label = spec.FORMATS[ad_format].label
    for form in ("query", "json"):
        if form == "query":
            r = api.get(PRICE, adFormat=ad_format, country=["US"], subsAge=[1])
        else:
            r = api.post_json(PRICE, {"country": ["US"], "subsAge": [1]}, adFormat=ad_format)
        errors = business_error(r)
        assert len(errors) == 1
        assert f"{label} campaigns" in errors[0] and "not available" in errors[0]
    check_shape(price(api, "push", country=["US"], subsAge=[1]))


@pytest.mark.parametrize("code", ["XX", "us", "USA"])
def test_unknown_country_refused(api: Api, code: str) -> None:
    errors = business_error(api.get(PRICE, adFormat="push", country=["US", code]))
    assert errors == [f"Invalid country item: {code}"]


def test_price_lists_every_bad_value(api: Api) -> None:
    body = {"country": ["XX"], "quality": ["best"], "os": [999], "category": [101]}
    errors = business_error(api.post_json(PRICE, body, adFormat="push"))
    assert errors == [
        "Invalid category item: 101",
        "Invalid quality item: best",
        "Invalid country item: XX",
        "Invalid os item: 999",
    ]


def test_missing_ad_format_refused(api: Api) -> None:
    assert business_error(api.get(PRICE, country=["US"])) == ["Parameter 'adFormat' is required"]
    r = api.post_json(PRICE, {"country": ["US"]})
    assert business_error(r) == ["Parameter 'adFormat' is required"]


def test_unknown_ad_format_refused(api: Api) -> None:
    errors = business_error(api.get(PRICE, adFormat="banner", country=["US"]))
    assert len(errors) == 1 and "banner" in errors[0]


def test_price_wrong_parameter_type_is_http_400(api: Api) -> None:
    r = api.get(PRICE, adFormat="push", os=["1", "x"])
    assert r.status_code == 400
    assert r.json()["errorList"] == ["Parameter 'os[1]' must be an integer, got 'x'"]
