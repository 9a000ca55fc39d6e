"""The view drawn from what the last views kept (players, rooms, radar, tiles, pieces and
cards) equals the view drawn plainly from the state, whatever order states come in."""

from __future__ import annotations

import copy

from services.games.drillit import GAME
from services.games.drillit.content import CONTENT
from services.games.drillit.goblin_attack import lightest_box
from services.games.drillit.state import DrillitState
from services.games.drillit.tunnels import layout, openings, plan_b_exit
from services.games.drillit.view import (
    BOX_NAMES,
    DrillitEventCardView,
    DrillitPieceView,
    DrillitPlayerView,
    DrillitRoomView,
    DrillitSectorView,
    DrillitTileView,
    DrillitView,
)
from tests.unit.games import view_reference as reference

SEATS = ["p1", "p2"]


def plain_piece(piece: str) -> DrillitPieceView:
    p = CONTENT.pieces[piece]
    return DrillitPieceView(p.id, p.shape, p.openings, p.crystal)


def plain_card(card_id: str) -> DrillitEventCardView:
    card = CONTENT.cards[card_id]
    subs = card.sub_events
    return DrillitEventCardView(
        card.id, subs["advance"], subs["intensify"], subs["overheat"], card.main, card.attack
    )


def plain_view(state: DrillitState, viewer: str | None) -> DrillitView:
    """The view as it was written before anything was kept from view to view."""
    players = tuple(
        DrillitPlayerView(
            p,
            state.characters.get(p, ""),
            state.rooms.get(p),
            plain_piece(state.hands[p]) if p in state.hands else None,
        )
        for p in state.players
    )
    rooms = tuple(
        DrillitRoomView(
            room,
            state.occupants(room),
            state.fires.get(room, 0),
            room == CONTENT.centre or room not in state.armor_destroyed,
            state.goblins(CONTENT.faces_sector[room])[0] if room in CONTENT.faces_sector else 0,
        )
        for room in (CONTENT.centre, *CONTENT.rooms)
    )
    lay = layout(state)
    won = {None: "", True: "won", False: "lost"}[state.won]
    return DrillitView(
        viewer=viewer,
        phase=state.phase.value,
        difficulty=state.difficulty,
        distance=state.distance,
        turn=state.turn,
        active=state.active,
        action_points=state.action_points,
        players=players,
        rooms=rooms,
        radar=tuple(DrillitSectorView(s.sector, s.spaces[1:]) for s in state.radar),
        life_track=CONTENT.life_track,
        temporary_damage=state.temporary_damage,
        permanent_damage=state.permanent_damage,
        crystals=dict(state.crystals),
        storage_limit=state.storage_limit,
        map_radius=lay.map_radius,
        tank_cells=tuple(sorted(CONTENT.tank_cells)),
        exits=tuple(lay.exits[k] for k in sorted(lay.exits)),
        exit_piece=lay.exits[state.exit],
        exit_option=state.exit,
        plan_b_option=plan_b_exit(state),
        tiles=tuple(
            DrillitTileView(
                p.piece,
                p.cell,
                p.rotation,
                openings(p.piece, p.rotation),
                CONTENT.pieces[p.piece].crystal,
            )
            for p in state.placed
        ),
        abysses=state.abysses,
        abysses_found=state.abysses_found,
        current_event=plain_card(state.current_card) if state.current_card else None,
        lightest_attack_box=BOX_NAMES[lightest_box(state.abysses_found)],
        event_deck_size=len(state.event_deck) if state.event_deck_built else 0,
        path_pile_size=state.path_pile,
        blackout=state.blackout,
        trap=state.trap,
        turbo_piece=plain_piece(state.turbo_piece) if state.turbo_piece else None,
        result=won,
        end_reason=state.end_reason,
    )


def playout_states(seed: int) -> list[DrillitState]:
    return reference.playout_states(GAME, SEATS, seed)


def test_views_in_fold_order_and_shuffled_equal_the_plain_view() -> None:
    states = [s for seed in range(2) for s in playout_states(seed)]
    reference.assert_views_equal_the_plain_view(GAME, plain_view, states, (None, "p1"))


def test_a_state_copied_shows_what_the_state_shows() -> None:
    """Nothing kept is found by identity for a copy: every part is drawn afresh."""
    for state in playout_states(5):
        assert GAME.view(copy.deepcopy(state), "p2") == GAME.view(state, "p2")
