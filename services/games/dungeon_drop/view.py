"""What a seat sees: the whole table (every cube's position and rotation), stashes,
health, round and turn order. Hidden: other heroes' Quests until they are revealed at
the end, and the box (only how many cubes it still holds; cubes drawn but not yet
dropped show only as a count)."""

from __future__ import annotations

from dataclasses import dataclass

from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.loot import shields_ready, starting_health, weight
from services.games.dungeon_drop.placement import Placement
from services.games.dungeon_drop.state import DungeonDropState
from services.games.frozen import quick_init


@quick_init
@dataclass(frozen=True)
class CubeView:
    cube: str
    kind: str
    size: str
    x: float
    y: float
    angle: float


@quick_init
@dataclass(frozen=True)
class MeepleView:
    player: str
    x: float
    y: float


@quick_init
@dataclass(frozen=True)
class SeatView:
    player: str
    race: str
    hero_class: str
    initiative: int
    health: int
    starting_health: int
    stash: tuple[str, ...]
    weight: int
    shields_ready: int
    #: the Quest, only for its owner until the end
    quest: str | None
    teamwork: int
    chest_rolls: tuple[int, ...]


@quick_init
@dataclass(frozen=True)
class DungeonDropView:
    viewer: str | None
    variant: str
    phase: str
    round: int
    rounds: int
    order: tuple[str, ...]
    active: str | None
    ability: str | None
    ability_left: int
    #: monsters cost the active hero no Health this turn
    ward: bool
    seats: tuple[SeatView, ...]
    table: tuple[CubeView, ...]
    aside: tuple[str, ...]
    box_left: int
    cubes_in_hand: int
    last_room: tuple[str, ...]
    meeples: tuple[MeepleView, ...]
    scores: dict[str, int]
    winner: str | None


def _seat(state: DungeonDropState, player: str, viewer: str | None) -> SeatView:
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


def own_seat(state: DungeonDropState, player: str) -> SeatView:
    """The hero as its own seat sees it (its Quest shown): what its bot weighs rooms by."""
    return _seat(state, player, player)


#: per (seat, viewer): what its view was drawn from and the view; kept from view to view,
#: so a seat that did not change is the same object (a replay sees it unchanged at once)
_seats: dict[tuple[str, str | None], tuple[tuple[object, ...], SeatView]] = {}


def _seat_kept(state: DungeonDropState, player: str, viewer: str | None) -> SeatView:
    race = state.races.get(player)
    key = (
        race,
        state.classes.get(player),
        state.quests.get(player) if state.quests_revealed or player == viewer else None,
        state.health.get(player),
        state.stash.get(player),
        state.shields_used.get(player),
        state.teamwork.get(player),
        state.chest_rolls.get(player),
    )
    kept = _seats.get((player, viewer))
    if kept is not None and kept[0] == key:
        return kept[1]
    seat = _seat(state, player, viewer)
    if len(_seats) >= 256:  # seats of many matches met in turn: start again
        _seats.clear()
    _seats[(player, viewer)] = (key, seat)
    return seat


#: the last table drawn: the placements it was drawn from (by identity) and its cubes
_last_table: tuple[dict[str, Placement], tuple[CubeView, ...]] | None = None
#: each cube's view and the placement it shows (a settled table is all new placements,
#: decoded from its event: compared by value)
_cubes: dict[str, tuple[Placement, CubeView]] = {}


def _table(state: DungeonDropState) -> tuple[CubeView, ...]:
    global _last_table
    table = state.table
    last = _last_table
    if last is not None and last[0] is table:
        return last[1]
    if len(_cubes) >= 4096:
        _cubes.clear()
    shown = []
    for cube, placement in sorted(table.items()):
        kept = _cubes.get(cube)
        if kept is None or (kept[0] is not placement and kept[0] != placement):
            view = CubeView(
                placement.cube,
                CONTENT.cubes[placement.cube],
                CONTENT.kind(placement.cube).size,
                placement.x,
                placement.y,
                placement.angle,
            )
            kept = _cubes[cube] = (placement, view)
        shown.append(kept[1])
    cubes = tuple(shown)
    _last_table = (table, cubes)
    return cubes


def make_view(state: DungeonDropState, viewer: str | None) -> DungeonDropView:
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
        seats=tuple([_seat_kept(state, p, viewer) for p in state.players]),
        table=_table(state),
        aside=state.aside,
        box_left=state.box_left,
        cubes_in_hand=len(state.pending_drop),
        last_room=state.last_room,
        meeples=tuple(MeepleView(p, x, y) for p, (x, y) in sorted(state.meeples.items())),
        scores=dict(state.scores),
        winner=state.winner,
    )
