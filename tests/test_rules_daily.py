"""What a rule reads of an item's days (toolkit.rules.daily): the cost per click's own
uncertainty in ``p_loss`` (the spread of its daily costs per click against hand-computed
figures, the averaged probability against direct integration, read from a frame and from an
export's path), and ``p_loss_daily``, its error spent over the item's days with clicks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.integrate import quad
from scipy.special import betainc
from scipy.stats import norm

from toolkit.errors import RulesError
from toolkit.rules import evidence
from toolkit.rules.daily import spread
from toolkit.rules.decide import DECIDED, Stats, decide, window_evidence
from toolkit.rules.evidence import BetaPrior, prob_loss, prob_rate_below, spent
from toolkit.rules.model import load_rules

DAYS = pd.to_datetime(["2026-01-30", "2026-01-31"], utc=True)


def _by_integration(cpc: float, se: float, payout: float, a: float, b: float) -> float:
    """E[I_{cost/payout}(a, b)] over cost ~ Normal(cpc, se^2), a cost below 0 as 0."""
    f = lambda x: norm.pdf(x, cpc, se) * betainc(a, b, min(max(x / payout, 0.0), 1.0))  # noqa: E731
    return quad(f, cpc - 12 * se, cpc + 12 * se, points=[0.0], limit=400)[0]


def test_spread_of_two_days_by_hand():
    stats = pd.DataFrame(
        {
            "date": [DAYS[0], DAYS[0], DAYS[1], DAYS[0], DAYS[0]],
            "campaign_id": 7,
            "level": "subid",
            "key": ["a", "a", "a", "b", "b"],
            # a: day 1 300 clicks for 3.00 (two rows), day 2 100 clicks for 3.00; b: one day
            "clicks": [150, 150, 100, 50, 50],
            "cost": [1.0, 2.0, 3.0, 0.5, 1.5],
        }
    )
    out = spread(stats).set_index("key")
    # a: cpc 6 / 400 = 0.015; spread (300 x 0.005^2 + 100 x 0.015^2) / 400 = 7.5e-5, over 2 days
    assert out.loc["a", "days"] == 2
    assert out.loc["a", "cpc_se"] == pytest.approx(math.sqrt(7.5e-5 / 2), rel=1e-9)
    # b: its two rows are one day: no spread to read
    assert out.loc["b", "days"] == 1
    assert out.loc["b", "cpc_se"] == 0.0


def _spread_by_groups(days: pd.DataFrame) -> pd.DataFrame:
    """The spread as plain pandas groups over the items' text (the oracle of the coded sums)."""
    frame = days[["date", "campaign_id", "level", "key", "clicks", "cost"]].copy()
    frame["date"] = pd.to_datetime(frame["date"], utc=True).dt.floor("D")
    for col in ("campaign_id", "level", "key"):
        frame[col] = frame[col].astype(str)
    per = frame.groupby(["date", "campaign_id", "level", "key"], as_index=False)[
        ["clicks", "cost"]
    ].sum()
    per = per[per["clicks"] > 0]
    per = per.assign(square=per["cost"] ** 2 / per["clicks"], days=1.0)
    out = per.groupby(["campaign_id", "level", "key"], as_index=False)[
        ["clicks", "cost", "square", "days"]
    ].sum()
    var = (out["square"] / out["clicks"] - (out["cost"] / out["clicks"]) ** 2).clip(lower=0)
    out["cpc_se"] = (var / out["days"]) ** 0.5
    return out[["campaign_id", "level", "key", "days", "cpc_se"]]


def test_the_coded_spread_is_the_spread_of_plain_groups():
    """Several rows a day, days without clicks, an item whose id is 7 in one row and "7" in
    another (one item, as their text is), rows without a key (left out, as groups leave
    them), hours within a day."""
    rng = np.random.default_rng(4)
    n = 3000
    stats = pd.DataFrame(
        {
            "date": pd.Timestamp("2026-01-01", tz="UTC")
            + pd.to_timedelta(rng.integers(0, 6 * 24, n), unit="h"),
            "campaign_id": pd.Series(
                [(7, "7", 8, 9)[i] for i in rng.integers(0, 4, n)], dtype=object
            ),
            "level": rng.choice(["subid", "source"], n),
            "key": pd.Series(rng.choice(["a", "b", "c", None], n), dtype=object),
            "clicks": rng.choice([0, 0, 5, 40, 300], n),
            "cost": rng.uniform(0.0, 9.0, n).round(2),
        }
    )
    got = spread(stats).sort_values(["campaign_id", "level", "key"], ignore_index=True)
    want = _spread_by_groups(stats).sort_values(["campaign_id", "level", "key"], ignore_index=True)
    assert got[["campaign_id", "level", "key"]].equals(want[["campaign_id", "level", "key"]])
    assert {type(v) for v in stats["campaign_id"]} == {int, str}
    assert set(got["campaign_id"]) == {"7", "8", "9"}  # 7 and "7": one item
    assert np.array_equal(got["days"].to_numpy(), want["days"].to_numpy())
    assert np.allclose(got["cpc_se"], want["cpc_se"], rtol=1e-9, atol=1e-12)
    assert (got["cpc_se"] > 0).sum() > len(got) // 2


@pytest.mark.parametrize(
    ("cpc", "se", "payout", "a", "b"),
    [
        (0.02, 0.005, 1.0, 1.0, 101.0),
        (0.03, 0.005, 20.0, 3.0, 2000.0),
        (0.1, 0.08, 8.0, 2.5, 900.0),  # a cost per click that may be 0: clipped
    ],
)
def test_prob_loss_against_direct_integration(cpc, se, payout, a, b):
    got = prob_loss(cpc, se, payout, 0, 0, BetaPrior(a, b))
    assert got == pytest.approx(_by_integration(cpc, se, payout, a, b), abs=3e-3)


def test_prob_loss_without_spread_is_the_rate_below_break_even():
    prior = BetaPrior(2.0, 198.0)
    assert prob_loss(0.05, 0.0, 4.0, 3, 900, prior) == pytest.approx(
        prob_rate_below(0.05 / 4.0, 3, 900, prior), rel=1e-12
    )
    assert math.isnan(prob_loss(float("nan"), 0.01, 4.0, 3, 900, prior))


def test_prob_loss_of_many_items_split_among_threads_is_the_same_to_the_last_digit(monkeypatch):
    rng = np.random.default_rng(3)
    n = 2_000
    cpc, se = rng.uniform(0.0, 0.1, n), rng.uniform(0.0, 0.03, n)
    se[::7] = 0.0  # no spread: no average
    cpc[::11] = np.nan
    payout, clicks = rng.uniform(0.5, 20.0, n), rng.integers(0, 3_000, n).astype(float)
    conversions = np.floor(clicks * rng.uniform(0.0, 0.05, n))
    prior = (rng.uniform(0.5, 5.0, n), rng.uniform(50.0, 5_000.0, n))
    args = (cpc, se, payout, conversions, clicks, prior)
    monkeypatch.setattr(evidence, "SPREAD_THREADS", 1)
    alone = prob_loss(*args)
    calls: list[int] = []
    real = evidence.betainc

    def counted(a, b, t):
        calls.append(np.size(t))
        return real(a, b, t)

    monkeypatch.setattr(evidence, "betainc", counted)
    monkeypatch.setattr(evidence, "SPREAD_THREADS", 3)
    monkeypatch.setattr(evidence, "SPREAD_SPLIT", 1_000)
    split = prob_loss(*args)
    assert len(calls) == 4  # at break-even, then the spread in three parts
    np.testing.assert_array_equal(split, alone)
    assert np.isnan(split[::11]).all() and not np.isnan(split[1::11]).any()


def _swinging() -> pd.DataFrame:
    """Three subIds converting at 2 % at 4 cents a click (break-even 2 % at a payout of 2);
    ``d``: no conversion in 100 clicks a day, at 2 cents a click one day and 6 the next."""
    return pd.DataFrame(
        {
            "date": DAYS.repeat(4),
            "campaign_id": 7,
            "level": "subid",
            "key": ["a", "b", "c", "d"] * 2,
            "impressions": 0,
            "clicks": [400, 400, 400, 100] * 2,
            "cost": [16.0, 16.0, 16.0, 2.0, 16.0, 16.0, 16.0, 6.0],
            "conversions": [8, 9, 8, 0] * 2,
            "revenue": [16.0, 18.0, 16.0, 0.0] * 2,
        }
    )


def test_a_rule_reads_the_cost_per_clicks_spread_from_a_frame_and_a_path(tmp_path):
    stats = _swinging()
    rule = {"level": "subid", "when": "clicks >= 150", "action": "blacklist", "window": 14}
    made = decide([rule], stats).set_index("key")
    # d: cpc 8 / 200 = 0.04, days' spread (100 x 0.02^2 x 2) / 200 = 4e-4 over 2 days;
    # its prior is the other three's (Beta(a, b) of the evidence, hand-checked below)
    se = math.sqrt(4e-4 / 2)
    # its prior (toolkit.rules.evidence): the mean of the other three, 50 / 2400; the spread
    # read over all four (2600 clicks, 50 conversions), widened by one standard error
    m, sm, denom = 50 / 2400, 50 / 2600, 2600 - (3 * 800**2 + 200**2) / 2600
    seen = ((16**2 + 18**2 + 16**2) / 800 - 50**2 / 2600 - sm * (1 - sm) * 3) / denom
    var = seen + sm * (1 - sm) * math.sqrt(2 * 3) / denom
    strength = m * (1 - m) / var - 1  # 514.4: between 1 / m and one item's worth (800)
    a, b = m * strength, (1 - m) * strength
    expected = _by_integration(0.04, se, 2.0, a, b + 200.0)  # 0 conversions in 200 clicks
    assert made.loc["d", "p_loss"] == pytest.approx(expected, abs=3e-3)
    # without the spread it would be the rate's alone, clearly higher
    assert prob_rate_below(0.02, 0, 200, (a, b)) > expected + 0.02
    path = tmp_path / "stats.csv"
    stats.assign(date=stats["date"].dt.strftime("%Y-%m-%d")).to_csv(path, index=False)
    again = decide([rule], path).set_index("key")
    assert again.loc["d", "p_loss"] == pytest.approx(made.loc["d", "p_loss"], rel=1e-9)


def test_spent_by_hand():
    assert spent(0.99, 14) == pytest.approx(1 - 0.01 * (1 + math.log(14)), rel=1e-12)  # 0.9636
    assert spent(0.99, 1) == pytest.approx(0.99, rel=1e-12)
    assert spent(0.5, 14) == 0.0  # never below 0
    assert math.isnan(spent(0.99, 0))


def _three_days() -> pd.DataFrame:
    """Three subIds converting at 2 % on three days at 4 cents a click (payout 2, break-even
    2 %); ``d``: 70 clicks a day without a conversion; ``e``: 600 clicks on the last day only,
    no conversion."""
    days = pd.to_datetime(["2026-01-29", "2026-01-30", "2026-01-31"], utc=True)
    keys = ["a", "b", "c", "d", "e"]
    clicks = [[400, 400, 400, 70, 0], [400, 400, 400, 70, 0], [400, 400, 400, 70, 600]]
    conv = [8, 9, 8, 0, 0]
    return pd.DataFrame(
        {
            "date": days.repeat(len(keys)),
            "campaign_id": 7,
            "level": "subid",
            "key": keys * 3,
            "impressions": 0,
            "clicks": [n for day in clicks for n in day],
            "cost": [0.04 * n for day in clicks for n in day],
            "conversions": conv * 3,
            "revenue": [2.0 * c for c in conv] * 3,
        }
    )


def test_p_loss_daily_spends_the_error_over_the_days_with_clicks():
    stats = _three_days()
    rule = load_rules([{"level": "subid", "when": "clicks > 0", "action": "blacklist"}])[0]
    ev = window_evidence(Stats(stats), rule, None, None).set_index("key")
    assert ev.loc["d", "days"] == 3 and ev.loc["e", "days"] == 1
    assert ev.loc["d", "cpc_se"] == pytest.approx(0.0, abs=1e-8)  # the same cpc every day
    for key, days in (("d", 3), ("e", 1)):
        p = ev.loc[key, "p_loss"]
        assert ev.loc[key, "p_loss_daily"] == pytest.approx(1 - (1 + math.log(days)) * (1 - p))
    # d: p_loss 0.975, spent over 3 days 0.948: a rule at 0.97 stops it on p_loss only
    p_d = ev.loc["d", "p_loss"]
    assert p_d > 0.97 > ev.loc["d", "p_loss_daily"], p_d
    once = {"level": "subid", "when": "p_loss >= 0.97", "action": "blacklist"}
    daily = {**once, "when": "p_loss_daily >= 0.97"}
    assert "d" in set(decide([once], stats)["key"])
    made = decide([daily], stats)
    assert "d" not in set(made["key"])
    assert set(made.loc[made["status"] == DECIDED, "key"]) <= {"e"}


def test_p_loss_daily_is_for_source_and_subid_rules():
    rule = {"level": "country", "when": "p_loss_daily >= 0.95", "action": "bid", "factor": 0.5}
    with pytest.raises(RulesError) as caught:
        load_rules([rule])
    assert [p.field for p in caught.value.problems] == ["when"]
    assert "use p_loss" in str(caught.value)


def _country_rows(seed: int = 3, countries: int = 3) -> pd.DataFrame:
    """Eight days of twelve subIds and two sources over three campaigns, each day split over
    up to ``countries`` rows (several rows of one item and day), some days with cost and no
    click, and one subId that stops after day 2."""
    rng = np.random.default_rng(seed)
    rows = []
    days = pd.date_range("2026-01-24", periods=8, freq="D", tz="UTC")
    items = [(c, "subid", f"s{c}{i}") for c in (7, 8, 9) for i in range(4)]
    items += [(7, "source", "src1"), (8, "source", "src2")]
    for d, day in enumerate(days):
        for cid, level, key in items:
            if key == "s92" and d > 1:
                continue
            for _country in range(int(rng.integers(1, countries + 1))):
                clicks = int(rng.integers(0, 60)) if rng.random() > 0.15 else 0
                cost = round(clicks * rng.uniform(0.01, 0.05) + (0.3 if clicks == 0 else 0), 4)
                conv = int(rng.binomial(clicks, 0.03))
                rows.append((day, cid, level, key, clicks * 20, clicks, cost, conv, conv * 2.0))
    cols = ["date", "campaign_id", "level", "key", "impressions", "clicks", "cost"]
    return pd.DataFrame(rows, columns=[*cols, "conversions", "revenue"])


def same_day_sums(mine: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Assert that the day sums ``mine`` (days, cpc_se per item) are :func:`spread` of the
    frame's ``rows``: the same items, days and spreads; both, merged (``_x``: spread's)."""
    theirs = spread(rows.assign(campaign_id=rows["campaign_id"].astype(str)))
    both = theirs.merge(mine, on=["campaign_id", "level", "key"], how="outer", indicator=True)
    assert (both["_merge"] == "both").all(), both[both["_merge"] != "both"]
    assert both["days_x"].tolist() == both["days_y"].tolist()
    assert np.allclose(both["cpc_se_x"], both["cpc_se_y"], rtol=1e-9, atol=1e-12)
    return both


@pytest.mark.parametrize(
    ("kind", "countries"), [("csv", 3), ("csv", 1), ("xlsx", 3)], ids=["csv", "one-a-day", "xlsx"]
)
def test_an_exports_days_summed_in_its_one_scan_are_the_spread_of_its_rows(
    tmp_path, kind, countries
):
    frame = _country_rows(countries=countries)
    if countries == 1:  # one row a day, but one: taken as a day of its own, it would not be
        frame = pd.concat([frame, frame.iloc[[-3]].assign(cost=9.0)], ignore_index=True)
    path = tmp_path / f"stats.{kind}"
    written = frame.assign(date=frame["date"].dt.strftime("%Y-%m-%d"))
    if kind == "csv":
        written.to_csv(path, index=False)
    else:
        written.to_excel(path, index=False)
    rules = load_rules(
        [
            {"level": "subid", "when": "clicks > 0", "action": "blacklist", "window": 3},
            {"level": "source", "when": "clicks > 0", "action": "blacklist", "window": 5},
            {"level": "subid", "when": "clicks > 0", "action": "blacklist", "window": None},
        ]
    )
    stats = Stats(path)
    stats.prefetch([3, 5, None], per_day=True)
    last = pd.Timestamp("2026-01-31", tz="UTC")
    for days in (3, 5):
        since = last - pd.Timedelta(days=days - 1)
        window = (since.date(), last.date())
        both = same_day_sums(stats._sums[("daily", *window)], frame[frame["date"] >= since])
        assert (both["cpc_se_x"] > 0).sum() > 10  # the spread is there to compare
        # the window's sums themselves carry nothing of it
        assert "days" not in stats._sums[window] and "square" not in stats._sums[window]
    # every row: not summed per day in that scan (no first day to count days from)
    assert ("daily", None, None) not in stats._sums
    # a rule decided on the path reads the same spread as on the frame, every row's too
    for rule in rules:
        on_path = decide([rule], path).set_index(["campaign_id", "key"])["p_loss"]
        on_frame = decide([rule], frame).set_index(["campaign_id", "key"])["p_loss"]
        pd.testing.assert_series_equal(on_path.sort_index(), on_frame.sort_index(), rtol=1e-9)


@pytest.mark.parametrize("twice", [None, 63, 64, 99])
def test_day_sums_over_more_than_64_days_see_a_day_given_twice(tmp_path, twice):
    """A 100-day window counts days in blocks of 64: a day given twice (two rows at different
    costs per click), on either side of a block's edge, is summed as one day."""
    days = pd.date_range("2025-10-24", periods=100, freq="D", tz="UTC")
    rng = np.random.default_rng(11)
    frame = pd.DataFrame(
        {
            "date": days,
            "campaign_id": 7,
            "level": "subid",
            "key": "a",
            "impressions": 0,
            "clicks": rng.integers(10, 50, len(days)),
            "cost": rng.uniform(0.5, 2.0, len(days)).round(4),
            "conversions": 0,
            "revenue": 0.0,
        }
    )
    frame = pd.concat([frame, frame.assign(key="b", cost=frame["cost"] * 1.3)], ignore_index=True)
    if twice is not None:  # in both subIds (one item with a day too few or too many and the
        # scan sums per day whatever the others)
        again = frame.iloc[[twice, twice + 100]].assign(cost=5.0)
        frame = pd.concat([frame, again], ignore_index=True)
    path = tmp_path / "stats.csv"
    frame.assign(date=frame["date"].dt.strftime("%Y-%m-%d")).to_csv(path, index=False)
    stats = Stats(path)
    stats.prefetch([100], per_day=True)
    window = (days[0].date(), days[-1].date())
    mine = stats._sums[("daily", *window)].set_index("key")
    theirs = spread(frame.assign(campaign_id=frame["campaign_id"].astype(str))).set_index("key")
    assert mine["days"].tolist() == theirs["days"].tolist() == [100.0, 100.0]
    assert np.allclose(mine["cpc_se"], theirs["cpc_se"], rtol=1e-9)


def test_day_sums_of_an_export_written_in_another_locale(tmp_path):
    """A German tracker's export: UTF-16, ``;``-separated, day-first dates, decimal commas
    with thousands points (``1.234,5``) and a totals row. Its day sums are those of the same
    rows read as plain numbers, and the totals row counts in none."""
    frame = _country_rows(countries=3)
    frame["cost"] = frame["cost"] * 1000  # costs past 1,000: written with a thousands point
    assert (frame["cost"] >= 1000).any()

    def german(x: float) -> str:
        return f"{x:,.4f}".replace(",", " ").replace(".", ",").replace(" ", ".")

    lines = ["date;campaign_id;level;key;impressions;clicks;cost;conversions;revenue"]
    for r in frame.itertuples(index=False):
        lines.append(
            f"{r.date:%d.%m.%Y};{r.campaign_id};{r.level};{r.key};{r.impressions};{r.clicks};"
            f"{german(r.cost)};{r.conversions};{german(r.revenue)}"
        )
    lines.append(f"Total;;;;0;{frame['clicks'].sum()};{german(frame['cost'].sum())};0;0")
    path = tmp_path / "export.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-16")
    stats = Stats(path, date_format="%d.%m.%Y", decimal=",")
    stats.prefetch([5], per_day=True)
    assert any("totals row" in note for note in stats.skipped), stats.skipped
    last = pd.Timestamp("2026-01-31", tz="UTC")
    since = last - pd.Timedelta(days=4)
    same_day_sums(stats._sums[("daily", since.date(), last.date())], frame[frame["date"] >= since])
