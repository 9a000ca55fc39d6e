"""A bot seat's level (easy, medium, hard) as the lobby shows it: the gateway checks it
and hands it to the board with the lobby; MatchCreated carries it, and every reader of
the match (the projector's record, the published update a gateway serves ListMatches
from) keeps it."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, cast

import grpc
import pytest

from services.adapters.folding import created
from services.adapters.views import from_update, summary, update
from services.common.envelope import make_envelope
from services.games.match import Match
from services.games.registry import get_game
from services.gateway.service import GatewayService
from services.gateway.shards import Shard
from services.gateway.viewstore import ViewStore
from services.projector import folder
from services.projector.folder import decode_record, encode_record
from tabletop.v1 import board_pb2, gateway_pb2
from tabletop.v1 import platform_events_pb2 as pe
from tests.unit.fakes import Aborted, Served, player_context
from tests.unit.gateway.test_scoring_and_gateway import CONFIG
from tests.unit.projector.test_projector_fold import CAUSE

LEVELS = {"ann": "hard", "bo": "easy"}


class Board:
    def __init__(self) -> None:
        self.created: list[board_pb2.CreateMatchRequest] = []

    async def CreateMatch(self, request: board_pb2.CreateMatchRequest) -> Any:
        self.created.append(request)
        return board_pb2.CreateMatchReply(match_id=request.match_id, version=1)


def _gateway() -> tuple[Served, Board]:
    board = Board()
    shard = cast(Shard, type("FakeShard", (), {"board": board})())
    config = dataclasses.replace(CONFIG, max_view_lag_ms=0)
    channel = grpc.aio.insecure_channel("127.0.0.1:9")
    return Served(GatewayService([shard], channel, ViewStore(), config)), board


def _opening(**levels: str) -> gateway_pb2.OpenMatchRequest:
    return gateway_pb2.OpenMatchRequest(
        game="dungeon_drop", players=["ann", "bo", "cy"], bots=["ann", "bo"], bot_levels=levels
    )


async def test_the_gateway_hands_the_levels_to_the_board_with_the_lobby() -> None:
    gateway, board = _gateway()
    await gateway.CreateMatch(_opening(**LEVELS), player_context(CONFIG.token_key))
    (forwarded,) = board.created
    assert dict(forwarded.lobby.bot_levels) == LEVELS
    assert list(forwarded.lobby.bots) == ["ann", "bo"]


@pytest.mark.parametrize(
    ("levels", "reason"),
    [
        ({"ann": "grandmaster"}, "unknown bot level; dungeon_drop offers easy, medium, hard"),
        ({"cy": "hard"}, "a seat with a bot level is not a bot seat"),
        ({"ann": "x" * 5_000}, "a bot level"),
    ],
)
async def test_a_level_that_is_not_offered_or_not_a_bot_s_is_refused(
    levels: dict[str, str], reason: str
) -> None:
    gateway, board = _gateway()
    with pytest.raises(Aborted) as refused:
        await gateway.CreateMatch(_opening(**levels), player_context(CONFIG.token_key))
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert reason in refused.value.details and "x" * 100 not in refused.value.details
    assert board.created == []


def test_every_reader_of_the_match_keeps_the_levels() -> None:
    lobby = pe.MatchLobby(bots=["ann", "bo"], bot_levels=LEVELS)
    opened = make_envelope(
        match_id="m",
        stream="board",
        sequence=1,
        payload=pe.MatchCreated(game="dungeon_drop", players=["ann", "bo", "cy"], lobby=lobby),
        cause=CAUSE,
        game="dungeon_drop",
    )
    match = created(opened)
    assert match.bot_levels == LEVELS
    assert dict(summary(match).bot_levels) == LEVELS  # what ListMatches lists
    assert from_update(update(match), match.state).bot_levels == LEVELS
    recorded, _, _ = decode_record(encode_record(match, {}, {}))
    assert recorded is not None and recorded.bot_levels == LEVELS


def test_a_match_recorded_before_the_levels_has_none() -> None:
    game = get_game("crashland")
    match = Match("m", game, ("p",), game.initial_state(), bots=("p",))
    record = encode_record(match, {}, {})
    (length,) = folder._LENGTH.unpack_from(record, 1)
    facts = json.loads(record[5 : 5 + length])
    del facts["bot_levels"]  # as the projector wrote it before levels existed
    text = json.dumps(facts).encode()
    older = record[:1] + folder._LENGTH.pack(len(text)) + text + record[5 + length :]
    recorded, _, _ = decode_record(older)
    assert recorded is not None and recorded.bots == ("p",) and recorded.bot_levels == {}
