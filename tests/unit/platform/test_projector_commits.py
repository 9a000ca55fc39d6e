"""The projector's consumer commits past the commit markers of transactional topics."""

from __future__ import annotations

from typing import Any

from faust.types import TP

from services.common.config import Config
from services.projector.app import create_app


def consumer() -> Any:
    return create_app(Config.from_env("projector")).consumer


async def test_offsets_skipped_by_commit_markers_do_not_stall_commits() -> None:
    # Given three board transactions read: records 0-3, marker 4, records 5-7, marker 8,
    # records 9-10, every record acked
    commits = consumer()
    tp = TP("board.events", 0)
    commits._acked[tp].extend([0, 1, 2, 3, 5, 6, 7, 9, 10])
    # Then the commit goes past all of them, and no further until more are acked
    assert commits._new_offset(tp) == 11
    assert commits._new_offset(tp) is None
    commits._acked[tp].extend([12, 13])
    assert commits._new_offset(tp) == 14


async def test_gaps_are_not_tracked() -> None:
    # Faust's interval tree of skipped offsets is not needed: the stream acks in order
    commits = consumer()
    tp = TP("board.events", 0)
    await commits._add_gap(tp, 4, 5)
    assert not commits._gap[tp]


async def test_a_partition_with_nothing_acked_commits_nothing() -> None:
    assert consumer()._new_offset(TP("board.events", 1)) is None
