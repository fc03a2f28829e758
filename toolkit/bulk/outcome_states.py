"""The states an item of a run ends in (:class:`OutcomeState`), and the groups of them that
a run's summary and ``campaign-toolkit repair`` act on.

Each state is a ``str`` equal to the word the journal stores and the frames show, and shows
as that word (``str``, ``repr``, f-strings), so a state read back from the journal is the
same value:

>>> OutcomeState.APPLIED == "applied", OutcomeState("lost"), [OutcomeState.FAILED]
(True, 'lost', ['failed'])
"""

from __future__ import annotations

from enum import StrEnum


class OutcomeState(StrEnum):
    """Every outcome of an item.

    ``applied``; ``already`` (the service had it, value verified by the read-back); ``failed``
    (refused, or not carried out); ``unknown`` (a write whose answer the network hid and that
    the read-back could not settle); ``restored`` (a bid change's old value put back after its
    new one failed); ``lost`` (neither could be put back).
    """

    APPLIED = "applied"
    ALREADY = "already"
    FAILED = "failed"
    UNKNOWN = "unknown"
    RESTORED = "restored"
    LOST = "lost"

    def __repr__(self) -> str:
        return repr(self.value)


#: Every outcome of an item, in the order frames list their categories.
OUTCOMES: tuple[str, ...] = tuple(s.value for s in OutcomeState)
#: Outcomes that leave an item not as planned: what ``campaign-toolkit repair`` finishes.
UNFINISHED: tuple[str, ...] = (OutcomeState.FAILED, OutcomeState.UNKNOWN, OutcomeState.LOST)
#: A change's outcome from those of its items (a bid change: its drop, its add, and the
#: restore of its old bid), the first found: a restore has the last word, then the worst.
CHANGE_ORDER: tuple[str, ...] = (
    OutcomeState.LOST,
    OutcomeState.RESTORED,
    OutcomeState.FAILED,
    OutcomeState.UNKNOWN,
    OutcomeState.APPLIED,
    OutcomeState.ALREADY,
)
#: Outcomes of a change that leave it not as planned (a restored bid change has its old bid).
NOT_FINISHED: tuple[str, ...] = (
    OutcomeState.FAILED,
    OutcomeState.UNKNOWN,
    OutcomeState.RESTORED,
    OutcomeState.LOST,
)

__all__ = ["CHANGE_ORDER", "NOT_FINISHED", "OUTCOMES", "UNFINISHED", "OutcomeState"]
