"""The gateway's commands and reads to a board shard, on its Calls streams: the board's
answer to SubmitCommand as the gateway gets it (the reply, the match's update, a refusal's
status and reason), the update handed to the views before the command's caller has its
answer, the board's events read back. A real board service (in-memory logs) behind a real
gRPC server on the test's loop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import grpc
import pytest

from services.common.config import Config
from services.common.ledger import EventSourceServicer
from services.common.server import GrpcService
from services.gateway.shards import Shard, read_events
from tabletop.v1 import board_pb2, board_pb2_grpc, envelope_pb2_grpc, games_pb2, match_pb2
from tests.unit.board.test_board_service import MATCH, Board
from tests.unit.fakes import context


@contextlib.asynccontextmanager
async def shard_of(
    monkeypatch: pytest.MonkeyPatch, board: Board, on_update: Callable[[bytes], None]
) -> AsyncIterator[Shard]:
    """``board`` served as the board process serves it, and the gateway's shard of it."""
    monkeypatch.setenv("TABLETOP_GRPC_PORT", "0")
    monkeypatch.setenv("TABLETOP_DEV_STACK", "1")
    monkeypatch.setenv("TABLETOP_SHUTDOWN_GRACE_SECONDS", "0.2")

    def register(server: grpc.aio.Server) -> list[str]:
        board_pb2_grpc.add_BoardServicer_to_server(board.service, server)
        events = EventSourceServicer(board.writer)
        envelope_pb2_grpc.add_EventSourceServicer_to_server(events, server)
        return []

    server = GrpcService(Config.from_env("board"), register)
    port = await server.start()
    address = f"127.0.0.1:{port}"
    shard = Shard(address, address, address, Config.from_env("gateway"), on_update)
    try:
        yield shard
    finally:
        await shard.close()
        await server.stop()


async def first_legal(board: Board, match_id: str) -> games_pb2.GameAction:
    request = board_pb2.GetLegalActionsRequest(match_id=match_id, player="ann")
    return (await board.service.GetLegalActions(request, context())).actions[0].action


def command(
    command_id: str,
    action: games_pb2.GameAction,
    match_id: str = MATCH,
    expected: int | None = None,
) -> board_pb2.SubmitActionRequest:
    return board_pb2.SubmitActionRequest(
        match_id=match_id,
        player="ann",
        command_id=command_id,
        action=action,
        expected_version=expected,
        return_legal_actions=True,
    )


async def test_an_accepted_commands_update_reaches_the_views_before_its_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    board = Board()
    await board.create()
    await board.create("m-2")
    legal = {m: await first_legal(board, m) for m in (MATCH, "m-2")}
    shown: list[str] = []

    def show(update: bytes) -> None:
        shown.append(match_pb2.ViewUpdate.FromString(update).summary.match_id)

    async with shard_of(monkeypatch, board, show) as shard:

        async def submit(match_id: str) -> tuple[board_pb2.SubmitActionReply, list[str]]:
            reply = await shard.submit(command(f"c-{match_id}", legal[match_id], match_id))
            return reply, list(shown)

        (first, seen_by_first), (second, seen_by_second) = await asyncio.gather(
            submit(MATCH), submit("m-2")
        )
        again = await shard.submit(command(f"c-{MATCH}", legal[MATCH]))  # a retry
    assert MATCH in seen_by_first and "m-2" in seen_by_second
    assert sorted(shown) == sorted([MATCH, "m-2"])  # the retry brought no update
    assert first.legal_actions.actions and second.version > 1
    assert again.duplicate and again.version == first.version


async def test_a_refused_command_is_its_status_and_reason_and_appends_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    board = Board()
    created = await board.create()
    legal = await first_legal(board, MATCH)
    appended = len(board.event_log.envelopes)
    async with shard_of(monkeypatch, board, lambda update: None) as shard:
        with pytest.raises(grpc.aio.AioRpcError) as stale:
            await shard.submit(command("c-1", legal, expected=created.version - 1))
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await shard.submit(command("c-2", legal, match_id="nowhere"))
        accepted = await shard.submit(command("c-3", legal))
    assert stale.value.code() == grpc.StatusCode.ABORTED
    assert dict(stale.value.trailing_metadata())["tabletop-reason"] == "STALE_VERSION"
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert dict(missing.value.trailing_metadata())["tabletop-reason"] == "NO_SUCH_MATCH"
    # the refused commands appended nothing: the log holds the accepted one's events only
    logged = {e.correlation_id for e in board.event_log.envelopes[appended:]}
    assert logged == {"c-3"} and accepted.version == len(board.event_log.envelopes)


async def test_an_update_the_views_cannot_take_fails_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unreadable(update: bytes) -> None:
        raise ValueError("not a ViewUpdate")

    board = Board()
    await board.create()
    legal = await first_legal(board, MATCH)
    async with shard_of(monkeypatch, board, unreadable) as shard:
        reply = await asyncio.wait_for(shard.submit(command("c-1", legal)), 10)
    assert reply.version == len(board.event_log.envelopes)


async def test_the_boards_events_are_read_back_as_logged(monkeypatch: pytest.MonkeyPatch) -> None:
    board = Board()
    await board.create()
    async with shard_of(monkeypatch, board, lambda update: None) as shard:
        await shard.submit(command("c-1", await first_legal(board, MATCH)))
        events = await read_events(shard.events["board"], MATCH)
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await read_events(shard.events["board"], "")
    assert events == board.event_log.envelopes
    assert missing.value.code() == grpc.StatusCode.INVALID_ARGUMENT
