"""The fixed tables the demo accounts are drawn from: ids, odds, names, texts, columns."""

from __future__ import annotations

import calendar

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
