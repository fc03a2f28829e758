"""Every operation of the interface is reachable through some method of the client.

Each client method is driven once against a sandbox of its own; the paths the sandbox then
counted are compared with the paths of :func:`toolkit.spec.operations` (aliases aside; the
source-list batches share the single-campaign path).
"""

from __future__ import annotations

import inspect
from typing import Any

import toolkit
from toolkit import spec

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x01icon" * 8
RULE = {
    "type": "sum",
    "cond": "greater",
    "amount": 5,
    "lead_type": "lead",
    "lead_cond": "less",
    "lead_amount": 1,
}
METHODS = {
    "campaigns": {
        "list",
        "get",
        "create",
        "update",
        "start",
        "pause",
        "archive",
        "start_batch",
        "pause_batch",
        "archive_batch",
    },
    "targeting": {"add", "drop", "add_batch", "drop_batch"},
    "lists": {"get", "add", "drop", "add_batch", "drop_batch"},
    "bid_rules": {"list", "add", "drop"},
    "cpa_rules": {"list", "add", "edit", "drop"},
    "creatives": {"list", "get", "create", "update", "start", "pause", "archive"},
    "account": {"balance", "dictionaries", "dictionary", "search", "price", "user_id"},
}


def public_methods(resource: Any) -> set[str]:
    return {
        n
        for n, _ in inspect.getmembers(type(resource), inspect.isfunction)
        if not n.startswith("_")
    }


def sample_items(client: toolkit.Client, kind: spec.TargetKind, ad_format: str) -> Any:
    """Valid items of ``kind`` for a campaign of ``ad_format``, from the service itself, none of
    them among the targets the campaign was created with."""
    if kind.bids:
        return {"DE": 0.25}
    if kind.values is not None:
        return [kind.values[-1]]
    if kind.search:
        text = SEARCH_TEXT[kind.name]
        return [int(next(iter(client.account.search(kind.name, text))))]
    if kind.codes is not None:
        return [next(iter(client.account.dictionary(kind.codes)))]
    if kind.labels is not None:
        entries = client.account.dictionary(kind.labels)
        if kind.by_format:
            entries = entries[kind.label_group(ad_format)]
        return [int(list(entries)[-1])]
    return {"cidr": ["10.0.0.0/8"], "domain": ["example.com"]}[kind.name]


#: Text that finds a value of each searched kind in the sandbox's reference data.
SEARCH_TEXT = {"city": "Berlin", "region": "California", "isp-mobile": "Voda"}


def test_every_operation_is_reached_through_the_client(fresh_sandbox):
    sb = fresh_sandbox
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
    for resource, names in METHODS.items():
        assert public_methods(getattr(client, resource)) == names, resource
    target = {"category": [1], "quality": ["high"], "country": {"US": 0.5}}
    sb.stats()  # the sandbox answers, counting from here
    ids = {
        f: client.campaigns.create(
            f,
            f"cover {f}",
            1,
            target=target if f == "push" else None,
            url="https://example.com" if f == "pops" else None,
        )["id"]
        for f in ("push", "pops")
    }
    push = ids["push"]

    c = client.campaigns
    c.list()
    c.get(push, "full")
    c.update(push, "covered", 2, note="n")
    c.start(push)
    c.pause(push)
    c.archive(push)
    assert c.start_batch([push]).ok and c.pause_batch([push]).ok and c.archive_batch([push]).ok

    for kind in spec.TARGET_KINDS.values():
        fmt = "push" if kind.allowed_for("push") else "pops"
        cid = ids[fmt]
        items = sample_items(client, kind, fmt)
        list_type = "white" if kind.typed else None
        client.targeting.add(cid, kind.name, items, list_type=list_type)
        client.targeting.drop(cid, kind.name, items, list_type=list_type)
        assert client.targeting.add_batch([cid], kind.name, items, list_type=list_type).ok
        assert client.targeting.drop_batch([cid], kind.name, items, list_type=list_type).ok

    for name, lk in spec.LISTS.items():
        items = [4321] if lk.entity == "source" else ["abcd"]
        client.lists.get(push, name)
        client.lists.add(push, name, items)
        client.lists.drop(push, name, items)
        assert client.lists.add_batch([push], name, items).ok
        assert client.lists.drop_batch([push], name, items).ok

    client.bid_rules.add(push, ["abc"], 0.2)
    client.bid_rules.list(push)
    client.bid_rules.drop(push, ["abc"])
    client.cpa_rules.add(push, [RULE])
    rule_id = client.cpa_rules.list(push)[0]["id"]
    client.cpa_rules.edit(push, [{"id": rule_id, "amount": 6}])
    client.cpa_rules.drop(push, [rule_id])

    crid = client.creatives.create(push, name="c", title="t", url="https://example.com", icon=PNG)[
        "id"
    ]
    client.creatives.update(crid, name="c", title="t2", url="https://example.com")
    client.creatives.list(push)
    client.creatives.get(crid)
    client.creatives.start(crid)
    client.creatives.pause(crid)
    client.creatives.archive(crid)

    assert client.account.user_id() == client.account.balance()["user_id"]  # kept, then read
    client.account.dictionaries()
    client.account.search("city", "Paris")
    client.account.price("push", country=["US"])
    client.close()

    seen = {key.split(" ")[1] for key, n in sb.stats().items() if key.endswith(" 200")}
    failed = {key for key in sb.stats() if not key.endswith(" 200")}
    expected = {op.path for op in spec.operations()}
    assert not failed
    assert expected - seen == set(), "operations no client method reached"
    assert seen - expected == set(), "paths outside the interface"
