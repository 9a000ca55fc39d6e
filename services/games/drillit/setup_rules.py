"""Setup: options, dealing Path pieces and characters, building the Event Deck exactly
as the rulebook says, start rooms, and who starts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.games.contract import (
    ChanceRequest,
    DrawCards,
    MalformedAction,
    RollDice,
    ShuffleDeck,
)
from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT, DIFFICULTIES, DISTANCES
from services.games.drillit.state import DrillitState

MIN_PLAYERS = 1
MAX_PLAYERS = len(CONTENT.characters)  # one character each
TRIOS = len(CONTENT.abyss_cards())
TOP = CONTENT.top_cards  # "Set aside 3 of these cards; they will make up the top of the deck"
STAGING, ABYSS_STAGING = "event-staging", "event-abyss"


def trio_deck(i: int) -> str:
    return f"event-trio-{i}"


def match_set_up(players: Sequence[str], options: Mapping[str, str]) -> list[Any]:
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise MalformedAction(
            "BAD_PLAYERS", f"Drillit! is played by {MIN_PLAYERS} to {MAX_PLAYERS} players."
        )
    if len(set(players)) != len(players) or not all(players):
        raise MalformedAction("BAD_PLAYERS", "Every player needs a distinct, non-empty id.")
    unknown = set(options) - {"difficulty", "distance"}
    if unknown:
        raise MalformedAction("BAD_OPTION", f"Unknown option(s): {', '.join(sorted(unknown))}.")
    difficulty = options.get("difficulty", "easy")
    distance = options.get("distance", "short")
    if difficulty not in DIFFICULTIES:
        raise MalformedAction(
            "BAD_OPTION", f"difficulty must be easy, medium or hard, not {difficulty!r}."
        )
    if distance not in DISTANCES:
        raise MalformedAction(
            "BAD_OPTION", f"distance must be short, medium or long, not {distance!r}."
        )
    return [
        ev.MatchSetUp(
            players=tuple(players),
            difficulty=difficulty,
            distance=distance,
            storage_limit=CONTENT.storage_limits[difficulty],
            life_track=CONTENT.life_track,
            rules_version=CONTENT.rules_version,
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


def setup_request(state: DrillitState) -> ChanceRequest | None:
    """The next chance outcome setup needs, if any."""
    shuffled, n = state.shuffled_decks, len(state.players)
    if "paths" not in shuffled:
        return ShuffleDeck("paths", tuple(CONTENT.pieces), "shuffle the Path pieces")
    if not state.hands:
        return DrawCards("paths", n, "deal one Path piece to each player")
    if "characters" not in shuffled:
        return ShuffleDeck("characters", CONTENT.characters, "shuffle the Character cards")
    if not state.characters:
        return DrawCards("characters", n, "deal a Character to each player")
    if STAGING not in shuffled:
        return ShuffleDeck(STAGING, CONTENT.other_cards(), "shuffle the non-Abyss Event cards")
    if STAGING not in state.staged:
        count = len(CONTENT.other_cards())
        return DrawCards(STAGING, count, "set 3 aside and make 5 piles of 2")
    if ABYSS_STAGING not in shuffled:
        return ShuffleDeck(ABYSS_STAGING, CONTENT.abyss_cards(), "hand out the Abyss cards")
    if ABYSS_STAGING not in state.staged:
        return DrawCards(ABYSS_STAGING, TRIOS, "one Abyss card for each pile")
    for i in range(1, TRIOS + 1):
        if trio_deck(i) not in shuffled:
            return ShuffleDeck(trio_deck(i), _trio_cards(state, i), f"shuffle trio {i}")
        if trio_deck(i) not in state.staged:
            return DrawCards(trio_deck(i), 3, f"stack trio {i}")
    if not state.event_deck_built or state.choosing_room is not None:
        return None
    for player in state.players:
        if player not in state.rooms:
            return RollDice(1, 6, f"start room of {player}")
    return None


def resolve_setup_draw(state: DrillitState, deck: str, cards: tuple[str, ...]) -> list[Any]:
    if deck == "paths":
        pieces = dict(zip(state.players, cards, strict=True))
        return [ev.PathPiecesDrawn(pieces, state.path_pile - len(cards))]
    if deck == "characters":
        return [ev.CharactersDealt(dict(zip(state.players, cards, strict=True)))]
    return [ev.EventCardsStaged(deck, cards)]


def room_has_space(state: DrillitState, room: int, ignoring: tuple[str, ...] = ()) -> bool:
    others = [p for p in state.occupants(room) if p not in ignoring]
    return len(others) < CONTENT.room_capacity


def resolve_start_roll(state: DrillitState, value: int) -> list[Any]:
    player = next(p for p in state.players if p not in state.rooms)
    out: list[Any] = [ev.StartRoomRolled(player, value)]
    # a 6 lets the player choose; a full room is rolled again (house rule)
    if value in CONTENT.rooms and room_has_space(state, value):
        out.append(ev.GnomePlaced(player, value))
    return out


def automatic_setup(state: DrillitState) -> list[Any]:
    """Deterministic setup steps: assembling the deck, the Pilot's neighbour starting."""
    if setup_request(state) is not None or state.choosing_room is not None:
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
    return [ev.TurnStarted(state.active, 1, CONTENT.action_points)]


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
