"""The match update the board sends with each acknowledgement (CreateMatch, JoinSeat, an
accepted command on SubmitActions) is the one the projector publishes for that version,
byte for byte: a gateway shows it at once and skips the projector's copy by comparing
bytes. Every game, random matches, the projector's own folder over the board's log."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from services.board.lobby import LobbyService
from services.projector.folder import WHOLE, ProjectionFolder
from tabletop.v1 import board_pb2, match_pb2
from tests.unit.platform.fakes import context
from tests.unit.platform.test_board_service import MATCH, Board

#: seats out of alphabetical order: an engine fills its dicts in seat order, protobuf's
#: maps (the events the projector folds) keep none
SEATS = {
    "crashland": ("ann",),
    "drillit": ("zed", "amy"),
    "imperial_miners": ("cy", "ann", "bob"),
    "dungeon_drop": ("bob", "ann"),
}


async def one(item: board_pb2.SubmitActionsRequest) -> AsyncIterator[object]:
    yield item


async def play(board: Board, game: str, seed: int, actions: int) -> dict[int, bytes]:
    """A match created, its seats joined and up to ``actions`` random legal actions, on
    the board's gateway-facing calls: the update each acknowledgement brought, by version."""
    players = SEATS[game]
    updates: dict[int, bytes] = {}
    created = await board.create(game=game, players=players)
    updates[created.version] = created.view_update
    lobby = LobbyService(board.service)
    for i, seat in enumerate(players):
        joined = await lobby.JoinSeat(
            board_pb2.JoinSeatRequest(
                match_id=MATCH, seat=seat, display_name=seat.title(), join_id=f"j{i}", by="free"
            ),
            context(),
        )
        updates[joined.version] = joined.view_update
    rng = random.Random(seed)
    for n in range(actions):
        choices = []
        for seat in players:
            legal = await board.service.GetLegalActions(
                board_pb2.GetLegalActionsRequest(match_id=MATCH, player=seat), context()
            )
            if legal.next.finished:
                return updates
            choices += [(seat, entry.action) for entry in legal.actions]
        seat, action = rng.choice(choices)
        request = board_pb2.SubmitActionRequest(
            match_id=MATCH, player=seat, command_id=f"c{n}", action=action
        )
        stream = board.service.SubmitActions(
            one(board_pb2.SubmitActionsRequest(id=n, command=request)),  # type: ignore[arg-type]
            context(),
        )
        answers = [answer async for answer in stream]
        assert answers[0].WhichOneof("outcome") == "reply", answers[0].refused
        updates[answers[0].reply.version] = answers[0].view_update
    return updates


def published(board: Board) -> dict[int, bytes]:
    """What the projector publishes folding the board's log: the update of each version
    that ends a command."""
    folder = ProjectionFolder()
    out: dict[int, bytes] = {}
    for envelope in board.event_log.envelopes:
        if folder.fold(envelope) == WHOLE:
            out[folder.match(MATCH).version] = folder.update(MATCH)
    return out


@pytest.mark.parametrize("game", sorted(SEATS))
@pytest.mark.parametrize("seed", [1, 2])
async def test_each_acknowledgement_brings_the_update_the_projector_publishes(
    game: str, seed: int
) -> None:
    board = Board()
    updates = await play(board, game, seed, actions=40)
    expected = published(board)
    assert len(updates) >= 1 + len(SEATS[game]) + 1
    for version, update in updates.items():
        assert update, f"no update at version {version}"
        assert update == expected[version], f"version {version} differs"
    last = match_pb2.ViewUpdate.FromString(updates[max(updates)])
    assert last.summary.version == max(updates) == len(board.event_log.envelopes)
    assert sorted(last.seat_tokens) == sorted(SEATS[game])


async def test_a_retried_command_and_the_unary_call_bring_no_update() -> None:
    board = Board()
    await board.create()
    legal = (await board.legal())[0]
    request = board_pb2.SubmitActionRequest(
        match_id=MATCH, player="ann", command_id="c-1", action=legal
    )
    first = [
        a
        async for a in board.service.SubmitActions(
            one(board_pb2.SubmitActionsRequest(id=1, command=request)),  # type: ignore[arg-type]
            context(),
        )
    ]
    again = [
        a
        async for a in board.service.SubmitActions(
            one(board_pb2.SubmitActionsRequest(id=2, command=request)),  # type: ignore[arg-type]
            context(),
        )
    ]
    assert first[0].view_update and not again[0].view_update
    assert again[0].reply.duplicate and again[0].reply.version == first[0].reply.version
    unary = await board.submit("c-2", (await board.legal())[0])
    assert not unary.duplicate  # SubmitActionReply has no update: it goes to clients as is
    assert "view_update" not in board_pb2.SubmitActionReply.DESCRIPTOR.fields_by_name
