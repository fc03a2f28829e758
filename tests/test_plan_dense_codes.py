"""The planner's key codes made dense without hashing the joint codes, and the changes of a
table without values grouped per campaign without a dict per campaign: the same answers as
the plain ways (pandas.factorize of the joint codes; a dict of each campaign's items)."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from toolkit.bulk.key_codes import dense_codes, joint_codes
from toolkit.bulk.plan_build import _per_campaign


def column(rng: random.Random, n: int, kind: str) -> pd.Series:
    if kind == "ids":
        return pd.Series([rng.choice([1, 2, 3, None]) for _ in range(n)], dtype="Int64")
    if kind == "text":
        values = ["a", "b", "c", "dd", None, ""]
        return pd.Series([rng.choice(values) for _ in range(n)], dtype="string")
    if kind == "category":
        return pd.Series([rng.choice(["x", "y", None]) for _ in range(n)], dtype="category")
    return pd.Series([rng.choice(["x", 1, None, 2.5]) for _ in range(n)], dtype=object)


@pytest.mark.parametrize("seed", range(4))
def test_dense_codes_number_keys_as_factorize_of_the_joint_codes(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        sizes = [rng.randint(0, 12) for _ in range(rng.randint(1, 3))]
        if not sum(sizes):  # the planner codes no table without rows
            continue
        kinds = [rng.choice(["ids", "text", "category", "objects"]) for _ in range(3)]
        pairs = [[column(rng, n, kind) for n in sizes] for kind in kinds[: rng.randint(1, 3)]]
        start = None
        if rng.random() < 0.3:
            start = pd.factorize(np.array([rng.randint(0, 3) for _ in range(sum(sizes))]))[0]
        want = pd.factorize(joint_codes(pairs, start))[0]
        assert dense_codes(pairs, start).tolist() == want.tolist()


def test_dense_codes_of_items_shared_by_campaigns_and_of_items_of_one() -> None:
    """An item in one campaign only (its code is the key's), and the same items in several
    campaigns (the keys after the first of each item are factorized apart)."""
    ids = pd.Series(np.repeat([7, 9, 8], 4), dtype="Int64")
    own = pd.Series([f"{c}-{n}" for c in (7, 9, 8) for n in range(4)], dtype="string")
    shared = pd.Series([f"s{n}" for _ in range(3) for n in range(4)], dtype="string")
    for items in (own, shared):
        pairs = [[ids, ids.iloc[:5]], [items, items.iloc[:5]]]
        want = pd.factorize(joint_codes(pairs))[0]
        assert dense_codes(pairs).tolist() == want.tolist()
    assert len(set(dense_codes([[ids], [shared]]).tolist())) == 12


@pytest.mark.parametrize("cids", [[5, 5, 6, 6, 9], [9, 5, 6, 5, 9], [6]])
def test_changes_per_campaign_as_dicts_in_order_of_first_appearance(cids: list[int]) -> None:
    items = np.array([f"i{n}" for n in range(len(cids))], dtype=object)
    want: dict[int, dict[str, object]] = {}
    for cid, item in zip(cids, items.tolist(), strict=True):
        want.setdefault(cid, {})[item] = True
    got = _per_campaign(np.array(cids, dtype=np.int64), items, None)
    assert list(got) == list(want)
    assert {c: list(m.items()) for c, m in got.items()} == {
        c: list(m.items()) for c, m in want.items()
    }
    values = np.arange(len(cids), dtype=float).astype(object)
    valued = _per_campaign(np.array(cids, dtype=np.int64), items, values)
    assert list(valued) == list(want)
    assert [list(m.values()) for m in valued.values()] == [
        [float(i[1:]) for i in m] for m in want.values()
    ]
    first = next(iter(got.values()))
    assert first[next(iter(first))] is True
    with pytest.raises(KeyError):
        first["not an item"]
