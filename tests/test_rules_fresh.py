"""Conversion delay in the rules' evidence: the freshest days' clicks weigh the share of their
conversions known (``delay`` of a rule), from a frame and from an export's path alike."""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import pandas as pd
import pytest

from toolkit.errors import RulesError
from toolkit.rules.decide import decide
from toolkit.rules.delay import Delay, estimate_delay
from toolkit.rules.evidence import evidence_frame
from toolkit.rules.fresh import UNREAD
from toolkit.rules.model import load_rules
from toolkit.stats import stats_frame

LAST = dt.date(2026, 1, 31)
PROFILE = [0.5, 0.8, 1.0]  # half of a day's conversions known that day, 80 % the next
# key -> clicks of the days 2, 1 and 0 days before the last, conversions in all
ITEMS = {"a": ((400, 400, 400), 12), "b": ((300, 300, 300), 2), "c": ((500, 500, 500), 9),
         "d": ((200, 200, 200), 8), "e": ((600, 600, 600), 1)}  # fmt: skip


def stats() -> pd.DataFrame:
    rows = []
    for key, (clicks, conv) in ITEMS.items():
        for age, n in zip((2, 1, 0), clicks, strict=True):
            c = conv if age == 2 else 0  # the conversions on the oldest day
            rows.append((LAST - dt.timedelta(days=age), key, n, n * 0.01, c, c * 2.0))
    cols = ["date", "key", "clicks", "cost", "conversions", "revenue"]
    f = pd.DataFrame(rows, columns=cols)
    f["date"] = pd.to_datetime(f["date"]).dt.tz_localize("UTC")
    f["campaign_id"], f["level"], f["impressions"] = 7, "subid", 0
    return stats_frame({c: f[c].tolist() for c in f})


RULE = {"name": "r", "level": "subid", "when": "p_loss >= 0", "action": "blacklist"}


def test_the_freshest_days_weigh_the_share_known_in_the_posterior():
    frame = stats()
    d = decide([{**RULE, "delay": PROFILE}], frame).set_index("key")
    plain = decide([RULE], frame).set_index("key")
    # by hand: each item's effective clicks, and the evidence of those
    eff = {k: n[0] * 1.0 + n[1] * 0.8 + n[2] * 0.5 for k, (n, _) in ITEMS.items()}
    summed = pd.DataFrame(
        {"campaign_id": 7, "level": "subid", "key": list(ITEMS), "impressions": 0.0,
         "clicks": [float(sum(n)) for n, _ in ITEMS.values()],
         "cost": [sum(n) * 0.01 for n, _ in ITEMS.values()],
         "conversions": [float(c) for _, c in ITEMS.values()],
         "revenue": [c * 2.0 for _, c in ITEMS.values()], "eff_clicks": list(eff.values())}
    )  # fmt: skip
    hand = evidence_frame(summed, summed=True).set_index("key")
    for key in ITEMS:
        assert d.loc[key, "clicks"] == plain.loc[key, "clicks"]  # the real clicks shown
        assert d.loc[key, "p_loss"] == pytest.approx(hand.loc[key, "p_below_break_even"])
        assert d.loc[key, "posterior_cr"] == pytest.approx(hand.loc[key, "posterior_mean"])
    # fewer clicks known: the posterior rate is higher, the loss less sure
    assert (d["posterior_cr"] > plain["posterior_cr"]).all()
    assert (d["p_loss"] <= plain["p_loss"] + 1e-12).all()
    # on an earlier day the profile is counted from that day
    early = decide([{**RULE, "delay": PROFILE}], frame, as_of=LAST - dt.timedelta(days=1))
    first = early.set_index("key")
    assert first.loc["a", "clicks"] == 800 and np.isfinite(first["p_loss"]).all()


def test_an_export_path_is_discounted_as_its_frame(tmp_path):
    frame = stats()
    path = tmp_path / "stats.csv"
    frame.assign(date=frame["date"].dt.strftime("%Y-%m-%d")).to_csv(path, index=False)
    rules = [{**RULE, "delay": PROFILE}]
    from_path = decide(rules, str(path)).sort_values("key").reset_index(drop=True)
    from_frame = decide(rules, frame).sort_values("key").reset_index(drop=True)
    pd.testing.assert_frame_equal(from_path, from_frame, check_exact=False, rtol=1e-9)


def test_auto_is_the_profile_estimated_from_the_statistics_up_to_the_day(tmp_path):
    rng = np.random.default_rng(3)
    rows = []
    for age in range(25, -1, -1):  # 26 days; the last 3 with a part of their conversions
        share = (0.4, 0.7, 0.9)[age] if age < 3 else 1.0
        for key in "abcdef":
            n = 1000
            rows.append((LAST - dt.timedelta(days=age), key, n, rng.binomial(n, 0.02 * share)))
    f = pd.DataFrame(rows, columns=["date", "key", "clicks", "conversions"])
    f["date"] = pd.to_datetime(f["date"]).dt.tz_localize("UTC")
    f["campaign_id"], f["level"], f["impressions"] = 7, "subid", 0
    f["cost"], f["revenue"] = f["clicks"] * 0.01, f["conversions"] * 1.0
    frame = stats_frame({c: f[c].tolist() for c in f})
    profile = estimate_delay(frame, LAST)
    assert profile.days >= 1 and profile.known(0) < 0.8
    auto = decide([{**RULE, "delay": "auto"}], frame)
    given = decide([{**RULE, "delay": list(profile.shares)}], frame)
    pd.testing.assert_frame_equal(auto, given)
    assert not auto["p_loss"].equals(decide([RULE], frame)["p_loss"])


def test_auto_on_a_short_export_reads_its_older_half_as_complete(tmp_path):
    rng = np.random.default_rng(4)
    rows = []
    for age in range(9, -1, -1):  # 10 days, fewer than 14 + 1; the last 3 still arriving
        share = (0.4, 0.7, 0.9)[age] if age < 3 else 1.0
        for key in "abcdef":
            day = LAST - dt.timedelta(days=age)
            rows.append((day, key, 3000, rng.binomial(3000, 0.02 * share)))
    f = pd.DataFrame(rows, columns=["date", "key", "clicks", "conversions"])
    f["date"] = pd.to_datetime(f["date"]).dt.tz_localize("UTC")
    f["campaign_id"], f["level"], f["impressions"] = 7, "subid", 0
    f["cost"], f["revenue"] = f["clicks"] * 0.01, f["conversions"] * 1.0
    frame = stats_frame({c: f[c].tolist() for c in f})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "assuming no delay"
        auto = decide([{**RULE, "delay": "auto"}], frame)
    profile = estimate_delay(frame, LAST, max_age=4)  # half of the 9 days before the last
    assert profile.days >= 1 and profile.known(0) < 0.6
    given = decide([{**RULE, "delay": list(profile.shares)}], frame)
    pd.testing.assert_frame_equal(auto, given)


def test_auto_where_no_profile_can_be_read_waits_on_the_last_days():
    # 3 days: no day older than the shortest profile, so none can be read. The conversions
    # of the last two days have not come yet; read as complete, they would look like losses.
    frame = stats()
    with pytest.warns(UserWarning, match=r"assuming delay \{0: 0.00, 1: 0.00, 2: 0.00, 3: 1.00"):
        auto = decide([{**RULE, "delay": "auto"}], frame).set_index("key")
    plain = decide([RULE], frame).set_index("key")
    unread = decide([{**RULE, "delay": list(UNREAD.shares)}], frame).set_index("key")
    pd.testing.assert_frame_equal(auto, unread)
    # the last 3 days' clicks count for nothing: every item's rate is its conversions over
    # no clicks of its own, drawn to the campaign's; no item is a surer loss than before
    assert (auto["p_loss"] <= plain["p_loss"] + 1e-12).all()
    assert (auto["p_loss"] < plain["p_loss"] - 0.05).any()
    sure = "p_loss >= 0.95"
    assert decide([{**RULE, "when": sure}], frame)["status"].eq("decided").any()
    with pytest.warns(UserWarning, match="assuming delay"):
        waited = decide([{**RULE, "when": sure, "delay": "auto"}], frame)
    assert not waited["status"].eq("decided").any()


def test_a_replay_says_a_warning_of_its_look_days_once():
    import toolkit

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        toolkit.backtest([{**RULE, "delay": "auto"}], stats())
    said = [str(w.message) for w in caught if "estimate_delay" in str(w.message)]
    assert len(said) == 1, said
    assert said[0].startswith("on 3 of 3 look days (2026-01-29 to 2026-01-31): estimate_delay:")
    assert "no day is older than max_age=3 days on DAY" in said[0]


def test_a_bad_delay_is_a_problem_of_its_rule_and_field():
    with pytest.raises(RulesError) as caught:
        load_rules([{**RULE, "delay": {0: 0.5, 2: 0.9}}])
    (problem,) = caught.value.problems
    assert problem.field == "delay" and "ends at 1.0" in problem.message
    assert load_rules([{**RULE, "delay": "auto"}])[0].delay == "auto"
    assert load_rules([{**RULE, "delay": "0.5, 1"}])[0].delay == Delay((0.5, 1.0))
    assert load_rules([{**RULE, "delay": PROFILE}])[0].to_dict()["delay"] == {
        0: 0.5,
        1: 0.8,
        2: 1.0,
    }
