"""The demo account's statistics generator: deterministic per seed, about the account's
real sources, subIds and countries, with a truth table per item."""

from __future__ import annotations

import pytest

from toolkit.sandbox import Sandbox
from toolkit.sandbox.stats_gen import TRUTH_COLUMNS, account_items
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


def test_the_items_are_the_accounts_sources_subids_and_countries(demo, tmp_path):
    import toolkit

    client = toolkit.connect(api_key=demo.api_keys[0], base_url=demo.url, retries=0)
    account = toolkit.load_account(client, progress=False)
    real = set()
    for row in account.lists.itertuples():
        real.add((row.campaign_id, str(row.list).split("_")[0], row.item))
    for row in account.bid_rules.itertuples():
        real.add((row.campaign_id, "subid", row.item))
    for row in account.countries.itertuples():
        real.add((row.campaign_id, "country", row.country))
    truth = demo.stats_export(tmp_path / "s.csv", days=3, seed=0)
    assert [list(t) for t in truth[:1]][0] == list(TRUTH_COLUMNS)
    items = {(t["campaign_id"], t["level"], t["key"]) for t in truth}
    assert items == real and len(items) > 50
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
