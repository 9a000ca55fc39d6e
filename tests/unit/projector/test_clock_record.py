"""The projector's table record keeps a match's clock: a projector that reloads a timed
match from its record (after a restart, or an eviction) serves the same clocks."""

from __future__ import annotations

from services.adapters.folding import fold_board_events
from services.adapters.views import clock_message
from services.projector.folder import decode_record, encode_record
from tests.unit.board.test_clocks import past_deadline, timed


async def test_a_timed_matchs_record_reads_back_with_its_clock() -> None:
    board, wall = await timed({"clock": "turn:1h", "on_timeout": "bot"})
    past_deadline(board, wall)
    assert await board.service.expire_due() == (1, 0)  # a timeout, counted in the clock
    folded = fold_board_events(board.event_log.envelopes)
    assert folded.clock is not None and folded.clock.timeouts == {"ann": 1}
    match, _, _ = decode_record(encode_record(folded, {}, {}))
    assert match is not None and match.clock == folded.clock
    assert clock_message(match) == clock_message(folded)


async def test_an_untimed_matchs_record_has_no_clock() -> None:
    board, _ = await timed({})
    folded = fold_board_events(board.event_log.envelopes)
    match, _, _ = decode_record(encode_record(folded, {}, {}))
    assert match is not None and match.clock is None and clock_message(match) is None
