"""The guards at their edges: a bid from an old bid of 0, two reasons on one bid, the whitelist
emptied when it held one item (or none), archiving exactly the allowed number of campaigns,
and the refusal lines as the user reads them."""

from __future__ import annotations

import pandas as pd
import pytest

from toolkit.bulk.calls import CAMPAIGN, Call
from toolkit.bulk.diff import valued
from toolkit.bulk.guards import BidChange, bid_jump, bid_jumps, check_guards, tripped
from toolkit.errors import PlanRefused, ValidationError

WHITE = "subid_white"


def test_an_old_bid_of_zero_is_not_a_jump_and_only_the_minimum_applies() -> None:
    assert bid_jump(0.0, 0.5) is None
    assert bid_jump(0.0, 0.05, minimum=0.3) == "below the minimum 0.30"


def test_a_bid_cut_too_far_and_below_the_minimum_gives_both_reasons() -> None:
    assert bid_jump(1.0, 0.2, minimum=0.3) == "x0.2, cut by more than 67%; below the minimum 0.30"


def test_a_refused_bid_of_a_campaign_without_a_name_names_only_its_id() -> None:
    lines = bid_jumps([BidChange(7, "country", "US", 0.1, 1.0)])
    assert lines == ["campaign 7 country US: 0.10 -> 1.00 (x10.0, raised more than 3x)"]


def test_dropping_the_only_item_of_a_whitelist_empties_it() -> None:
    dropped = {(7, WHITE): {"a"}}
    assert tripped(dropped, {}, {(7, WHITE): 1}) == {(7, WHITE): "empty_whitelist"}


def test_a_whitelist_without_live_items_is_not_emptied_by_a_drop() -> None:
    assert tripped({(7, WHITE): {"a"}}, {}, {}) == {}


def _archive(*cids: int) -> Call:
    return Call(step="archive", action="archive", target=CAMPAIGN, campaign_ids=cids)


def test_archiving_exactly_the_allowed_number_of_campaigns_passes() -> None:
    check_guards([_archive(1, 2)], {}, set(), max_archive=2)
    with pytest.raises(PlanRefused) as refused:
        check_guards([_archive(1, 2, 3)], {}, set(), max_archive=2)
    assert refused.value.guard == "bulk_archive"


def test_a_refused_bulk_archive_lists_twenty_campaigns_and_counts_the_rest() -> None:
    with pytest.raises(PlanRefused) as refused:
        check_guards([_archive(*range(1, 22))], {}, set())
    shown = ", ".join(map(str, range(1, 21)))
    assert refused.value.details == [f"archives 21 campaigns (more than 1): {shown} and 1 more"]
    with pytest.raises(PlanRefused) as twenty:
        check_guards([_archive(*range(1, 21))], {}, set())
    assert twenty.value.details[0].endswith(f": {shown}")


def test_valued_passes_a_table_without_its_value_column_and_counts_rows_without_one() -> None:
    rows = pd.DataFrame({"campaign_id": [7, 7], "country": ["US", "FR"]})
    assert valued("countries", rows, ("campaign_id", "country"), "bid") is rows
    with pytest.raises(ValidationError, match=r"\(2 rows without one\)"):
        valued("countries", rows.assign(bid=[None, None]), ("campaign_id", "country"), "bid")
