"""Given-events helpers for the Drillit! tests: a set-up match built from events only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.games.drillit import GAME
from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT, EventCard
from services.games.drillit.setup_rules import ABYSS_STAGING, STAGING, trio_deck
from services.games.drillit.state import DrillitState, SectorGoblins

PLAYERS = ("ann", "bob", "cid")
CHARACTERS = {"ann": "pilot", "bob": "soldier", "cid": "inventor"}
ROOMS = {"ann": 1, "bob": 2, "cid": 3}
HANDS = {"ann": "P01", "bob": "P02", "cid": "P03"}  # three straight pieces


def card_with(**props: str) -> str:
    """The id of a content card with these sub-event modes / main event."""
    for card in CONTENT.cards.values():
        fields = {**card.sub_events, "main": card.main}
        if all(fields[k] == v for k, v in props.items()):
            return card.id
    raise LookupError(f"no card with {props}")


def card(card_id: str) -> EventCard:
    return CONTENT.cards[card_id]


def setup_events(
    players: Sequence[str] = PLAYERS,
    characters: dict[str, str] | None = None,
    rooms: dict[str, int] | None = None,
    hands: dict[str, str] | None = None,
    difficulty: str = "easy",
    distance: str = "short",
    top: Sequence[str] = (),
    starter: str | None = None,
    exit: str = "1",
    plan_b: bool = True,
) -> list[Any]:
    """A complete setup; ``top`` (up to 3 non-Abyss cards) opens the Event Deck."""
    players = tuple(players)
    characters = characters if characters is not None else dict(CHARACTERS)
    rooms = rooms if rooms is not None else dict(ROOMS)
    hands = hands if hands is not None else dict(HANDS)
    staged = [*top, *(c for c in CONTENT.other_cards() if c not in top)]
    abyss_order = list(CONTENT.abyss_cards())
    trios = [(staged[1 + 2 * i], staged[2 + 2 * i], abyss_order[i - 1]) for i in range(1, 6)]
    out: list[Any] = [
        ev.MatchSetUp(
            players,
            difficulty,
            distance,
            CONTENT.storage_limits[difficulty],
            CONTENT.life_track,
            CONTENT.rules_version,
            exit,
            plan_b,
        ),
        ev.PileShuffled("paths", 36),
        ev.PathPiecesDrawn(dict(hands), 36 - len(hands)),
        ev.PileShuffled("characters", 5),
        ev.CharactersDealt(characters),
        ev.PileShuffled(STAGING, 13),
        ev.EventCardsStaged(STAGING, tuple(staged)),
        ev.PileShuffled(ABYSS_STAGING, 5),
        ev.EventCardsStaged(ABYSS_STAGING, tuple(abyss_order)),
    ]
    for i, trio in enumerate(trios, start=1):
        out += [ev.PileShuffled(trio_deck(i), 3), ev.EventCardsStaged(trio_deck(i), trio)]
    out.append(ev.EventDeckBuilt(18))
    for p in players:
        out += [ev.StartRoomRolled(p, rooms[p]), ev.GnomePlaced(p, rooms[p])]
    out.append(ev.StartingPlayerChosen(starter or players[0], "test"))
    return out


def given(*events: Any, **setup: Any) -> DrillitState:
    """Fold a setup (see ``setup_events``) followed by ``events``."""
    return GAME.fold([*setup_events(**setup), *events])


def on_turn(player: str, *events: Any, **setup: Any) -> DrillitState:
    """``player``'s actions on the first turn (no Event card), after ``events``."""
    return given(*events, ev.TurnStarted(player, 1, 4), **setup)


def radar(layout: dict[int, tuple[int, ...]]) -> ev.GoblinsAdvanced:
    """Set the radar: sector -> (inside, space 1, space 2, space 3); others empty."""
    width = CONTENT.radar_spaces + 1
    return ev.GoblinsAdvanced(
        tuple(SectorGoblins(s, layout.get(s, (0,) * width)) for s in CONTENT.sectors)
    )


def fires(room: int, count: int) -> ev.FireStarted:
    return ev.FireStarted(room, count)


def crystals(colour: str, count: int) -> list[ev.CrystalFound]:
    return [ev.CrystalFound(colour) for _ in range(count)]
