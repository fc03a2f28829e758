"""An undo's inverse calls completed from live state: a new ``Call`` each, the journaled one
left as it was (a ``Call`` is frozen), or none when there is nothing to send."""

from __future__ import annotations

from typing import Any

import pytest

import toolkit
from toolkit.bulk.call_kinds import call_kind
from toolkit.bulk.calls import CAMPAIGN, CPA_RULE, Call


@pytest.fixture(scope="module")
def live(sandbox: Any) -> Any:
    """A client of the shared demo account (these tests only read it)."""
    return toolkit.connect(api_key=sandbox.api_keys[0], base_url=sandbox.url, retries=0)


def first_with_rules(client: Any) -> tuple[int, list[dict[str, Any]]]:
    for campaign in client.campaigns.list():
        rules = client.cpa_rules.list(campaign["id"])
        if rules:
            return int(campaign["id"]), rules
    raise AssertionError("the demo account has no CPA rule")


def test_a_settings_undo_gets_the_live_vertical_in_a_new_call(live):
    cid = int(live.campaigns.list()[0]["id"])
    vertical = live.campaigns.get(cid).get("vertical")
    assert vertical
    call = Call("update", "update", CAMPAIGN, (cid,), params={"name": "x", "vertical": None})
    ready = call_kind(CAMPAIGN).prepare_undo(live, call)
    assert ready is not None and ready is not call
    assert dict(ready.params or {}) == {"name": "x", "vertical": vertical}
    assert dict(call.params or {}) == {"name": "x", "vertical": None}  # journaled one as it was
    assert (ready.step, ready.action, ready.campaign_ids) == (call.step, call.action, (cid,))
    work = Call("work", "pause", CAMPAIGN, (cid,))
    assert call_kind(CAMPAIGN).prepare_undo(live, work) is work


def test_a_readd_of_rules_keeps_those_gone_and_is_skipped_when_none_is(live):
    cid, rules = first_with_rules(live)
    gone = {k: v for k, v in rules[0].items() if k not in ("id", "campaign_id")}
    gone["amount"] = 12345.0
    still = [dict(r) for r in rules]
    call = Call("rules", "add", CPA_RULE, (cid,), params={"rules": [*still, gone]})
    ready = call_kind(CPA_RULE).prepare_undo(live, call)
    assert ready is not None and ready is not call
    assert list(ready.params["rules"]) == [gone]  # type: ignore[index]
    assert len(call.params["rules"]) == len(rules) + 1  # type: ignore[index]
    only_live = Call("rules", "add", CPA_RULE, (cid,), params={"rules": still})
    assert call_kind(CPA_RULE).prepare_undo(live, only_live) is None
