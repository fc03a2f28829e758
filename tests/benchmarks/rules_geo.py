"""Per-GEO break-even measured: the statistical rule with each subId's payout the mix of its
countries' payouts (``toolkit.rules.geo_mix``) against the campaign's one payout, on
statistics of our own generator (``truth_gen.py``) given countries.

What it adds to a setting of ``truth_gen.generate`` (no delay), from one seed:

- per campaign three countries whose payouts spread around the campaign's (lognormal factors,
  sd ``--spread``), scaled so that the campaign's click-weighted payout stays the generator's
  (the payouts table's blank row, what an offer's average says);
- per subId its own mix of the three (Dirichlet, concentration ``--alpha``: small is a subId
  that sends most clicks to one country);
- each row split into a row per country: clicks multinomial by the mix, conversions drawn
  among those clicks, revenue at the country's payout, cost at the subId's cost per click;
- the truth: a subId's true revenue per click is its true rate times its mix's payout.

Each threshold of ``p_loss >= T and clicks >= 200`` (subIds, window 14 days) is replayed with
a look every day (a stopped subId gets no traffic from the next day on) through
``toolkit.rules.decide`` with the payouts table, on the frame with its ``country`` column
(the mix) and without it (the campaign's payout), and the two compared at equal cost saved
(``toolkit.rules.tradeoff.at_equal_cost_saved``).

    python tests/benchmarks/rules_geo.py --days 21 --settings high_thin low_thin
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from truth_gen import SETTINGS, generate  # noqa: E402

from toolkit.rules.decide import Stats, decide  # noqa: E402
from toolkit.rules.tradeoff import at_equal_cost_saved  # noqa: E402

COUNTRIES = ("US", "DE", "BR")
GRID = (0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.999)
ITEM = ["campaign_id", "key"]


def with_countries(gen, seed: int, spread: float, alpha: float):
    """The generator's statistics split by country, the truth at each subId's mix, and the
    payouts table (a row per campaign and country, and the campaign's blank row)."""
    rng = np.random.default_rng([seed, 7])
    truth = gen.truth.copy()
    mixes = rng.dirichlet([alpha] * len(COUNTRIES), len(truth))
    camp = truth["campaign_id"].to_numpy()
    table, per_item = [], np.zeros(len(truth))
    for cid in np.unique(camp):
        mine = camp == cid
        factor = np.exp(rng.normal(0.0, spread, len(COUNTRIES)))
        base = float(truth.loc[mine, "payout"].iloc[0])
        # the campaign's average mix keeps its payout: what the blank row says
        pays = base * factor / float(mixes[mine].mean(axis=0) @ factor)
        per_item[mine] = mixes[mine] @ pays
        table += [(int(cid), c, round(float(p), 2)) for c, p in zip(COUNTRIES, pays, strict=True)]
        table.append((int(cid), "", base))
    payouts = pd.DataFrame(table, columns=["campaign_id", "country", "payout"])
    truth["payout"], truth["true_epc"] = per_item, truth["true_cr"] * per_item
    at = truth.set_index(ITEM).index.get_indexer(pd.MultiIndex.from_frame(gen.final[ITEM]))
    rows = gen.final.reset_index(drop=True)
    clicks = np.stack(
        [rng.multinomial(n, mixes[i]) for n, i in zip(rows["clicks"], at, strict=True)]
    )
    conv = np.stack(
        [
            rng.multivariate_hypergeometric(k, int(c))
            for k, c in zip(clicks, rows["conversions"], strict=True)
        ]
    )
    cpc = (rows["cost"] / rows["clicks"]).to_numpy()
    pay = payouts[payouts["country"] != ""].pivot(index="campaign_id", columns="country")["payout"]
    pay = pay[list(COUNTRIES)].loc[rows["campaign_id"]].to_numpy()
    split = pd.DataFrame(
        {
            "date": np.repeat(rows["date"].to_numpy(), len(COUNTRIES)),
            "campaign_id": np.repeat(rows["campaign_id"].to_numpy(), len(COUNTRIES)),
            "level": "subid",
            "key": np.repeat(rows["key"].to_numpy(), len(COUNTRIES)),
            "country": np.tile(COUNTRIES, len(rows)),
            "impressions": 0,
            "clicks": clicks.ravel(),
            "cost": (clicks * cpc[:, None]).round(4).ravel(),
            "conversions": conv.ravel(),
            "revenue": (conv * pay).round(2).ravel(),
        }
    )
    split = split[split["clicks"] > 0].reset_index(drop=True)
    split["date"] = pd.to_datetime(split["date"], utc=True)
    return split, truth, payouts


def replay(stats: pd.DataFrame, payouts: pd.DataFrame, threshold: float, window: int):
    """Daily looks of one threshold: each subId's stop day (NaT: never)."""
    rule = [
        {
            "level": "subid",
            "window": window,
            "when": f"p_loss >= {threshold} and clicks >= 200",
            "action": "blacklist",
        }
    ]
    day = stats["date"].dt.normalize()
    days = sorted(day.unique())
    at = np.searchsorted(np.asarray(days), day.to_numpy())
    names = stats["campaign_id"].astype(str) + "/" + stats["key"].astype(str)
    stopped: dict[str, pd.Timestamp] = {}
    stop_at: dict[str, int] = {}
    for i, d in enumerate(days[1:], start=1):
        off = names.map(stop_at).to_numpy(dtype=float)  # NaN: still running
        keep = (at <= i) & ~(at > off)
        made = decide(rule, Stats(stats[keep]), payouts=payouts, as_of=d.date())
        for cid, key in zip(made["campaign_id"], made["key"], strict=True):
            stop_at.setdefault(f"{cid}/{key}", i)
            stopped.setdefault(f"{cid}/{key}", d)
    return stopped


def score(stats, truth, stopped) -> dict[str, float]:
    """Cost saved, revenue lost, net, stops and winners stopped."""
    names = stats["campaign_id"].astype(str) + "/" + stats["key"].astype(str)
    stop = names.map(stopped)
    after = stop.notna() & (stats["date"].dt.normalize() > stop)
    saved, lost = stats.loc[after, "cost"].sum(), stats.loc[after, "revenue"].sum()
    t = truth.assign(name=truth["campaign_id"].astype(str) + "/" + truth["key"].astype(str))
    sums = stats.groupby(names)[["clicks", "cost"]].sum()
    cpc = (sums["cost"] / sums["clicks"]).reindex(t["name"]).to_numpy()
    winner = t["true_epc"].to_numpy() >= cpc
    hit = t["name"].isin(stopped).to_numpy()
    return {
        "cost_saved": saved,
        "revenue_lost": lost,
        "net": saved - lost,
        "stopped": int(hit.sum()),
        "winners_stopped": int((hit & winner).sum()),
        "losers": int((~winner).sum()),
    }


def run(setting: str, seed: int, days: int, window: int, spread: float, alpha: float):
    gen = generate(setting, seed=seed, days=days)
    stats, truth, payouts = with_countries(gen, seed, spread, alpha)
    rows = []
    for family, frame in (("mix", stats), ("campaign payout", stats.drop(columns="country"))):
        for t in GRID:
            clock = time.perf_counter()
            stopped = replay(frame, payouts, t, window)
            rows.append(
                {"setting": setting, "family": family, "threshold": t, "roi_below": np.nan,
                 **score(stats, truth, stopped), "seconds": time.perf_counter() - clock}
            )  # fmt: skip
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", nargs="*", default=["high_thin", "high_fat", "low_thin"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--days", type=int, default=21)
    ap.add_argument("--window", type=int, default=14)
    ap.add_argument("--spread", type=float, default=0.7, help="sd of log country payouts")
    ap.add_argument("--alpha", type=float, default=0.5, help="Dirichlet concentration of mixes")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    tables = []
    for setting in args.settings:
        if setting not in SETTINGS:
            ap.error(f"unknown setting {setting!r}; one of {', '.join(SETTINGS)}")
        table = run(setting, args.seed, args.days, args.window, args.spread, args.alpha)
        tables.append(table)
        shown = ["family", "threshold", "cost_saved", "revenue_lost", "net", "stopped",
                 "winners_stopped"]  # fmt: skip
        print(f"\n{setting} ({SETTINGS[setting].name}), seed {args.seed}, {args.days} days")
        print(
            table[shown]
            .round({"cost_saved": 0, "revenue_lost": 0, "net": 0})
            .to_string(index=False)
        )
        equal = at_equal_cost_saved(table)
        equal["mix - campaign"] = equal["mix"] - equal["campaign payout"]
        print("net at equal cost saved:")
        print(equal.round(1).to_string(index=False))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        pd.concat(tables).to_csv(args.out / "geo.csv", index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
