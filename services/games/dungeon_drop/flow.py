"""The turn sequence: who acts, which chance node is pending, and the automatic steps
(turn start, turn end, round end, reveal, final score) that follow each decision."""

from __future__ import annotations

from typing import Any

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    ChanceRequest,
    DrawCards,
    Finished,
    Outcome,
    RollDice,
    ShuffleDeck,
    Step,
)
from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.evolve import evolve
from services.games.dungeon_drop.loot import weight
from services.games.dungeon_drop.scoring import initiative, pairs, score, winner
from services.games.dungeon_drop.state import DungeonDropState, Phase
from services.games.dungeon_drop.table import FLICK_REALS, REAL_SIDES, drop_reals

BOX = "box"
HERO_DECKS = ("races", "classes", "quests")


def deck_cards(deck: str) -> tuple[str, ...]:
    cards = _DECK_CARDS.get(deck)
    return cards if cards is not None else CONTENT.box_cubes()


#: each deck's cards as the content lists them (listed once: every setup step asks)
_DECK_CARDS = {
    "races": tuple(CONTENT.races),
    "classes": tuple(CONTENT.classes),
    "quests": tuple(CONTENT.quests),
    BOX: CONTENT.box_cubes(),
}


def _dealt(state: DungeonDropState, deck: str) -> bool:
    if deck == "races":
        return bool(state.races)
    if deck == "classes":
        return bool(state.classes)
    return bool(state.quests)


def setup_request(state: DungeonDropState) -> ChanceRequest:
    for deck in HERO_DECKS:
        if deck not in state.shuffled:
            return ShuffleDeck(deck, deck_cards(deck), f"shuffle the {deck}")
        if not _dealt(state, deck):
            return DrawCards(deck, len(state.players), f"deal one of the {deck} to each hero")
    if BOX not in state.shuffled:
        return ShuffleDeck(BOX, deck_cards(BOX), "the larger cubes go back into the box")
    cubes = _SETUP_DROPPED[state.variant == "solo"]
    again = " again" if state.setup_redrops else ""
    return RollDice(drop_reals(cubes), REAL_SIDES, f"drop the dungeon{again}")


#: how many cubes the setup drops, without and with Solo's Phantoms (counted once: the
#: setup's every step asks)
_SETUP_DROPPED = {solo: len(CONTENT.setup_cubes(solo)) for solo in (False, True)}


def pending_chance(state: DungeonDropState) -> ChanceRequest | None:
    match state.phase:
        case Phase.SETUP:
            return setup_request(state)
        case Phase.EXPLORE | Phase.ABILITY if state.to_draw > 0:
            return DrawCards(BOX, state.to_draw, "draw cubes from the box without looking")
        case Phase.EXPLORE | Phase.ABILITY if state.pending_drop:
            count = drop_reals(len(state.pending_drop))
            return RollDice(count, REAL_SIDES, "drop cubes into the dungeon")
        case Phase.ABILITY if state.pending_flick is not None:
            return RollDice(FLICK_REALS, REAL_SIDES, "the flick's landing")
        case Phase.SCORING if not state.chests_rolled and total_pairs(state):
            return RollDice(total_pairs(state), CONTENT.chest_die_sides, "roll paired Chests")
    return None


def total_pairs(state: DungeonDropState) -> int:
    return sum(pairs(state.stash[p]) for p in state.players)


def meeple_placer(state: DungeonDropState) -> str | None:
    """Teamwork: the next opponent (in turn order after the active player) to place."""
    assert state.active is not None
    start = state.order.index(state.active)
    for i in range(1, len(state.order)):
        player = state.order[(start + i) % len(state.order)]
        if player not in state.meeples:
            return player
    return None


def acting(state: DungeonDropState) -> str | None:
    if state.phase == Phase.MEEPLES:
        return meeple_placer(state)
    if state.phase in (Phase.ACT, Phase.ABILITY, Phase.LOOT, Phase.TAKE):
        return state.active
    return None


def next_round_order(state: DungeonDropState) -> tuple[str, ...]:
    """Lightest to heaviest Weight; ties by starting Initiative, lowest first."""
    return tuple(sorted(state.players, key=lambda p: (weight(state, p), initiative(state, p))))


def outcome(state: DungeonDropState) -> Outcome:
    if state.variant == "solo":
        (hero,) = state.players
        won = state.scores[hero] >= CONTENT.solo_target
        return Outcome({hero: "won" if won else "lost"}, "solo target", dict(state.scores))
    results = {p: "won" if p == state.winner else "lost" for p in state.players}
    return Outcome(results, "highest total after 3 rounds", dict(state.scores))


def next_step(state: DungeonDropState) -> Step:
    if state.phase == Phase.OVER:
        return Finished(outcome(state))
    request = pending_chance(state)
    if request is not None:
        return AwaitingChance(request)
    player = acting(state)
    # the phase's value: a StrEnum's str() (``.value`` is a Python-level property)
    if player is not None:
        return AwaitingPlayers((player,), str(state.phase))
    return AwaitingPlayers((), str(state.phase))


def automatic_events(state: DungeonDropState) -> list[Any]:
    match state.phase:
        case Phase.NEXT_TURN:
            player = state.order[state.turn]
            count = min(state.explore_count(), state.box_left)
            return [ev.TurnStarted(player, state.round, count)]
        case Phase.TURN_OVER:
            assert state.active is not None
            return [ev.TurnEnded(state.active)]
        case Phase.ROUND_OVER:
            weights = {p: weight(state, p) for p in state.players}
            return [ev.RoundEnded(state.round, weights, next_round_order(state))]
        case Phase.REVEAL:
            return [ev.QuestsRevealed(dict(state.quests))]
        case Phase.SCORING if state.chests_rolled or not total_pairs(state):
            scores = {p: score(state, p) for p in state.players}
            return [ev.MatchEnded(scores, winner(state, scores), "3 rounds completed")]
    return []


def advance(state: DungeonDropState, new: list[Any]) -> list[Any]:
    """``new`` plus every automatic event that follows it."""
    return advance_folded(state, new)[0]


def advance_folded(state: DungeonDropState, new: list[Any]) -> tuple[list[Any], DungeonDropState]:
    """``advance``, and the state with all those events folded in (folded on the way)."""
    out = list(new)
    for event in new:
        state = evolve(state, event)
    while True:
        more = automatic_events(state)
        if not more:
            return out, state
        for event in more:
            state = evolve(state, event)
        out += more
