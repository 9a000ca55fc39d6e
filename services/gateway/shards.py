"""The board shards the gateway talks to, each with its dice and decks: where a match's
commands go (by its id: services/common/sharding.py) and where its events are read."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import grpc

from services.common.calls.channel import CallChannel, StreamBroken
from services.common.config import Config
from services.common.logging import get_logger
from services.common.server import peer_channel
from services.common.sharding import shard_of
from services.gateway.refusals import Refused, forwarded
from tabletop.v1 import board_pb2, board_pb2_grpc, envelope_pb2, envelope_pb2_grpc

log = get_logger(__name__)


class Shard:
    """The services one board shard talks to."""

    def __init__(
        self,
        board: str,
        dice: str,
        decks: str,
        config: Config,
        on_update: Callable[[bytes], None] | None = None,
    ) -> None:
        """``on_update`` takes the match updates the board sends with acknowledgements."""
        self.channels = [peer_channel(a, config) for a in (board, dice, decks)]
        self.board = board_pb2_grpc.BoardStub(self.channels[0])
        self.lobby = board_pb2_grpc.LobbyStub(self.channels[0])
        # Commands go on a Calls stream of their own, and each service's event reads on
        # another (services/common/calls/): a large read holds back no command.
        self._calls = CallChannel(self.channels[0], "board")
        self.commands = board_pb2_grpc.BoardStub(self._calls)
        self._reads = {
            stream: CallChannel(channel, stream)
            for stream, channel in zip(("board", "dice", "decks"), self.channels, strict=True)
        }
        self.events = {s: envelope_pb2_grpc.EventSourceStub(c) for s, c in self._reads.items()}
        self._on_update = on_update

    async def submit(self, request: board_pb2.SubmitActionRequest) -> board_pb2.SubmitActionReply:
        """The board's reply to the command, once its update is in the views (so that the
        caller's watchers see it without waiting for the projector)."""
        acknowledged: board_pb2.AcknowledgedAction = await self.commands.SubmitCommand(request)
        if acknowledged.view_update and self._on_update is not None:
            try:
                self._on_update(acknowledged.view_update)
            except Exception:  # the command is done all the same; its view will come
                log.exception("acknowledged_update_unreadable")
        return acknowledged.reply

    async def close(self) -> None:
        for calls in (self._calls, *self._reads.values()):
            await calls.close()
        for channel in self.channels:
            await channel.close()


async def read_events(
    source: envelope_pb2_grpc.EventSourceStub, match_id: str
) -> list[envelope_pb2.EventEnvelope]:
    """Every event of one match's stream; raises AioRpcError. Reads change nothing: a read
    whose stream broke is made once more (on a new stream)."""
    request = envelope_pb2.ListEventsRequest(match_id=match_id)
    try:
        return [e async for batch in source.ListEventBatches(request) for e in batch.events]
    except StreamBroken:
        return [e async for batch in source.ListEventBatches(request) for e in batch.events]


class Shards:
    """The shards, by the matches they own."""

    def __init__(self, shards: Sequence[Shard]) -> None:
        self._shards = list(shards)

    def of(self, match_id: str) -> Shard:
        return self._shards[shard_of(match_id, len(self._shards))]

    async def board_events(self, match_id: str) -> list[envelope_pb2.EventEnvelope]:
        """The match's board events (NOT_FOUND when it has none)."""
        try:
            events = await read_events(self.of(match_id).events["board"], match_id)
        except grpc.aio.AioRpcError as error:
            raise forwarded(error) from error
        if not events:
            raise Refused(grpc.StatusCode.NOT_FOUND, "no such match")
        return events
