"""The demo account's statistics generator: deterministic per seed, about the account's
real sources, subIds and countries, with a truth table per item."""

from __future__ import annotations

import pandas as pd
import pytest

from toolkit.rules.payouts import read_payouts
from toolkit.sandbox import Sandbox
from toolkit.sandbox.stats_gen import (
    DELAY,
    END,
    FRESH,
    PAYOUT_COLUMNS,
    TRUTH_COLUMNS,
    account_items,
    generate_stats,
)
from toolkit.stats import read_stats


@pytest.fixture(scope="module")
def demo():
    with Sandbox(campaigns=6, seed=5) as sb:
        yield sb


def test_the_same_seed_gives_the_same_file(demo, tmp_path):
    truth = demo.stats_export(tmp_path / "a.csv", days=5, seed=1, payouts="a-payouts.csv")
    again = demo.stats_export(tmp_path / "b.csv", days=5, seed=1, payouts="b-payouts.csv")
    other = demo.stats_export(tmp_path / "c.csv", days=5, seed=2, payouts="c-payouts.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    payouts = [(tmp_path / f"{n}-payouts.csv").read_bytes() for n in "abc"]
    assert payouts[0] == payouts[1] != payouts[2]
    assert truth == again
    assert (tmp_path / "a.csv").read_bytes() != (tmp_path / "c.csv").read_bytes()
    assert truth != other


def test_the_items_are_those_the_accounts_campaigns_get_traffic_from(demo, tmp_path):
    import toolkit

    client = toolkit.connect(api_key=demo.api_keys[0], base_url=demo.url, retries=0)
    account = toolkit.load_account(client, progress=False)
    listed = {}
    for row in account.lists.itertuples():
        entity, colour = str(row.list).split("_")
        listed[(row.campaign_id, entity, row.item)] = colour
    whitelisting = {(c, e) for (c, e, _), colour in listed.items() if colour == "white"}
    must = {k for k, colour in listed.items() if colour == "white"}
    must |= {(r.campaign_id, "subid", r.item) for r in account.bid_rules.itertuples()}
    must = {k for k in must if listed.get(k) != "black"}
    must |= {(r.campaign_id, "country", r.country) for r in account.countries.itertuples()}
    dark = _no_traffic(client, account)  # the targeting excludes them: no clicks
    must -= {(c, "country", k) for c, k in dark}
    reached = {c for c, lv, _k in must if lv == "country"}
    must -= {k for k in must if k[0] not in reached and k[0] in {c for c, _ in dark}}
    truth = demo.stats_export(tmp_path / "s.csv", days=3, seed=0)
    assert [list(t) for t in truth[:1]][0] == list(TRUTH_COLUMNS)
    items = {(t["campaign_id"], t["level"], t["key"]) for t in truth}
    assert must <= items and len(items) > 50
    assert not any(listed.get(k) == "black" for k in items)  # no traffic from a blacklist
    fresh = items - must
    for cid in account.campaigns["id"]:
        if cid not in {c for c, _lv, _k in items}:
            continue  # every country of it excluded
        for entity in ("source", "subid"):
            mine = [k for k in fresh if k[:2] == (cid, entity)]
            # a campaign with a whitelist buys from it alone; the others from new items
            assert len(mine) == (0 if (cid, entity) in whitelisting else FRESH), (cid, entity)
    assert not any(k in listed for k in fresh)
    assert {t["level"] for t in truth} == {"source", "subid", "country"}
    df = read_stats(tmp_path / "s.csv")
    assert len(df) == 3 * len(truth)
    read = set(
        zip(df["campaign_id"].tolist(), df["level"].astype(str), df["key"].tolist(), strict=True)
    )
    assert read == items
    assert all(0 <= t["true_cr"] < 1 and t["payout"] > 0 for t in truth)
    assert not any(t["campaign_id"] for t in account_items(demo.store, user_id=-1))


def _no_traffic(client, account) -> set:
    """``(campaign_id, country)`` the service's price estimate gives no traffic at either
    price, the campaign's targeting asked over HTTP (as the bid report asks it)."""
    from toolkit.bulk.call_kinds import codes_of
    from toolkit.frames.price_queries import ask, build_query, campaign_targeting

    targeting, codes = campaign_targeting(account.targets), codes_of(account.refs)
    formats = dict(zip(account.campaigns["id"], account.campaigns["ad_format"], strict=True))
    out = set()
    for row in account.countries.itertuples():
        query = build_query(
            formats[row.campaign_id], targeting.get(row.campaign_id, {}), row.country, codes
        )
        answer = ask(client, query)
        assert answer.error is None, answer.error
        if answer.minimum_traffic == 0 and answer.recommended_traffic == 0:
            out.add((row.campaign_id, row.country))
    return out


@pytest.fixture(scope="module")
def account(demo):
    import toolkit

    client = toolkit.connect(api_key=demo.api_keys[0], base_url=demo.url, retries=0)
    return client, toolkit.load_account(client, progress=False)


def test_a_countrys_cost_is_its_clicks_at_the_campaigns_bid_for_it(demo, account, tmp_path):
    _client, acc = account
    demo.stats_export(tmp_path / "s.csv", days=28, seed=3, delay=None)
    df = pd.read_csv(tmp_path / "s.csv", dtype={"key": str}, keep_default_na=False)
    bids = acc.countries.rename(columns={"country": "key"})[["campaign_id", "key", "bid"]]
    modes = acc.campaigns.rename(columns={"id": "campaign_id"})[["campaign_id", "mode"]]
    rows = df[df["level"] == "country"].merge(bids, on=["campaign_id", "key"], how="left")
    rows = rows.merge(modes, on="campaign_id")
    assert rows["bid"].notna().all()
    cpc = rows["mode"] == "CPC"  # a bid per click; CPM: per 1,000 impressions
    bought = rows["clicks"].where(cpc, rows["impressions"] / 1000)
    assert (rows["cost"] - bought * rows["bid"]).abs().max() < 1e-6
    assert rows.loc[cpc, "clicks"].sum() > 1000 and rows.loc[~cpc, "clicks"].sum() > 1000
    # a click earns about its bid: the campaign's value over its cost from 1 to 2 (noise)
    per = df[df["level"] == "source"].groupby("campaign_id")[["cost", "revenue"]].sum()
    assert (per["revenue"] / per["cost"]).between(0.6, 2.6).all()
    country = rows.groupby(["campaign_id", "key"])[["cost", "revenue"]].sum()
    profitable = country["revenue"] > country["cost"]
    assert profitable.any() and not profitable.all()


def test_a_country_the_targeting_excludes_gets_no_clicks(demo, account, tmp_path):
    client, acc = account
    dark = _no_traffic(client, acc)
    truth = demo.stats_export(tmp_path / "s.csv", days=5, seed=3)
    df = pd.read_csv(tmp_path / "s.csv", dtype={"key": str}, keep_default_na=False)
    countries = df[df["level"] == "country"]
    got = set(zip(countries["campaign_id"], countries["key"], strict=True))
    assert dark and not dark & got
    assert not dark & {(t["campaign_id"], t["key"]) for t in truth if t["level"] == "country"}
    every = set(zip(acc.countries["campaign_id"], acc.countries["country"], strict=True))
    assert got == every - dark  # the others all buy
    # a campaign whose every country is excluded buys nothing at all
    none = {c for c, _ in every} - {c for c, _ in every - dark}
    assert not none & set(df["campaign_id"])


ITEM = ["campaign_id", "level", "key"]
SUMS = ["impressions", "clicks", "cost", "conversions", "revenue"]


def test_the_levels_of_a_campaign_add_up_to_the_same_clicks_and_money(demo, tmp_path):
    demo.stats_export(tmp_path / "s.csv", days=4, seed=6)
    df = pd.read_csv(tmp_path / "s.csv")  # the file's decimals as written
    per = df.groupby(["date", "campaign_id", "level"])[SUMS].sum().unstack("level")
    assert per["clicks"]["source"].sum() > 10_000
    for m in SUMS:
        sums = per[m]
        assert (sums["source"] - sums["subid"]).abs().max() < 1e-6, m
        both = sums.dropna()  # the campaigns with a country level
        assert len(both) >= 0.8 * len(sums)
        assert (both["source"] - both["country"]).abs().max() < 1e-6, m
    assert (per["conversions"]["source"] > 0).mean() > 0.9


def test_each_items_truth_is_the_rate_of_its_own_clicks(demo, tmp_path):
    truth = pd.DataFrame(demo.stats_export(tmp_path / "s.csv", days=30, seed=4, delay=None))
    assert list(truth.columns) == list(TRUTH_COLUMNS)
    df = pd.read_csv(tmp_path / "s.csv").groupby(ITEM)[["clicks", "conversions", "revenue"]]
    items = truth.merge(df.sum().reset_index(), on=ITEM)
    assert len(items) == len(truth)
    items["campaign_cr"] = items.groupby(["campaign_id", "level"])["true_cr"].transform("mean")
    items["band"] = pd.qcut(items["true_cr"] / items["campaign_cr"], 3, labels=False)
    for (level, _band), rows in items.groupby(["level", "band"]):
        # conversions as many as the true rates of the item's clicks say (the other levels'
        # factors averaged over them), in the losers', the middle and the winners' third
        expected = (rows["true_cr"] * rows["clicks"]).sum()
        assert abs(rows["conversions"].sum() - expected) < 4 * expected**0.5 + 1, (level, _band)
        earned = (rows["true_epc"] * rows["clicks"]).sum()
        sd = (1.2 * (rows["true_epc"] * rows["payout"] * rows["clicks"]).sum()) ** 0.5
        assert abs(rows["revenue"].sum() - earned) < 4 * sd + 1, (level, _band)
    assert (items["true_epc"] - items["true_cr"] * items["payout"]).abs().max() < 1e-12
    # a source's or subId's payout: what a conversion of its campaign earns on average
    countries = items[items["level"] == "country"].groupby("campaign_id")["payout"]
    several = countries.nunique()[countries.nunique() > 1].index
    sources = items[(items["level"] == "source") & items["campaign_id"].isin(several)]
    per = sources.groupby("campaign_id")[["conversions", "revenue", "payout"]].agg(
        {"conversions": "sum", "revenue": "sum", "payout": "first"}
    )
    spread = countries.max() - countries.min()
    off = (per["revenue"] / per["conversions"] - per["payout"]).abs()
    assert len(per) >= 3 and (off < 2 * spread[per.index] / per["conversions"] ** 0.5).all()
    assert items["true_cr"].between(0, 0.72).all() and (items["payout"] > 0).all()


def test_a_country_earns_its_own_payout_which_the_payouts_table_lists(demo, tmp_path):
    truth = pd.DataFrame(demo.stats_export(tmp_path / "s.csv", days=5, seed=7))
    payouts = pd.read_csv(tmp_path / "payouts.csv", dtype={"country": str}, keep_default_na=False)
    assert list(payouts.columns) == list(PAYOUT_COLUMNS)
    df = pd.read_csv(tmp_path / "s.csv", dtype={"key": str}, keep_default_na=False)
    countries = df[df["level"] == "country"].merge(
        payouts.rename(columns={"country": "key"}), on=["campaign_id", "key"], how="left"
    )
    assert countries["payout"].notna().all()
    earned = countries["conversions"] * countries["payout"]
    assert (countries["revenue"] - earned).abs().max() < 1e-6
    # a per-GEO offer: the countries of a campaign pay differently
    several = payouts[payouts["country"] != ""].groupby("campaign_id")["payout"]
    assert (several.nunique()[several.size() > 1] > 1).all() and (several.size() > 1).any()
    # every campaign has a row for every country (blank): the payout of its sources and
    # subIds, what one of its conversions earns on average (to the cent)
    blank = payouts[payouts["country"] == ""]
    assert sorted(blank["campaign_id"]) == sorted(set(df["campaign_id"]))
    assert set(payouts["campaign_id"]) == set(df["campaign_id"])
    listed = truth[truth["level"] != "country"].merge(blank, on="campaign_id", suffixes=("", "_t"))
    assert len(listed) == (truth["level"] != "country").sum()
    assert (listed["payout"] - listed["payout_t"]).abs().max() <= 0.005 + 1e-9
    mine = truth[truth["level"] == "country"].merge(
        payouts.rename(columns={"country": "key", "payout": "table"}), on=["campaign_id", "key"]
    )
    assert len(mine) == (truth["level"] == "country").sum()
    assert (mine["payout"] - mine["table"]).abs().max() < 1e-9
    read = read_payouts(tmp_path / "payouts.csv")  # what the rules read
    assert read["payout"].tolist() == payouts["payout"].tolist()
    (tmp_path / "more").mkdir()  # a relative path is beside the statistics, an absolute one its own
    demo.stats_export(tmp_path / "t.csv", days=2, seed=7, payouts="more/p.csv")
    demo.stats_export(tmp_path / "more" / "t.csv", days=2, seed=7, payouts=tmp_path / "q.csv")
    assert (tmp_path / "more" / "p.csv").read_bytes() == (tmp_path / "payouts.csv").read_bytes()
    assert (tmp_path / "q.csv").read_bytes() == (tmp_path / "payouts.csv").read_bytes()
    (tmp_path / "payouts.csv").unlink()
    demo.stats_export(tmp_path / "u.csv", days=2, seed=7, payouts=None)
    assert not (tmp_path / "payouts.csv").exists()


def test_the_file_is_the_export_of_its_last_day_the_freshest_days_short(demo, tmp_path):
    demo.stats_export(tmp_path / "late.csv", days=12, seed=8)  # the default delay
    demo.stats_export(tmp_path / "final.csv", days=12, seed=8, delay=None)
    demo.stats_export(tmp_path / "short.csv", days=12, seed=8, delay=[0.5, 1.0])
    late, final, short = (pd.read_csv(tmp_path / f"{n}.csv") for n in ("late", "final", "short"))
    for m in ["date", "campaign_id", "level", "key", "impressions", "clicks", "cost"]:
        assert late[m].tolist() == final[m].tolist() == short[m].tolist(), m
    assert (late["conversions"] <= final["conversions"]).all()
    assert (late["revenue"] <= final["revenue"] + 1e-9).all()
    age = (pd.Timestamp(END) - pd.to_datetime(late["date"])).dt.days
    known = late.groupby(age)["conversions"].sum() / final.groupby(age)["conversions"].sum()
    for a, share in DELAY.items():  # the share known at each age, as the profile says
        n = final.loc[age == a, "conversions"].sum()
        assert abs(known[a] - share) <= 4 * (share * (1 - share) / n) ** 0.5 + 1e-9, (a, known)
    assert (known[age.max()] == 1.0) and known[0] < 0.6
    older = age >= 1  # [0.5, 1.0]: only the last day is short
    assert short.loc[older, "conversions"].tolist() == final.loc[older, "conversions"].tolist()
    last = short.loc[~older, "conversions"].sum() / final.loc[~older, "conversions"].sum()
    assert 0.45 < last < 0.55


@pytest.mark.parametrize(
    "delay, words",
    [
        ({1: 0.5, 3: 1.0}, "no share at age 0"),
        ([0.6, 0.5, 1.0], "must not fall"),
        ([0.6, 0.9], "end at 1.0"),
        ("soon", "'soon' is not a delay profile"),
        ([0.5, "x", 1.0], "'x'"),
    ],
)
def test_a_delay_that_is_no_profile_is_refused_saying_which(demo, tmp_path, delay, words):
    with pytest.raises(ValueError, match="delay") as caught:
        demo.stats_export(tmp_path / "s.csv", days=2, delay=delay)
    assert words in str(caught.value)
    assert not (tmp_path / "s.csv").exists()


def test_a_delay_given_as_an_object_with_shares_is_read_like_its_shares(demo, tmp_path):
    from toolkit.rules.delay import Delay

    demo.stats_export(tmp_path / "a.csv", days=3, seed=1, delay=Delay.parse({0: 0.5, 2: 1.0}))
    demo.stats_export(tmp_path / "b.csv", days=3, seed=1, delay=[0.5, 0.75, 1.0])
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    demo.stats_export(tmp_path / "c.csv", days=3, seed=1, delay="none")
    demo.stats_export(tmp_path / "d.csv", days=3, seed=1, delay=None)
    assert (tmp_path / "c.csv").read_bytes() == (tmp_path / "d.csv").read_bytes()
    assert (tmp_path / "a.csv").read_bytes() != (tmp_path / "d.csv").read_bytes()


def test_items_given_as_rows_share_their_campaigns_click_stream(tmp_path):
    items = [
        {"campaign_id": 3, "level": "source", "key": "s1"},
        {"campaign_id": 3, "level": "source", "key": "s2"},
        {"campaign_id": 3, "level": "subid", "key": "u1"},
        {"campaign_id": 4, "level": "country", "key": "US"},
    ]
    truth = generate_stats(items, tmp_path / "s.csv", days=3, seed=2)
    assert [(t["campaign_id"], t["level"], t["key"]) for t in truth] == [
        (r["campaign_id"], r["level"], r["key"]) for r in items
    ]
    df = pd.read_csv(tmp_path / "s.csv")
    day = df[df["campaign_id"] == 3].groupby(["date", "level"])["clicks"].sum().unstack()
    assert (day["source"] == day["subid"]).all()  # u1 gets every click of s1 and s2
    with pytest.raises(ValueError, match="is listed twice"):
        generate_stats([*items, items[0]], tmp_path / "t.csv", days=1)
    with pytest.raises(ValueError, match="the level is not one of"):
        generate_stats([{"campaign_id": 3, "level": "zone", "key": "z"}], tmp_path / "t.csv")
