"""The demo account's statistics generator: deterministic per seed, about the account's
real sources, subIds and countries, with a truth table per item."""

from __future__ import annotations

import pytest

from toolkit.sandbox import Sandbox
from toolkit.sandbox.stats_gen import FRESH, TRUTH_COLUMNS, account_items
from toolkit.stats import read_stats


@pytest.fixture(scope="module")
def demo():
    with Sandbox(campaigns=6, seed=5) as sb:
        yield sb


def test_the_same_seed_gives_the_same_file(demo, tmp_path):
    truth = demo.stats_export(tmp_path / "a.csv", days=5, seed=1)
    again = demo.stats_export(tmp_path / "b.csv", days=5, seed=1)
    other = demo.stats_export(tmp_path / "c.csv", days=5, seed=2)
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
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
    truth = demo.stats_export(tmp_path / "s.csv", days=3, seed=0)
    assert [list(t) for t in truth[:1]][0] == list(TRUTH_COLUMNS)
    items = {(t["campaign_id"], t["level"], t["key"]) for t in truth}
    assert must <= items and len(items) > 50
    assert not any(listed.get(k) == "black" for k in items)  # no traffic from a blacklist
    fresh = items - must
    for cid in account.campaigns["id"]:
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


def test_the_conversions_follow_the_true_rate(demo, tmp_path):
    truth = demo.stats_export(tmp_path / "s.csv", days=30, seed=4)
    df = read_stats(tmp_path / "s.csv")
    sums = df.groupby(["campaign_id", "level", "key"], observed=True)[
        ["clicks", "conversions"]
    ].sum()
    true = {(t["campaign_id"], t["level"], t["key"]): t["true_cr"] for t in truth}
    clicks = sums["clicks"].sum()
    expected = sum(true[k] * sums.loc[k, "clicks"] for k in sums.index)
    assert abs(sums["conversions"].sum() - expected) < 4 * expected**0.5 + 1
    assert clicks > 0
