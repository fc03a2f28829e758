"""match_cost_saved reads the steps of rule sets on an item's own numbers off one replay
without stops: the same stops, in the same order, the same cost saved to the last digit as a
backtest per step, and the same parameter found; other rule sets are backtested per step."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from tests.generated import truth_gen
from toolkit.rules import backtest, load_rules, match_cost_saved
from toolkit.rules.backtest import replayed_days
from toolkit.rules.matching import OWN_METRICS, Looks, own_stops

ITEM = ["campaign_id", "level", "key"]


@pytest.fixture(scope="module")
def gen() -> Any:
    """7 days of low-traffic subIds of two campaigns, with their truth (drawn by our own
    generator, not the sandbox's)."""
    drawn = truth_gen.generate("low_items", seed=3, days=7)
    two = sorted(drawn.stats["campaign_id"].unique())[:2]
    stats = drawn.stats[drawn.stats["campaign_id"].isin(two)].reset_index(drop=True)
    return stats, drawn.truth[drawn.truth["campaign_id"].isin(two)]


def two_levels(x: float, when: str = "cost > {x} and conversions = 0") -> dict[str, Any]:
    """A stop per level on ``when`` at ``x`` (the subIds' campaigns as sources too)."""
    return {
        "window": 7,
        "rules": [
            {"name": f"{level}s", "level": level, "when": when.format(x=x), "action": "blacklist"}
            for level in ("subid", "source")
        ],
    }


def with_sources(stats):
    """The statistics with each subId's rows again at the source level (source = its campaign
    and the subId's first letter), so two levels stop items from one replay."""
    import pandas as pd

    sources = stats.assign(level="source", key=stats["key"].str[:1])
    return pd.concat([stats, sources], ignore_index=True)


@pytest.mark.parametrize(
    ("when", "xs", "options"),
    [
        ("cost > {x} and conversions = 0", (0.5, 4.0), {}),
        ("cost > {x} and roi < -50", (2.0,), {"delay": [0.5, 0.8, 1.0]}),
        ("clicks >= {x} and cpa > 3", (30,), {"start": "2026-03-25"}),
    ],
)
def test_the_steps_read_off_one_replay_are_the_backtests(gen, when, xs, options):
    stats = with_sources(gen[0])
    read = {k: options.get(k) for k in ("start", "end")}
    daily, days, _, known = replayed_days(
        stats, read["start"], None, None, {}, **{k: v for k, v in options.items() if k == "delay"}
    )
    looks = Looks(daily, days, known=known)
    for x in xs:
        rules = load_rules(two_levels(x, when))
        assert own_stops(rules)
        full = backtest(rules, stats, **options)
        fast = looks.decisions(rules)
        assert len(full.decisions) > 0, (when, x)
        # the same first decisions, in the same order, on the same days
        cols = ["rule", *ITEM, "day", "action"]
        assert (
            fast[cols].astype(str).values.tolist()
            == full.decisions[cols].astype(str).values.tolist()
        )
        assert looks.cost_saved(rules) == full.summary["cost_saved"].iloc[0], (when, x)


def _bisected(make, target, stats, low, high, steps, **options):
    """The bisection with a backtest per step (what match_cost_saved answers)."""
    best = None
    for _ in range(steps):
        mid = (low + high) / 2.0
        saved = float(backtest(make(mid), stats, **options).summary["cost_saved"].iloc[0])
        if best is None or abs(saved - target) < best[0]:
            best = (abs(saved - target), mid)
        low, high = (mid, high) if saved > target else (low, mid)
    return best[1]


def test_match_cost_saved_finds_the_parameter_of_a_backtest_per_step(gen):
    stats = with_sources(gen[0])
    target = float(backtest(two_levels(3.0), stats).summary["cost_saved"].iloc[0]) * 0.9
    x, result = match_cost_saved(two_levels, target, stats, 0.0, 16.0, steps=4, truth=gen[1])
    assert x == _bisected(two_levels, target, stats, 0.0, 16.0, 4)
    # its backtest is the whole one of that parameter, judged against the truth
    whole = backtest(two_levels(x), stats, truth=gen[1])
    assert result.summary.equals(whole.summary)
    assert result.decisions.equals(whole.decisions)


def test_rule_sets_that_read_other_items_or_limit_are_not_read_off_the_replay():
    def rules(**extra: Any) -> list[Any]:
        return load_rules([{"level": "subid", "when": "cost > 1", "action": "blacklist", **extra}])

    assert own_stops(rules())
    assert not own_stops(rules(when="p_loss >= 0.9"))  # the prior reads the campaign's others
    assert not own_stops(rules(limit=3))  # a per-campaign limit counts the others
    assert not own_stops(rules(rank="p_loss"))
    assert not own_stops(rules(action="bid", bid=0.01))  # not a stop
    assert not own_stops(rules(level="campaign", action="pause"))
    two = load_rules(
        [{"level": "subid", "when": w, "action": "blacklist"} for w in ("cost > 1", "clicks > 5")]
    )
    assert not own_stops(two)  # two stops at one level: the second sees the first's cut


def test_an_unknown_option_is_refused_before_any_replay():
    with pytest.raises(TypeError, match="unknown option.s. tuth"):
        match_cost_saved(two_levels, 1.0, "no such file.csv", 0.0, 1.0, tuth=None)


@pytest.mark.parametrize("limit", [None, 2])  # read off the replay; backtested per step
def test_progress_shows_each_step_and_finds_the_same_parameter(gen, capsys, limit):
    stats = with_sources(gen[0])

    def make(x: float) -> dict[str, Any]:
        rules = two_levels(x)
        for rule in rules["rules"]:
            rule["limit"] = limit
        return rules

    target = float(backtest(make(3.0), stats).summary["cost_saved"].iloc[0]) * 0.9
    quiet = match_cost_saved(make, target, stats, 0.0, 16.0, steps=3)
    capsys.readouterr()
    x, result = match_cost_saved(make, target, stats, 0.0, 16.0, steps=3, progress=True)
    assert (x, result.summary.to_dict()) == (quiet[0], quiet[1].summary.to_dict())
    err = capsys.readouterr().err
    assert "matching the cost saved" in err and "3/3" in err, err
    # each step's parameter and what it saved, as the bar went: 8, then 4 or 12, ...
    assert "x = 8: " in err and f"(target {target:,.2f})" in err, err
    # one bar of steps, none per step, and the backtest of the parameter found where the
    # steps were read off the replay (else it is the last step's own, already made)
    assert err.count("0/3 [00:00<?, ?step/s]\r") == 1, err
    assert err.count("backtest rules:   0%|          | 0/7 [") == (1 if limit is None else 0), err


def test_decided_items_are_the_decided_rows_of_decide_rule_in_its_order(gen):
    from toolkit.rules.decide import DECIDED, Stats, decide_rule, decided_items, read_windows

    stats = Stats(with_sources(gen[0]))
    camp = int(gen[0]["campaign_id"].iloc[0])
    for extra in ({}, {"scope": {"campaigns": [camp]}}, {"rank": "clicks"}):
        rule = load_rules(
            [{"level": "subid", "when": "cost > 0.5", "action": "blacklist", "window": 3, **extra}]
        )[0]
        for day in sorted(gen[0]["date"].dt.date.unique())[2:]:
            read_windows([rule], stats, day)
            full = decide_rule(rule, stats, as_of=day)
            full = full[full["status"] == DECIDED]
            assert len(full) > 0
            for own in (False, True):  # the whole evidence, or the items' own numbers only
                lean = decided_items(rule, stats, day, own=own)
                got = lean[ITEM].astype(str).values.tolist()
                assert got == full[ITEM].astype(str).values.tolist(), own
    limited = {"level": "subid", "when": "cost > 1", "action": "blacklist", "limit": 2}
    with pytest.raises(ValueError, match="no limit"):
        decided_items(load_rules([limited])[0], stats, day)


@pytest.mark.parametrize("level", ["subid", "source", "country"])
def test_own_evidence_is_the_evidence_of_the_items_own_numbers_to_the_last_digit(gen, level):
    from toolkit.rules.decide import Stats, evidence_of, own_evidence_of

    stats = with_sources(gen[0])
    countries = stats[stats["level"] == "subid"].assign(level="country")
    countries["key"] = countries["key"].str[-1].map({"0": "US", "1": "de"}).fillna("Brazil")
    sums = Stats(pd.concat([stats, countries], ignore_index=True)).sums(None, None)
    act = {"action": "bid", "factor": 0.8} if level == "country" else {"action": "blacklist"}
    rule = load_rules([{"level": level, "when": "cost > 1", **act}])[0]
    full, own = evidence_of(sums, rule), own_evidence_of(sums, rule)
    assert len(own) > 3 and own[ITEM].equals(full[ITEM])
    for metric in ("clicks", "cost", "conversions", "revenue", *OWN_METRICS):
        assert own[metric].astype(float).equals(full[metric].astype(float)), metric
