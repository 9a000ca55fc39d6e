"""The table as a player sees it, rebuilt as a ``DrillitState`` from a ``DrillitView`` alone.

Bots (services/games/drillit/bots.py) decide from what a player may see, yet want the
engine's own helpers (the tunnel map's distance field and frontier, move costs, radar
counts), which take a ``DrillitState``. ``public_state`` fills every field the view shows;
the others stay at their defaults:

- hidden information, never in a view: ``event_deck`` (its order), ``staged``,
  ``shuffled_decks`` and the face-down Path pile's order (the state never holds it either;
  ``path_pile`` is only its size, which the view shows);
- bookkeeping the view does not show: ``event_deck_built``, ``path_pile_shuffled``,
  ``characters_shuffled``, ``choosing_room``, ``actions_done``, ``fire_criticals``,
  ``attack_sixes``, ``mechanic_free_repair_used``, ``turbo_left``, ``turbo_anchor``,
  ``goblins_defeated``, ``crystals_used``.

Code reading a public state must not read those (``UNSHOWN`` lists them).
``armor_destroyed`` comes back in room order (the state keeps the order of destruction).
"""

from __future__ import annotations

from services.games.drillit.content import COLOURS, CONTENT
from services.games.drillit.state import DrillitState, Phase, PlacedPiece, SectorGoblins
from services.games.drillit.view import DrillitView

#: ``DrillitState`` fields a view does not show: they stay at their defaults
UNSHOWN = frozenset(
    {
        "event_deck",
        "event_deck_built",
        "staged",
        "shuffled_decks",
        "path_pile_shuffled",
        "characters_shuffled",
        "choosing_room",
        "actions_done",
        "fire_criticals",
        "attack_sixes",
        "mechanic_free_repair_used",
        "turbo_left",
        "turbo_anchor",
        "goblins_defeated",
        "crystals_used",
    }
)

_RESULT = {"": None, "won": True, "lost": False}


def public_state(view: DrillitView) -> DrillitState:
    """Everything ``view`` shows, as a state (the other fields at their defaults)."""
    inside = {
        CONTENT.faces_sector[r.room]: r.goblins_inside
        for r in view.rooms
        if r.room in CONTENT.faces_sector
    }
    return DrillitState(
        phase=Phase(view.phase),
        players=tuple(p.player for p in view.players),
        difficulty=view.difficulty,
        distance=view.distance,
        storage_limit=view.storage_limit,
        exit=view.exit_option,
        plan_b=view.plan_b_option is not None,
        path_pile=view.path_pile_size,
        characters={p.player: p.character for p in view.players if p.character},
        rooms={p.player: p.room for p in view.players if p.room is not None},
        hands={p.player: p.path_piece.piece for p in view.players if p.path_piece is not None},
        placed=tuple(PlacedPiece(t.piece, t.cell, t.rotation) for t in view.tiles),
        abysses=tuple(view.abysses),
        abysses_found=view.abysses_found,
        fires={r.room: r.fires for r in view.rooms if r.fires > 0},
        armor_destroyed=tuple(
            r.room for r in view.rooms if r.room != CONTENT.centre and not r.armor_intact
        ),
        radar=tuple(
            SectorGoblins(s.sector, (inside.get(s.sector, 0), *s.spaces)) for s in view.radar
        ),
        permanent_damage=view.permanent_damage,
        crystals={c: view.crystals.get(c, 0) for c in COLOURS},
        turn=view.turn,
        active=view.active,
        action_points=view.action_points,
        current_card=view.current_event.card if view.current_event is not None else None,
        blackout=view.blackout,
        trap=view.trap,
        turbo_piece=view.turbo_piece.piece if view.turbo_piece is not None else None,
        won=_RESULT[view.result],
        end_reason=view.end_reason,
    )
