"""Setup: options, dealing Path pieces and characters, building the Event Deck exactly
as the rulebook says, start rooms, and who starts.

Readings encoded here (rulebook: /work/shared/seeds/000_58a1105e59ffe291.txt):

- Player count. The box says 2-4 players (seeds README and public facts); the rulebook
  has no sentence giving the count, but its own text assumes fewer than five: "If no
  player has the Pilot, the players decide who starts" cannot happen when five players
  are dealt the five Character cards. So setup accepts 2 to 4 players; 1 or 5 only with
  the house variant option ``player_count_variant=house`` (labelled house content in the
  content pack).
- The exit. "Choose the distance you want to travel (short, medium or long) and place the
  Exit piece on the indicated space of the board. (... the Exit piece is x1.)" and "The
  Players win the game if they place a Path piece connecting to the exit determined by
  the players at the start of the game." With the public fact "Two exit options exist
  ('Plan B')", the players choose at setup which of the two printed exit options of the
  chosen distance gets the one Exit piece: option ``exit=1|2`` (default 1). Only that
  exit wins; the other option's space stays empty (and, being a printed exit space, takes
  no Path piece).
- Plan B. "Note that if something goes very wrong on the first escape route, the Players
  may still risk restarting the excavation along the second exit option. Repeat: always
  keep a Plan B in mind." Read as: once per match the active player may, during their
  actions and for no Action Point, move the Exit piece to the other exit option
  (``TakePlanB``); from then on only that exit wins, and "impossible to reach the Exit
  piece" is judged for it. The tunnels already dug stay on the board (the rulebook
  removes none) and digging may go on from any open tunnel or the Tank. Option
  ``plan_b=allowed`` (default, the rulebook) or ``plan_b=off`` (a house variant: one
  exit, no way back).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Final

from services.games.contract import (
    AwaitingChance,
    ChanceRequest,
    DrawCards,
    MalformedAction,
    OptionSpec,
    RollDice,
    ShuffleDeck,
)
from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT, DIFFICULTIES, DISTANCES, EXIT_OPTIONS
from services.games.drillit.records import made
from services.games.drillit.state import DrillitState

BOX, HOUSE = "box", "house"
MIN_PLAYERS, MAX_PLAYERS = CONTENT.player_counts[BOX]
PLAN_B_ALLOWED, PLAN_B_OFF = "allowed", "off"
ABYSS_CARDS, OTHER_CARDS = CONTENT.abyss_cards(), CONTENT.other_cards()
TRIOS: Final = len(ABYSS_CARDS)
#: "Set aside 3 of these cards; they will make up the top of the deck"
TOP: Final = CONTENT.top_cards
STAGING: Final = "event-staging"
ABYSS_STAGING: Final = "event-abyss"

OPTIONS = (
    OptionSpec("difficulty", "easy", "Crystal Storage limit 4 / 3 / 2", DIFFICULTIES),
    OptionSpec("distance", "short", "how far the exit lies from the Tank", DISTANCES),
    OptionSpec("exit", "1", "which of the two exit options holds the Exit piece", EXIT_OPTIONS),
    OptionSpec(
        "plan_b",
        PLAN_B_ALLOWED,
        "allowed: once, move the Exit piece to the other option (rulebook); off: house variant",
        (PLAN_B_ALLOWED, PLAN_B_OFF),
    ),
    OptionSpec(
        "player_count_variant",
        BOX,
        "box: 2-4 players; house: house variant allowing 1 or 5 players",
        (BOX, HOUSE),
    ),
)


def trio_deck(i: int) -> str:
    return f"event-trio-{i}"


def _choice(options: Mapping[str, str], spec: OptionSpec) -> str:
    value = options.get(spec.name, spec.default)
    if value not in spec.choices:
        allowed = ", ".join(spec.choices)
        raise MalformedAction("BAD_OPTION", f"{spec.name} must be one of {allowed}, not {value!r}.")
    return value


def match_set_up(players: Sequence[str], options: Mapping[str, str]) -> list[Any]:
    unknown = set(options) - {spec.name for spec in OPTIONS}
    if unknown:
        raise MalformedAction("BAD_OPTION", f"Unknown option(s): {', '.join(sorted(unknown))}.")
    difficulty, distance, exit_option, plan_b, variant = (_choice(options, s) for s in OPTIONS)
    fewest, most = CONTENT.player_counts[variant]
    if not fewest <= len(players) <= most:
        hint = "" if variant == HOUSE else " (player_count_variant=house allows 1 or 5)"
        raise MalformedAction(
            "BAD_PLAYERS", f"Drillit! is played by {fewest} to {most} players{hint}."
        )
    if len(set(players)) != len(players) or not all(players):
        raise MalformedAction("BAD_PLAYERS", "Every player needs a distinct, non-empty id.")
    return [
        ev.MatchSetUp(
            players=tuple(players),
            difficulty=difficulty,
            distance=distance,
            storage_limit=CONTENT.storage_limits[difficulty],
            life_track=CONTENT.life_track,
            rules_version=CONTENT.rules_version,
            exit=exit_option,
            plan_b=plan_b == PLAN_B_ALLOWED,
        )
    ]


def _trio_cards(state: DrillitState, i: int) -> tuple[str, ...]:
    rest, abysses = state.staged[STAGING][TOP:], state.staged[ABYSS_STAGING]
    return (rest[2 * (i - 1)], rest[2 * (i - 1) + 1], abysses[i - 1])


def assemble_event_deck(staged: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The 3 set-aside cards on top, then the 5 shuffled trios."""
    deck = list(staged[STAGING][:TOP])
    for i in range(1, TRIOS + 1):
        deck.extend(staged[trio_deck(i)])
    return tuple(deck)


def _awaiting(request: ChanceRequest) -> AwaitingChance:
    return AwaitingChance(request)


# the steps that never vary (steps are immutable: one instance serves every match; Final:
# compiled, read from C statics, not looked up in the module's dict at every setup step)
_SHUFFLE_PATHS: Final = _awaiting(
    ShuffleDeck("paths", tuple(CONTENT.pieces), "shuffle the Path pieces")
)
_SHUFFLE_CHARACTERS: Final = _awaiting(
    ShuffleDeck("characters", CONTENT.characters, "shuffle the Character cards")
)
_SHUFFLE_STAGING: Final = _awaiting(
    ShuffleDeck(STAGING, OTHER_CARDS, "shuffle the non-Abyss Event cards")
)
_DRAW_STAGING: Final = _awaiting(
    DrawCards(STAGING, len(OTHER_CARDS), "set 3 aside and make 5 piles of 2")
)
_SHUFFLE_ABYSSES: Final = _awaiting(
    ShuffleDeck(ABYSS_STAGING, ABYSS_CARDS, "hand out the Abyss cards")
)
_DRAW_ABYSSES: Final = _awaiting(DrawCards(ABYSS_STAGING, TRIOS, "one Abyss card for each pile"))
#: (trio number, its deck, the draw that stacks it, the reason of its shuffle)
_TRIO_DECKS: Final = tuple(
    (i, trio_deck(i), _awaiting(DrawCards(trio_deck(i), 3, f"stack trio {i}")), f"shuffle trio {i}")
    for i in range(1, TRIOS + 1)
)


#: the last state asked about and its step: the turn flow asks for each setup state's
#: automatic events, then its step, and both need the request (states never change). One
#: tuple, replaced whole, so concurrent callers never see a state with another's step.
_last_step: tuple[DrillitState | None, AwaitingChance | None] = (None, None)


def setup_request(state: DrillitState) -> ChanceRequest | None:
    """The next chance outcome setup needs, if any."""
    step = setup_step(state)
    return None if step is None else step.request


def setup_step(state: DrillitState) -> AwaitingChance | None:
    """The step awaiting the next chance outcome setup needs, if any (most are built once:
    the turn flow hands them on as they are)."""
    global _last_step
    last, step = _last_step
    if last is not state:
        step = _setup_step(state)
        _last_step = (state, step)
    return step


@functools.lru_cache(maxsize=16)
def _deal(deck: str, players: int, reason: str) -> AwaitingChance:
    """A deal to every player (steps are immutable: one per deck and player count)."""
    return AwaitingChance(DrawCards(deck, players, reason))


def _shuffle_trio(deck: str, cards: tuple[str, ...], reason: str) -> AwaitingChance:
    """The step shuffling the trio ``deck`` of ``cards``. (Built afresh, not remembered:
    the trios' cards differ from match to match, so a cache of them only misses; built
    by ``records.made``, compiled.)"""
    request = made(_SHUFFLE, {"deck": deck, "cards": cards, "purpose": reason})
    step: AwaitingChance = made(_AWAITING_CHANCE, {"request": request})
    return step


#: the decks setup shuffles, in the order it asks for them
_SHUFFLE_ORDER: Final = (
    "paths",
    "characters",
    STAGING,
    ABYSS_STAGING,
    *[deck for _, deck, _, _ in _TRIO_DECKS],
)


def _in_order(decks: tuple[str, ...]) -> int:
    """How many decks ``decks`` holds when they are the first of ``_SHUFFLE_ORDER``, in
    that order, as setup shuffles them; -1 when not."""
    if len(decks) > len(_SHUFFLE_ORDER):
        return -1
    for i in range(len(decks)):
        if decks[i] != _SHUFFLE_ORDER[i]:
            return -1
    return len(decks)


def _unshuffled(decks: tuple[str, ...], in_order: int, k: int) -> bool:
    """``_SHUFFLE_ORDER[k] not in decks``, read off ``in_order`` (``_in_order(decks)``)
    when they are in order: the tests below ask for up to nine decks, each a scan of the
    tuple otherwise."""
    if in_order >= 0:
        return k >= in_order
    return _SHUFFLE_ORDER[k] not in decks


def _setup_step(state: DrillitState) -> AwaitingChance | None:
    shuffled, staged = state.shuffled_decks, state.staged
    in_order = _in_order(shuffled)
    if _unshuffled(shuffled, in_order, 0):  # "paths"
        return _SHUFFLE_PATHS
    if not state.hands:
        return _deal("paths", len(state.players), "deal one Path piece to each player")
    if _unshuffled(shuffled, in_order, 1):  # "characters"
        return _SHUFFLE_CHARACTERS
    if not state.characters:
        return _deal("characters", len(state.players), "deal a Character to each player")
    if _unshuffled(shuffled, in_order, 2):  # STAGING
        return _SHUFFLE_STAGING
    if STAGING not in staged:
        return _DRAW_STAGING
    if _unshuffled(shuffled, in_order, 3):  # ABYSS_STAGING
        return _SHUFFLE_ABYSSES
    if ABYSS_STAGING not in staged:
        return _DRAW_ABYSSES
    for i, deck, stack, reason in _TRIO_DECKS:
        if _unshuffled(shuffled, in_order, 3 + i):  # deck, trio i of 1 to TRIOS
            return _shuffle_trio(deck, _trio_cards(state, i), reason)
        if deck not in staged:
            return stack
    if not state.event_deck_built or state.choosing_room is not None:
        return None
    for player in state.players:
        if player not in state.rooms:
            return _start_roll(player)
    return None


def _start_roll(player: str) -> AwaitingChance:
    """The step rolling ``player``'s start room, one per player (steps are immutable)."""
    step = _START_ROLLS.get(player)
    if step is None:
        if len(_START_ROLLS) >= 4096:
            _START_ROLLS.clear()
        step = _START_ROLLS[player] = _awaiting(RollDice(1, 6, f"start room of {player}"))
    return step


_START_ROLLS: Final[dict[str, AwaitingChance]] = {}


def resolve_setup_draw(state: DrillitState, deck: str, cards: tuple[str, ...]) -> list[Any]:
    if deck == "paths":
        pieces = dict(zip(state.players, cards, strict=True))
        return [ev.PathPiecesDrawn(pieces, state.path_pile - len(cards))]
    if deck == "characters":
        return [ev.CharactersDealt(dict(zip(state.players, cards, strict=True)))]
    return [made(_CARDS_STAGED, {"deck": deck, "cards": cards})]  # (records.made)


# (Final: compiled, read from a C static; ``CONTENT.x`` or ``ev.X`` is a look-up of the
# imported name in the module's dict and one of its attribute, at every use)
_CARDS_STAGED: Final = ev.EventCardsStaged
_SHUFFLE: Final = ShuffleDeck
_AWAITING_CHANCE: Final = AwaitingChance
_ROOM_CAPACITY: Final = CONTENT.room_capacity
_ROOMS: Final = CONTENT.rooms


def room_has_space(state: DrillitState, room: int, ignoring: tuple[str, ...] = ()) -> bool:
    # state.occupants(room), counted here: the state's method is uncompiled
    rooms, others = state.rooms, 0
    for p in state.players:
        if rooms.get(p) == room and p not in ignoring:
            others += 1
    return others < _ROOM_CAPACITY


# Events are immutable: one instance of each of these serves every match (building a
# frozen event costs several times the cache's look-up).


@functools.lru_cache(maxsize=1024)
def _start_room_rolled(player: str, value: int) -> ev.StartRoomRolled:
    return ev.StartRoomRolled(player, value)


@functools.lru_cache(maxsize=1024)
def gnome_placed(player: str, room: int) -> ev.GnomePlaced:
    return ev.GnomePlaced(player, room)


def resolve_start_roll(state: DrillitState, value: int) -> list[Any]:
    rooms = state.rooms
    for player in state.players:  # the first without a room (no generator, compiled)
        if player not in rooms:
            break
    else:
        raise StopIteration  # (as next() of the generator did)
    out: list[Any] = [_start_room_rolled(player, value)]
    # a 6 lets the player choose; a full room is rolled again (house rule)
    if value in _ROOMS and room_has_space(state, value):
        out.append(gnome_placed(player, value))
    return out


def automatic_setup(state: DrillitState) -> list[Any]:
    """Deterministic setup steps: assembling the deck, the Pilot's neighbour starting."""
    if setup_step(state) is not None or state.choosing_room is not None:
        return []
    if not state.event_deck_built:
        return [ev.EventDeckBuilt(len(CONTENT.cards))]
    if len(state.rooms) < len(state.players):
        return []
    if state.active is None:
        pilot = state.character_of("pilot")
        if pilot is None:
            return []  # the players decide: ChooseStartingPlayer by the first seat
        seat = state.players.index(pilot)
        starter = state.players[(seat + 1) % len(state.players)]
        return [ev.StartingPlayerChosen(starter, "left of the Pilot")]
    return [turn_started(state.active, 1)]


def turn_started(player: str, turn: int) -> ev.TurnStarted:
    """The start of ``player``'s turn ``turn`` (events are immutable: one instance serves
    every match; building a frozen event costs several times the cache's look-up)."""
    # (a dict read in compiled code, not an lru_cache: a call through the cache's wrapper
    # builds its key and moves its entry, several times the cost of the look-up)
    key = (player, turn)
    known = _TURN_STARTED.get(key)
    if known is None:
        if len(_TURN_STARTED) >= 4096:
            _TURN_STARTED.clear()
        known = _TURN_STARTED[key] = ev.TurnStarted(player, turn, CONTENT.action_points)
    return known


_TURN_STARTED: Final[dict[tuple[str, int], ev.TurnStarted]] = {}


def setup_chooser(state: DrillitState) -> str | None:
    """The player who must decide something during setup, if any."""
    if state.choosing_room is not None:
        return state.choosing_room
    if (
        state.event_deck_built
        and len(state.rooms) == len(state.players)
        and state.active is None
        and state.character_of("pilot") is None
    ):
        return state.players[0]
    return None
