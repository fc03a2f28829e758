"""Deterministic minimal/recommended bid estimate of the sandbox.

The model: every country has a price (format base price x country tier x a fixed per-country
spread) and a daily volume (population x tier reach x format volume). Targeting keeps a share
of the volume: geography (cities, regions, carriers) per country, the other dimensions
(quality, category, OS, browser, language, subscription age) as global shares. The minimum
price is the volume-weighted country price times quality and OS premiums; the recommended
price is 1.3-1.6 times that and wins a larger part of the volume.

Nothing is random: spreads come from SHA-256 of fixed keys, so an input gives the same answer
in every process.

>>> from .refs import load_refs
>>> est = estimate(load_refs(), "push", {"country": ["US"]})
>>> est["minimum"]["price"] <= est["recommend"]["price"]
True
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from .. import spec
from .refs import Refs

# Base price per format (push/inpage per click, pops/video per 1000 impressions).
BASE_PRICE: dict[str, float] = {"push": 0.05, "inpage": 0.08, "pops": 1.0, "video": 2.5}
# Daily impressions per reachable inhabitant, per format.
FORMAT_VOLUME: dict[str, float] = {"push": 1.0, "inpage": 1.6, "pops": 0.8, "video": 0.35}


def _codes(text: str) -> frozenset[str]:
    return frozenset(text.split())


TIER1: frozenset[str] = _codes(
    "US CA GB AU NZ DE FR NL BE CH AT NO SE DK FI IE LU IS JP KR SG HK IL AE QA"
)
TIER2: frozenset[str] = _codes(
    "ES IT PT PL CZ SK HU GR SI EE LV LT HR RO BG CY MT BR MX AR CL CO PE UY SA KW BH OM TW "
    "MY TH ZA TR RU CN"
)
TIER_PRICE: dict[int, float] = {1: 2.6, 2: 1.3, 3: 0.45}
TIER_REACH: dict[int, float] = {1: 0.012, 2: 0.008, 3: 0.004}
MIN_POPULATION = 5_000

QUALITY_SHARE: dict[str, float] = {"low": 0.3, "regular": 0.4, "high": 0.2, "premium": 0.1}
QUALITY_PRICE: dict[str, float] = {"low": 0.6, "regular": 1.0, "high": 1.5, "premium": 2.3}

OS_SHARE: dict[str, float] = {
    "Android": 0.55,
    "iOS": 0.2,
    "Windows": 0.14,
    "macOS": 0.04,
    "Linux": 0.01,
    "Chrome OS": 0.01,
    "iPadOS": 0.02,
}
OS_PRICE: dict[str, float] = {"iOS": 1.35, "iPadOS": 1.3, "macOS": 1.3, "Windows": 1.1}
OS_SHARE_OTHER = 0.004

BROWSER_SHARE: dict[str, float] = {
    "Chrome": 0.12,
    "Chrome Mobile": 0.38,
    "Safari": 0.04,
    "Mobile Safari": 0.16,
    "Firefox": 0.03,
    "Edge": 0.05,
    "Samsung Internet": 0.05,
    "Opera": 0.02,
    "Opera Mini": 0.01,
    "UC Browser": 0.01,
    "Yandex Browser": 0.01,
    "Android WebView": 0.04,
    "Facebook in-app": 0.02,
    "Chrome iOS": 0.02,
}
BROWSER_SHARE_OTHER = 0.005

SUBS_AGE_SHARE: dict[int, float] = {1: 0.15, 2: 0.2, 3: 0.25, 4: 0.4}
# Share of a country's traffic speaking its main language, its second, any other listed one,
# and a language not listed for the country.
LANGUAGE_SHARE: tuple[float, float, float, float] = (0.75, 0.2, 0.05, 0.02)
CITY_URBAN_FACTOR = 1.3  # city dwellers are online more than average
CARRIER_TRAFFIC = 0.55  # part of traffic on mobile carriers
MIN_TRAFFIC_SHARE = 0.2  # traffic won at the minimum price
RECOMMEND_TRAFFIC_SHARE = 0.65  # traffic won at the recommended price


def unit(key: str) -> float:
    """A fixed number in [0, 1) derived from a key."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64


def tier(code: str) -> int:
    """Country tier: 1 (most valuable) to 3."""
    return 1 if code in TIER1 else 2 if code in TIER2 else 3


@functools.lru_cache(maxsize=16)
def _country_table(refs: Refs, ad_format: str) -> dict[str, tuple[float, float]]:
    """Country code -> (price, daily volume) for one format."""
    base = BASE_PRICE[ad_format]
    volume = FORMAT_VOLUME[ad_format]
    table = {}
    for code in refs.countries:
        t = tier(code)
        price = base * TIER_PRICE[t] * (0.85 + 0.3 * unit(f"price:{ad_format}:{code}"))
        people = max(refs.country_population.get(code, 0), MIN_POPULATION)
        traffic = people * TIER_REACH[t] * volume * (0.7 + 0.6 * unit(f"traffic:{code}"))
        table[code] = (price, traffic)
    return table


def country_price(refs: Refs, ad_format: str, code: str) -> float:
    """Minimal price of one country for a format, all qualities (4 decimals)."""
    return round(_country_table(refs, ad_format)[code][0], 4)


def _share(selected: list[Any], shares: dict[Any, float], other: float) -> float:
    """Sum of the shares of the selected values, at most 1; no selection keeps everything."""
    if not selected:
        return 1.0
    return min(1.0, sum(shares.get(v, other) for v in dict.fromkeys(selected)))


def _weighted(
    selected: list[Any], shares: dict[Any, float], factors: dict[Any, float], other: float
) -> float:
    """Price factor of a selection, weighted by the share of each selected value."""
    values = list(dict.fromkeys(selected)) or list(shares)
    total = sum(shares.get(v, other) for v in values)
    if total <= 0:
        return 1.0
    return sum(shares.get(v, other) * factors.get(v, 1.0) for v in values) / total


def _category_share(refs: Refs, ad_format: str, selected: list[int]) -> float:
    if not selected:
        return 1.0
    group = spec.FORMATS[ad_format].category_group
    names = refs.categories[group]
    first = min(names)
    weights = {cid: 10.0 if cid == first else 1.0 + 4.0 * unit(f"cat:{cid}") for cid in names}
    return min(
        1.0, sum(weights.get(c, 0.5) for c in dict.fromkeys(selected)) / sum(weights.values())
    )


def _param(params: dict[str, list], kind: str) -> list:
    """The values given for a kind, under its price parameter (``kind.price_param``)."""
    name = spec.target_kind(kind).price_param
    return (params.get(name) if name else None) or []


def _language_share(refs: Refs, code: str, selected: list[str]) -> float:
    if not selected:
        return 1.0
    spoken = refs.country_languages.get(code, ())
    main, second, listed, unlisted = LANGUAGE_SHARE
    total = 0.0
    for lang in dict.fromkeys(selected):
        if lang not in spoken:
            total += unlisted
        else:
            pos = spoken.index(lang)
            total += main if pos == 0 else second if pos == 1 else listed
    return min(1.0, total)


def _geo_shares(refs: Refs, params: dict[str, list]) -> dict[str, float]:
    """Country -> share of its traffic that the geographic targeting keeps."""
    countries = list(dict.fromkeys(_param(params, "country")))
    cities = [refs.cities[c] for c in dict.fromkeys(_param(params, "city")) if c in refs.cities]
    regions = [
        refs.regions[r] for r in dict.fromkeys(_param(params, "region")) if r in refs.regions
    ]
    if not cities and not regions:
        return {c: 1.0 for c in (countries or refs.countries) if c in refs.countries}
    shares: dict[str, float] = {}
    for city in cities:
        people = max(refs.country_population.get(city.country, 0), MIN_POPULATION)
        share = CITY_URBAN_FACTOR * city.population / people
        shares[city.country] = shares.get(city.country, 0.0) + share
    for region in regions:
        count = len(refs.regions_by_country.get(region.country, ())) or 1
        shares[region.country] = shares.get(region.country, 0.0) + 1.0 / count
    allowed = set(countries) if countries else None
    return {
        c: min(1.0, s)
        for c, s in shares.items()
        if c in refs.countries and (allowed is None or c in allowed)
    }


def _isp_share(refs: Refs, code: str, selected: list[int]) -> float:
    if not selected:
        return 1.0
    here = refs.isps_by_country.get(code, ())
    if not here:
        return 0.0
    chosen = sum(1 for i in dict.fromkeys(selected) if i in here)
    return CARRIER_TRAFFIC * chosen / len(here)


def estimate(refs: Refs, ad_format: str, params: dict[str, list]) -> dict[str, dict[str, Any]]:
    """Minimal and recommended price with the daily traffic each is expected to win."""
    table = _country_table(refs, ad_format)
    languages = _param(params, "language")
    isps = _param(params, "isp-mobile")
    geo = _geo_shares(refs, params)

    traffic = 0.0
    weighted_price = 0.0
    for code, share in geo.items():
        price, volume = table[code]
        kept = volume * share * _language_share(refs, code, languages)
        kept *= _isp_share(refs, code, isps)
        traffic += kept
        weighted_price += price * kept
    if traffic > 0:
        price = weighted_price / traffic
    elif geo:
        price = sum(table[c][0] for c in geo) / len(geo)
    else:
        chosen = [c for c in _param(params, "country") if c in table] or list(table)
        price = sum(table[c][0] for c in chosen) / len(chosen)

    quality = _param(params, "quality")
    os_names = [refs.os.get(i, "") for i in _param(params, "os")]
    browser_names = [refs.browsers.get(i, "") for i in _param(params, "browser")]
    subs_age = _param(params, "subs-age") if ad_format == "push" else []
    traffic *= _share(quality, QUALITY_SHARE, 0.0)
    traffic *= _category_share(refs, ad_format, _param(params, "category"))
    traffic *= _share(os_names, OS_SHARE, OS_SHARE_OTHER)
    traffic *= _share(browser_names, BROWSER_SHARE, BROWSER_SHARE_OTHER)
    traffic *= _share(subs_age, SUBS_AGE_SHARE, 0.0)
    price *= _weighted(quality, QUALITY_SHARE, QUALITY_PRICE, 0.0)
    price *= _weighted(os_names, OS_SHARE, OS_PRICE, OS_SHARE_OTHER)

    minimum = max(round(price, 4), 0.0001)
    recommend = round(minimum * (1.3 + 0.3 * unit(_canonical(ad_format, params))), 4)
    low = int(traffic * MIN_TRAFFIC_SHARE)
    high = max(int(traffic * RECOMMEND_TRAFFIC_SHARE), low)
    return {
        "minimum": {"price": minimum, "estimated_traffic": low},
        "recommend": {"price": max(recommend, minimum), "estimated_traffic": high},
    }


def _canonical(ad_format: str, params: dict[str, list]) -> str:
    """A text that is the same for equal inputs, whatever their order."""
    body = {k: sorted({str(v) for v in vs}) for k, vs in sorted(params.items()) if vs}
    return ad_format + json.dumps(body, sort_keys=True)


def stored_params(refs: Refs, ad_format: str, targets: list[tuple[str, str]]) -> dict[str, list]:
    """A campaign's stored targeting (``(kind, value)`` rows of the store's ``targets``) as
    the price operation takes it: per price parameter the values the format allows (ids as
    integers, language ids as their codes)."""
    params: dict[str, list] = {}
    for name, value in targets:
        kind = spec.target_kind(name)
        if not kind.price_param or kind.bids or not kind.allowed_for(ad_format):
            continue
        sent: Any = value if kind.item_type is str else int(value)
        if kind.sent_as_code:
            sent = refs.language_by_id.get(int(value))
        if sent is not None:
            params.setdefault(kind.price_param, []).append(sent)
    return params


def reaches(refs: Refs, ad_format: str, params: dict[str, list], code: str) -> bool:
    """True when a campaign's targeting (``params``, as :func:`estimate` takes them) leaves
    country ``code`` any traffic: the estimate of that country alone wins some at the
    recommended price. False when the targeting excludes it (its regions or cities lie
    elsewhere, its carriers are not there): 0 traffic at both prices."""
    country = spec.bid_kind().price_param or "country"
    est = estimate(refs, ad_format, {**params, country: [code]})
    return est["recommend"]["estimated_traffic"] > 0
