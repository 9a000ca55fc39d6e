"""The command handler with in-memory fakes: accepting, chance, retries, refusals, atomicity."""

from __future__ import annotations

from typing import Any

import pytest

from services.games.commands import (
    Batch,
    Command,
    CommandHandler,
    Opening,
    Refusal,
    RefusalKind,
)
from services.games.contract import ChanceOutcome, ChanceRequest, DiceRolled, Game
from services.games.match import Accepted, Match
from tests.unit.games.race_game import (
    FirstPlayerChosen,
    Pushed,
    Race,
    Started,
    Stride,
    Strode,
)

PLAYERS = ("ann", "bob")


class ScriptedDice:
    """A ChanceResolver rolling the values it was given, in order."""

    def __init__(self, *values: int) -> None:
        self.values = list(values)
        self.request_ids: list[str] = []
        self.down = False
        #: (match, command) of every settle, and how many batches were appended then
        self.settled: list[tuple[str, str, int]] = []
        self.sealing_down = False
        self.store: MemoryStore | None = None

    async def resolve(
        self, match_id: str, request: ChanceRequest, request_id: str, cause: str
    ) -> ChanceOutcome:
        if self.down:
            raise Refusal(RefusalKind.UNAVAILABLE, "CHANCE_UNAVAILABLE", "dice are down")
        self.request_ids.append(request_id)
        return DiceRolled((self.values.pop(0),))

    async def settle(self, match_id: str, cause: str) -> None:
        if self.sealing_down:
            raise Refusal(RefusalKind.UNAVAILABLE, "CHANCE_UNAVAILABLE", "dice cannot seal")
        appended = len(self.store.batches) if self.store is not None else 0
        self.settled.append((match_id, cause, appended))


class MemoryStore:
    """An EventStore in a list; ``down`` makes appends fail (nothing is kept)."""

    def __init__(self) -> None:
        self.batches: list[Batch] = []
        self.down = False

    async def append(self, game: Game[Any], batch: Batch) -> int:
        if self.down:
            raise Refusal(RefusalKind.UNAVAILABLE, "LOG_UNAVAILABLE", "the log is down")
        self.batches.append(batch)
        return sum(len(b) for b in self.batches)

    def events(self) -> list[Any]:
        return [event for batch in self.batches for event in batch.events]


class Table:
    """A race match with its handler, fakes and a decode that refuses non-Stride input."""

    def __init__(self, *rolls: int) -> None:
        self.game = Race()
        self.dice = ScriptedDice(*rolls)
        self.store = MemoryStore()
        self.dice.store = self.store
        self.handler = CommandHandler(self.dice, self.store, self._decode)
        self.match = Match("m-1", self.game, PLAYERS, self.game.initial_state())
        self.openings = 0

    @staticmethod
    def _decode(game: Game[Any], action: Any) -> Any:
        if isinstance(action, str):
            raise ValueError(f"not an action: {action!r}")
        return action

    async def _opening(self) -> Opening:
        self.openings += 1
        return Opening("race", PLAYERS, {}, "dice-commitment", "decks-commitment")

    async def create(self) -> Accepted:
        return await self.handler.create(self.match, {}, "create", "board", self._opening)

    async def submit(
        self, command_id: str, player: str, action: Any, expected: int | None = None
    ) -> Accepted:
        return await self.handler.submit(self.match, Command(command_id, player, action, expected))


async def refusal(table: Table, *command: Any) -> Refusal:
    with pytest.raises(Refusal) as refused:
        await table.submit(*command)
    return refused.value


async def created(*rolls: int) -> Table:
    """A race where ann starts (the d2 rolls 1), then ``rolls`` for the pushes."""
    table = Table(1, *rolls)
    await table.create()
    return table


# -- accepting ------------------------------------------------------------------------


async def test_create_appends_the_opening_the_setup_and_the_first_chance_node() -> None:
    table = Table(2)
    reply = await table.create()
    [batch] = table.store.batches
    assert batch.opening == Opening("race", PLAYERS, {}, "dice-commitment", "decks-commitment")
    assert list(batch.events) == [Started(PLAYERS), FirstPlayerChosen(1)]
    assert batch.ending is None
    assert reply == Accepted(version=3, events_appended=3, finished=False)
    assert table.match.version == 3
    assert table.match.state.turn == 1
    assert table.dice.request_ids == ["create:0"]


async def test_an_accepted_command_resolves_chance_appends_and_folds() -> None:
    table = await created(4)
    reply = await table.submit("c1", "ann", Stride(2))
    assert list(table.store.batches[-1].events) == [Strode("ann", 2), Pushed("ann", 4)]
    assert table.store.batches[-1].actor == "ann"
    assert reply == Accepted(version=5, events_appended=2, finished=False)
    assert table.match.state.positions == (6, 0)
    assert table.match.state.turn == 1
    assert table.dice.request_ids[-1] == "c1:0"


async def test_every_event_is_evolved_exactly_once() -> None:
    table = await created(4, 1, 5)
    await table.submit("c1", "ann", Stride(2))
    await table.submit("c2", "bob", Stride(1))
    await table.submit("c3", "ann", Stride(3))
    assert table.game.evolved == len(table.store.events())


async def test_the_command_that_ends_the_match_appends_the_ending() -> None:
    table = await created(6, 6, 1)
    await table.submit("c1", "ann", Stride(3))  # ann at 9
    reply = await table.submit("c2", "bob", Stride(1))  # bob at 7
    assert not reply.finished
    reply = await table.submit("c3", "ann", Stride(1))  # ann at 10: no push
    ending = table.store.batches[-1].ending
    assert ending is not None and ending.results == {"ann": "won", "bob": "lost"}
    assert reply == Accepted(version=9, events_appended=2, finished=True)
    assert table.match.finished
    assert table.match.results == {"ann": "won", "bob": "lost"}
    assert table.match.end_reason == "reached the goal"


# -- retries ------------------------------------------------------------------------


async def test_a_retried_command_gets_the_first_reply_and_appends_nothing() -> None:
    table = await created(4)
    first = await table.submit("c1", "ann", Stride(2))
    batches = len(table.store.batches)
    again = await table.submit("c1", "ann", Stride(2))
    assert again == Accepted(first.version, first.events_appended, first.finished, True)
    assert len(table.store.batches) == batches
    assert table.dice.request_ids == ["create:0", "c1:0"]


async def test_a_retry_is_answered_even_after_the_match_moved_on() -> None:
    table = await created(4, 2)
    first = await table.submit("c1", "ann", Stride(2), 3)
    await table.submit("c2", "bob", Stride(1))
    again = await table.submit("c1", "ann", Stride(2), 3)
    assert again.duplicate and again.version == first.version


async def test_a_command_id_reused_for_another_action_is_refused() -> None:
    table = await created(4)
    await table.submit("c1", "ann", Stride(2))
    refused = await refusal(table, "c1", "ann", Stride(3))
    assert (refused.kind, refused.code) == (
        RefusalKind.FAILED_PRECONDITION,
        "COMMAND_ID_REUSED",
    )


async def test_a_command_id_reused_by_another_player_is_refused() -> None:
    table = await created(4)
    await table.submit("c1", "ann", Stride(2))
    refused = await refusal(table, "c1", "bob", Stride(2))
    assert refused.code == "COMMAND_ID_REUSED"


async def test_a_recovered_command_id_is_answered_as_a_retry() -> None:
    """Commands recovered from a log are known by id only (no action to compare)."""
    table = await created(4)
    await table.submit("c1", "ann", Stride(2))
    table.match.commands.clear()
    assert (await table.submit("c1", "ann", Stride(3))).duplicate


# -- refusals: each code, and nothing appended or folded ------------------------------


async def assert_refused(
    table: Table, command: tuple[Any, ...], kind: RefusalKind, code: str
) -> None:
    before = (table.match.state, table.match.version, dict(table.match.replies))
    batches = len(table.store.batches)
    refused = await refusal(table, *command)
    assert (refused.kind, refused.code) == (kind, code)
    assert refused.message
    assert len(table.store.batches) == batches
    assert (table.match.state, table.match.version, table.match.replies) == before


async def test_a_missing_command_id_is_refused() -> None:
    table = await created()
    await assert_refused(
        table, ("", "ann", Stride(1)), RefusalKind.INVALID_ARGUMENT, "MISSING_COMMAND_ID"
    )


async def test_a_stale_expected_version_is_refused() -> None:
    table = await created(4)
    await table.submit("c1", "ann", Stride(2), 3)
    await assert_refused(table, ("c2", "bob", Stride(1), 3), RefusalKind.ABORTED, "STALE_VERSION")


async def test_the_current_expected_version_is_accepted() -> None:
    table = await created(4)
    assert not (await table.submit("c1", "ann", Stride(2), 3)).duplicate


async def test_a_command_after_the_end_is_refused() -> None:
    table = await created(6, 6, 6)
    await table.submit("c1", "ann", Stride(3))
    await table.submit("c2", "bob", Stride(1))
    await table.submit("c3", "ann", Stride(1))
    await assert_refused(
        table, ("c4", "bob", Stride(1)), RefusalKind.FAILED_PRECONDITION, "MATCH_OVER"
    )


async def test_someone_who_does_not_play_is_refused() -> None:
    table = await created()
    await assert_refused(
        table, ("c1", "eve", Stride(1)), RefusalKind.PERMISSION_DENIED, "NOT_A_PLAYER"
    )


async def test_an_action_that_does_not_decode_is_malformed() -> None:
    table = await created()
    await assert_refused(
        table, ("c1", "ann", "jump"), RefusalKind.INVALID_ARGUMENT, "MALFORMED_ACTION"
    )


async def test_an_action_the_engine_calls_malformed_keeps_its_code() -> None:
    table = await created()
    await assert_refused(
        table, ("c1", "ann", Stride(7)), RefusalKind.INVALID_ARGUMENT, "BAD_STRIDE"
    )


async def test_a_rule_violation_keeps_its_code() -> None:
    table = await created()
    await assert_refused(
        table, ("c1", "bob", Stride(1)), RefusalKind.FAILED_PRECONDITION, "NOT_YOUR_TURN"
    )


async def test_a_refused_command_id_can_be_used_again() -> None:
    table = await created(4)
    await refusal(table, "c1", "bob", Stride(1))
    assert not (await table.submit("c1", "ann", Stride(1))).duplicate


async def test_bad_players_refuse_the_creation_before_the_opening() -> None:
    table = Table(1)
    table.match = Match("m-1", table.game, ("solo",), table.game.initial_state())
    with pytest.raises(Refusal) as refused:
        await table.create()
    assert (refused.value.kind, refused.value.code) == (RefusalKind.INVALID_ARGUMENT, "PLAYERS")
    assert table.openings == 0
    assert table.store.batches == []


async def test_creating_a_match_twice_is_refused() -> None:
    table = await created()
    with pytest.raises(Refusal) as refused:
        await table.create()
    assert refused.value.code == "MATCH_EXISTS"
    assert len(table.store.batches) == 1


# -- failures of the injected chance and store -------------------------------------


async def test_a_failed_append_leaves_the_match_unchanged_and_the_retry_succeeds() -> None:
    table = await created(4, 4)
    before = (table.match.state, table.match.version, dict(table.match.replies))
    evolved = table.game.evolved
    table.store.down = True
    with pytest.raises(Refusal) as refused:
        await table.submit("c1", "ann", Stride(2))
    assert refused.value.code == "LOG_UNAVAILABLE"
    assert (table.match.state, table.match.version, table.match.replies) == before
    assert "c1" not in table.match.commands
    table.store.down = False
    reply = await table.submit("c1", "ann", Stride(2))
    assert not reply.duplicate
    assert table.match.state.positions == (6, 0)
    # the retry asks for the same chance node again (the dice service answers it the same)
    assert table.dice.request_ids[-2:] == ["c1:0", "c1:0"]
    assert table.game.evolved - evolved == 4  # two tries, each folding its two events once


async def test_outcomes_are_settled_once_per_command_before_its_append() -> None:
    table = await created(4, 1)
    await table.submit("c1", "ann", Stride(2))  # a push: one chance node
    # given the create (seed commitments and the first player's roll) and c1, each
    # settled once, while the store held only what came before
    assert table.dice.settled == [("m-1", "create", 0), ("m-1", "c1", 1)]


async def test_a_command_without_chance_settles_nothing() -> None:
    table = await created(6, 6)
    await table.submit("c1", "ann", Stride(3))  # ann at 9
    await table.submit("c2", "bob", Stride(1))  # bob at 7
    settled = len(table.dice.settled)
    await table.submit("c3", "ann", Stride(1))  # ann at 10: no push, no chance node
    assert len(table.dice.settled) == settled


async def test_outcomes_that_cannot_be_settled_append_nothing() -> None:
    table = await created(4, 4)
    before = (table.match.state, table.match.version)
    table.dice.sealing_down = True
    with pytest.raises(Refusal) as refused:
        await table.submit("c1", "ann", Stride(2))
    assert (refused.value.kind, refused.value.code) == (
        RefusalKind.UNAVAILABLE,
        "CHANCE_UNAVAILABLE",
    )
    assert len(table.store.batches) == 1
    assert (table.match.state, table.match.version) == before
    table.dice.sealing_down = False
    reply = await table.submit("c1", "ann", Stride(2))
    assert not reply.duplicate and table.match.state.positions == (6, 0)


async def test_unavailable_chance_appends_nothing() -> None:
    table = await created()
    table.dice.down = True
    with pytest.raises(Refusal) as refused:
        await table.submit("c1", "ann", Stride(2))
    assert (refused.value.kind, refused.value.code) == (
        RefusalKind.UNAVAILABLE,
        "CHANCE_UNAVAILABLE",
    )
    assert len(table.store.batches) == 1
    assert table.match.state.positions == (0, 0)
