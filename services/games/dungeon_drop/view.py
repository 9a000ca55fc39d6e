"""What a seat sees: the whole table (every cube's position and rotation), stashes,
health, round and turn order. Hidden: other heroes' Quests until they are revealed at
the end, and the box (only how many cubes it still holds; cubes drawn but not yet
dropped show only as a count)."""

from __future__ import annotations

from dataclasses import dataclass

from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.loot import shields_ready, starting_health, weight
from services.games.dungeon_drop.state import DungeonDropState


@dataclass(frozen=True)
class CubeView:
    cube: str
    kind: str
    size: str
    x: float
    y: float
    angle: float


@dataclass(frozen=True)
class MeepleView:
    player: str
    x: float
    y: float


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
        seats=tuple(_seat(state, p, viewer) for p in state.players),
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
