"""The match update the board sends with each acknowledgement (CreateMatch, JoinSeat, an
accepted command's SubmitCommand) is the one the projector publishes for that version,
byte for byte: a gateway shows it at once and skips the projector's copy by comparing
bytes. Every game, random matches, the projector's own folder over the board's log."""

from __future__ import annotations

import random

import pytest

from services.board.lobby import LobbyService
from services.projector.folder import WHOLE, ProjectionFolder
from tabletop.v1 import board_pb2, match_pb2
from tests.unit.board.test_board_service import MATCH, Board
from tests.unit.fakes import context

#: seats out of alphabetical order: an engine fills its dicts in seat order, protobuf's
#: maps (the events the projector folds) keep none
SEATS = {
    "crashland": ("ann",),
    "drillit": ("zed", "amy"),
    "imperial_miners": ("cy", "ann", "bob"),
    "dungeon_drop": ("bob", "ann"),
}


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
        acknowledged = await board.service.SubmitCommand(request, context())
        updates[acknowledged.reply.version] = acknowledged.view_update
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


async def test_a_retried_command_brings_no_update_and_clients_get_none() -> None:
    board = Board()
    await board.create()
    legal = (await board.legal())[0]
    request = board_pb2.SubmitActionRequest(
        match_id=MATCH, player="ann", command_id="c-1", action=legal
    )
    first = await board.service.SubmitCommand(request, context())
    again = await board.service.SubmitCommand(request, context())
    assert first.view_update and not again.view_update
    assert again.reply.duplicate and again.reply.version == first.reply.version
    # the reply a gateway passes on to its client has no place for the update
    assert "view_update" not in board_pb2.SubmitActionReply.DESCRIPTOR.fields_by_name
