"""The projector's consumer commits past the commit markers of transactional topics."""

from __future__ import annotations

from typing import Any

from faust.types import TP

from services.common.config import Config
from services.projector.app import create_app


async def test_offsets_skipped_by_commit_markers_do_not_stall_commits() -> None:
    consumer: Any = create_app(Config.from_env("projector")).consumer
    tp = TP("board.events", 0)
    # Two board transactions: records 0-3, marker 4, records 5-7, marker 8, records 9-10.
    # Faust records a gap when a record arrives past one, passing that record's offset.
    consumer._acked[tp].extend([0, 1, 2, 3])
    await consumer._add_gap(tp, 4, 5)
    consumer._acked[tp].extend([5, 6, 7])
    await consumer._add_gap(tp, 8, 9)
    consumer._acked[tp].extend([9, 10])
    assert consumer._new_offset(tp) == 11  # without the fix: 6, one transaction per commit


async def test_a_marker_read_again_after_a_seek_is_kept_once() -> None:
    consumer: Any = create_app(Config.from_env("projector")).consumer
    tp = TP("board.events", 0)
    consumer._acked[tp].extend([0, 1, 2, 3])
    await consumer._add_gap(tp, 4, 5)
    await consumer._add_gap(tp, 4, 5)  # the same transaction read again
    assert [(i.begin, i.end) for i in consumer._gap[tp]] == [(4, 5)]
    consumer._acked[tp].extend([5, 6])
    assert consumer._new_offset(tp) == 7
