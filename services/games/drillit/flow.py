"""The turn sequence: deterministic steps run automatically after every decision and
chance outcome, until a player or the dice/decks must speak again."""

from __future__ import annotations

import functools
from typing import Any, Final

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
from services.games.drillit.evolve import copied, fold, fold_into
from services.games.drillit.goblin_attack import attack_box, horde_events
from services.games.drillit.setup_rules import (
    automatic_setup,
    setup_chooser,
    setup_step,
    turn_started,
)
from services.games.drillit.state import DrillitState, Phase
from services.games.drillit.tunnels import placements
from services.games.drillit.turn_start import main_event, sub_event

_LIFE_TRACK: Final = CONTENT.life_track
# (Final: compiled, read from a C static; ``CONTENT.x`` or ``ev.X`` is a look-up of the
# imported name in the module's dict and one of its attribute, at every use)
_CARDS: Final = CONTENT.cards
_HORDE: Final = HORDE

# The phases as this module's constants: compiled, a name imported from an uncompiled
# module (state) is looked up in the module's dict at every use, a Final one is read from
# a C static. A state's phase is always one of these members: the tests are by identity.
NOT_STARTED: Final = Phase.NOT_STARTED
SETUP: Final = Phase.SETUP
TURN_START: Final = Phase.TURN_START
FIRE: Final = Phase.FIRE
ATTACK: Final = Phase.ATTACK
ACTIONS: Final = Phase.ACTIONS
TURBO: Final = Phase.TURBO
REFILL: Final = Phase.REFILL
TURN_OVER: Final = Phase.TURN_OVER
OVER: Final = Phase.OVER


def missing_pieces(state: DrillitState) -> tuple[str, ...]:
    hands = state.hands
    return tuple([p for p in state.players if p not in hands])  # (a list: no generator)


def refill_count(state: DrillitState) -> int:
    # min(len(missing_pieces(state)), state.path_pile), without the tuple: asked at every
    # step of the refill
    hands, missing = state.hands, 0
    for player in state.players:
        if player not in hands:
            missing += 1
    pile = state.path_pile
    return missing if missing < pile else pile


def reveal_event_card(draft: DrillitState) -> list[Any]:
    """Reveal the top card; resolve its sub-events in order, then its main event. The
    events, each folded into ``draft`` (the turn flow's own copy) on the way."""
    card = _CARDS[draft.event_deck[0]]
    out: list[Any] = [_revealed(card.id, card.main, len(draft.event_deck) - 1)]
    fold_into(draft, out)
    for name in ("advance", "intensify", "overheat"):
        out += sub_event(draft, card, name)
        if life_track_full(draft):
            return out
    facts = main_event(draft, card)
    fold_into(draft, facts)
    return out + facts


def next_player(state: DrillitState) -> str:
    assert state.active is not None
    seat = state.players.index(state.active)
    return state.players[(seat + 1) % len(state.players)]  # clockwise


def automatic_events(state: DrillitState) -> list[Any]:
    return automatic_events_folded(copied(state))[0]


def automatic_events_folded(draft: DrillitState) -> tuple[list[Any], DrillitState]:
    """The events that follow by themselves in ``draft`` (the turn flow's own copy of the
    state), and the state after them: ``draft`` with them folded in place, or in setup a
    copy (``setup_step`` remembers the step of the last state it was asked about)."""
    phase = draft.phase
    if phase is NOT_STARTED or phase is OVER:
        return [], draft
    if phase is SETUP:
        events = automatic_setup(draft)
        return events, fold(draft, events)
    # life_track_full(state), written out: asked after every event of every command
    if len(draft.armor_destroyed) + draft.permanent_damage >= _LIFE_TRACK:
        events = [ev.MatchLost(LIFE_TRACK_FULL)]
    elif phase is ACTIONS or phase is FIRE:  # waiting for a player or the dice
        return [], draft
    elif phase is TURN_START:
        return reveal_event_card(draft), draft
    else:
        events = _automatic_later(draft)
    fold_into(draft, events)
    return events, draft


def _automatic_later(state: DrillitState) -> list[Any]:
    phase = state.phase
    if phase is ATTACK:
        return horde_events() if attack_box(state) == _HORDE else []  # no more dice
    if phase is TURBO:
        piece = state.turbo_piece
        if piece is None:
            if state.path_pile == 0:
                return [ev.TurboStopped("the Path pile is empty")]
        elif not placements(state, piece, state.turbo_anchor):
            return [ev.TurboPieceDiscarded(piece, "it fits nowhere")]
        return []
    if phase is REFILL:
        return [_turn_ended(state.turn)] if refill_count(state) == 0 else []
    if phase is TURN_OVER:
        reason = defeat_at_turn_end(state)
        if reason is not None:
            return [ev.MatchLost(reason)]
        return [turn_started(next_player(state), state.turn + 1)]
    return []


# Events are immutable: one instance of each of these serves every match (building a
# frozen event costs several times the cache's look-up).


@functools.lru_cache(maxsize=256)
def _turn_ended(turn: int) -> ev.TurnEnded:
    return ev.TurnEnded(turn)


def _revealed(card: str, main_event: str, cards_left: int) -> ev.EventCardRevealed:
    # (a dict read in compiled code, not an lru_cache: a call through the cache's wrapper
    # builds its key and moves its entry, several times the cost of the look-up)
    key = (card, main_event, cards_left)
    known = _REVEALED.get(key)
    if known is None:
        if len(_REVEALED) >= 1024:
            _REVEALED.clear()
        known = _REVEALED[key] = ev.EventCardRevealed(card, main_event, cards_left)
    return known


_REVEALED: Final[dict[tuple[str, str, int], ev.EventCardRevealed]] = {}


def advance(state: DrillitState, new: list[Any]) -> list[Any]:
    """``new`` plus every automatic event that follows it."""
    return advance_folded(state, new)[0]


def advance_folded(state: DrillitState, new: list[Any]) -> tuple[list[Any], DrillitState]:
    """``advance``, and the state after all those events: folded on the way into one copy
    of ``state`` (the caller's ``state`` stays as it was)."""
    out = list(new)
    draft = copied(state)
    fold_into(draft, new)
    while True:
        more, draft = automatic_events_folded(draft)
        if not more:
            return out, draft
        out += more


#: the last state asked about and its step: a command asks for the same state's step
#: several times (the caller, legal actions, decide, the handler), and states never change.
#: One tuple, replaced whole, so concurrent callers never see a state with another's step.
#: (It starts with a step for no state, so that a hit needs no test of the step.)
_last_step: tuple[DrillitState | None, Step] = (None, AwaitingPlayers((), "none"))


def next_step(state: DrillitState) -> Step:
    global _last_step
    last, step = _last_step
    if last is state:
        return step
    step = _next_step(state)
    _last_step = (state, step)
    return step


#: the steps that never vary (steps are immutable: one instance serves every match)
_FIRE_ROLL: Final = AwaitingChance(RollDice(1, 6, "Fire event: the burning room"))
_ATTACK_ROLL: Final = AwaitingChance(RollDice(1, 6, "Goblin attack: the radar sector"))
_TURBO_DRAW: Final = AwaitingChance(DrawCards("paths", 1, "Turbo: a random Path piece"))


def _next_step(state: DrillitState) -> Step:
    phase = state.phase
    if phase is ACTIONS:
        active = state.active
        assert active is not None
        step = _AWAITING_ACTIONS.get(active)  # (_awaiting(active, "actions"), keyed by a str)
        return _awaiting(active, "actions") if step is None else step
    if phase is OVER:
        results = "won" if state.won else "lost"
        return Finished(
            Outcome(
                dict.fromkeys(state.players, results),
                state.end_reason,
                {"turns": state.turn},
            )
        )
    if phase is SETUP:
        waiting = setup_step(state)
        if waiting is not None:
            return waiting
        chooser = setup_chooser(state)
        if chooser is not None:
            name = "choose-start-room" if state.choosing_room else "choose-starting-player"
            return AwaitingPlayers((chooser,), name)
    elif phase is FIRE:
        return _FIRE_ROLL
    elif phase is ATTACK:
        return _ATTACK_ROLL
    elif phase is TURBO:
        assert state.active is not None
        if state.turbo_piece is None:
            return _TURBO_DRAW
        return _awaiting(state.active, "turbo")
    elif phase is REFILL:
        return _refill(refill_count(state))
    return AwaitingPlayers((), phase.value)


def _refill(count: int) -> AwaitingChance:
    """The step drawing ``count`` Path pieces, one per player count (steps are immutable;
    a dict read here, not an lru_cache's wrapper called)."""
    step = _REFILLS.get(count)
    if step is None:
        if len(_REFILLS) >= 16:
            _REFILLS.clear()
        reason = "players without a Path piece draw one"
        step = _REFILLS[count] = AwaitingChance(DrawCards("paths", count, reason))
    return step


_REFILLS: Final[dict[int, AwaitingChance]] = {}


#: (player, "actions" or "turbo") -> that step, built once per player (steps are
#: immutable). A dict read in compiled code, not an lru_cache: a call through the cache's
#: wrapper costs several look-ups, at every decision. Emptied when it grows past a bound.
_AWAITING: Final[dict[tuple[str, str], AwaitingPlayers]] = {}


def _awaiting(player: str, phase: str) -> AwaitingPlayers:
    """The step of a player's actions or Turbo (``_AWAITING``)."""
    key = (player, phase)
    step = _AWAITING.get(key)
    if step is None:
        if len(_AWAITING) >= 4096:
            _AWAITING.clear()
        step = _AWAITING[key] = AwaitingPlayers((player,), phase)
    if phase == "actions":
        if len(_AWAITING_ACTIONS) >= 4096:
            _AWAITING_ACTIONS.clear()
        _AWAITING_ACTIONS[player] = step
    return step


#: player -> the step of their actions (``_AWAITING``'s, by the player alone: a look-up by
#: a str, not a tuple built and hashed, at every decision)
_AWAITING_ACTIONS: Final[dict[str, AwaitingPlayers]] = {}
