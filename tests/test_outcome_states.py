"""The outcome states: one set, equal to the words the journal stores and the frames show."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from toolkit.bulk import ApplyResult, Outcome, Plan
from toolkit.bulk.journal import Journal
from toolkit.bulk.outcome_states import (
    CHANGE_ORDER,
    NOT_FINISHED,
    OUTCOMES,
    UNFINISHED,
    OutcomeState,
)
from toolkit.bulk.outcomes import change_state


def outcome(seq: int, state: str, item: str = "US") -> Outcome:
    return Outcome(
        seq=seq,
        step="add",
        action="add",
        target="country",
        list_type=None,
        campaign_id=1000001,
        item=item,
        bid=0.5,
        outcome=state,
    )


def test_the_states_are_the_six_words_and_show_as_them():
    assert OUTCOMES == ("applied", "already", "failed", "unknown", "restored", "lost")
    assert [s.value for s in OutcomeState] == list(OUTCOMES)
    for word in OUTCOMES:
        state = OutcomeState(word)
        assert state == word and hash(state) == hash(word)
        assert (str(state), repr(state), f"{state}") == (word, repr(word), word)
    assert set(UNFINISHED) == {"failed", "unknown", "lost"}
    assert set(NOT_FINISHED) == set(UNFINISHED) | {"restored"}
    assert sorted(CHANGE_ORDER) == sorted(OUTCOMES)
    with pytest.raises(ValueError):
        OutcomeState("done")


def test_outcomes_take_their_fields_by_name():
    with pytest.raises(TypeError):
        Outcome(0, "add", "add", "country", None, 1, "US", 0.5, "applied")  # type: ignore[misc]


def test_a_change_takes_the_first_state_of_the_order():
    assert change_state({OutcomeState.APPLIED, "failed", OutcomeState.RESTORED}) == "restored"
    assert change_state({"applied", OutcomeState.ALREADY}) == OutcomeState.APPLIED
    assert change_state(set()) == "unknown"


def test_a_result_frame_and_its_counts_read_as_the_words():
    states = [OutcomeState.APPLIED, "already", OutcomeState.FAILED, OutcomeState.LOST]
    result = ApplyResult(outcomes=[outcome(n, s, f"C{n}") for n, s in enumerate(states)])
    frame = result.to_frame()
    assert list(frame["outcome"].cat.categories) == list(OUTCOMES)
    assert frame["outcome"].astype(str).tolist() == ["applied", "already", "failed", "lost"]
    assert result.counts() == {"applied": 1, "already": 1, "failed": 1, "lost": 1}
    assert all(type(k) is str for k in result.counts())
    assert not result.ok
    assert result.counted() == "2 of 4 items (1 already, 1 failed, 1 lost)"


def test_the_journal_stores_the_words_and_counts_each_state(tmp_path):
    book = Journal(tmp_path / "journal.db")
    run_id = book.start_run(SimpleNamespace(base_url="http://127.0.0.1:1"), Plan())
    states = ["applied", "applied", "already", "failed", "unknown", "unknown", "unknown", "lost"]
    book.record(run_id, [outcome(n, OutcomeState(s), f"C{n}") for n, s in enumerate(states)])
    stored = book.outcomes(run_id)["outcome"].tolist()
    assert stored == states and all(type(s) is str for s in stored)
    (run,) = book.runs().itertuples(index=False)
    assert (run.applied, run.failed, run.unknown) == (2, 1, 3)
    assert run.unfinished == 5  # failed, unknown and lost
