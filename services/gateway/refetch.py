"""An evicted match fetched again from the authority: its board events folded afresh, and
its seeds' reveals from the dice and decks streams, as the projector folds them. The
update is the one the projector published for that version (``views.update_bytes`` of the
same fold), so a view drawn from it is the view shown before the eviction."""

from __future__ import annotations

import grpc

from services.adapters.folding import fold_board_events, reveal, revealed_seed
from services.adapters.views import update
from services.gateway.refusals import forwarded
from services.gateway.shards import Shards, read_events
from tabletop.v1 import match_pb2


async def fetch_update(shards: Shards, match_id: str) -> match_pb2.ViewUpdate:
    """The match's newest update (Refused: NOT_FOUND without events, or the board's or a
    chance service's status)."""
    board = await shards.board_events(match_id)
    match = fold_board_events(board)
    shard = shards.of(match_id)
    try:
        chance = [
            *await read_events(shard.events["dice"], match_id),
            *await read_events(shard.events["decks"], match_id),
        ]
    except grpc.aio.AioRpcError as error:
        raise forwarded(error) from error
    for envelope in chance:
        seed = revealed_seed(envelope)
        if seed is not None:
            reveal(match, seed)
    return update(match)
