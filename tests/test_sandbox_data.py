"""Reference data, price model and demo data generator of the sandbox."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from itertools import product
from pathlib import Path
from typing import Any

import pytest

from toolkit import spec
from toolkit.sandbox.price import estimate
from toolkit.sandbox.refs import Refs, load_refs
from toolkit.sandbox.seed import api_key, seed_store
from toolkit.sandbox.store import Store

TIMESTAMP = re.compile(r"^2026-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")


@pytest.fixture(scope="module")
def refs() -> Refs:
    return load_refs()


def dump(store: Store) -> str:
    return "\n".join(store.conn.iterdump())


@pytest.fixture(scope="module")
def seeded() -> Store:
    store = Store()
    seed_store(store, campaigns=80, seed=3, accounts=3)
    return store


# --------------------------------------------------------------------------- refs


def test_refs_are_built_once(refs):
    assert load_refs() is refs
    assert len(refs.countries) == 249
    assert len(refs.languages) == 184
    assert refs.countries["US"] == (840, "United States")
    assert refs.country_by_id[840] == "US"
    assert refs.countries["TW"][1] == "Taiwan"  # the common name wins


def test_country_dictionary_labels(refs):
    countries = refs.dictionary("country")
    assert len(countries) == 249
    assert countries["840"] == "United States (US)"
    for key, label in countries.items():
        assert key.isdigit()
        code = refs.country_by_id[int(key)]
        assert re.fullmatch(r".+ \([A-Z]{2}\)", label)
        assert label.endswith(f"({code})")


def test_language_dictionaries(refs):
    by_id = refs.dictionary("language")
    by_code = refs.dictionary("language_code")
    assert len(by_id) == len(by_code) == 184
    en_id, en_name = refs.languages["en"]
    assert by_id[str(en_id)] == "English (en)"
    assert by_code["en"] == en_name == "English"
    assert list(by_id) == [str(i) for i in range(1, 185)]
    assert all(len(code) == 2 for code in by_code)


def test_other_dictionaries(refs):
    for name in spec.DICTIONARY_TYPES:
        data = refs.dictionary(name)
        assert data and json.loads(json.dumps(data)) == data
    assert refs.dictionary("subs_age") == {str(k): v for k, v in spec.SUBS_AGE_GROUPS.items()}
    for name in ("os", "browser", "vertical"):
        data = refs.dictionary(name)
        assert all(k.isdigit() and v for k, v in data.items())
    assert refs.dictionary("os")["1"] == "Android"
    with pytest.raises(KeyError):
        refs.dictionary("planet")


def test_categories_grouped_with_disjoint_ids(refs):
    cats = refs.dictionary("category")
    assert set(cats) == {"push", "pops", "video"}
    ranges = {"push": range(1, 100), "pops": range(101, 200), "video": range(201, 300)}
    for group, names in cats.items():
        assert 15 <= len(names) <= 30
        assert all(int(k) in ranges[group] for k in names)
    assert refs.category_name("inpage", 1) == refs.category_name("push", 1) == "Mainstream"
    assert refs.category_name("pops", 1) is None
    assert refs.category_name("pops", 101) == "Mainstream"
    assert refs.category_name("video", 201) == "Mainstream"


def test_regions_and_cities(refs):
    assert all(r.id == i for i, r in refs.regions.items())
    assert list(refs.regions) == list(range(1, len(refs.regions) + 1))
    assert len(refs.cities) > 30_000
    nyc = refs.cities[5128581]
    assert (nyc.name, nyc.country, nyc.region) == ("New York City", "US", "New York")
    london = refs.cities[2643743]
    assert london.region is None
    assert 80 <= len(refs.isps) <= 150
    assert len({i.country for i in refs.isps.values()}) >= 40


def test_search_cities_by_population_with_labels(refs):
    found = refs.search("city", "york", None, 3)
    assert len(found) == 3
    assert next(iter(found.items())) == ("5128581", "New York City (US - New York)")
    pops = [refs.cities[int(i)].population for i in refs.search("city", "san", None, 50)]
    assert pops == sorted(pops, reverse=True)
    assert refs.search("city", "LONDON", ["GB"], 1) == {"2643743": "London (GB)"}
    assert "3448439" in refs.search("city", "sao paulo", ["BR"], 5)  # accents folded


def test_search_country_filter_and_limit(refs):
    found = refs.search("city", "san", ["ES", "MX"], 100)
    assert 0 < len(found) <= 100
    assert all(refs.cities[int(i)].country in ("ES", "MX") for i in found)
    assert len(refs.search("city", "a", None, 7)) == 7
    assert refs.search("city", "a", None, 0) == {}
    assert refs.search("city", "qqqzzz", None, 10) == {}
    regions = refs.search("region", "bay", ["DE"], 10)
    assert regions and all(label.endswith("(DE)") for label in regions.values())


def test_search_regions_and_isps_ordered_by_name(refs):
    regions = refs.search("region", "north", None, 30)
    names = [(refs.regions[int(i)].name, int(i)) for i in regions]
    assert names == sorted(names)
    isps = refs.search("isp-mobile", "vodafone", ["US"], 100)  # country filter ignored
    assert len(isps) >= 10
    assert all(re.fullmatch(r"Vodafone \([A-Z]{2}\)", label) for label in isps.values())
    assert [int(i) for i in isps] == sorted(int(i) for i in isps)


def test_search_is_fast(refs):
    started = time.perf_counter()
    for _ in range(20):
        refs.search("city", "qqqzzz", None, 10)
        refs.search("city", "a", ["ZW"], 100)
    assert (time.perf_counter() - started) / 40 < 0.02


def test_labels(refs):
    assert refs.label("os", 2) == "iOS"
    assert refs.label("browser", "1") == "Chrome"
    assert refs.label("city", 5128581) == "New York City (US - New York)"
    assert refs.label("isp-mobile", 1) == "Verizon Wireless (US)"
    region = refs.regions[1]
    assert refs.label("region", 1) == f"{region.name} ({region.country})"
    assert refs.label("os", 999) is None
    assert refs.label("city", "x") is None
    assert refs.label("unknown", 1) is None


# --------------------------------------------------------------------------- price


def test_price_shape_and_determinism(refs):
    params = {"country": ["US", "GB"], "quality": ["high"], "os": [1, 2]}
    first = estimate(refs, "push", params)
    assert first == estimate(refs, "push", params)
    assert first == estimate(
        refs, "push", {"os": [2, 1], "quality": ["high"], "country": ["GB", "US"]}
    )
    assert set(first) == {"minimum", "recommend"}
    for part in first.values():
        assert isinstance(part["price"], float) and isinstance(part["estimated_traffic"], int)
        assert round(part["price"], 4) == part["price"]


@pytest.mark.parametrize("ad_format", spec.FORMAT_CODES)
def test_recommend_above_minimum(refs, ad_format):
    combos = [
        {},
        {"country": ["US"]},
        {"country": ["IN", "ID"], "quality": ["low"]},
        {"country": ["DE"], "city": [2950159], "language": ["de"]},
        {"region": [1, 2], "category": [1]},
        {"country": ["FR"], "ispMobile": [12, 13], "browser": [1]},
    ]
    for params in combos:
        est = estimate(refs, ad_format, params)
        low, high = est["minimum"], est["recommend"]
        assert 0 < low["price"] <= high["price"]
        assert 1.29 <= high["price"] / low["price"] <= 1.61
        assert 0 <= low["estimated_traffic"] <= high["estimated_traffic"]


def test_price_tiers_and_formats(refs):
    for ad_format in spec.FORMAT_CODES:
        prices = [
            estimate(refs, ad_format, {"country": [c]})["minimum"]["price"]
            for c in ("US", "ES", "IN")
        ]
        assert prices[0] > prices[1] > prices[2]
    push = estimate(refs, "push", {"country": ["US"]})["minimum"]["price"]
    video = estimate(refs, "video", {"country": ["US"]})["minimum"]["price"]
    assert video > push
    mixed = estimate(refs, "pops", {"country": ["US", "IN"]})["minimum"]["price"]
    us = estimate(refs, "pops", {"country": ["US"]})["minimum"]["price"]
    india = estimate(refs, "pops", {"country": ["IN"]})["minimum"]["price"]
    assert india < mixed < us


def test_quality_price_increases(refs):
    prices = [
        estimate(refs, "push", {"country": ["GB"], "quality": [q]})["minimum"]["price"]
        for q in spec.QUALITIES
    ]
    assert prices == sorted(prices) and len(set(prices)) == 4


def test_traffic_shrinks_as_targeting_narrows(refs):
    def traffic(**params):
        return estimate(refs, "push", params)["minimum"]["estimated_traffic"]

    world = traffic()
    us = traffic(country=["US"])
    assert world > us > 0
    assert traffic(country=["US", "CA"]) > us
    assert (
        us
        > traffic(country=["US"], quality=["high", "premium"])
        > traffic(country=["US"], quality=["premium"])
    )
    assert traffic(country=["US"], category=[1, 2, 3]) > traffic(country=["US"], category=[1])
    assert us > traffic(country=["US"], os=[1, 2]) > traffic(country=["US"], os=[2])
    assert us > traffic(country=["US"], browser=[1])
    assert us > traffic(country=["US"], language=["en"]) > traffic(country=["US"], language=["fr"])
    assert us > traffic(country=["US"], subsAge=[4])
    assert us > traffic(country=["US"], ispMobile=[1, 2])
    city = traffic(country=["US"], city=[5128581])
    assert 0 < city < us / 5
    region = refs.regions_by_country["US"][0]
    assert 0 < traffic(country=["US"], region=[region]) < us / 5


def test_subs_age_only_counts_for_push(refs):
    base = estimate(refs, "pops", {"country": ["US"]})
    assert estimate(refs, "pops", {"country": ["US"], "subsAge": [1]})["minimum"] == base["minimum"]


# --------------------------------------------------------------------------- seed


def test_seed_is_deterministic():
    a, b, c = Store(), Store(), Store()
    keys = seed_store(a, campaigns=25, seed=11)
    assert seed_store(b, campaigns=25, seed=11) == keys
    seed_store(c, campaigns=25, seed=12)
    assert dump(a) == dump(b)
    assert dump(a) != dump(c)


def test_same_seed_in_another_process(refs):
    """Nothing depends on the interpreter's hash seed."""
    code = (
        "import hashlib, json\n"
        "from toolkit.sandbox.store import Store\n"
        "from toolkit.sandbox.seed import seed_store\n"
        "from toolkit.sandbox.refs import load_refs\n"
        "from toolkit.sandbox.price import estimate\n"
        "s = Store(); seed_store(s, campaigns=10, seed=5)\n"
        "print(hashlib.sha256('\\n'.join(s.conn.iterdump()).encode()).hexdigest())\n"
        "print(json.dumps(estimate(load_refs(), 'video', {'country': ['BR', 'MX'],"
        " 'language': ['pt']})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
        cwd=Path(__file__).resolve().parents[1],
    ).stdout.split("\n")
    store = Store()
    seed_store(store, campaigns=10, seed=5)
    assert out[0] == hashlib.sha256(dump(store).encode()).hexdigest()
    here = estimate(refs, "video", {"country": ["BR", "MX"], "language": ["pt"]})
    assert json.loads(out[1]) == here


def test_accounts_keys_and_meta(seeded):
    rows = seeded.conn.execute("SELECT user_id, api_key, name, balance FROM accounts").fetchall()
    assert [r[0] for r in rows] == [1001, 1002, 1003]
    assert [r[1] for r in rows] == [api_key(3, i) for i in range(3)] == seeded.api_keys()
    assert api_key(3, 0) == hashlib.sha256(b"campaign-toolkit-sandbox:3:0").hexdigest()[:32]
    assert rows[0][2] == "Demo account"
    assert all(1000 <= r[3] <= 20000 and round(r[3], 2) == r[3] for r in rows)
    counts = dict(seeded.conn.execute("SELECT user_id, count(*) FROM campaigns GROUP BY 1"))
    assert counts == {1001: 80, 1002: 8, 1003: 8}
    assert seeded.meta("seed") == "3"
    assert seeded.meta("campaigns") == "80"
    assert seeded.meta("accounts") == "3"


def test_small_accounts_get_three_campaigns():
    store = Store()
    seed_store(store, campaigns=5, accounts=2)
    counts = dict(store.conn.execute("SELECT user_id, count(*) FROM campaigns GROUP BY 1"))
    assert counts == {1001: 5, 1002: 3}


def test_ids_and_timestamps(seeded):
    db = seeded.conn
    ids = [r[0] for r in db.execute("SELECT id FROM campaigns ORDER BY id")]
    assert ids == list(range(1_000_001, 1_000_001 + len(ids)))
    creatives = [r[0] for r in db.execute("SELECT id FROM creatives ORDER BY id")]
    assert creatives[0] == 5_000_001 and creatives == list(
        range(5_000_001, 5_000_001 + len(creatives))
    )
    cpa = [r[0] for r in db.execute("SELECT id FROM cpa_rules ORDER BY id")]
    assert cpa and cpa[0] == 90_001
    stamps = [r[0] for r in db.execute("SELECT t_created FROM campaigns ORDER BY id")]
    assert all(TIMESTAMP.match(t) for t in stamps) and stamps == sorted(stamps)
    for (t,) in db.execute(
        "SELECT t_created FROM creatives UNION SELECT t_event FROM creative_files"
    ):
        assert TIMESTAMP.match(t)


def test_campaign_values(seeded):
    db = seeded.conn
    rows = db.execute("SELECT * FROM campaigns").fetchall()
    assert {r["ad_format"] for r in rows} == set(spec.FORMAT_CODES)
    assert {r["mode"] for r in rows} == set(spec.MODES)
    assert {r["status"] for r in rows} <= set(spec.CAMPAIGN_STATUSES)
    assert {r["work_status"] for r in rows} <= set(spec.WORK_STATUSES)
    assert {r["status"] for r in rows} >= {"Approved", "New"}
    assert {r["work_status"] for r in rows} >= {"Started", "Paused"}
    verticals = load_refs().verticals
    for r in rows:
        fmt = r["ad_format"]
        assert r["vertical_id"] in verticals
        assert r["allow_proxy"] in (0, 1)
        if fmt == "pops":
            assert r["url"].startswith("https://")
        elif fmt != "video":
            assert r["url"] is None
        for setting, default in (("web_view", "no"), ("vpaid", "no"), ("placement", "all")):
            if fmt not in spec.SETTING_FORMATS[setting]:
                assert r[setting] == default
        assert r["web_view"] in ("yes", "no") and r["vpaid"] in ("yes", "no")
        assert r["placement"] in spec.VIDEO_PLACEMENTS
        for lim in spec.LIMITS.values():
            limit, done = r[lim.field], r[lim.field + "_value"]
            if fmt not in lim.formats:
                assert limit is None
            if limit is None:
                assert done == 0
            else:
                assert 0 <= done <= limit and limit > 0


def test_started_campaigns_can_start(seeded):
    db = seeded.conn
    started = db.execute("SELECT id, status FROM campaigns WHERE work_status='Started'").fetchall()
    assert started
    for cid, status in started:
        assert status not in ("Declined", "Stopped")
        kinds = {k for (k,) in db.execute("SELECT kind FROM targets WHERE campaign_id=?", (cid,))}
        assert {"category", "quality"} <= kinds
        assert db.execute("SELECT count(*) FROM countries WHERE campaign_id=?", (cid,)).fetchone()[
            0
        ]


def _cidr_ok(value: str) -> bool:
    if "-" in value:
        lo, hi = (ipaddress.ip_address(p) for p in value.split("-"))
        return lo < hi
    if "/" in value:
        return bool(ipaddress.ip_network(value, strict=True))
    return bool(ipaddress.ip_address(value))


def _seeded_value_ok(refs: Any, kind: str, fmt: str, value: str) -> bool:
    """A seeded target value is one the reference data (or the kind's syntax) knows."""
    if kind == "category":
        return bool(refs.category_name(fmt, int(value)))
    if kind == "language":
        return int(value) in refs.language_by_id
    if kind in ("os", "browser", "subs-age", "city", "region", "isp-mobile"):
        return refs.label(kind, int(value)) is not None
    checks = {
        "quality": lambda v: v in spec.QUALITIES,
        "connection-type": lambda v: v in spec.CONNECTION_TYPES,
        "cidr": _cidr_ok,
        "domain": lambda v: re.fullmatch(r"[a-z0-9]+\.[a-z]+", v) is not None,
    }
    return checks[kind](value)


def test_targets_respect_formats_and_references(seeded):
    refs = load_refs()
    db = seeded.conn
    formats = dict(db.execute("SELECT id, ad_format FROM campaigns"))
    seen = set()
    for cid, kind, list_type, value in db.execute("SELECT * FROM targets"):
        fmt = formats[cid]
        seen.add(kind)
        assert kind in spec.TARGET_KINDS and kind != "country"
        assert spec.TARGET_KINDS[kind].allowed_for(fmt), (kind, fmt)
        assert list_type == (
            "black" if list_type == "black" else "white" if kind in ("cidr", "domain") else ""
        )
        assert _seeded_value_ok(refs, kind, fmt, value), (cid, kind, value)
    assert {"category", "quality", "os", "browser", "language"} <= seen
    for _cid, code, bid in db.execute("SELECT * FROM countries"):
        assert code in refs.countries
        assert bid > 0 and round(bid, 4) == bid
    per_campaign = db.execute("SELECT count(*) FROM countries GROUP BY campaign_id").fetchall()
    assert all(1 <= n <= 15 for (n,) in per_campaign)


def test_lists_hold_source_ids_and_hex_subids(seeded):
    db = seeded.conn
    sizes = defaultdict(int)
    for cid, name, item in db.execute("SELECT * FROM lists"):
        sizes[cid, name] += 1
        assert name in spec.LISTS
        if spec.LISTS[name].entity == "source":
            assert re.fullmatch(r"[1-9]\d{5,7}", item)
        else:
            assert re.fullmatch(r"[0-9a-f]{8,16}", item)
    assert {name for _cid, name in sizes} == set(spec.LISTS)
    assert all(n <= 5000 for n in sizes.values())


def test_bid_rules(seeded):
    db = seeded.conn
    rules = defaultdict(list)
    for cid, item, rule, bid in db.execute("SELECT * FROM bid_rules"):
        rules[cid, rule].append((item, bid))
        assert re.fullmatch(r"[0-9a-f]+", item)
    assert rules
    for items in rules.values():
        assert 1 <= len(items) <= 20
        assert len({bid for _i, bid in items}) == 1
    per_campaign = defaultdict(list)
    for cid, rule in rules:
        per_campaign[cid].append(rule)
    for numbers in per_campaign.values():
        assert sorted(numbers) == list(range(1, len(numbers) + 1)) and len(numbers) <= 5
    dupes = db.execute(
        "SELECT count(*) FROM"
        " (SELECT campaign_id, item FROM bid_rules GROUP BY 1, 2 HAVING count(*) > 1)"
    ).fetchone()[0]
    assert dupes == 0


def test_cpa_rules_respect_formats(seeded):
    db = seeded.conn
    rows = db.execute(
        "SELECT r.*, c.ad_format FROM cpa_rules r JOIN campaigns c ON c.id = r.campaign_id"
    ).fetchall()
    assert rows
    for r in rows:
        fmt = r["ad_format"]
        assert r["type"] in spec.CPA_TYPES and r["lead_type"] in spec.CPA_LEAD_TYPES
        assert r["cond"] in spec.CPA_CONDS and r["lead_cond"] in spec.CPA_CONDS
        assert fmt in spec.CPA_TYPE_FORMATS.get(r["type"], {fmt})
        assert fmt in spec.CPA_LEAD_TYPE_FORMATS.get(r["lead_type"], {fmt})
    per_campaign = db.execute("SELECT count(*) FROM cpa_rules GROUP BY campaign_id").fetchall()
    assert all(1 <= n <= 3 for (n,) in per_campaign)


def test_creatives_and_files(seeded):
    db = seeded.conn
    files = {r[0]: (r[1], r[2]) for r in db.execute("SELECT id, mime, data FROM files")}
    rows = db.execute(
        "SELECT cr.*, c.ad_format FROM creatives cr JOIN campaigns c ON c.id = cr.campaign_id"
    ).fetchall()
    per_campaign = defaultdict(int)
    for r in rows:
        per_campaign[r["campaign_id"]] += 1
        fmt = r["ad_format"]
        assert 0 < len(r["title"]) <= spec.CREATIVE_TITLE_MAX
        assert r["text"] is None or len(r["text"]) <= spec.CREATIVE_TEXT_MAX
        assert r["status"] in spec.CREATIVE_STATUSES
        assert r["work_status"] in spec.WORK_STATUSES
        assert r["ctr"] >= 0
        if fmt in spec.ICON_REQUIRED_FORMATS:
            assert r["icon_url"]
        if fmt not in spec.IMAGE_FORMATS:
            assert r["image_url"] is None
        for url in (r["icon_url"], r["image_url"]):
            if url:
                mime, data = files[url.removeprefix("/files/")]
                assert mime == "image/png" and data.startswith(b"\x89PNG\r\n\x1a\n")
        if fmt == "video":
            assert r["type"] in ("video", "youtube")
            assert r["convert"] in spec.VIDEO_CONVERT_STATES and r["duration"] > 0
            assert r["video_url"]
        else:
            assert r["type"] is None and r["video_url"] is None
    assert all(1 <= n <= 5 for n in per_campaign.values())
    assert len(per_campaign) == db.execute("SELECT count(*) FROM campaigns").fetchone()[0]

    kinds = dict(db.execute("SELECT id, type FROM creatives"))
    renditions = defaultdict(list)
    for r in db.execute("SELECT * FROM creative_files").fetchall():
        renditions[r["creative_id"]].append(r)
        assert kinds[r["creative_id"]] == "video"
        assert (r["width"], r["height"]) in ((1280, 720), (854, 480), (640, 360))
        assert r["mime"] == "video/mp4" and r["bit_rate"] > 0
        assert r["url"].removeprefix("/files/") in files
    assert renditions and all(2 <= len(v) <= 3 for v in renditions.values())


def test_format_variety_holds_for_every_combination():
    store = Store()
    seed_store(store, campaigns=200, seed=9, accounts=1)
    combos = {tuple(r) for r in store.conn.execute("SELECT ad_format, work_status FROM campaigns")}
    assert set(product(spec.FORMAT_CODES, ("Started", "Paused"))) <= combos


def test_seed_speed():
    started = time.perf_counter()
    seed_store(Store(), campaigns=500, seed=2, accounts=1)
    assert time.perf_counter() - started < 3
