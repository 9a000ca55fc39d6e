"""The view drawn from what the last views kept (seats, the table's cubes) equals the view
drawn plainly from the state, whatever order states come in."""

from __future__ import annotations

import copy

from services.games.dungeon_drop import GAME
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.loot import shields_ready, starting_health, weight
from services.games.dungeon_drop.state import DungeonDropState
from services.games.dungeon_drop.view import CubeView, DungeonDropView, MeepleView, SeatView
from tests.unit.games import view_reference as reference

SEATS = ["p1", "p2", "p3"]


def plain_seat(state: DungeonDropState, player: str, viewer: str | None) -> SeatView:
    race = state.races.get(player)
    quest = state.quests.get(player)
    visible = state.quests_revealed or player == viewer
    return SeatView(
        player=player,
        race=race or "",
        hero_class=state.classes.get(player, ""),
        initiative=CONTENT.races[race].initiative if race else 0,
        health=state.health.get(player, 0),
        starting_health=starting_health(state, player) if race else 0,
        stash=state.stash.get(player, ()),
        weight=weight(state, player),
        shields_ready=shields_ready(state, player) if race else 0,
        quest=quest if visible else None,
        teamwork=state.teamwork.get(player, 0),
        chest_rolls=state.chest_rolls.get(player, ()),
    )


def plain_view(state: DungeonDropState, viewer: str | None) -> DungeonDropView:
    """The view as it was written before anything was kept from view to view."""
    return DungeonDropView(
        viewer=viewer,
        variant=state.variant,
        phase=state.phase.value,
        round=state.round,
        rounds=CONTENT.rounds,
        order=state.order,
        active=state.active,
        ability=state.ability,
        ability_left=state.ability_left,
        ward=state.ward,
        seats=tuple(plain_seat(state, p, viewer) for p in state.players),
        table=tuple(
            CubeView(p.cube, CONTENT.cubes[p.cube], CONTENT.kind(p.cube).size, p.x, p.y, p.angle)
            for _, p in sorted(state.table.items())
        ),
        aside=state.aside,
        box_left=state.box_left,
        cubes_in_hand=len(state.pending_drop),
        last_room=state.last_room,
        meeples=tuple(MeepleView(p, x, y) for p, (x, y) in sorted(state.meeples.items())),
        scores=dict(state.scores),
        winner=state.winner,
    )


def playout_states(seed: int) -> list[DungeonDropState]:
    return reference.playout_states(GAME, SEATS, seed)


def test_views_in_fold_order_and_shuffled_equal_the_plain_view() -> None:
    states = [s for seed in range(2) for s in playout_states(seed)]
    reference.assert_views_equal_the_plain_view(GAME, plain_view, states, (None, "p1", "p3"))


def test_a_state_copied_shows_what_the_state_shows() -> None:
    """Nothing kept is found by identity for a copy: every part is drawn afresh."""
    for state in playout_states(5):
        assert GAME.view(copy.deepcopy(state), "p2") == GAME.view(state, "p2")
