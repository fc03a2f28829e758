"""The frames of a plan's calls and of a run's outcomes have the columns and dtypes that
:mod:`toolkit.frames.schemas` declares for them, with calls and without; against the sandbox
over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import toolkit
from toolkit.bulk import ApplyResult, Journal, Plan, make_plan
from toolkit.bulk.calls import STEPS
from toolkit.bulk.outcome_states import OUTCOMES
from toolkit.frames import load_account
from toolkit.frames.schemas import plan_calls_schema, run_outcomes_schema
from toolkit.sandbox import Sandbox

TABLES = ("campaigns", "countries", "lists")


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=4, seed=3) as sandbox:
        yield sandbox


@pytest.fixture()
def client(sb: Sandbox) -> Any:
    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


def _dtypes(df: pd.DataFrame) -> dict[str, Any]:
    return dict(df.dtypes.items())


def test_a_plan_and_its_run_have_the_declared_columns_and_dtypes(
    client: Any, tmp_path: Path
) -> None:
    account = load_account(client, progress=False)
    base = {name: account.table(name).copy() for name in TABLES}
    desired = {name: df.copy() for name, df in base.items()}
    countries = desired["countries"]
    countries.loc[countries.index[0], "bid"] = round(float(countries["bid"].iloc[0]) + 0.01, 4)
    cid = int(desired["campaigns"]["id"].iloc[0])
    lists = desired["lists"]
    row = pd.DataFrame({"campaign_id": [cid], "list": ["subid_black"], "item": ["abc123"]})
    desired["lists"] = pd.concat([lists, row.astype(lists.dtypes.to_dict())], ignore_index=True)
    desired["campaigns"].loc[0, "name"] = "Renamed for the frame check"

    plan = make_plan(client, desired, base=base, live=account)
    calls = plan.to_frame()
    assert len(calls) >= 3 and calls["bids"].notna().any()  # a bid change carries its bids
    assert _dtypes(calls) == plan_calls_schema(STEPS)
    assert list(calls["step"]) == sorted(calls["step"], key=STEPS.index)

    result = plan.apply(client, progress=False, journal=Journal(tmp_path / "j.db"))
    assert result.ok, result.summary()
    outcomes = result.to_frame()
    assert len(outcomes) >= 3
    assert _dtypes(outcomes) == run_outcomes_schema(OUTCOMES)


def test_frames_without_rows_have_the_declared_dtypes_too() -> None:
    assert _dtypes(Plan(calls=[]).to_frame()) == plan_calls_schema(STEPS)
    assert _dtypes(ApplyResult(run_id="r").to_frame()) == run_outcomes_schema(OUTCOMES)
