"""Rules as data and their decisions: every kind of bad rule reported at once with its rule
number, name and field; rules round-trip through their dicts; top-level defaults; and
decisions over small statistics built by hand (windows, scope, limits, NaN metrics, the
posterior probability of a loss computed by hand, a campaign's totals)."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import beta as beta_dist

from toolkit.errors import RulesError
from toolkit.rules import load_rules
from toolkit.rules.decide import OVER_LIMIT, decide
from toolkit.stats import stats_frame

LAST = dt.date(2026, 1, 10)
GOOD = {"name": "good", "level": "subid", "when": "cost > 5", "action": "blacklist"}


def rule(**fields):
    """A valid subId blacklist rule named ``bad`` with ``fields`` changed (None: left out)."""
    out = {"name": "bad", "level": "subid", "when": "cost > 5", "action": "blacklist"}
    out.update(fields)
    return {k: v for k, v in out.items() if v is not None}


def problems_of(source) -> list:
    with pytest.raises(RulesError) as caught:
        load_rules(source)
    return caught.value.problems


def frame(*rows) -> pd.DataFrame:
    """A stats frame from ``(day, campaign, level, key, clicks, cost, conversions, revenue)``
    rows; ``day`` counts back from ``LAST`` (0 is the last day)."""
    cols = ("date", "campaign_id", "level", "key", "impressions", "clicks", "cost")
    cols += ("conversions", "revenue")
    data = [
        (pd.Timestamp(LAST - dt.timedelta(days=d), tz="UTC"), c, lv, k, n * 10, n, cost, conv, rev)
        for d, c, lv, k, n, cost, conv, rev in rows
    ]
    return stats_frame({col: [r[i] for r in data] for i, col in enumerate(cols)})


def decided(decisions: pd.DataFrame, status: str = "decided") -> list[tuple[int, str]]:
    rows = decisions[decisions["status"] == status]
    return sorted(zip(rows["campaign_id"].astype(int), rows["key"].astype(str), strict=True))


# --------------------------------------------------------------------------- bad rules


BAD = [
    pytest.param(rule(colour="red"), "colour", "unknown field", id="unknown-field"),
    pytest.param(rule(level="zone"), "level", "'zone' is not one of", id="unknown-level"),
    pytest.param(rule(level=None), "level", "missing", id="missing-level"),
    pytest.param(rule(action="ban"), "action", "'ban' is not one of", id="unknown-action"),
    pytest.param(
        rule(action="pause"), "action", "pause applies to the levels campaign", id="pause-subid"
    ),
    pytest.param(rule(level="country"), "action", "not country", id="blacklist-country"),
    pytest.param(
        rule(level="campaign", action="bid", bid=0.1), "action", "not campaign", id="bid-campaign"
    ),
    pytest.param(rule(when="cost >> 5"), "when", "'cost >> 5' is not 'metric op number'", id="op"),
    pytest.param(rule(when="cost > lots"), "when", "is not 'metric op number'", id="value"),
    pytest.param(rule(when="cost > 5 or clicks > 9"), "when", "is not 'metric op", id="or"),
    pytest.param(rule(when="cpm > 5"), "when", "unknown metric 'cpm'", id="unknown-metric"),
    pytest.param(rule(when=None), "when", "missing", id="missing-when"),
    pytest.param(rule(scope="some"), "scope", "'all' or a mapping", id="scope-string"),
    pytest.param(rule(scope={"zones": [1]}), "scope", "unknown key 'zones'", id="scope-key"),
    pytest.param(
        rule(scope={"campaigns": ["12a"]}), "scope", "campaign '12a' is not a campaign id", id="id"
    ),
    pytest.param(
        rule(scope={"campaigns": [-5]}), "scope", "is not a campaign id", id="negative-id"
    ),
    pytest.param(rule(scope={"formats": ["banner"]}), "scope", "format 'banner'", id="format"),
    pytest.param(rule(action="bid"), "bid", "needs either bid", id="bid-without-price"),
    pytest.param(
        rule(action="bid", bid=0.1, factor=1.2), "bid", "needs either", id="bid-and-factor"
    ),
    pytest.param(
        rule(level="campaign", action="pause", bid=0.1), "bid", "pause takes no", id="pause-bid"
    ),
    pytest.param(
        rule(factor=0.8), "bid", "blacklist takes no bid or factor", id="blacklist-factor"
    ),
    pytest.param(rule(action="bid", bid=0), "bid", "0 is not a number above 0", id="bid-zero"),
    pytest.param(rule(window=0), "window", "0 is not a whole number above 0", id="window-zero"),
    pytest.param(rule(window=-3), "window", "is not a whole number above 0", id="window-negative"),
    pytest.param(rule(window=2.5), "window", "2.5 is not a whole number", id="window-fraction"),
    pytest.param(rule(window="7"), "window", "is not a whole number", id="window-text"),
    pytest.param(rule(limit=0), "limit", "0 is not a whole number above 0", id="limit-zero"),
    pytest.param(rule(limit=True), "limit", "True is not a whole number", id="limit-bool"),
    pytest.param(rule(payout=-1), "payout", "is not a number above 0", id="payout"),
    pytest.param(rule(rank="luck"), "rank", "'luck' is not one of", id="rank"),
    pytest.param(rule(level="campaign", action="pause", of="zone"), "of", "'zone'", id="of"),
]


@pytest.mark.parametrize("entry,field,message", BAD)
def test_each_kind_of_bad_rule_names_its_number_name_and_field(entry, field, message):
    problems = problems_of([GOOD, entry])
    assert {(p.rule, p.name) for p in problems} == {(2, "bad")}, problems
    p = next(p for p in problems if message in p.message)
    assert p.field == field
    assert f"rule 2 'bad' [{field}]" in str(p)


@pytest.mark.parametrize("when", ["cost > 1.2.3", "cost > ."])
def test_a_malformed_number_in_a_clause_is_a_problem_of_its_rule(when):
    problems = problems_of([GOOD, rule(when=when), rule(name="other", level="zone")])
    assert [(p.rule, p.name, p.field) for p in problems] == [
        (2, "bad", "when"),
        (3, "other", "level"),
    ]


def test_every_problem_of_every_rule_is_reported_at_once():
    rules = {
        "colour": "blue",
        "rules": [
            GOOD,
            rule(name="one", level="zone", when="cpm > 1", window=0),
            rule(name="two", action="bid", scope={"campaigns": ["x"]}, limit=-1),
            "not a rule",
            rule(name="three", action="pause", factor=2),
        ],
    }
    problems = problems_of(rules)
    found = sorted((p.rule or 0, p.name or "", p.field or "") for p in problems)
    assert found == [
        (0, "", "colour"),
        (2, "one", "level"),
        (2, "one", "when"),
        (2, "one", "window"),
        (3, "two", "bid"),
        (3, "two", "limit"),
        (3, "two", "scope"),
        (4, "", ""),
        (5, "three", "action"),
        (5, "three", "bid"),
    ]
    with pytest.raises(RulesError) as caught:
        load_rules(rules)
    assert str(caught.value).startswith("10 problems in the rules:")


def test_two_rules_with_one_name_are_an_error_naming_the_name():
    problems = problems_of([GOOD, rule(name="good", level="source")])
    assert [(p.name, p.field) for p in problems] == [("good", "name")]


def test_a_duplicate_name_names_the_rule_that_repeats_it():
    problems = problems_of([GOOD, rule(name="x"), rule(name="good", level="source")])
    assert [(p.rule, p.name, p.field) for p in problems] == [(3, "good", "name")]


def test_a_yaml_syntax_error_gives_its_line_and_the_file(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n  - name: a\n    level: subid\n     when: cost > 5\n")
    problems = problems_of(path)
    assert len(problems) == 1 and "line 4" in problems[0].message
    with pytest.raises(RulesError) as caught:
        load_rules(str(path))
    assert str(path) in str(caught.value) and caught.value.source == str(path)


def test_a_missing_file_is_a_rules_error_naming_it(tmp_path):
    path = tmp_path / "nowhere.yaml"
    with pytest.raises(RulesError) as caught:
        load_rules(path)
    assert caught.value.source == str(path)
    assert "cannot read" in str(caught.value) and "No such file" in str(caught.value)


# --------------------------------------------------------------------------- round trip


ROUND = [
    {
        "name": "a",
        "level": "subid",
        "when": "p_loss >= 0.95 and clicks >= 200",
        "action": "blacklist",
        "limit": 20,
        "window": 7,
        "rank": "p_loss",
    },
    {
        "name": "b",
        "level": "source",
        "when": ["cost > 2.5", "conversions = 0"],
        "action": "whitelist",
        "scope": {"campaigns": [1000001, "1000002"]},
    },
    {
        "name": "c",
        "level": "country",
        "when": "roi < -50",
        "action": "bid",
        "factor": 0.8,
        "scope": {"formats": ["push", "Inpage"]},
        "payout": 2.75,
    },
    {
        "name": "d",
        "level": "subid",
        "when": "cpa != 0.001 and epc <= 1e-05",
        "action": "bid",
        "bid": 0.05,
        "scope": {"campaigns": 7, "formats": "pops"},
    },
    {
        "name": "e",
        "level": "campaign",
        "of": "subid",
        "when": "roi < -60 and cost > 50",
        "action": "pause",
        "window": 3,
    },
    {"level": "source", "when": "p_zero <= 0.01", "action": "blacklist"},
]


def test_to_dict_round_trips_through_load_rules(tmp_path):
    rules = load_rules(ROUND)
    assert rules[5].name == "rule 6"
    again = load_rules([r.to_dict() for r in rules])
    assert again == rules
    assert [r.number for r in again] == [1, 2, 3, 4, 5, 6]
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"rules": [r.to_dict() for r in rules]}))
    assert load_rules(path) == rules
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([r.to_dict() for r in rules]))
    assert load_rules(path) == rules
    assert rules[1].campaigns == (1000001, 1000002) and rules[2].formats == ("push", "inpage")
    assert rules[3].campaigns == (7,) and rules[3].formats == ("pops",)
    assert rules[4].of == "subid" and rules[0].condition == "p_loss >= 0.95 and clicks >= 200"


def test_a_disabled_rule_round_trips_disabled():
    rules = load_rules([{**ROUND[0], "enabled": False}])
    assert load_rules([r.to_dict() for r in rules]) == rules


def test_top_level_defaults_apply_to_every_rule_and_a_rule_overrides_them():
    rules = load_rules(
        {
            "window": 7,
            "limit": 3,
            "scope": {"formats": ["push"]},
            "payout": 2.0,
            "rules": [
                {"name": "a", "level": "subid", "when": "cost > 1", "action": "blacklist"},
                {
                    "name": "b",
                    "level": "source",
                    "when": "cost > 1",
                    "action": "blacklist",
                    "window": 2,
                    "scope": "all",
                },
            ],
        }
    )
    assert [(r.window, r.limit, r.formats, r.payout) for r in rules] == [
        (7, 3, ("push",), 2.0),
        (2, 3, None, 2.0),
    ]


def test_a_default_that_does_not_fit_a_rule_is_that_rules_problem():
    problems = problems_of(
        {
            "factor": 0.9,
            "rules": [{"name": "a", "level": "subid", "when": "cost > 1", "action": "blacklist"}],
        }
    )
    assert [(p.rule, p.name, p.field) for p in problems] == [(1, "a", "bid")]


# --------------------------------------------------------------------------- decide


def test_the_window_counts_only_its_last_days():
    stats = frame(
        (9, 7, "subid", "0bd", 100, 50.0, 0, 0.0),  # the cost is on an old day only
        (0, 7, "subid", "0bd", 10, 0.5, 0, 0.0),
        (0, 7, "subid", "0ae", 100, 9.0, 0, 0.0),
        (2, 7, "subid", "0ae", 100, 9.0, 0, 0.0),
        (3, 7, "subid", "0ae", 100, 9.0, 0, 0.0),  # one day before a 3-day window
    )
    spend = {"name": "spend", "level": "subid", "when": "cost > 10", "action": "blacklist"}
    assert decided(decide([spend], stats)) == [(7, "0ae"), (7, "0bd")]
    d = decide([{**spend, "window": 3}], stats)
    assert decided(d) == [(7, "0ae")]
    row = d.iloc[0]
    assert (row["since"], row["until"]) == (dt.date(2026, 1, 8), LAST)
    assert (row["clicks"], row["cost"]) == (200.0, 18.0)
    # as_of moves the window back: the old day alone
    d = decide([{**spend, "window": 1}], stats, as_of="2026-01-01")
    assert decided(d) == [(7, "0bd")] and d["cost"].iloc[0] == 50.0


def test_a_window_needs_dates():
    stats = frame((0, 7, "subid", "a", 100, 50.0, 0, 0.0))
    stats["date"] = pd.NaT
    with pytest.raises(ValueError, match="window of 3 days"):
        decide([rule(window=3)], stats)


def test_scope_by_campaigns_and_by_formats():
    stats = frame(
        (0, 7, "subid", "a", 100, 9.0, 0, 0.0),
        (0, 8, "subid", "a", 100, 9.0, 0, 0.0),
        (0, 9, "subid", "a", 100, 9.0, 0, 0.0),
    )
    formats = {7: "push", 8: "pops", 9: "inpage"}
    assert decided(decide([rule()], stats)) == [(7, "a"), (8, "a"), (9, "a")]
    assert decided(decide([rule(scope={"campaigns": [8, 10]})], stats)) == [(8, "a")]
    by_format = rule(scope={"formats": ["inpage", "pops"]})
    assert decided(decide([by_format], stats, formats=formats)) == [(8, "a"), (9, "a")]
    both = rule(scope={"formats": ["inpage", "pops"], "campaigns": [7, 8]})
    assert decided(decide([both], stats, formats=formats)) == [(8, "a")]
    with pytest.raises(ValueError, match="scoped to formats"):
        decide([by_format], stats)


def test_the_limit_keeps_the_strongest_by_rank_per_campaign():
    stats = frame(
        *[
            (0, 7, "subid", k, n, cost, 0, 0.0)
            for k, n, cost in [
                ("a", 100, 6.0),
                ("b", 900, 9.0),
                ("c", 300, 8.0),
                ("d", 200, 7.0),
                ("e", 10, 1.0),
            ]
        ],
        (0, 8, "subid", "ef", 50, 6.0, 0, 0.0),
    )
    by_cost = decide([rule(limit=2)], stats)
    assert decided(by_cost) == [(7, "b"), (7, "c"), (8, "ef")]
    assert decided(by_cost, OVER_LIMIT) == [(7, "a"), (7, "d")]
    by_clicks = decide([rule(limit=2, rank="clicks")], stats)
    assert decided(by_clicks) == [(7, "b"), (7, "c"), (8, "ef")]
    by_cpc = decide([rule(limit=1, rank="cpc")], stats)  # a 0.06, b 0.01, c 0.027, d 0.035
    assert decided(by_cpc) == [(7, "a"), (8, "ef")]
    assert decided(by_cpc, OVER_LIMIT) == [(7, "b"), (7, "c"), (7, "d")]


def test_a_clause_on_a_nan_metric_never_holds():
    stats = frame(
        (0, 7, "subid", "00", 100, 90.0, 0, 0.0),  # no conversion: cpa is NaN
        (0, 7, "subid", "01", 100, 90.0, 1, 2.0),
    )
    for when in ("cpa > 1", "cpa < 1000", "cpa != 5", "cpa >= 0"):
        got = decide([rule(when=when)], stats)
        assert decided(got) == [(7, "01")], when
    assert decided(decide([rule(when="cost > 1 and cpa > 1")], stats)) == [(7, "01")]
    # and the why shows it as n/a where it is shown
    why = decide([rule(when="p_zero >= 0")], stats)
    assert decided(why) == [(7, "00")]


def _hand_prior(others, everyone):
    """The method-of-moments prior of evidence.py from ``(clicks, conversions)`` pairs: the
    mean from the ``others``, the spread from ``everyone`` (the item judged among them)."""
    n = np.array([o[0] for o in others], dtype=float)
    c = np.array([o[1] for o in others], dtype=float)
    m = c.sum() / n.sum()
    sn = np.array([o[0] for o in everyone], dtype=float)
    sc = np.array([o[1] for o in everyone], dtype=float)
    big_n, k = sn.sum(), len(sn)
    sm = sc.sum() / big_n
    denom = big_n - (sn**2).sum() / big_n
    v = ((sn * (sc / sn - sm) ** 2).sum() - sm * (1 - sm) * (k - 1)) / denom
    v = max(v, 0.0) + sm * (1 - sm) * np.sqrt(2 * (k - 1)) / denom  # one standard error wider
    typical = n.sum() / len(n)  # one of the others' clicks, on average
    strength = min(max(m * (1 - m) / v - 1, 1.0 / m), typical)  # a >= 1, one item's worth
    a = max(m * strength, 1.0)
    return a, strength - a


def test_p_loss_is_the_posterior_below_break_even_computed_by_hand():
    items = {  # key -> (clicks, cost, conversions, revenue)
        "a": (1000, 20.0, 40, 120.0),
        "b": (1000, 20.0, 5, 15.0),
        "c": (2000, 40.0, 30, 90.0),
        "d": (500, 10.0, 20, 60.0),
        "x": (800, 16.0, 2, 6.0),
    }
    stats = frame(*[(0, 7, "subid", k, *v) for k, v in items.items()])
    d = decide([rule(when="p_loss >= 0", confirm=1)], stats).set_index("key")
    payout = 3.0  # the campaign's revenue per conversion
    for key, (n, cost, conv, _rev) in items.items():
        everyone = [(v[0], v[2]) for v in items.values()]
        a, b = _hand_prior([(v[0], v[2]) for k, v in items.items() if k != key], everyone)
        t = cost / n / payout
        expected = beta_dist.cdf(t, a + conv, b + n - conv)
        assert d.loc[key, "break_even"] == pytest.approx(t)
        assert d.loc[key, "p_loss"] == pytest.approx(expected, rel=1e-9, abs=1e-12), key
        assert d.loc[key, "posterior_cr"] == pytest.approx((a + conv) / (a + b + n))
    assert 0.2 < d.loc["x", "p_loss"] < 1.0 and d.loc["a", "p_loss"] < 0.01
    # a payout given in the rule moves break-even, and the posterior with it
    d = decide([rule(when="p_loss >= 0", payout=1.5, confirm=1)], stats).set_index("key")
    everyone = [(v[0], v[2]) for v in items.values()]
    a, b = _hand_prior([(v[0], v[2]) for k, v in items.items() if k != "x"], everyone)
    assert d.loc["x", "p_loss"] == pytest.approx(beta_dist.cdf(0.02 / 1.5, a + 2, b + 798))


def test_p_loss_of_a_campaign_with_too_few_items_uses_the_weak_prior():
    stats = frame((0, 7, "subid", "a", 400, 8.0, 4, 12.0), (0, 7, "subid", "b", 200, 4.0, 0, 0.0))
    d = decide([rule(when="p_loss >= 0", confirm=1)], stats).set_index("key")
    mean = (4 + 0.5) / (400 + 1)  # the smoothed pooled rate of the other item, with a = 1
    expected = beta_dist.cdf(0.02 / 3.0, 1.0, 1.0 / mean - 1.0 + 200)
    assert d.loc["b", "p_loss"] == pytest.approx(expected, rel=1e-9)


def test_the_campaign_level_sums_the_source_rows():
    stats = frame(
        (0, 7, "source", "s1", 100, 30.0, 0, 0.0),
        (1, 7, "source", "s2", 200, 40.0, 1, 5.0),
        (0, 7, "subid", "x", 5000, 900.0, 0, 0.0),  # subId and country rows repeat the
        (0, 7, "country", "US", 300, 70.0, 1, 5.0),  # same traffic: never added in
        (0, 8, "source", "s1", 100, 10.0, 0, 0.0),
        (0, 8, "subid", "y", 100, 90.0, 0, 0.0),
    )
    stop = {"name": "stop", "level": "campaign", "when": "cost > 50", "action": "pause"}
    d = decide([stop], stats)
    assert decided(d) == [(7, "7")]
    row = d.iloc[0]
    assert (row["level"], row["clicks"], row["cost"], row["conversions"], row["revenue"]) == (
        "campaign",
        300.0,
        70.0,
        1.0,
        5.0,
    )
    d = decide([{**stop, "of": "subid"}], stats)
    assert decided(d) == [(7, "7"), (8, "8")]
    assert d.set_index("key").loc["8", "cost"] == 90.0
    assert decided(decide([{**stop, "window": 1}], stats)) == []  # s2's day is outside


def test_disabled_rules_decide_nothing_and_rules_keep_their_order():
    stats = frame((0, 7, "subid", "a", 100, 9.0, 0, 0.0), (0, 7, "source", "s", 100, 9.0, 0, 0.0))
    rules = [rule(name="z", level="source"), rule(name="y", enabled=False), rule(name="a")]
    d = decide(rules, stats)
    assert list(d["rule"]) == ["z", "a"]
    assert d["why"].iloc[0] == "cost 9.00, p_loss n/a, clicks 100, conversions 0"
