"""The tables :mod:`toolkit.spec` derives from its target kinds follow a kind added (and
removed) at run time: every one is read through a function, so no module holds a copy from
before; the call kinds of the planner and the ``search`` frame's codes follow too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolkit import spec
from toolkit.bulk.call_kinds import call_kind
from toolkit.frames.schemas import SCHEMAS

#: A kind that is in every derived table: started-with, searched (by country), on create,
#: counted, priced and syntax-checked.
WIDE = spec.TargetKind(
    "carrier-name",
    str,
    "carrierName",
    price_param="carrierName",
    search=True,
    search_by_country=True,
    on_create=True,
    start_requires=True,
    count_fields={"": "carrierName"},
    syntax=str.isalpha,
)


@pytest.fixture
def wide() -> Iterator[spec.TargetKind]:
    assert WIDE.name not in spec.search_types()  # every table read once before the add
    spec.add_target_kind(WIDE)
    try:
        yield WIDE
    finally:
        spec.remove_target_kind(WIDE.name)


def _tables() -> dict[str, object]:
    """Every derived table, read now."""
    return {
        "start_requires": spec.start_requires(),
        "search_types": spec.search_types(),
        "search_country_filter": spec.search_country_filter(),
        "create_target_kinds": spec.create_target_kinds(),
        "price_params": spec.price_params(),
        "syntax_checks": spec.syntax_checks(),
    }


def test_each_table_read_after_a_kind_is_added_has_it(wide: spec.TargetKind) -> None:
    for name, table in _tables().items():
        assert wide.name in table or wide.price_param in table, name
    assert spec.syntax_checks()[wide.name]("abc")
    assert "carrierName" in spec.count_fields()
    assert spec.kind_of_column("carrier_name") is wide
    by_name = spec.operations_by_name()
    assert by_name["target.add_batch.carrier-name"].path == "/api/campaign/add-carrier-name-batch"
    assert spec.operations_by_path()["/api/campaign/drop-carrier-name"].name == (
        "target.drop.carrier-name"
    )
    assert by_name["target.add.carrier-name"] in spec.operations()


def test_a_table_read_after_the_kind_is_removed_no_longer_has_it() -> None:
    before = {name: set(table) for name, table in _tables().items()}
    spec.add_target_kind(WIDE)
    spec.remove_target_kind(WIDE.name)
    assert {name: set(table) for name, table in _tables().items()} == before
    assert "carrierName" not in spec.count_fields()
    assert spec.kind_of_column("carrier_name") is None
    assert "/api/campaign/add-carrier-name" not in spec.operations_by_path()


def test_the_tables_cannot_be_changed_in_place() -> None:
    with pytest.raises(TypeError):
        spec.operations_by_name()["campaign.list"] = spec.operations_by_name()["campaign.item"]  # type: ignore[index]


def test_the_search_frame_and_the_call_kinds_follow_the_kind(wide: spec.TargetKind) -> None:
    assert wide.name in list(SCHEMAS["search"]["type"].categories)
    assert call_kind("carrier_name").name == wide.name
    assert not call_kind(wide.name).valued
    spec.add_target_kind(spec.TargetKind("carrier-name", str, None, typed=True, bids=True))
    replaced = call_kind(wide.name)
    assert replaced.valued and replaced.typed  # the row made of the replaced kind's traits
