"""A full Drillit! state consistent with a seat's view, for search bots.

Everything on the table is public in this cooperative game. Hidden: the order of the
face-down Path pile (of the pieces in no hand, on no tile and not the Turbo's, those not
discarded by a Turbo, which the view does not list) and the Event Deck's remaining cards.
The view shows only the deck's size and the card in force, not the cards revealed
before it, so the deck is drawn as the setup stacks it (three cards set aside on top, then
five shuffled trios of two cards and an Abyss card), with the card in force where the last
revealed card lay, and its last cards are kept: a seat that remembered the revealed cards
would know more, one served only the view cannot.

``prior``: the greedy bot's value of each action, which tells search which of a dig's
dozens of cells and turns to play out.

Turn details the view leaves out show in the legal actions: whether the Mechanic's free
repair is spent, and which Turbo piece is being placed (the second must touch the first);
where two readings are possible the one that offers exactly the legal actions is taken.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from services.bots.search.determinization import Determinization
from services.games.drillit import actions as act
from services.games.drillit.bots import action_values
from services.games.drillit.content import CONTENT
from services.games.drillit.crystals import TURBO_PIECES
from services.games.drillit.game import Drillit
from services.games.drillit.setup_rules import (
    ABYSS_CARDS,
    ABYSS_STAGING,
    OTHER_CARDS,
    STAGING,
    TOP,
    TRIOS,
    trio_deck,
)
from services.games.drillit.state import DrillitState, Phase, PlacedPiece, sector_goblins
from services.games.drillit.view import DrillitView

_ENGINE = Drillit()
_ALL_DECKS = (
    "paths",
    "characters",
    STAGING,
    ABYSS_STAGING,
    *(trio_deck(i) for i in range(1, TRIOS + 1)),
)


def _event_deck(
    size: int, current: str | None, rng: random.Random
) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """The deck's last ``size`` cards as setup would have stacked them, the card in force
    being the one revealed just before them, and the staged piles that stacking went
    through."""
    others = list(OTHER_CARDS)
    rng.shuffle(others)
    abysses = list(ABYSS_CARDS)
    rng.shuffle(abysses)
    revealed = len(OTHER_CARDS) + len(ABYSS_CARDS) - size - 1  # where the current card lay
    trio_of, slot = divmod(revealed - TOP, 3)
    abyss = current in ABYSS_CARDS
    if current is not None and revealed >= 0:
        # the shuffles above, conditioned on the current card lying at ``revealed``
        if abyss and revealed >= TOP:
            _swap(abysses, current, trio_of)
        elif not abyss:
            _swap(others, current, revealed if revealed < TOP else TOP + 2 * trio_of)
    staged: dict[str, tuple[str, ...]] = {STAGING: tuple(others), ABYSS_STAGING: tuple(abysses)}
    deck = others[:TOP]
    for i in range(TRIOS):
        trio = [others[TOP + 2 * i], others[TOP + 2 * i + 1], abysses[i]]
        if current is not None and i == trio_of and revealed >= TOP:
            first = trio.pop(2 if abyss else 0)  # the current card, placed at its slot
            rng.shuffle(trio)
            trio.insert(slot, first)
        else:
            rng.shuffle(trio)
        staged[trio_deck(i + 1)] = tuple(trio)
        deck.extend(trio)
    return tuple(deck[len(deck) - size :] if size else ()), staged


def _swap(cards: list[str], card: str, index: int) -> None:
    at = cards.index(card)
    cards[at], cards[index] = cards[index], cards[at]


def _radar(view: DrillitView) -> tuple[Any, ...]:
    inside = {
        CONTENT.faces_sector[r.room]: r.goblins_inside
        for r in view.rooms
        if r.room in CONTENT.faces_sector
    }
    return tuple(sector_goblins(s.sector, (inside.get(s.sector, 0), *s.spaces)) for s in view.radar)


#: past ``max_candidates``, search plays out the actions the greedy bot values most
prior = action_values


def sample(
    view: DrillitView, player: str, legal: Sequence[Any], rng: random.Random
) -> Determinization:
    phase = Phase(view.phase)
    placed = tuple(PlacedPiece(t.piece, t.cell, t.rotation) for t in view.tiles)
    hands = {p.player: p.path_piece.piece for p in view.players if p.path_piece is not None}
    used = {*hands.values(), *(t.piece for t in placed)}
    if view.turbo_piece is not None:
        used.add(view.turbo_piece.piece)
    # the pieces in play nowhere: the pile, and any Turbo piece discarded for fitting
    # nowhere (the view does not list those)
    unseen = sorted(p for p in CONTENT.pieces if p not in used)
    pile = rng.sample(unseen, view.path_pile_size)
    current = view.current_event.card if view.current_event is not None else None
    event_deck, staged = _event_deck(view.event_deck_size, current, rng)
    choosing = player if any(isinstance(a, act.ChooseStartRoom) for a in legal) else None
    state = DrillitState(
        phase=phase,
        players=tuple(p.player for p in view.players),
        difficulty=view.difficulty,
        distance=view.distance,
        storage_limit=view.storage_limit,
        exit=view.exit_option,
        plan_b=view.plan_b_option is not None,
        path_pile=view.path_pile_size,
        path_pile_shuffled=True,
        characters_shuffled=True,
        characters={p.player: p.character for p in view.players if p.character},
        staged=staged,
        shuffled_decks=_ALL_DECKS,
        event_deck=event_deck,
        event_deck_built=True,
        choosing_room=choosing,
        rooms={p.player: p.room for p in view.players if p.room is not None},
        hands=hands,
        placed=placed,
        abysses=view.abysses,
        abysses_found=view.abysses_found,
        fires={r.room: r.fires for r in view.rooms if r.fires},
        armor_destroyed=tuple(
            r.room for r in view.rooms if not r.armor_intact and r.room != CONTENT.centre
        ),
        radar=_radar(view),
        permanent_damage=view.permanent_damage,
        crystals=dict(view.crystals),
        turn=view.turn,
        active=view.active,
        action_points=view.action_points,
        current_card=current,
        blackout=view.blackout,
        trap=view.trap,
        turbo_piece=view.turbo_piece.piece if view.turbo_piece is not None else None,
        turbo_left=TURBO_PIECES if phase is Phase.TURBO else 0,
        won={"won": True, "lost": False}.get(view.result),
        end_reason=view.end_reason,
    )
    return Determinization(_as_offered(state, player, legal), {"paths": tuple(pile)})


def _as_offered(state: DrillitState, player: str, legal: Sequence[Any]) -> DrillitState:
    """``state``, or the reading of the turn details the view leaves out under which the
    player is offered exactly ``legal``."""
    readings = [state]
    if state.phase is Phase.TURBO and state.placed:
        readings.append(
            _changed(state, turbo_left=TURBO_PIECES - 1, turbo_anchor=state.placed[-1].cell)
        )
    elif (
        state.phase is Phase.ACTIONS
        and state.characters.get(player) == "mechanic"
        and state.action_points < CONTENT.action_points
    ):
        readings.append(_changed(state, mechanic_free_repair_used=True))
    if len(readings) == 1:
        return state
    offered = tuple(legal)
    for reading in readings:
        if tuple(_ENGINE.legal_actions(reading, player)) == offered:
            return reading
    return state


def _changed(state: DrillitState, **changes: Any) -> DrillitState:
    return replace(state, **changes)
