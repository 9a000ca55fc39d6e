"""The board service over in-memory fakes (a list for Kafka, dice and decks servicers called
in-process): the gRPC mapping of the command handler, refusals with their status codes and
reasons, retries, failures of chance and of the event log, and recovery from the event log."""

from __future__ import annotations

import random
from collections.abc import Awaitable
from typing import cast

import grpc
import pytest

from services.adapters.folding import fold_board_events
from services.board.chance import RemoteChance
from services.board.service import BoardService
from services.decks.service import DecksService
from services.dice.service import DiceService
from tabletop.v1 import (
    board_pb2,
    decks_pb2_grpc,
    dice_pb2,
    dice_pb2_grpc,
    games_pb2,
    platform_events_pb2,
)
from tests.unit.fakes import (
    Aborted,
    DirectDecks,
    DirectDice,
    context,
    memory_writer,
)

SECRET = b"b" * 32
MATCH = "m-1"


class Board:
    def __init__(self, shard: int = 0, shards: int = 1) -> None:
        self.writer, self.event_log = memory_writer("board", shard, shards)
        dice_writer, self.dice_log = memory_writer("dice")
        decks_writer, self.decks_log = memory_writer("decks")
        self.dice = DirectDice(DiceService(dice_writer, SECRET))
        self.decks = DirectDecks(DecksService(decks_writer, SECRET))
        chance = RemoteChance(
            cast(dice_pb2_grpc.DiceStub, self.dice), cast(decks_pb2_grpc.DecksStub, self.decks)
        )
        self.service = BoardService(self.writer, chance)

    async def create(
        self,
        match_id: str = MATCH,
        game: str = "crashland",
        players: tuple[str, ...] = ("ann",),
        seated: platform_events_pb2.SeatJoined | None = None,
    ) -> board_pb2.CreateMatchReply:
        request = board_pb2.CreateMatchRequest(
            game=game,
            players=players,
            match_id=match_id,
            command_id=f"create:{match_id}",
            seated=seated,
        )
        return await self.service.CreateMatch(request, context())

    async def legal(self, player: str = "ann") -> list[games_pb2.GameAction]:
        request = board_pb2.GetLegalActionsRequest(match_id=MATCH, player=player)
        reply = await self.service.GetLegalActions(request, context())
        return [legal.action for legal in reply.actions]

    async def submit(
        self,
        command_id: str,
        action: games_pb2.GameAction,
        player: str = "ann",
        expected: int | None = None,
        match_id: str = MATCH,
    ) -> board_pb2.SubmitActionReply:
        request = board_pb2.SubmitActionRequest(
            match_id=match_id,
            player=player,
            command_id=command_id,
            action=action,
            expected_version=expected,
        )
        return (await self.service.SubmitCommand(request, context())).reply


async def refused(call: Awaitable[object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(Aborted) as aborted:
        await call
    return aborted.value.code, aborted.value.reason


async def test_a_created_match_is_on_the_log_and_offers_legal_actions() -> None:
    board = Board()
    reply = await board.create()
    assert reply.version == len(board.event_log.envelopes) > 1
    assert board.event_log.envelopes[0].event_type == "tabletop.v1.MatchCreated"
    assert await board.legal()
    # Crashland shuffles and draws but rolls no dice: its seed is committed with decks only
    assert board.decks.calls[0] == "Commit" and board.dice.calls == []
    created = fold_board_events(board.event_log.envelopes)
    assert created.decks_commitment and not created.dice_commitment


async def test_a_game_that_rolls_and_draws_commits_seeds_with_dice_and_decks() -> None:
    board = Board()
    await board.create(game="drillit", players=("ann", "bob"))
    assert board.dice.calls[0] == "Commit" and board.decks.calls[0] == "Commit"
    created = fold_board_events(board.event_log.envelopes)
    assert created.dice_commitment and created.decks_commitment


async def test_a_commands_chance_is_one_append_per_service_sealed_before_its_own() -> None:
    board = Board()
    sealed_before_board: list[int] = []
    seal = board.decks.Seal

    async def seal_and_note(request: dice_pb2.SealRequest, **call: object) -> dice_pb2.SealReply:
        sealed_before_board.append(len(board.event_log.envelopes))
        return await seal(request, **call)

    board.decks.Seal = seal_and_note  # type: ignore[method-assign]
    await board.create()  # Crashland: the seeds committed, two decks shuffled, a card drawn
    decks_calls = [c for c in board.decks.calls if c != "Seal"]
    assert decks_calls[:2] == ["Commit", "Shuffle"] and "Draw" in decks_calls
    assert board.decks_log.appends == 1 and len(board.decks_log.envelopes) == len(decks_calls)
    assert board.dice_log.appends == 0  # no dice seed: Crashland rolls none
    assert sealed_before_board == [0]  # the board appended the match only afterwards
    assert board.event_log.envelopes


async def test_an_action_is_appended_and_a_retry_appends_nothing() -> None:
    board = Board()
    await board.create()
    action = (await board.legal())[0]
    first = await board.submit("c1", action)
    assert first.version == len(board.event_log.envelopes)
    assert not first.duplicate and first.events_appended >= 1
    again = await board.submit("c1", action)
    assert again.duplicate and again.version == first.version
    assert len(board.event_log.envelopes) == first.version


async def test_each_refusal_has_its_status_code_and_reason() -> None:
    board = Board()
    created = await board.create()
    legal = await board.legal()
    await board.submit("c1", legal[0])
    other = next(a for a in await board.legal() if a != legal[0])
    drillit = games_pb2.GameAction(drillit=games_pb2.GameAction().drillit)
    cases = {
        (grpc.StatusCode.INVALID_ARGUMENT, "MISSING_COMMAND_ID"): board.submit("", legal[0]),
        (grpc.StatusCode.NOT_FOUND, "NO_SUCH_MATCH"): board.submit("c", legal[0], match_id="x"),
        (grpc.StatusCode.FAILED_PRECONDITION, "COMMAND_ID_REUSED"): board.submit("c1", other),
        (grpc.StatusCode.ABORTED, "STALE_VERSION"): board.submit(
            "c2", other, expected=created.version
        ),
        (grpc.StatusCode.PERMISSION_DENIED, "NOT_A_PLAYER"): board.submit("c3", other, "eve"),
        (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_ACTION"): board.submit("c4", drillit),
        (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_GAME"): board.create("m-2", "chess"),
        (grpc.StatusCode.ALREADY_EXISTS, "MATCH_EXISTS"): board.service.CreateMatch(
            board_pb2.CreateMatchRequest(
                game="crashland", players=["ann"], match_id=MATCH, command_id="another"
            ),
            context(),
        ),
        (grpc.StatusCode.INVALID_ARGUMENT, "PLAYERS"): board.create("m-3", players=("a", "b")),
    }
    appended = len(board.event_log.envelopes)
    for expected, call in cases.items():
        with pytest.raises(Aborted) as aborted:
            await call
        assert (aborted.value.code, aborted.value.reason) == expected
    assert len(board.event_log.envelopes) == appended


async def test_a_retried_create_gets_the_first_version() -> None:
    board = Board()
    first = await board.create()
    assert (await board.create()).version == first.version


def _creator_sits(seat: str = "ann", join_id: str = "j-1") -> platform_events_pb2.SeatJoined:
    return platform_events_pb2.SeatJoined(
        seat=seat, display_name="Ann", join_id=join_id, by="creator"
    )


async def test_a_seat_taken_with_the_create_follows_match_created_in_its_append() -> None:
    board = Board()
    reply = await board.create(seated=_creator_sits())
    types = [e.event_type for e in board.event_log.envelopes]
    assert types[:2] == ["tabletop.v1.MatchCreated", "tabletop.v1.SeatJoined"]
    assert reply.version == len(types) and board.event_log.appends == 1
    match = board.service.matches.get(MATCH)
    assert match is not None
    folded = fold_board_events(board.event_log.envelopes)
    assert (match.seats, match.seat_tokens) == (folded.seats, folded.seat_tokens)
    assert folded.seats == {"ann": "Ann"} and folded.seat_tokens == {"ann": "j-1"}
    # its player acts without asking: the reply brings what GetLegalActions answers
    asked = await board.service.GetLegalActions(
        board_pb2.GetLegalActionsRequest(match_id=MATCH, player="ann"), context()
    )
    assert asked.actions and reply.legal_actions == asked
    again = await board.create(seated=_creator_sits())  # a retry: the first version
    assert again.version == reply.version and again.legal_actions == asked
    assert board.event_log.appends == 1
    unseated = await Board().create()
    assert not unseated.HasField("legal_actions")


async def test_a_seat_taken_with_the_create_must_be_a_seat_claimed_by_the_creator() -> None:
    board = Board()
    assert await refused(board.create(seated=_creator_sits(seat="zed"))) == (
        grpc.StatusCode.NOT_FOUND,
        "NO_SUCH_SEAT",
    )
    assert await refused(board.create(seated=_creator_sits(join_id=""))) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "MALFORMED_JOIN",
    )
    free = _creator_sits()
    free.by = "free"
    assert await refused(board.create(seated=free)) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "MALFORMED_JOIN",
    )
    assert board.event_log.envelopes == [] and board.decks.calls == []


async def test_a_match_of_another_shard_is_refused() -> None:
    board = Board(shard=0, shards=64)
    other = next(f"m-{i}" for i in range(64) if not board.writer.owns(f"m-{i}"))
    assert await refused(board.create(other)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "WRONG_SHARD",
    )


async def test_bad_players_commit_no_seeds() -> None:
    board = Board()
    await refused(board.create(players=("a", "b")))
    assert board.dice.calls == [] and board.decks.calls == []


async def test_unavailable_dice_refuse_with_unavailable_and_append_nothing() -> None:
    board = Board()
    await board.create()
    board.dice.down = board.decks.down = True
    for turn in range(1000):  # until an action needs dice or cards
        appended = len(board.event_log.envelopes)
        action = (await board.legal())[0]
        try:
            await board.submit(f"c{turn}", action)
        except Aborted as aborted:
            assert (aborted.code, aborted.reason) == (
                grpc.StatusCode.UNAVAILABLE,
                "CHANCE_UNAVAILABLE",
            )
            break
    else:
        raise AssertionError("no action needed chance")
    assert len(board.event_log.envelopes) == appended
    board.dice.down = board.decks.down = False
    assert not (await board.submit(f"c{turn}", action)).duplicate


async def test_an_unavailable_log_leaves_the_match_unchanged() -> None:
    board = Board()
    await board.create()
    match = board.service.matches.get(MATCH)
    assert match is not None
    before = (match.state, match.version)
    action = (await board.legal())[0]
    board.event_log.down = True
    assert await refused(board.submit("c1", action)) == (
        grpc.StatusCode.UNAVAILABLE,
        "LOG_UNAVAILABLE",
    )
    assert (match.state, match.version) == before
    board.event_log.down = False
    assert not (await board.submit("c1", action)).duplicate


async def test_a_create_refused_after_its_seeds_were_committed_keeps_nothing_of_them() -> None:
    board = Board()
    board.event_log.down = True
    code, _ = await refused(board.create())
    assert code == grpc.StatusCode.UNAVAILABLE and "Commit" in board.decks.calls
    assert board.service._chance._committed == {}  # no reveal will come for it
    board.event_log.down = False
    await board.create()  # the retry commits again, and is remembered for its reveal
    assert board.service._chance._committed == {MATCH: frozenset({"decks"})}


async def play_to_the_end(board: Board, seed: int) -> board_pb2.SubmitActionReply:
    rng = random.Random(seed)
    await board.create()
    for turn in range(10_000):
        legal = await board.legal()
        reply = await board.submit(f"c{turn}", legal[rng.randrange(len(legal))])
        if reply.finished:
            return reply
    raise AssertionError("no end")


async def test_a_whole_match_folds_as_its_log_does_and_reveals_the_seeds() -> None:
    board = Board()
    last = await play_to_the_end(board, 7)
    assert board.event_log.envelopes[-1].event_type == "tabletop.v1.MatchEnded"
    served = await board.service.find(MATCH)  # finished: reloaded from the log
    folded = fold_board_events(board.event_log.envelopes)
    assert served is not None
    assert (served.state, served.version, served.results) == (
        folded.state,
        folded.version,
        folded.results,
    )
    assert last.version == folded.version
    # answered before the seeds are revealed: the outbox reveals them just after
    assert "Reveal" not in board.decks.calls and board.service.reveals.pending() == {MATCH}
    assert not await board.service.reveals.drain_once()
    assert "Reveal" in board.decks.calls and "Reveal" not in board.dice.calls  # no dice seed
    assert board.decks_log.envelopes[-1].event_type == "tabletop.v1.DecksSeedRevealed"
    assert board.service.reveals.pending() == set()
    assert await refused(board.submit("late", games_pb2.GameAction())) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "MATCH_OVER",
    )


async def test_a_reveal_after_a_restart_asks_both_services_and_one_without_a_seed_has_none() -> (
    None
):
    board = Board()
    await play_to_the_end(board, 7)
    # a board restarted since the match began does not know which services it used
    restarted = RemoteChance(
        cast(dice_pb2_grpc.DiceStub, board.dice), cast(decks_pb2_grpc.DecksStub, board.decks)
    )
    await restarted.reveal(MATCH, "reveal:m-1")
    assert "Reveal" in board.dice.calls and board.dice_log.envelopes == []  # NOT_FOUND: none
    assert board.decks_log.envelopes[-1].event_type == "tabletop.v1.DecksSeedRevealed"


async def test_a_board_recovered_from_the_log_answers_retries_as_before() -> None:
    board = Board()
    await board.create()
    action = (await board.legal())[0]
    first = await board.submit("c1", action)
    recovered = Board()
    for envelope in board.event_log.envelopes:
        recovered.service.apply(envelope)
    again = await recovered.submit("c1", action)
    assert again.duplicate and again.version == first.version
    assert again.events_appended == first.events_appended
