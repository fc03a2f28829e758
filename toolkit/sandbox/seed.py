"""Deterministic demo accounts for the sandbox.

:func:`seed_store` fills an empty :class:`~toolkit.sandbox.store.Store` with accounts,
campaigns of every format, their targeting, source/subId lists, bid and CPA rules, creatives
and a few small image and video files. Everything comes from one ``random.Random(seed)``: the
same seed gives the same database, byte for byte.

>>> from .store import Store
>>> store = Store()
>>> keys = seed_store(store, campaigns=3)
>>> len(keys), store.meta("campaigns")
(2, '3')
"""

from __future__ import annotations

import calendar
import functools
import hashlib
import ipaddress
import random
import sqlite3
import struct
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from .. import spec
from .price import country_price, tier
from .refs import Refs, load_refs
from .store import Store

FIRST_USER_ID = 1001
FIRST_CAMPAIGN_ID = 1_000_001
FIRST_CREATIVE_ID = 5_000_001
FIRST_CPA_RULE_ID = 90_001
# Campaigns are created between these two moments (UTC), in id order.
PERIOD = (
    calendar.timegm((2026, 1, 5, 0, 0, 0)),
    calendar.timegm((2026, 11, 15, 0, 0, 0)),
)
FLUSH_EVERY = 250  # campaigns between two writes
SOURCE_POOL = 25_000  # distinct source ids of the network

ACCOUNT_NAMES: tuple[str, ...] = (
    "Demo account",
    "Northwind Media",
    "Bluefin Traffic",
    "Orbit Performance",
    "Kestrel Ads",
    "Lumen Digital",
)

# Countries picked for targeting, with how often they are picked.
POPULAR_GEOS: dict[str, int] = {
    "US": 14, "GB": 6, "DE": 6, "FR": 5, "CA": 5, "AU": 4, "IT": 4, "ES": 4, "NL": 3,
    "PL": 3, "BR": 7, "MX": 5, "AR": 2, "CO": 2, "CL": 2, "PE": 1, "IN": 8, "ID": 6,
    "PH": 4, "VN": 4, "TH": 4, "MY": 3, "JP": 3, "KR": 2, "TR": 4, "RU": 4, "UA": 2,
    "ZA": 2, "NG": 3, "KE": 1, "EG": 2, "SA": 2, "AE": 2, "PK": 2, "BD": 2, "SE": 2,
    "NO": 1, "DK": 1, "CH": 2, "AT": 2, "BE": 2, "PT": 2, "RO": 2, "GR": 1, "CZ": 1,
    "HU": 1, "SG": 1, "NZ": 1, "IE": 1, "IL": 1,
}  # fmt: skip
GEO_COUNTS = (1, 2, 3, 4, 5, 8, 12, 15)
GEO_COUNT_WEIGHTS = (42, 15, 10, 8, 8, 7, 5, 5)

FORMAT_WEIGHTS: dict[str, int] = {"push": 35, "pops": 25, "inpage": 20, "video": 20}
CPC_SHARE: dict[str, float] = {"push": 0.75, "inpage": 0.7, "pops": 0.15, "video": 0.2}
# Bid of a country = its price x this factor for the campaign's buying model.
MODE_FACTOR: dict[tuple[str, str], float] = {
    ("push", "CPC"): 1.0,
    ("push", "CPM"): 4.0,
    ("inpage", "CPC"): 1.0,
    ("inpage", "CPM"): 3.0,
    ("pops", "CPM"): 1.0,
    ("pops", "CPC"): 0.02,
    ("video", "CPM"): 1.0,
    ("video", "CPC"): 0.1,
}
# (value, cumulative probability)
CAMPAIGN_STATUS_ODDS = (("Approved", 0.74), ("New", 0.86), ("Declined", 0.93), ("Stopped", 1.0))
CONVERT_ODDS = (("success", 0.85), ("processing", 0.9), ("wait", 0.94), ("fail", 1.0))
CTR_RANGE: dict[str, tuple[float, float]] = {
    "push": (0.05, 2.5),
    "inpage": (0.1, 1.5),
    "pops": (0.0, 0.0),
    "video": (0.2, 3.0),
}

DECLINE_NOTES: tuple[str, ...] = (
    "Landing page is not available",
    "Misleading claims in the creative",
    "Prohibited content on the landing page",
    "Redirect chain on the landing page is not allowed",
    "Landing page does not match the declared vertical",
)
STOP_NOTES: tuple[str, ...] = (
    "Stopped by moderation: landing page changed after approval",
    "Stopped by moderation: too many user complaints",
    "Stopped by moderation: malware detected on the landing page",
)
CREATIVE_DECLINE_NOTES: tuple[str, ...] = (
    "Image quality is too low",
    "Misleading title",
    "Text does not match the landing page",
    "Third-party trademark in the image",
)
CAMPAIGN_NOTES: tuple[str, ...] = (
    "Test campaign",
    "Scaled from the winning test",
    "Optimise after 3 days",
    "Whitelist test",
    "Low-bid exploration",
    "Retargeting of push subscribers",
    "Weekend only",
    "Client brief v2",
    "New landing page A/B",
    "Paused by budget, resume next month",
)

TITLES: dict[str, tuple[str, ...]] = {
    "Dating": ("3 new messages are waiting for you", "Singles near you are online now",
               "Someone liked your profile"),
    "Gambling": ("Your 200% welcome bonus is ready", "50 free spins are waiting",
                 "Jackpot tonight: join the tournament"),
    "Betting": ("Boosted odds on tonight's match", "Free bet for new players",
                "Live betting: the game is on"),
    "Nutra": ("Doctors surprised by this morning habit", "Try the 7-day energy challenge",
              "Natural formula, visible results"),
    "Finance": ("Compare savings rates in minutes", "Your credit score, free",
                "Stop overpaying bank fees"),
    "Crypto": ("Bitcoin price alert: the market is moving", "Start trading crypto with $10",
               "Earn interest on your coins"),
    "Sweepstakes": ("Answer 3 questions to win a gift card", "You have been selected!",
                    "Spin the wheel for a prize"),
    "E-commerce": ("Up to 70% off - today only", "Free delivery on your first order",
                   "Flash sale ends at midnight"),
    "Software": ("Your PC may be running slow", "Speed up your computer in one click",
                 "Update available for your system"),
    "VPN": ("Protect your connection with a fast VPN", "Unblock any site in seconds",
            "Your IP address is visible"),
    "Antivirus": ("Protect your device from threats", "Scan your phone for free",
                  "3 risks found on your device"),
    "Mobile apps": ("The app everyone is talking about", "Install and get a bonus",
                    "Your phone deserves this app"),
    "Games": ("Play free: build your empire today", "Join 10 million players",
              "Can you pass level 10?"),
    "Adult": ("18+ Live chat - free signup", "Private chat rooms are open",
              "Adults only: join now"),
    "Education": ("Learn English in 15 minutes a day", "Free coding course for beginners",
                  "Get certified online"),
    "Travel": ("Last-minute flight deals from $49", "Hotels at half price this weekend",
               "Your next trip starts here"),
    "Insurance": ("Drivers could save on car insurance", "Compare health plans in 2 minutes",
                  "Home insurance from $9 a month"),
    "Loans": ("Personal loan decision in minutes", "Cash today, no paperwork",
              "Lower your monthly payments"),
    "Streaming": ("Watch new releases in HD tonight", "First month free",
                  "Every match, live and on demand"),
    "Utilities": ("Clean up your phone storage", "Battery draining fast? Fix it",
                  "Block annoying calls"),
    "Lead generation": ("See if you qualify in 60 seconds", "Get your free quote",
                        "Claim your free consultation"),
}  # fmt: skip
TEXTS: tuple[str, ...] = (
    "Tap to learn more.",
    "Limited offer - ends tonight.",
    "Thousands of people already joined. Don't miss out!",
    "It only takes a minute. Try it now.",
    "Exclusive offer for our readers.",
    "Sign up free and see for yourself.",
    "Available in your country for a limited time.",
    "No credit card required.",
)
DOMAIN_WORDS: tuple[str, ...] = (
    "news", "daily", "tube", "play", "stream", "game", "movie", "tech", "sport", "world",
    "hub", "zone", "box", "portal", "media", "flix", "top", "best", "free", "fun", "anime",
    "manga", "file", "load", "hd", "live", "watch", "mega", "star", "pro",
)  # fmt: skip
DOMAIN_TLDS: tuple[str, ...] = ("com", "net", "org", "io", "tv", "me", "xyz", "info", "co")
BRANDS: tuple[str, ...] = ("offers", "promo", "go", "track", "best-deals", "lp", "win")

RENDITIONS: tuple[tuple[int, int, int, str], ...] = (
    (1280, 720, 2_500_000, "avc1.64001f"),
    (854, 480, 1_200_000, "avc1.4d401e"),
    (640, 360, 700_000, "avc1.42e01e"),
)
VIDEO_DURATIONS = (6, 10, 15, 15, 20, 30, 30, 45, 60)
YOUTUBE_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

CAMPAIGN_COLUMNS: tuple[str, ...] = (
    "id", "user_id", "t_created", "name", "status", "status_note", "work_status", "mode",
    "ad_format", "frequency_capping", "note", "vertical_id", "url", "allow_proxy", "web_view",
    "vpaid", "placement", "limit_sum", "limit_show", "limit_click", "limit_day_sum",
    "limit_day_show", "limit_day_click", "limit_sum_value", "limit_show_value",
    "limit_click_value", "limit_day_sum_value", "limit_day_show_value", "limit_day_click_value",
)  # fmt: skip
CREATIVE_COLUMNS: tuple[str, ...] = (
    "id", "campaign_id", "t_created", "name", "title", "text", "url", "icon_url", "image_url",
    "status", "status_note", "work_status", "ctr", "type", "convert", "duration", "video_url",
    "youtube_url",
)  # fmt: skip
INSERTS: dict[str, str] = {
    "campaigns": f"INSERT INTO campaigns({', '.join(CAMPAIGN_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(CAMPAIGN_COLUMNS))})",
    "creatives": f"INSERT INTO creatives({', '.join(CREATIVE_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(CREATIVE_COLUMNS))})",
    "targets": "INSERT INTO targets(campaign_id, kind, list_type, value) VALUES (?,?,?,?)",
    "countries": "INSERT INTO countries(campaign_id, code, bid) VALUES (?,?,?)",
    "lists": "INSERT INTO lists(campaign_id, list, item) VALUES (?,?,?)",
    "bid_rules": "INSERT INTO bid_rules(campaign_id, item, rule, bid) VALUES (?,?,?,?)",
    "cpa_rules": "INSERT INTO cpa_rules(id, campaign_id, type, cond, amount, lead_type,"
    " lead_cond, lead_amount) VALUES (?,?,?,?,?,?,?,?)",
    "creative_files": "INSERT INTO creative_files(creative_id, seq, t_event, type, mime, codec,"
    " codec_name, bit_rate, duration, width, height, url) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
}


def api_key(seed: int, index: int) -> str:
    """The api key of the ``index``-th account of a seed."""
    return hashlib.sha256(f"campaign-toolkit-sandbox:{seed}:{index}".encode()).hexdigest()[:32]


def timestamp(seconds: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS+00:00`` of a Unix time."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(seconds))


# --------------------------------------------------------------------------- files


def png(width: int, height: int, row: Callable[[int], bytes]) -> bytes:
    """An 8-bit RGB PNG whose line ``y`` holds the pixels ``row(y)`` (3 bytes each)."""
    raw = b"".join(b"\x00" + row(y) for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def _icon(back: tuple[int, int, int], front: tuple[int, int, int]) -> bytes:
    """A 64x64 disc on a plain background."""
    size, radius = 64, 20
    back_px, front_px = bytes(back), bytes(front)

    def row(y: int) -> bytes:
        dy = y - (size - 1) / 2
        half = int((radius**2 - dy**2) ** 0.5 + 0.5) if abs(dy) < radius else 0
        lo, hi = size // 2 - half, size // 2 + half
        return back_px * lo + front_px * (hi - lo) + back_px * (size - hi)

    return png(size, size, row)


def _image(left: tuple[int, int, int], right: tuple[int, int, int]) -> bytes:
    """A 192x96 horizontal gradient."""
    width, height = 192, 96
    line = b"".join(
        bytes(int(a + (b - a) * x / (width - 1)) for a, b in zip(left, right, strict=True))
        for x in range(width)
    )
    return png(width, height, lambda _y: line)


def _mp4(label: bytes) -> bytes:
    """A tiny ISO media file: an ``ftyp`` box and a ``free`` box naming the rendition."""
    ftyp = struct.pack(">I4s4sI4s4s4s", 28, b"ftyp", b"isom", 512, b"isom", b"avc1", b"mp41")
    return ftyp + struct.pack(">I4s", 8 + len(label), b"free") + label


def file_id(data: bytes, ext: str) -> str:
    """Content-addressed id of a stored file."""
    return hashlib.sha256(data).hexdigest()[:24] + ext


@dataclass(frozen=True)
class DemoFiles:
    """Files the seeded creatives point at, as (id, mime, data) rows and per-use urls."""

    rows: tuple[tuple[str, str, bytes], ...]
    icons: tuple[str, ...]
    images: tuple[str, ...]
    video: str
    renditions: tuple[str, ...]


@functools.lru_cache(maxsize=4)
def demo_files(base_url_files: str) -> DemoFiles:
    """The fixed set of small files used by seeded creatives."""
    colours = (
        ((33, 150, 243), (255, 255, 255)),
        ((233, 30, 99), (255, 235, 59)),
        ((76, 175, 80), (255, 255, 255)),
        ((255, 152, 0), (63, 81, 181)),
        ((103, 58, 183), (0, 188, 212)),
        ((38, 50, 56), (255, 87, 34)),
    )
    rows: list[tuple[str, str, bytes]] = []

    def add(data: bytes, mime: str, ext: str) -> str:
        fid = file_id(data, ext)
        rows.append((fid, mime, data))
        return f"{base_url_files}/{fid}"

    icons = tuple(add(_icon(b, f), "image/png", ".png") for b, f in colours)
    images = tuple(add(_image(b, f), "image/png", ".png") for b, f in colours[:4])
    video = add(_mp4(b"source 1920x1080"), "video/mp4", ".mp4")
    renditions = tuple(
        add(_mp4(f"{w}x{h}".encode()), "video/mp4", ".mp4") for w, h, _r, _c in RENDITIONS
    )
    rows.sort()
    return DemoFiles(tuple(rows), icons, images, video, renditions)


# --------------------------------------------------------------------------- generator


@dataclass
class _Rows:
    """Rows waiting to be written, per table."""

    tables: dict[str, list[tuple[Any, ...]]] = field(
        default_factory=lambda: {name: [] for name in INSERTS}
    )

    def flush(self, db: sqlite3.Connection) -> None:
        for name, rows in self.tables.items():
            if rows:
                db.executemany(INSERTS[name], rows)
                rows.clear()


class _Seeder:
    def __init__(self, refs: Refs, rng: random.Random, files: DemoFiles) -> None:
        self.refs = refs
        self.rng = rng
        self.files = files
        self.rows = _Rows()
        self.campaign_id = FIRST_CAMPAIGN_ID
        self.creative_id = FIRST_CREATIVE_ID
        self.cpa_rule_id = FIRST_CPA_RULE_ID
        self.geo_codes = [c for c in POPULAR_GEOS if c in refs.countries]
        self.geo_cum = _cumulative(POPULAR_GEOS[c] for c in self.geo_codes)
        self.all_codes = sorted(refs.countries)
        self.formats = list(FORMAT_WEIGHTS)
        self.format_cum = _cumulative(FORMAT_WEIGHTS.values())
        self.vertical_ids = sorted(refs.verticals)
        self.os_ids = sorted(refs.os)
        self.browser_ids = sorted(refs.browsers)
        self.sources = [str(s) for s in rng.sample(range(100_000, 100_000_000), SOURCE_POOL)]

    # ----------------------------------------------------------------- campaigns

    def campaign(self, user_id: int, number: int, created: int) -> None:
        rng = self.rng
        cid = self.campaign_id
        self.campaign_id += 1
        ad_format = rng.choices(self.formats, cum_weights=self.format_cum)[0]
        mode = "CPC" if rng.random() < CPC_SHARE[ad_format] else "CPM"
        vertical_id = rng.choice(self.vertical_ids)
        vertical = self.refs.verticals[vertical_id]

        status = _pick(rng.random(), CAMPAIGN_STATUS_ODDS)
        complete = rng.random() < 0.93
        missing = set() if complete else set(rng.sample(spec.START_REQUIRES, rng.randint(1, 3)))
        r = rng.random()
        if status in ("Declined", "Stopped") or not complete:
            work_status = "Paused" if r < 0.7 else "Archived"
        else:
            work_status = "Started" if r < 0.55 else "Paused" if r < 0.88 else "Archived"
        notes = {"Declined": DECLINE_NOTES, "Stopped": STOP_NOTES}.get(status)
        status_note = rng.choice(notes) if notes else None

        codes = [] if "country" in missing else self._countries()
        geo = self._geo_name(codes)
        name = f"{geo} {vertical} {spec.FORMATS[ad_format].label} {mode} #{number}"

        default_cap = spec.FORMATS[ad_format].default_frequency_capping
        if rng.random() < 0.6:
            capping = default_cap
        else:
            capping = rng.choice((3, 5, 10, 20) if ad_format == "video" else (0, 1, 2, 3, 5, 10))
        note = rng.choice(CAMPAIGN_NOTES) if rng.random() < 0.3 else None
        slug = vertical.lower().replace(" ", "-")
        url = None
        if ad_format == "pops":
            brand = rng.choice(BRANDS)
            url = f"https://{slug}.{brand}.example.com/lp{rng.randint(1, 40)}?click_id={{clickid}}"
        elif ad_format == "video" and rng.random() < 0.4:
            url = f"https://vast.adserver.example.com/tag/{rng.randint(10_000, 99_999)}.xml"
        allow_proxy = 1 if rng.random() < 0.85 else 0
        web_view = (
            "yes" if ad_format in spec.SETTING_FORMATS["web_view"] and rng.random() < 0.3 else "no"
        )
        vpaid = (
            "yes" if ad_format in spec.SETTING_FORMATS["vpaid"] and rng.random() < 0.25 else "no"
        )
        placement = (
            rng.choice(spec.VIDEO_PLACEMENTS)
            if ad_format in spec.SETTING_FORMATS["placement"]
            else "all"
        )
        limits = self._limits(
            ad_format, ran=status in ("Approved", "Stopped"), running=work_status == "Started"
        )

        self.rows.tables["campaigns"].append(
            (
                cid, user_id, timestamp(created), name, status, status_note, work_status, mode,
                ad_format, capping, note, vertical_id, url, allow_proxy, web_view, vpaid,
                placement, *limits,
            )
        )  # fmt: skip
        bids = self._targets(cid, ad_format, mode, codes, missing)
        self._lists(cid)
        self._bid_rules(cid, bids)
        self._cpa_rules(cid, ad_format)
        self._creatives(cid, ad_format, vertical, slug, status, work_status, created)

    def _countries(self) -> list[str]:
        rng = self.rng
        count = rng.choices(GEO_COUNTS, weights=GEO_COUNT_WEIGHTS)[0]
        codes: list[str] = []
        anywhere = rng.random() < 0.1
        while len(codes) < count:
            if anywhere:
                code = rng.choice(self.all_codes)
            else:
                code = rng.choices(self.geo_codes, cum_weights=self.geo_cum)[0]
            if code not in codes:
                codes.append(code)
        return codes

    @staticmethod
    def _geo_name(codes: list[str]) -> str:
        if not codes:
            return "WW"
        if len(codes) <= 3:
            return "+".join(codes)
        tiers = {tier(c) for c in codes}
        return f"Tier {tiers.pop()}" if len(tiers) == 1 else "Multi-geo"

    def _limits(self, ad_format: str, ran: bool, running: bool) -> tuple[Any, ...]:
        """Limit columns then progress columns, in :data:`CAMPAIGN_COLUMNS` order.

        Campaigns that ran have spent part of their limits; daily progress is kept only for
        running campaigns.
        """
        rng = self.rng
        ranges: dict[str, tuple[float, float]] = {
            "limit_sum": (100, 5000),
            "limit_show": (100_000, 10_000_000),
            "limit_click": (1_000, 200_000),
            "limit_day_sum": (10, 500),
            "limit_day_show": (10_000, 1_000_000),
            "limit_day_click": (100, 20_000),
        }
        order = ("limit_sum", "limit_show", "limit_click", "limit_sum_day", "limit_show_day",
                 "limit_click_day")  # fmt: skip
        values: list[Any] = []
        progress: list[Any] = []
        for param in order:
            lim = spec.LIMITS[param]
            lo, hi = ranges[lim.field]
            limit: Any = None
            done: Any = 0
            if ad_format in lim.formats and rng.random() < 0.3:
                daily = param.endswith("_day")
                share = rng.random() if ran and (running or not daily) else 0.0
                if lim.kind is float:
                    limit = round(rng.uniform(lo, hi), 2)
                    done = min(round(limit * share, 2), limit)
                else:
                    limit = rng.randrange(int(lo), int(hi)) // 100 * 100
                    done = int(limit * share)
            if lim.kind is float and limit is None:
                done = 0.0
            values.append(limit)
            progress.append(done)
        return (*values, *progress)

    # ----------------------------------------------------------------- targeting

    def _targets(
        self, cid: int, ad_format: str, mode: str, codes: list[str], missing: set[str]
    ) -> list[float]:
        rng = self.rng
        refs = self.refs
        out: list[tuple[Any, ...]] = []

        def put(kind: str, values: Any, list_type: str = "") -> None:
            out.extend((cid, kind, list_type, str(v)) for v in values)

        if "category" not in missing:
            group = sorted(refs.categories[spec.FORMATS[ad_format].category_group])
            put("category", rng.sample(group, rng.randint(1, 4)))
        if "quality" not in missing:
            put("quality", rng.sample(spec.QUALITIES, rng.randint(1, 4)))
        bids = []
        factor = MODE_FACTOR[(ad_format, mode)]
        for code in codes:
            bid = round(country_price(refs, ad_format, code) * factor * rng.uniform(1.0, 2.2), 4)
            bids.append(max(bid, 0.0001))
        self.rows.tables["countries"].extend(zip(repeat(cid), codes, bids, strict=False))

        if rng.random() < 0.35:
            put("os", rng.sample(self.os_ids[:6] if rng.random() < 0.8 else self.os_ids,
                                 rng.randint(1, 3)))  # fmt: skip
        if rng.random() < 0.25:
            put("browser", rng.sample(self.browser_ids, rng.randint(1, 4)))
        if rng.random() < 0.2:
            put("language", self._languages(codes))
        if rng.random() < 0.15:
            types = spec.CONNECTION_TYPES
            put("connection-type", types if rng.random() < 0.2 else [rng.choice(types)])
        if ad_format in spec.TARGET_KINDS["subs-age"].formats and rng.random() < 0.35:
            put("subs-age", rng.sample(sorted(refs.subs_age), rng.randint(1, 3)))
        if ad_format in spec.TARGET_KINDS["city"].formats and rng.random() < 0.08:
            pool = [i for c in codes for i in refs.cities_by_country.get(c, ())[:30]]
            if pool:
                put("city", rng.sample(pool, min(len(pool), rng.randint(1, 5))))
        if rng.random() < 0.08:
            pool = [i for c in codes for i in refs.regions_by_country.get(c, ())]
            if pool:
                put("region", rng.sample(pool, min(len(pool), rng.randint(1, 4))))
        if rng.random() < 0.08:
            pool = [i for c in codes for i in refs.isps_by_country.get(c, ())]
            if pool:
                put("isp-mobile", rng.sample(pool, min(len(pool), rng.randint(1, 3))))
        if rng.random() < 0.08:
            list_type = "black" if rng.random() < 0.75 else "white"
            put("cidr", dict.fromkeys(self._cidr() for _ in range(rng.randint(1, 5))), list_type)
        if ad_format in spec.TARGET_KINDS["domain"].formats and rng.random() < 0.12:
            list_type = "black" if rng.random() < 0.8 else "white"
            put("domain", dict.fromkeys(self._domain() for _ in range(rng.randint(1, 10))),
                list_type)  # fmt: skip
        self.rows.tables["targets"].extend(out)
        return bids

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

    # ----------------------------------------------------------------- lists and rules

    def _subids(self, count: int, length: int) -> list[str]:
        """``count`` distinct lowercase hex strings of ``length`` characters."""
        rng = self.rng
        text = rng.randbytes(count * length // 2 + 1).hex()
        items = list(dict.fromkeys(text[i : i + length] for i in range(0, count * length, length)))
        while len(items) < count:
            extra = rng.randbytes(length // 2 + 1).hex()[:length]
            if extra not in items:
                items.append(extra)
        return items

    def _list_items(self, entity: str, count: int) -> list[str]:
        if entity == "source":
            return self.rng.sample(self.sources, count)
        return self._subids(count, self.rng.choice((8, 10, 12, 16)))

    def _lists(self, cid: int) -> None:
        rng = self.rng
        rows = self.rows.tables["lists"]
        big = rng.choice(("source_black", "subid_black")) if rng.random() < 0.05 else None
        chances = {"source_black": 0.55, "source_white": 0.08, "subid_black": 0.4,
                   "subid_white": 0.06}  # fmt: skip
        for name, lk in spec.LISTS.items():
            if name == big:
                count = rng.randint(1000, 5000)
            elif rng.random() < chances[name]:
                top = 300 if lk.list_type == "black" else 50
                count = 1 + int(rng.random() ** 2 * top)
            else:
                continue
            items = self._list_items(lk.entity, count)
            rows.extend(zip(repeat(cid), repeat(name), items, strict=False))

    def _bid_rules(self, cid: int, bids: list[float]) -> None:
        rng = self.rng
        if not bids or rng.random() >= 0.3:
            return
        base = max(bids)
        used: set[str] = set()
        rows = self.rows.tables["bid_rules"]
        rule = 0
        for _ in range(rng.randint(1, 5)):
            bid = round(base * rng.uniform(0.5, 2.5), 4)
            size = rng.randint(1, 20)
            entity = "source" if rng.random() < 0.6 else "subid"
            items = [i for i in self._list_items(entity, size) if i not in used]
            if items:
                rule += 1
                used.update(items)
                rows.extend((cid, item, rule, bid) for item in items)

    def _cpa_rules(self, cid: int, ad_format: str) -> None:
        rng = self.rng
        if rng.random() >= 0.2:
            return
        types = [
            t for t in spec.CPA_TYPES if ad_format in spec.CPA_TYPE_FORMATS.get(t, {ad_format})
        ]
        leads = [
            t
            for t in spec.CPA_LEAD_TYPES
            if ad_format in spec.CPA_LEAD_TYPE_FORMATS.get(t, {ad_format})
        ]
        amounts = {"sum": (1, 50), "show": (1_000, 100_000), "click": (10, 1_000)}
        lead_amounts = {
            "click": (1, 100), "lead": (0, 10), "sum": (1, 200), "cpa": (0.5, 50),
            "roi": (-50, 200), "cpa_main": (1, 80), "lead_main": (0, 5), "starts": (100, 10_000),
        }  # fmt: skip
        rows = self.rows.tables["cpa_rules"]
        for _ in range(rng.randint(1, 3)):
            kind = rng.choice(types)
            lead = rng.choice(leads)
            lo, hi = amounts[kind]
            amount = float(rng.randint(lo, hi)) if kind != "sum" else round(rng.uniform(lo, hi), 2)
            llo, lhi = lead_amounts[lead]
            if lead in ("click", "lead", "lead_main", "starts"):
                lead_amount = float(rng.randint(int(llo), int(lhi)))
            else:
                lead_amount = round(rng.uniform(llo, lhi), 2)
            rows.append(
                (self.cpa_rule_id, cid, kind, rng.choice(spec.CPA_CONDS), amount, lead,
                 rng.choice(spec.CPA_CONDS), lead_amount)
            )  # fmt: skip
            self.cpa_rule_id += 1

    # ----------------------------------------------------------------- creatives

    def _creatives(
        self,
        cid: int,
        ad_format: str,
        vertical: str,
        slug: str,
        campaign_status: str,
        campaign_work: str,
        created: int,
    ) -> None:
        rng = self.rng
        files = self.files
        rows = self.rows.tables["creatives"]
        titles = TITLES.get(vertical, TITLES["Lead generation"])
        lo, hi = CTR_RANGE[ad_format]
        brand = rng.choice(BRANDS)
        for j in range(1, rng.choices((1, 2, 3, 4, 5), weights=(25, 30, 20, 15, 10))[0] + 1):
            crid = self.creative_id
            self.creative_id += 1
            t_created = created + rng.randrange(60, 3 * 86_400)
            status, note = self._creative_status(campaign_status)
            r = rng.random()
            if campaign_work == "Started" and status == "Approved":
                work = "Started" if r < 0.8 else "Paused" if r < 0.95 else "Archived"
            elif campaign_work == "Archived":
                work = "Archived" if r < 0.8 else "Paused"
            else:
                work = "Paused" if r < 0.75 else "Archived"
            title = rng.choice(titles)
            text = rng.choice(TEXTS) if ad_format != "pops" and rng.random() < 0.85 else None
            url = (
                f"https://{slug}.{brand}.example.com/lp{rng.randint(1, 40)}"
                f"?click_id={{clickid}}&crid={crid}"
            )
            icon = image = None
            if ad_format in spec.ICON_REQUIRED_FORMATS:
                icon = rng.choice(files.icons)
                if ad_format in spec.IMAGE_FORMATS and rng.random() < 0.65:
                    image = rng.choice(files.images)
            shown = status == "Approved" and work != "Paused" or rng.random() < 0.3
            ctr = round(rng.uniform(lo, hi), 3) if shown and hi > 0 else 0.0
            kind = convert = duration = video_url = youtube_url = None
            if ad_format == "video":
                duration = rng.choice(VIDEO_DURATIONS)
                if rng.random() < 0.7:
                    kind = "video"
                    convert = _pick(rng.random(), CONVERT_ODDS)
                    video_url = files.video
                    if convert == "success":
                        self._renditions(crid, t_created, duration)
                else:
                    kind = "youtube"
                    convert = "success"
                    youtube_url = "https://www.youtube.com/watch?v=" + "".join(
                        rng.choices(YOUTUBE_CHARS, k=11)
                    )
                    video_url = youtube_url
                    if rng.random() < 0.4:
                        url = None
            rows.append(
                (crid, cid, timestamp(t_created), f"{vertical} {j}", title, text, url, icon,
                 image, status, note, work, ctr, kind, convert, duration, video_url,
                 youtube_url)
            )  # fmt: skip

    def _creative_status(self, campaign_status: str) -> tuple[str, str | None]:
        r = self.rng.random()
        if campaign_status == "New":
            status = "New"
        elif campaign_status == "Declined":
            status = "Declined" if r < 0.6 else "New"
        else:
            status = "Approved" if r < 0.85 else "New" if r < 0.93 else "Declined"
        note = self.rng.choice(CREATIVE_DECLINE_NOTES) if status == "Declined" else None
        return status, note

    def _renditions(self, crid: int, t_created: int, duration: int) -> None:
        rng = self.rng
        count = 3 if rng.random() < 0.7 else 2
        event = timestamp(t_created + rng.randrange(30, 900))
        start = len(RENDITIONS) - count
        self.rows.tables["creative_files"].extend(
            (crid, seq, event, "video", "video/mp4", codec, "h264",
             int(rate * (0.85 + 0.3 * rng.random())), duration, w, h, self.files.renditions[i])
            for seq, (i, (w, h, rate, codec)) in enumerate(
                list(enumerate(RENDITIONS))[start:]
            )
        )  # fmt: skip


def _pick(r: float, odds: tuple[tuple[str, float], ...]) -> str:
    """The value whose cumulative probability first exceeds ``r``."""
    for value, upto in odds:
        if r < upto:
            return value
    return odds[-1][0]


def _cumulative(weights: Any) -> list[int]:
    total, out = 0, []
    for w in weights:
        total += w
        out.append(total)
    return out


# --------------------------------------------------------------------------- entry point


def seed_store(
    store: Store,
    *,
    campaigns: int = 50,
    seed: int = 0,
    accounts: int = 2,
    base_url_files: str = "/files",
) -> list[str]:
    """Fill an empty store with demo accounts; return their api keys by user id.

    The first account ("Demo account") gets ``campaigns`` campaigns, each other account
    ``max(3, campaigns // 10)``.
    """
    if accounts < 1:
        raise ValueError("at least one account is needed")
    refs = load_refs()
    rng = random.Random(seed)
    files = demo_files(base_url_files.rstrip("/"))
    seeder = _Seeder(refs, rng, files)
    counts = [campaigns] + [max(3, campaigns // 10)] * (accounts - 1)
    total = sum(counts)
    keys = [api_key(seed, i) for i in range(accounts)]
    account_rows = [
        (
            FIRST_USER_ID + i,
            keys[i],
            ACCOUNT_NAMES[i] if i < len(ACCOUNT_NAMES) else f"Account {i + 1}",
            "USD",
            round(rng.uniform(1_000, 20_000), 2),
        )
        for i in range(accounts)
    ]
    start, end = PERIOD
    step = (end - start) / max(total, 1)
    with store.transaction() as db:
        db.executemany("INSERT INTO files(id, mime, data) VALUES (?,?,?)", files.rows)
        db.executemany(
            "INSERT INTO accounts(user_id, api_key, name, currency, balance) VALUES (?,?,?,?,?)",
            account_rows,
        )
        index = 0
        for i, count in enumerate(counts):
            for number in range(1, count + 1):
                created = int(start + step * (index + rng.random() * 0.9))
                seeder.campaign(FIRST_USER_ID + i, number, created)
                index += 1
                if index % FLUSH_EVERY == 0:
                    seeder.rows.flush(db)
        seeder.rows.flush(db)
        db.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?)",
            [("seed", str(seed)), ("campaigns", str(campaigns)), ("accounts", str(accounts))],
        )
    return keys
