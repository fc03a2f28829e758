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

import hashlib
import random
import sqlite3
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from .. import spec
from .price import tier
from .refs import Refs, load_refs
from .seed_data import (
    ACCOUNT_NAMES,
    BRANDS,
    CAMPAIGN_NOTES,
    CAMPAIGN_STATUS_ODDS,
    CONVERT_ODDS,
    CPC_SHARE,
    CREATIVE_DECLINE_NOTES,
    CTR_RANGE,
    DECLINE_NOTES,
    FIRST_CAMPAIGN_ID,
    FIRST_CPA_RULE_ID,
    FIRST_CREATIVE_ID,
    FIRST_USER_ID,
    FLUSH_EVERY,
    FORMAT_WEIGHTS,
    GEO_COUNT_WEIGHTS,
    GEO_COUNTS,
    INSERTS,
    PERIOD,
    POPULAR_GEOS,
    RENDITIONS,
    SOURCE_POOL,
    STOP_NOTES,
    TEXTS,
    TITLES,
    VIDEO_DURATIONS,
    YOUTUBE_CHARS,
)
from .seed_files import DemoFiles, demo_files, timestamp
from .seed_targets import TargetSeeder
from .store import Store


def api_key(seed: int, index: int) -> str:
    """The api key of the ``index``-th account of a seed."""
    return hashlib.sha256(f"campaign-toolkit-sandbox:{seed}:{index}".encode()).hexdigest()[:32]


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


class _Seeder(TargetSeeder):
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
        status, status_note, work_status, missing = self._state()

        codes = [] if spec.bid_kind().name in missing else self._countries()
        geo = self._geo_name(codes)
        name = f"{geo} {vertical} {spec.FORMATS[ad_format].label} {mode} #{number}"
        capping = self._capping(ad_format)
        note = rng.choice(CAMPAIGN_NOTES) if rng.random() < 0.3 else None
        slug = vertical.lower().replace(" ", "-")
        url = self._campaign_url(ad_format, slug)
        options = self._options(ad_format)
        limits = self._limits(
            ad_format, ran=status in ("Approved", "Stopped"), running=work_status == "Started"
        )

        self.rows.tables["campaigns"].append(
            (
                cid, user_id, timestamp(created), name, status, status_note, work_status, mode,
                ad_format, capping, note, vertical_id, url, *options, *limits,
            )
        )  # fmt: skip
        bids = self._targets(cid, ad_format, mode, codes, missing)
        self._lists(cid)
        self._bid_rules(cid, bids)
        self._cpa_rules(cid, ad_format)
        self._creatives(cid, ad_format, vertical, slug, (status, work_status), created)

    def _state(self) -> tuple[str, str | None, str, set[str]]:
        """Status, status note, work status, and the targeting a campaign lacks to start."""
        rng = self.rng
        status = _pick(rng.random(), CAMPAIGN_STATUS_ODDS)
        complete = rng.random() < 0.93
        missing = set() if complete else set(rng.sample(spec.start_requires(), rng.randint(1, 3)))
        r = rng.random()
        if status in ("Declined", "Stopped") or not complete:
            work_status = "Paused" if r < 0.7 else "Archived"
        else:
            work_status = "Started" if r < 0.55 else "Paused" if r < 0.88 else "Archived"
        notes = {"Declined": DECLINE_NOTES, "Stopped": STOP_NOTES}.get(status)
        status_note = rng.choice(notes) if notes else None
        return status, status_note, work_status, missing

    def _capping(self, ad_format: str) -> int:
        rng = self.rng
        if rng.random() < 0.6:
            return spec.FORMATS[ad_format].default_frequency_capping
        return rng.choice((3, 5, 10, 20) if ad_format == "video" else (0, 1, 2, 3, 5, 10))

    def _campaign_url(self, ad_format: str, slug: str) -> str | None:
        rng = self.rng
        if ad_format == "pops":
            brand = rng.choice(BRANDS)
            return f"https://{slug}.{brand}.example.com/lp{rng.randint(1, 40)}?click_id={{clickid}}"
        if ad_format == "video" and rng.random() < 0.4:
            return f"https://vast.adserver.example.com/tag/{rng.randint(10_000, 99_999)}.xml"
        return None

    def _options(self, ad_format: str) -> tuple[int, str, str, str]:
        """``allow_proxy``, ``web_view``, ``vpaid`` and ``placement`` of a campaign."""
        rng = self.rng
        allowed = spec.SETTING_FORMATS
        allow_proxy = 1 if rng.random() < 0.85 else 0
        web_view = "yes" if ad_format in allowed["web_view"] and rng.random() < 0.3 else "no"
        vpaid = "yes" if ad_format in allowed["vpaid"] and rng.random() < 0.25 else "no"
        placement = (
            rng.choice(spec.VIDEO_PLACEMENTS) if ad_format in allowed["placement"] else "all"
        )
        return allow_proxy, web_view, vpaid, placement

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
        campaign_state: tuple[str, str],
        created: int,
    ) -> None:
        """Creatives of a campaign; ``campaign_state`` is its status and work status."""
        rng = self.rng
        rows = self.rows.tables["creatives"]
        titles = TITLES.get(vertical, TITLES["Lead generation"])
        lo, hi = CTR_RANGE[ad_format]
        brand = rng.choice(BRANDS)
        for j in range(1, rng.choices((1, 2, 3, 4, 5), weights=(25, 30, 20, 15, 10))[0] + 1):
            crid = self.creative_id
            self.creative_id += 1
            t_created = created + rng.randrange(60, 3 * 86_400)
            status, note = self._creative_status(campaign_state[0])
            work = self._creative_work(campaign_state[1], status)
            title = rng.choice(titles)
            text = rng.choice(TEXTS) if ad_format != "pops" and rng.random() < 0.85 else None
            url: str | None = (
                f"https://{slug}.{brand}.example.com/lp{rng.randint(1, 40)}"
                f"?click_id={{clickid}}&crid={crid}"
            )
            icon, image = self._pictures(ad_format)
            shown = status == "Approved" and work != "Paused" or rng.random() < 0.3
            ctr = round(rng.uniform(lo, hi), 3) if shown and hi > 0 else 0.0
            video: tuple[Any, ...] = (None, None, None, None, None)
            if ad_format == "video":
                video = self._video(crid, t_created)
                if video[0] == "youtube" and rng.random() < 0.4:
                    url = None
            rows.append(
                (crid, cid, timestamp(t_created), f"{vertical} {j}", title, text, url, icon,
                 image, status, note, work, ctr, *video)
            )  # fmt: skip

    def _creative_work(self, campaign_work: str, status: str) -> str:
        r = self.rng.random()
        if campaign_work == "Started" and status == "Approved":
            return "Started" if r < 0.8 else "Paused" if r < 0.95 else "Archived"
        if campaign_work == "Archived":
            return "Archived" if r < 0.8 else "Paused"
        return "Paused" if r < 0.75 else "Archived"

    def _pictures(self, ad_format: str) -> tuple[str | None, str | None]:
        """Icon and image of a creative, for the formats that show them."""
        rng, files = self.rng, self.files
        icon = image = None
        if ad_format in spec.ICON_REQUIRED_FORMATS:
            icon = rng.choice(files.icons)
            if ad_format in spec.IMAGE_FORMATS and rng.random() < 0.65:
                image = rng.choice(files.images)
        return icon, image

    def _video(self, crid: int, t_created: int) -> tuple[Any, ...]:
        """``type``, ``convert``, ``duration``, ``video_url`` and ``youtube_url``."""
        rng = self.rng
        duration = rng.choice(VIDEO_DURATIONS)
        if rng.random() < 0.7:
            convert = _pick(rng.random(), CONVERT_ODDS)
            if convert == "success":
                self._renditions(crid, t_created, duration)
            return "video", convert, duration, self.files.video, None
        youtube_url = "https://www.youtube.com/watch?v=" + "".join(rng.choices(YOUTUBE_CHARS, k=11))
        return "youtube", "success", duration, youtube_url, youtube_url

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
