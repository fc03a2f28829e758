"""The client under a rate limit: the adaptive gate that every thread of a transport goes
through (``toolkit.client.adaptive``), over real HTTP against the sandbox's ``rate_limit``;
and the gate's rules on a clock of the test's own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

import toolkit
from toolkit.bulk import Journal, make_plan
from toolkit.client.adaptive import AdaptiveRate
from toolkit.frames.fetch import fetch_each
from toolkit.sandbox import Sandbox

TABLES = ("campaigns", "countries", "targets", "lists", "bid_rules", "cpa_rules", "creatives")
QUICK = {"backoff": 0.05, "max_backoff": 0.5}  # the same retry options for both ways


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=30, accounts=1, seed=11) as sandbox:
        yield sandbox


@pytest.fixture()
def limit(sb: Sandbox) -> Iterator[Any]:
    """``limit(R)`` sets a fresh rate limit of R and zeroes the counters; cleared after."""

    def set_limit(rate: int | None) -> None:
        sb.faults.configure({"rate_limit": rate})
        assert sb.app is not None
        with sb.app._stats_lock:
            sb.app.stats.clear()

    yield set_limit
    sb.faults.clear()


def connect(sb: Sandbox, **options: Any) -> toolkit.Client:
    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, **options)


def answered(sb: Sandbox, status: int) -> int:
    """``/api/`` requests the sandbox answered with ``status`` since the counters were zeroed."""
    return sum(n for key, n in sb.stats().items() if " /api/" in key and key.endswith(f" {status}"))


def tables(account: Any) -> dict[str, pd.DataFrame]:
    return {name: account.table(name) for name in TABLES}


# --------------------------------------------------------------------------- over HTTP


def test_load_account_under_a_rate_limit_is_whole_with_far_fewer_429s(sb, limit):
    with connect(sb) as client:
        reference = toolkit.load_account(client, progress=False)  # no limit yet
    assert len(reference.campaigns) == 30 and len(reference.failures) == 0

    limit(25)
    with connect(sb, **QUICK) as client:
        adaptive = toolkit.load_account(client, workers=8, progress=False)
        gate = client.transport.gate
    adaptive_429s = answered(sb, 429)

    limit(25)
    with connect(sb, adaptive=False, **QUICK) as client:
        assert client.transport.gate is None
        toolkit.load_account(client, workers=8, progress=False)  # may lose campaigns
    fixed_429s = answered(sb, 429)

    assert len(adaptive.failures) == 0, adaptive.failures
    for name, frame in tables(reference).items():
        pd.testing.assert_frame_equal(adaptive.table(name), frame, obj=name)
    assert gate is not None and gate.throttled_count == adaptive_429s  # it saw every one
    assert adaptive_429s > 0  # the limit was met, and the gate paced the rest
    assert adaptive_429s * 2 <= fixed_429s, (adaptive_429s, fixed_429s)


def test_apply_under_a_rate_limit_applies_every_outcome(sb, limit, tmp_path):
    with connect(sb, **QUICK) as client:
        base = {
            name: frame.copy()
            for name, frame in tables(toolkit.load_account(client, progress=False)).items()
        }
        countries = base["countries"].copy()
        rows = countries.groupby("campaign_id").head(1).index[:8]
        countries.loc[rows, "bid"] = (countries.loc[rows, "bid"] + 0.01).round(4)
        wanted = {
            (int(r.campaign_id), str(r.country)): float(r.bid)
            for r in countries.loc[rows].itertuples(index=False)
        }
        plan = make_plan(client, {**base, "countries": countries}, base=base)
        limit(10)
        result = plan.apply(client, progress=False, journal=Journal(tmp_path / "journal.db"))
        assert answered(sb, 429) > 0  # the calls and the read-back met the limit
        limit(None)
        outcomes = result.to_frame()
        live = toolkit.load_account(client, sorted({c for c, _ in wanted}), progress=False)
    assert len(outcomes) == 2 * len(wanted)  # a drop and an add per bid
    assert set(outcomes["outcome"]) == {"applied"}, outcomes
    got = {
        (int(r.campaign_id), str(r.country)): float(r.bid)
        for r in live.countries.itertuples(index=False)
        if (int(r.campaign_id), str(r.country)) in wanted
    }
    assert got == pytest.approx(wanted)


def test_a_429_storm_never_makes_the_client_give_up(sb, limit):
    """Eight threads on one client, far past the limit: Retry-After is honoured within the
    default retries, so every call succeeds."""
    limit(40)
    with connect(sb, retries=4, **QUICK) as client:
        ids = [int(c["id"]) for c in client.campaigns.list()]
        keys = (ids * 5)[:150]
        answers = fetch_each(lambda cid: client.bid_rules.list(cid), keys, workers=8)
    assert len(answers) == len(keys) and all(isinstance(a, list) for a in answers)
    assert answered(sb, 429) > 0


def test_switching_adaptation_off_keeps_each_thread_on_its_own(sb):
    with connect(sb, adaptive=False) as client:
        assert client.transport.gate is None
    with connect(sb) as client:
        assert isinstance(client.transport.gate, AdaptiveRate)
        assert client.transport.gate.rate is None  # free until a 429 comes


# --------------------------------------------------------------------------- the gate's rules


class Clock:
    """A clock that moves only when the gate sleeps or the test says so."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def gate_with(clock: Clock, answers: int = 0, **options: Any) -> AdaptiveRate:
    gate = AdaptiveRate(clock=clock, sleep=clock.sleep, **options)
    for _ in range(answers):  # answers spread over the last second
        clock.now += 1 / (answers + 1)
        gate.accepted()
    return gate


def test_free_until_the_first_429():
    clock = Clock()
    gate = gate_with(clock, answers=50)
    assert [gate.wait() for _ in range(100)] == [0.0] * 100
    assert clock.slept == [] and gate.rate is None


def test_a_burst_of_429s_cuts_the_rate_once():
    clock = Clock()
    gate = gate_with(clock, answers=100)
    sent = [gate.wait() for _ in range(8)]  # in flight together, on the free path
    for s in sent:
        gate.throttled(s, retry_after=0.5, fallback=1.0)
    assert (gate.throttled_count, gate.cuts) == (8, 1)
    assert gate.rate == pytest.approx(90.0)  # 0.9 x the 100 accepted in the last second


def test_every_thread_waits_out_retry_after_then_requests_are_spaced():
    clock = Clock()
    gate = gate_with(clock, answers=100)
    gate.throttled(gate.wait(), retry_after=0.5, fallback=1.0)
    start = clock.now
    times = [gate.wait() for _ in range(4)]
    assert times[0] == pytest.approx(start + 0.5)  # not before Retry-After ends
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert all(g == pytest.approx(1 / 90, rel=0.01) for g in gaps)


def test_a_429_after_the_cut_cuts_again_and_the_rate_grows_between():
    clock = Clock()
    gate = gate_with(clock, answers=100)
    gate.throttled(gate.wait(), retry_after=0.1, fallback=1.0)
    first = gate.rate
    sent = gate.wait()  # after the cut
    clock.now += 10
    grown = gate.rate
    assert grown == pytest.approx(first + 10 * 0.05 * first, rel=0.02)  # additive increase
    for _ in range(200):
        gate.accepted()
    gate.throttled(sent, retry_after=0.1, fallback=1.0)
    assert gate.cuts == 2
    assert gate.rate == pytest.approx(0.9 * grown, rel=0.01)


def test_a_lone_429_is_waited_out_but_nothing_is_paced():
    clock = Clock()
    gate = gate_with(clock, answers=1)
    gate.throttled(gate.wait(), retry_after=0.3, fallback=1.0)
    assert gate.rate == float("inf")
    start = clock.now
    assert gate.wait() == pytest.approx(start + 0.3)
    assert gate.wait() == pytest.approx(start + 0.3)  # no spacing after the wait


def test_pacing_stops_long_after_the_last_429():
    clock = Clock()
    gate = gate_with(clock, answers=100, settle_s=5)
    gate.throttled(gate.wait(), retry_after=0.1, fallback=1.0)
    clock.now += 6
    assert gate.wait() == 0.0 and gate.rate is None
    gate.throttled(0.0, retry_after=0.1, fallback=1.0)  # a new burst cuts again
    assert gate.cuts == 2


@pytest.mark.parametrize("bad", [{"decrease": 1.0}, {"decrease": 0}, {"increase": 0}])
def test_gate_settings_are_checked(bad):
    with pytest.raises(ValueError):
        AdaptiveRate(**bad)
