"""The turn sequence: deterministic steps run automatically after every decision and
chance outcome, until a player or the dice/decks must speak again."""

from __future__ import annotations

from typing import Any

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    DrawCards,
    Finished,
    Outcome,
    RollDice,
    Step,
)
from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT, HORDE
from services.games.drillit.end_conditions import (
    LIFE_TRACK_FULL,
    defeat_at_turn_end,
    life_track_full,
)
from services.games.drillit.evolve import evolve
from services.games.drillit.goblin_attack import attack_box, horde_events
from services.games.drillit.player_actions import turbo_actions
from services.games.drillit.setup_rules import automatic_setup, setup_chooser, setup_request
from services.games.drillit.state import DrillitState, Phase
from services.games.drillit.turn_start import main_event, sub_event


def missing_pieces(state: DrillitState) -> tuple[str, ...]:
    return tuple(p for p in state.players if p not in state.hands)


def refill_count(state: DrillitState) -> int:
    return min(len(missing_pieces(state)), state.path_pile)


def reveal_event_card(state: DrillitState) -> list[Any]:
    """Reveal the top card; resolve its sub-events in order, then its main event."""
    card = CONTENT.cards[state.event_deck[0]]
    out: list[Any] = [ev.EventCardRevealed(card.id, card.main, len(state.event_deck) - 1)]
    state = evolve(state, out[0])
    for name in ("advance", "intensify", "overheat"):
        for fact in sub_event(state, card, name):
            state = evolve(state, fact)
            out.append(fact)
        if life_track_full(state):
            return out
    return out + main_event(state, card)


def next_player(state: DrillitState) -> str:
    assert state.active is not None
    seat = state.players.index(state.active)
    return state.players[(seat + 1) % len(state.players)]  # clockwise


def automatic_events(state: DrillitState) -> list[Any]:
    phase = state.phase
    if phase in (Phase.NOT_STARTED, Phase.OVER):
        return []
    if phase == Phase.SETUP:
        return automatic_setup(state)
    if life_track_full(state):
        return [ev.MatchLost(LIFE_TRACK_FULL)]
    if phase == Phase.TURN_START:
        return reveal_event_card(state)
    if phase == Phase.ATTACK and attack_box(state) == HORDE:
        return horde_events()  # the Horde needs no more dice
    if phase == Phase.TURBO and state.turbo_piece is None and state.path_pile == 0:
        return [ev.TurboStopped("the Path pile is empty")]
    if phase == Phase.TURBO and state.turbo_piece is not None and not turbo_actions(state):
        return [ev.TurboPieceDiscarded(state.turbo_piece, "it fits nowhere")]
    if phase == Phase.REFILL and refill_count(state) == 0:
        return [ev.TurnEnded(state.turn)]
    if phase == Phase.TURN_OVER:
        reason = defeat_at_turn_end(state)
        if reason is not None:
            return [ev.MatchLost(reason)]
        return [ev.TurnStarted(next_player(state), state.turn + 1, CONTENT.action_points)]
    return []


def advance(state: DrillitState, new: list[Any]) -> list[Any]:
    """``new`` plus every automatic event that follows it."""
    out = list(new)
    for event in new:
        state = evolve(state, event)
    while True:
        more = automatic_events(state)
        if not more:
            return out
        for event in more:
            state = evolve(state, event)
        out += more


def next_step(state: DrillitState) -> Step:
    match state.phase:
        case Phase.OVER:
            results = "won" if state.won else "lost"
            return Finished(
                Outcome(
                    dict.fromkeys(state.players, results),
                    state.end_reason,
                    {"turns": state.turn},
                )
            )
        case Phase.SETUP:
            request = setup_request(state)
            if request is not None:
                return AwaitingChance(request)
            chooser = setup_chooser(state)
            if chooser is not None:
                phase = "choose-start-room" if state.choosing_room else "choose-starting-player"
                return AwaitingPlayers((chooser,), phase)
        case Phase.FIRE:
            return AwaitingChance(RollDice(1, 6, "Fire event: the burning room"))
        case Phase.ATTACK:
            return AwaitingChance(RollDice(1, 6, "Goblin attack: the radar sector"))
        case Phase.ACTIONS:
            assert state.active is not None
            return AwaitingPlayers((state.active,), "actions")
        case Phase.TURBO:
            assert state.active is not None
            if state.turbo_piece is None:
                return AwaitingChance(DrawCards("paths", 1, "Turbo: a random Path piece"))
            return AwaitingPlayers((state.active,), "turbo")
        case Phase.REFILL:
            return AwaitingChance(
                DrawCards("paths", refill_count(state), "players without a Path piece draw one")
            )
    return AwaitingPlayers((), state.phase.value)
