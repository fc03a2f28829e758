"""The targeting of demo campaigns: which kinds a campaign targets, and the values drawn."""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Callable
from itertools import repeat
from typing import Any

from .. import spec
from .price import country_price
from .refs import Refs
from .seed_data import DOMAIN_TLDS, DOMAIN_WORDS, MODE_FACTOR

# Values drawn for one kind of a demo campaign (and their list type), or None.
Picked = tuple[Any, ...] | None


class TargetSeeder:
    """The targeting part of the demo account's generator (see ``seed._Seeder``)."""

    refs: Refs
    rng: random.Random
    rows: Any
    os_ids: list[int]
    browser_ids: list[int]

    def _targets(
        self, cid: int, ad_format: str, mode: str, codes: list[str], missing: set[str]
    ) -> list[float]:
        """Targeting rows of a campaign; returns the bids of its countries."""
        rng = self.rng
        out: list[tuple[Any, ...]] = []

        def put(kind: str, values: Any, list_type: str = "") -> None:
            out.extend((cid, kind, list_type, str(v)) for v in values)

        if "category" not in missing:
            group = sorted(self.refs.categories[spec.FORMATS[ad_format].category_group])
            put("category", rng.sample(group, rng.randint(1, 4)))
        if "quality" not in missing:
            put("quality", rng.sample(spec.QUALITIES, rng.randint(1, 4)))
        bids = self._bids(cid, ad_format, mode, codes)
        for kind, pick in self._optional_kinds():
            if ad_format not in spec.TARGET_KINDS[kind].formats:
                continue
            picked = pick(codes)
            if picked is not None:
                put(kind, *picked)
        self.rows.tables["targets"].extend(out)
        return bids

    def _bids(self, cid: int, ad_format: str, mode: str, codes: list[str]) -> list[float]:
        rng = self.rng
        bids = []
        factor = MODE_FACTOR[(ad_format, mode)]
        for code in codes:
            price = country_price(self.refs, ad_format, code)
            bid = round(price * factor * rng.uniform(1.0, 2.2), 4)
            bids.append(max(bid, 0.0001))
        self.rows.tables["countries"].extend(zip(repeat(cid), codes, bids, strict=False))
        return bids

    def _optional_kinds(self) -> tuple[tuple[str, Callable[[list[str]], Picked]], ...]:
        """The kinds a demo campaign may target, in the order they are drawn."""
        return (
            ("os", self._os),
            ("browser", self._browsers),
            ("language", self._language_pick),
            ("connection-type", self._connection),
            ("subs-age", self._subs_age),
            ("city", self._cities),
            ("region", self._regions),
            ("isp-mobile", self._isps),
            ("cidr", self._cidrs),
            ("domain", self._domains),
        )

    def _os(self, _codes: list[str]) -> Picked:
        rng = self.rng
        if rng.random() >= 0.35:
            return None
        ids = self.os_ids[:6] if rng.random() < 0.8 else self.os_ids
        return (rng.sample(ids, rng.randint(1, 3)),)

    def _browsers(self, _codes: list[str]) -> Picked:
        rng = self.rng
        return (rng.sample(self.browser_ids, rng.randint(1, 4)),) if rng.random() < 0.25 else None

    def _language_pick(self, codes: list[str]) -> Picked:
        return (self._languages(codes),) if self.rng.random() < 0.2 else None

    def _connection(self, _codes: list[str]) -> Picked:
        rng = self.rng
        if rng.random() >= 0.15:
            return None
        types = spec.CONNECTION_TYPES
        return (types if rng.random() < 0.2 else [rng.choice(types)],)

    def _subs_age(self, _codes: list[str]) -> Picked:
        rng = self.rng
        if rng.random() >= 0.35:
            return None
        return (rng.sample(sorted(self.refs.subs_age), rng.randint(1, 3)),)

    def _from_pool(self, chance: float, pool: Callable[[], list[int]], top: int) -> Picked:
        rng = self.rng
        if rng.random() >= chance:
            return None
        ids = pool()
        return (rng.sample(ids, min(len(ids), rng.randint(1, top))),) if ids else None

    def _cities(self, codes: list[str]) -> Picked:
        by_country = self.refs.cities_by_country
        return self._from_pool(
            0.08, lambda: [i for c in codes for i in by_country.get(c, ())[:30]], 5
        )

    def _regions(self, codes: list[str]) -> Picked:
        by_country = self.refs.regions_by_country
        return self._from_pool(0.08, lambda: [i for c in codes for i in by_country.get(c, ())], 4)

    def _isps(self, codes: list[str]) -> Picked:
        by_country = self.refs.isps_by_country
        return self._from_pool(0.08, lambda: [i for c in codes for i in by_country.get(c, ())], 3)

    def _cidrs(self, _codes: list[str]) -> Picked:
        rng = self.rng
        if rng.random() >= 0.08:
            return None
        list_type = "black" if rng.random() < 0.75 else "white"
        return dict.fromkeys(self._cidr() for _ in range(rng.randint(1, 5))), list_type

    def _domains(self, _codes: list[str]) -> Picked:
        rng = self.rng
        if rng.random() >= 0.12:
            return None
        list_type = "black" if rng.random() < 0.8 else "white"
        return dict.fromkeys(self._domain() for _ in range(rng.randint(1, 10))), list_type

    def _languages(self, codes: list[str]) -> list[int]:
        refs = self.refs
        wanted: list[str] = []
        for code in codes[:2]:
            spoken = refs.country_languages.get(code, ())
            if spoken and spoken[0] in refs.languages:
                wanted.append(spoken[0])
        if not wanted or self.rng.random() < 0.3:
            wanted.append("en")
        return [refs.languages[c][0] for c in dict.fromkeys(wanted)]

    def _cidr(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.85:
            first = rng.randrange(1, 224)
            if first in (10, 127):
                first += 1
            addr = first << 24 | rng.getrandbits(24)
            if r < 0.35:
                prefix = rng.choice((16, 20, 22, 24, 24, 24, 28))
                net = addr & (0xFFFFFFFF << (32 - prefix)) & 0xFFFFFFFF
                return f"{ipaddress.IPv4Address(net)}/{prefix}"
            if r < 0.65:
                return str(ipaddress.IPv4Address(addr))
            low = addr & 0xFFFFFF00 | rng.randrange(0, 128)
            high = low + rng.randrange(1, 128)
            return f"{ipaddress.IPv4Address(low)}-{ipaddress.IPv4Address(high)}"
        prefix = rng.choice((32, 48, 56, 64))
        addr = 0b001 << 125 | rng.getrandbits(125)
        net = addr & ((1 << 128) - 1) >> (128 - prefix) << (128 - prefix)
        return f"{ipaddress.IPv6Address(net)}/{prefix}"

    def _domain(self) -> str:
        rng = self.rng
        name = rng.choice(DOMAIN_WORDS) + rng.choice(DOMAIN_WORDS)
        if rng.random() < 0.3:
            name += str(rng.randint(1, 99))
        return f"{name}.{rng.choice(DOMAIN_TLDS)}"
