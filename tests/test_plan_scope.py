"""A plan reads live state only for the campaigns the edit touches, and is the same plan as
one made on a read of every campaign (calls, conflicts, warnings), over real HTTP."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolkit
from toolkit.bulk import PlanRefused, make_plan
from toolkit.bulk.changed_rows import changed_rows
from toolkit.bulk.diff import ABSENT, as_map, same, three_way
from toolkit.bulk.plan_scope import narrow, only
from toolkit.bulk.workbook import export_workbook, read_workbook
from toolkit.errors import IncompleteReadError
from toolkit.sandbox import Sandbox

ITEM = "GET /api/campaign/item"
GUARDS = {"drop_share", "empty_whitelist", "bulk_archive"}
NOWHERE = 999_999  # a campaign id the service does not have
CAMPAIGNS = 16


@pytest.fixture()
def sb():
    with Sandbox(campaigns=CAMPAIGNS, seed=3, accounts=1) as sandbox:
        yield sandbox


@pytest.fixture()
def client(sb):
    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


@pytest.fixture()
def book(client, tmp_path):
    """The account exported and read back: desired tables equal to their base."""
    return read_workbook(export_workbook(client, tmp_path / "account.xlsx"))


class Requests:
    """The sandbox's request counters since the last :meth:`mark`."""

    def __init__(self, sb: Sandbox) -> None:
        self.sb = sb
        self.mark()

    def mark(self) -> None:
        self.before = self.sb.stats()

    def since(self, prefix: str = "") -> int:
        now = self.sb.stats()
        return sum(
            n - self.before.get(key, 0)
            for key, n in now.items()
            if " /api/" in key and key.startswith(prefix)
        )


def pick(df: pd.DataFrame, used: set[int], where=None, column: str = "campaign_id") -> int:
    """The first row (index label) of ``df`` on a campaign not yet used, meeting ``where``."""
    rows = df if where is None else df[where(df)]
    for label, cid in zip(rows.index, rows[column], strict=True):
        if int(cid) not in used:
            used.add(int(cid))
            return label
    raise AssertionError("the seeded account has no such row")


def add_row(df: pd.DataFrame, row: dict) -> pd.DataFrame:
    extra = pd.DataFrame([row], columns=df.columns).astype(df.dtypes.to_dict())
    return pd.concat([df, extra], ignore_index=True)


def edit_every_table(book, client) -> tuple[set[int], int, tuple[int, str]]:
    """An edit of every table of ``book`` (each on a campaign of its own), live changes
    since the export on an edited key (a conflict) and on an untouched campaign. Returns
    the campaigns touched, the untouched campaign changed live, and the conflicting key."""
    d = book.desired
    used: set[int] = set()
    # the scarce rows first: an untouched campaign with CPA rules and countries, changed
    # live below; then CPA rules and bid rules
    untouched = int(
        d["cpa_rules"].loc[
            pick(
                d["cpa_rules"], used, lambda t: t["campaign_id"].isin(d["countries"]["campaign_id"])
            ),
            "campaign_id",
        ]
    )
    rules = d["cpa_rules"]
    edited = pick(rules, used)
    rules.loc[edited, "amount"] = float(rules.loc[edited, "amount"]) + 1
    dropped = pick(rules, used)
    template = rules.loc[edited].to_dict()
    rules = rules.drop(index=dropped)
    bid_rules = d["bid_rules"]
    bumped = pick(bid_rules, used)
    bid_rules.loc[bumped, "bid"] = round(float(bid_rules.loc[bumped, "bid"]) + 0.01, 4)

    campaigns = d["campaigns"]
    renamed = pick(campaigns, used, column="id")
    campaigns.loc[renamed, "name"] = "renamed in the workbook"
    paused = pick(campaigns, used, lambda t: t["work_status"] == "Started", column="id")
    campaigns.loc[paused, "work_status"] = "Paused"
    fresh = int(campaigns.loc[pick(campaigns, used, column="id"), "id"])
    d["cpa_rules"] = add_row(rules, {**template, "id": None, "campaign_id": fresh})

    creatives = d["creatives"]
    archived = pick(creatives, used, lambda t: t["work_status"] == "Paused")
    creatives.loc[archived, "work_status"] = "Archived"
    creatives.loc[archived, "title"] = "a new title"  # reported in a warning, not planned

    countries = d["countries"]
    conflict = pick(countries, used)
    cid, code = int(countries.loc[conflict, "campaign_id"]), str(countries.loc[conflict, "country"])
    old = float(countries.loc[conflict, "bid"])
    countries.loc[conflict, "bid"] = round(old + 0.25, 4)
    raised = pick(countries, used)
    countries.loc[raised, "bid"] = round(float(countries.loc[raised, "bid"]) + 0.01, 4)
    client.targeting.drop(cid, "country", [code])  # live changed since export: a conflict
    client.targeting.add(cid, "country", {code: round(old + 0.5, 4)})

    targets = d["targets"]
    d["targets"] = targets.drop(index=pick(targets, used, lambda t: t["kind"] == "quality"))
    lists = d["lists"]
    subid = pick(lists, used, lambda t: t["list"] == "subid_black")
    lists = add_row(lists, {**lists.loc[subid].to_dict(), "item": "feedfacefeedface"})
    d["lists"] = add_row(lists, {"campaign_id": NOWHERE, "list": "subid_black", "item": "ab12"})

    # the untouched campaign, changed live in every way since the export
    live = toolkit.load_account(client, [untouched], progress=False)
    client.cpa_rules.drop(untouched, [int(live.cpa_rules["id"].iloc[0])])
    client.lists.add(untouched, "subid_black", ["0123456789abcdef"])
    row = live.countries.iloc[0]
    client.targeting.drop(untouched, "country", [str(row["country"])])
    client.targeting.add(untouched, "country", {str(row["country"]): 9.99})
    client.campaigns.archive(untouched)
    return (used - {untouched}) | {NOWHERE}, untouched, (cid, code)


def test_the_plan_on_the_touched_campaigns_is_the_plan_on_every_campaign(sb, client, book):
    touched, untouched, conflict = edit_every_table(book, client)
    count = Requests(sb)
    narrowed = make_plan(client, book, allow=GUARDS)
    item_reads = count.since(ITEM)
    count.mark()
    full = make_plan(client, book, allow=GUARDS, narrow_reads=False)
    assert (
        count.since(ITEM) == CAMPAIGNS + 1
    )  # every campaign of the workbook, and the one not live

    assert narrowed.calls == full.calls
    pd.testing.assert_frame_equal(narrowed.conflicts, full.conflicts)
    assert narrowed.warnings == full.warnings

    # live was read for the touched campaigns only, once each
    assert set(narrowed.scope) == touched
    assert item_reads == len(touched)
    # the plan holds an edit of every table, the conflict, and the warnings
    kinds = {(c.action, c.target) for c in narrowed.calls}
    assert {
        ("update", "campaign"),
        ("pause", "campaign"),
        ("edit", "cpa_rule"),
        ("drop", "cpa_rule"),
        ("add", "cpa_rule"),
        ("archive", "creative"),
        ("drop", "country"),
        ("add", "country"),
        ("drop", "quality"),
        ("add", "subid_black"),
        ("drop", "bid_rule"),
        ("add", "bid_rule"),
    } <= kinds
    assert list(narrowed.conflicts["key"]) == [conflict]
    assert any("title edit not applied" in w for w in narrowed.warnings)
    assert any(f"campaign {NOWHERE} is not in the live account" in w for w in narrowed.warnings)
    # the campaign changed live but not in the workbook: no call, no conflict, no warning
    assert all(untouched not in c.campaign_ids for c in narrowed.calls)
    assert all(untouched not in k for k in narrowed.conflicts["key"])
    assert not any(str(untouched) in w for w in narrowed.warnings)
    # the preview names the touched campaigns
    assert set(narrowed.names) == touched - {NOWHERE}
    paused = next(c.campaign_ids[0] for c in narrowed.calls if c.action == "pause")
    assert f'{paused} "{book.base["campaigns"].set_index("id").loc[paused, "name"]}"' in (
        narrowed.summary()
    )


def test_an_edit_that_changes_nothing_reads_nothing(sb, client, book):
    live = toolkit.load_account(client, progress=False)
    client.campaigns.archive(int(live.campaigns["id"].iloc[0]))  # live moves on; no matter
    count = Requests(sb)
    plan = make_plan(client, book)
    assert count.since() == 0
    assert len(plan) == 0 and plan.scope == () and plan.conflicts.empty and not plan.warnings
    assert "nothing to do" in plan.summary()


def test_the_guards_see_the_touched_campaigns_whole(sb, client, book):
    lists = book.desired["lists"]
    counts = lists.groupby("campaign_id").size()
    cid = int(counts[counts >= 10].index[0])
    book.desired["lists"] = lists[lists["campaign_id"] != cid]  # a whole list dropped
    count = Requests(sb)
    with pytest.raises(PlanRefused) as narrowed:
        make_plan(client, book)
    assert count.since(ITEM) == 1
    with pytest.raises(PlanRefused) as full:
        make_plan(client, book, narrow_reads=False)
    assert str(narrowed.value) == str(full.value) and str(cid) in str(narrowed.value)


def test_without_a_base_every_campaign_of_the_tables_is_read(sb, client, book):
    count = Requests(sb)
    plan = make_plan(client, {"countries": book.desired["countries"]})
    assert len(plan) == 0
    ids = {int(c) for c in book.desired["countries"]["campaign_id"]}
    assert set(plan.scope) == ids and count.since(ITEM) == len(ids)


def test_a_failed_read_of_a_touched_campaign_is_an_error(sb, client, book):
    countries = book.desired["countries"]
    countries.loc[countries.index[0], "bid"] = float(countries["bid"].iloc[0]) + 0.01
    cid = int(countries["campaign_id"].iloc[0])
    sb.faults.configure({"rules": [{"status": 503, "path": "/api/campaign/item"}]})
    try:
        with pytest.raises(IncompleteReadError) as caught:
            make_plan(client, book)
    finally:
        sb.faults.clear()
    assert [p.split(" (")[0] for p in caught.value.parts] == [f"campaign {cid}"]
    assert len(make_plan(client, book)) == 2


# --------------------------------------------------------------------------- the diff alone

KEY = ["campaign_id", "country"]
row = st.tuples(
    st.sampled_from([1, 2, 3]),
    st.sampled_from(["US", "FR", None]),
    st.sampled_from([0.1, 0.2, 0.2 + 1e-12, None]),
)


@st.composite
def three_tables(draw):  # noqa: ANN001, ANN201
    """Desired rows; base rows that are often the same rows reordered, a few edited; live."""
    desired = draw(st.lists(row, max_size=7))
    shuffled = list(draw(st.permutations(desired)))
    cut = draw(st.integers(0, len(shuffled)))
    base = draw(
        st.one_of(
            st.just(shuffled),
            st.lists(row, max_size=2).map(lambda extra: shuffled[cut:] + extra),
            st.lists(row, max_size=7),
        )
    )
    return desired, base, draw(st.lists(row, max_size=7))


def table(data, ints: str = "Int64") -> pd.DataFrame:
    df = pd.DataFrame(data, columns=[*KEY, "bid"])
    return df.astype({"campaign_id": ints, "country": "string", "bid": "float64"})


@settings(max_examples=400, deadline=None)
@given(states=three_tables(), int64=st.booleans())
def test_narrowed_three_way_is_the_full_three_way(states, int64):
    """Whatever the rows (repeated keys, missing values, floats within the tolerance,
    another integer dtype on one side), the three-way diff of the touched campaigns is the
    three-way diff of all."""
    desired, base, live = states
    d, b, l_ = table(desired), table(base, "int64" if int64 else "Int64"), table(live)
    full = three_way(as_map(d, KEY, "bid"), as_map(b, KEY, "bid"), as_map(l_, KEY, "bid"))
    n = narrow({"countries": d}, {"countries": b})
    assert n is not None
    cut = three_way(
        as_map(n.tables["countries"], KEY, "bid"),
        as_map(n.base.get("countries"), KEY, "bid"),
        as_map(only(l_, n.campaigns, "campaign_id"), KEY, "bid"),
    )
    assert cut == full
    d_map, b_map = as_map(d, KEY, "bid"), as_map(b, KEY, "bid")
    edited = {
        k[0] for k in {*d_map, *b_map} if not same(d_map.get(k, ABSENT), b_map.get(k, ABSENT))
    }
    assert edited <= n.campaigns


def test_changed_rows_marks_what_may_differ():
    d = table([(1, "US", 0.1), (2, "FR", 0.2), (3, "US", 0.3)])
    b = table([(2, "FR", 0.2), (1, "US", 0.1), (3, "US", 0.35)])  # reordered, one bid
    marks = changed_rows(d, b, KEY, ["bid"])
    assert [m.tolist() for m in marks] == [[False, False, True], [False, False, True]]
    twice = table([(1, "US", 0.1), (1, "US", 0.1)])
    assert [m.tolist() for m in changed_rows(twice, twice.iloc[:1], KEY, ["bid"])] == [
        [True, True],
        [True],
    ]
    as_text = d.astype({"campaign_id": "string"})  # "1" is not 1
    assert changed_rows(as_text, d, KEY, ["bid"])[0].all()
    assert not changed_rows(d, d.copy(), KEY, ["bid"])[0].any()
