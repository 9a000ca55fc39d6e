"""What the command handler asks of Drillit! at every step of a match: the legal choices
of the player to act, the events of a decision or of a chance outcome, and the state
after them. Compiled with the rules (``Drillit`` hands these functions on as they are):
interpreted, these few lines of dispatch cost as much as the rules they reach."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    CardsDrawn,
    ChanceOutcome,
    DeckShuffled,
    DiceRolled,
    DrawCards,
    MalformedAction,
    RollDice,
    RuleViolation,
    ShuffleDeck,
)
from services.games.drillit import actions as act
from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT
from services.games.drillit.flow import (
    ACTIONS,
    FIRE,
    SETUP,
    TURBO,
    advance_folded,
    missing_pieces,
    next_step,
)
from services.games.drillit.goblin_attack import resolve_attack_die
from services.games.drillit.player_actions import (
    TurnChoices,
    decide_turn_action,
    listed_turn_action,
    place_turbo_piece,
    turbo_choices,
    turn_choices,
)
from services.games.drillit.records import made
from services.games.drillit.setup_rules import (
    gnome_placed,
    resolve_setup_draw,
    resolve_start_roll,
    room_has_space,
    setup_chooser,
)
from services.games.drillit.state import DrillitState
from services.games.drillit.turn_start import resolve_fire_die

#: the turn choices handed out last: (state, player, choices). An action that is the
#: entry last read from them (``TurnChoices.last_read``), asked of that very state (states
#: never change, and this one is held here) for that player, is one the rules allow: it
#: needs no checks. One tuple, replaced whole, so concurrent callers never mix two.
_offered: tuple[DrillitState | None, str, TurnChoices | None] = (None, "", None)


def _shuffled(deck: str, size: int) -> ev.PileShuffled:
    """(events are immutable: one instance of each serves every match; building a frozen
    event costs several times the cache's look-up)"""
    # (a dict read in compiled code, not an lru_cache: a call through the cache's wrapper
    # builds its key and moves its entry, several times the cost of the look-up)
    key = (deck, size)
    known = _SHUFFLED.get(key)
    if known is None:
        if len(_SHUFFLED) >= 256:
            _SHUFFLED.clear()
        known = _SHUFFLED[key] = ev.PileShuffled(deck, size)
    return known


_SHUFFLED: Final[dict[tuple[str, int], ev.PileShuffled]] = {}


# --- players -----------------------------------------------------------------------


def legal_choices(state: DrillitState, player: str) -> Sequence[Any]:
    """The legal actions, the Excavate ones (most of them) built only when read."""
    global _offered
    step = next_step(state)
    if not isinstance(step, AwaitingPlayers) or player not in step.players:
        return ()
    phase = state.phase
    if phase is ACTIONS:
        choices = turn_choices(state, player)
        _offered = (state, player, choices)
        return choices
    if phase is SETUP:
        if state.choosing_room is not None:
            return tuple([_START_ROOMS[r] for r in CONTENT.rooms if room_has_space(state, r)])
        return tuple([_starting_player(p) for p in state.players])
    if phase is TURBO:
        return turbo_choices(state)
    return turn_choices(state, player)


#: actions are immutable: one of each serves every match
_START_ROOMS: Final = {room: act.ChooseStartRoom(room) for room in CONTENT.rooms}
_STARTING_PLAYERS: Final[dict[str, act.ChooseStartingPlayer]] = {}


def _starting_player(player: str) -> act.ChooseStartingPlayer:
    choice = _STARTING_PLAYERS.get(player)
    if choice is None:
        if len(_STARTING_PLAYERS) >= 4096:
            _STARTING_PLAYERS.clear()
        choice = _STARTING_PLAYERS[player] = act.ChooseStartingPlayer(player)
    return choice


def decide_folded(state: DrillitState, player: str, action: Any) -> tuple[list[Any], DrillitState]:
    """The events of ``player``'s ``action`` and the state after them, which ``advance``
    folds on its way (so the command handler does not fold them again)."""
    offered_state, offered_player, offered = _offered
    if (
        offered_state is state
        and offered is not None
        and offered.last_read is action
        and offered_player == player
    ):  # listed by ``legal_choices`` (a policy's pick)
        return advance_folded(state, listed_turn_action(state, player, action))
    return advance_folded(state, _decide(state, player, action))


def _decide(state: DrillitState, player: str, action: Any) -> list[Any]:
    if isinstance(action, (act.ChooseStartRoom, act.ChooseStartingPlayer)):
        return _setup_choice(state, player, action)
    phase = state.phase
    if (phase != ACTIONS and phase != TURBO) or player != state.active:
        who = state.active if phase in (ACTIONS, TURBO) else None
        if who is not None and player != who:
            raise RuleViolation("NOT_YOUR_TURN", f"It is {who}'s turn.")
        raise RuleViolation("NOT_NOW", "Nobody may act now; the game is resolving.")
    if phase == TURBO:
        if not isinstance(action, act.PlaceTurboPiece):
            raise RuleViolation("TURBO", "Place the Turbo's Path piece first.")
        return place_turbo_piece(state, action)
    if isinstance(action, act.PlaceTurboPiece):
        raise RuleViolation("NO_TURBO", "No Turbo is running.")
    return decide_turn_action(state, player, action)


def _setup_choice(state: DrillitState, player: str, action: Any) -> list[Any]:
    chooser = setup_chooser(state) if state.phase == SETUP else None
    if isinstance(action, act.ChooseStartRoom):
        if state.choosing_room is None or state.phase != SETUP:
            raise RuleViolation("NOT_NOW", "Only a player who rolled a 6 chooses a room.")
        if player != chooser:
            raise RuleViolation("NOT_YOUR_CHOICE", f"{chooser} chooses a start room now.")
        if action.room not in CONTENT.rooms:
            raise MalformedAction("BAD_ROOM", "Start in one of the rooms 1 to 5.")
        if not room_has_space(state, action.room):
            raise RuleViolation("ROOM_FULL", f"Room {action.room} already holds 2 Gnomes.")
        return [gnome_placed(player, action.room)]
    if chooser is None or state.choosing_room is not None:
        raise RuleViolation("NOT_NOW", "The starting player is not being chosen now.")
    if player != chooser:
        raise RuleViolation("NOT_YOUR_CHOICE", f"{chooser} announces who starts.")
    if action.player not in state.players:
        raise MalformedAction("BAD_PLAYER", f"{action.player!r} does not play.")
    return [ev.StartingPlayerChosen(action.player, "chosen by the players")]


# --- chance ------------------------------------------------------------------------


def resolve_folded(state: DrillitState, outcome: ChanceOutcome) -> tuple[list[Any], DrillitState]:
    """The events of a chance outcome and the state after them (see ``decide_folded``)."""
    step = next_step(state)
    if not isinstance(step, AwaitingChance):
        raise RuleViolation("NO_CHANCE_PENDING", "No dice or cards are awaited now.")
    return advance_folded(state, _resolve(state, step.request, outcome))


# the contract's outcomes and requests as compiled constants: a name imported from an
# uncompiled module is looked up in the module's dict at every use
_DICE_ROLLED: Final = DiceRolled
_CARDS_DRAWN: Final = CardsDrawn
_DECK_SHUFFLED: Final = DeckShuffled
_ROLL_DICE: Final = RollDice
_DRAW_CARDS: Final = DrawCards
_SHUFFLE_DECK: Final = ShuffleDeck
_PIECES_DRAWN: Final = ev.PathPiecesDrawn


def _resolve(state: DrillitState, request: Any, outcome: ChanceOutcome) -> list[Any]:
    # tests of the outcome's type, not ``match (request, outcome)``: a match builds the
    # pair and tries each case's class patterns in turn, at every chance node
    if isinstance(outcome, _DICE_ROLLED):
        values = outcome.values
        if isinstance(request, _ROLL_DICE) and len(values) == 1 and 1 <= values[0] <= 6:
            phase = state.phase
            if phase is SETUP:
                return resolve_start_roll(state, values[0])
            if phase is FIRE:
                return resolve_fire_die(state, values[0])
            return resolve_attack_die(state, values[0])
    elif isinstance(outcome, _CARDS_DRAWN):
        cards = outcome.cards
        if (
            isinstance(request, _DRAW_CARDS)
            and outcome.deck == request.deck
            and len(cards) == request.count
        ):
            return _drawn(state, request.deck, cards)
    elif (
        isinstance(outcome, _DECK_SHUFFLED)
        and isinstance(request, _SHUFFLE_DECK)
        and outcome.deck == request.deck
    ):
        return [_shuffled(request.deck, outcome.size)]
    raise RuleViolation("UNEXPECTED_OUTCOME", f"{outcome!r} does not answer {request!r}.")


def _drawn(state: DrillitState, deck: str, cards: tuple[str, ...]) -> list[Any]:
    phase = state.phase
    if phase is SETUP:
        return resolve_setup_draw(state, deck, cards)
    if phase is TURBO:
        return [ev.TurboPieceDrawn(cards[0], state.path_pile - 1)]
    drawers = missing_pieces(state)[: len(cards)]
    if len(drawers) != len(cards):
        raise ValueError("a piece for each player without one")  # (as zip(strict=True))
    pieces = {}  # dict(zip(drawers, cards)), as a loop: no zip nor dict called
    for i in range(len(cards)):
        pieces[drawers[i]] = cards[i]
    # ev.PathPiecesDrawn(pieces, pile_left), compiled (records.made)
    left = state.path_pile - len(cards)
    return [made(_PIECES_DRAWN, {"pieces": pieces, "pile_left": left})]
