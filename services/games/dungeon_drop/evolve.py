"""Folding events into the state. Never refuses and never simulates: events are facts,
physics results are copied from them."""

from __future__ import annotations

from typing import Any

from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.placement import Placement
from services.games.dungeon_drop.state import DungeonDropState, FlickAim, Phase, changed


def _settle(
    state: DungeonDropState, placements: tuple[Placement, ...], off: tuple[str, ...]
) -> DungeonDropState:
    return changed(
        state,
        table={p.cube: p for p in placements},
        aside=state.aside + off,
        fallen=state.fallen + len(off),
    )


def _after_ability(state: DungeonDropState) -> DungeonDropState:
    teamwork = state.variant == "teamwork" and len(state.players) > 1
    return changed(
        state,
        phase=Phase.MEEPLES if teamwork else Phase.LOOT,
        ability=None,
        ability_left=0,
        pending_flick=None,
    )


def _ability_step(state: DungeonDropState) -> DungeonDropState:
    """One use of a flick / move-pillar ability is done."""
    left = state.ability_left - 1
    state = changed(state, ability_left=left, pending_flick=None)
    return _after_ability(state) if left <= 0 else state


def _order_by_initiative(races: dict[str, str]) -> tuple[str, ...]:
    return tuple(sorted(races, key=lambda p: CONTENT.races[races[p]].initiative))


def evolve(state: DungeonDropState, event: Any) -> DungeonDropState:
    match event:
        case ev.MatchSetUp(players=players, variant=variant):
            return DungeonDropState(
                players=players,
                variant=variant,
                phase=Phase.SETUP,
                stash={p: () for p in players},
                shields_used=dict.fromkeys(players, 0),
                teamwork=dict.fromkeys(players, 0),
            )
        case ev.PileShuffled(deck=deck, size=size):
            box = size if deck == "box" else state.box_left
            return changed(state, shuffled=(*state.shuffled, deck), box_left=box)
        case ev.RacesDealt(races=races):
            healths = {p: CONTENT.races[r].health for p, r in races.items()}
            return changed(
                state, races=dict(races), health=healths, order=_order_by_initiative(races)
            )
        case ev.ClassesDealt(classes=classes):
            return changed(state, classes=dict(classes))
        case ev.QuestsDealt(quests=quests):
            return changed(state, quests=dict(quests))
        case ev.TurnStarted(player=player, explore=explore):
            pending = state.aside
            phase = Phase.EXPLORE if explore or pending else Phase.ACT
            return changed(
                state,
                phase=phase,
                active=player,
                to_draw=explore,
                pending_drop=pending,
                aside=(),
                ward=False,
                take_left=0,
                meeples={},
            )
        case ev.CubesExplored(cubes=cubes, box_left=left):
            return changed(state, to_draw=0, box_left=left, pending_drop=state.pending_drop + cubes)
        case ev.CubesDropped(placements=placements, off_table=off):
            state = changed(_settle(state, placements, off), pending_drop=())
            if state.phase == Phase.SETUP:
                return changed(state, phase=Phase.NEXT_TURN, round=1, turn=0)
            if state.phase == Phase.ABILITY:
                return _after_ability(state)
            return changed(state, phase=Phase.ACT)
        case ev.SetupDropRedone():
            return changed(state, setup_redrops=state.setup_redrops + 1)
        case ev.AbilityUsed(primitive=primitive, amount=amount):
            if primitive in ("flick", "move_pillar"):
                return changed(state, phase=Phase.ABILITY, ability=primitive, ability_left=amount)
            if primitive == "extra_drop" and min(amount, state.box_left) > 0:
                return changed(
                    state,
                    phase=Phase.ABILITY,
                    ability=primitive,
                    to_draw=min(amount, state.box_left),
                )
            if primitive == "ward":
                state = changed(state, ward=True)
            if primitive == "take_outside":
                state = changed(state, take_left=amount)
            return _after_ability(state)
        case ev.Healed(player=player, health=health):
            return changed(state, health={**state.health, player: health})
        case ev.FlickAimed(cube=cube, direction=direction, strength=strength):
            return changed(state, pending_flick=FlickAim(cube, direction, strength))
        case ev.CubeFlicked(placements=placements, off_table=off):
            state = changed(_settle(state, placements, off), flicks=state.flicks + 1)
            return _ability_step(state)
        case ev.PillarMoved(placements=placements, off_table=off):
            return _ability_step(_settle(state, placements, off))
        case ev.AbilityEnded():
            return _after_ability(state)
        case ev.MeeplePlaced(player=player, x=x, y=y):
            meeples = {**state.meeples, player: (x, y)}
            placed = len(meeples) == len(state.players) - 1
            return changed(state, meeples=meeples, phase=Phase.LOOT if placed else state.phase)
        case ev.RoomLooted(player=player, pillars=pillars, cubes=cubes, health=health) as e:
            teamwork = dict(state.teamwork)
            for owner in e.meeples:
                teamwork[owner] = teamwork.get(owner, 0) + 1
            taken = set(cubes)
            return changed(
                state,
                table={c: p for c, p in state.table.items() if c not in taken},
                stash={**state.stash, player: state.stash[player] + tuple(cubes)},
                health={**state.health, player: health},
                shields_used={
                    **state.shields_used,
                    player: state.shields_used.get(player, 0) + e.shields_spent,
                },
                teamwork=teamwork,
                meeples={},
                last_room=pillars,
                phase=Phase.TAKE if state.take_left else Phase.TURN_OVER,
            )
        case ev.LeftEmptyHanded():
            return changed(
                state, meeples={}, phase=Phase.TAKE if state.take_left else Phase.TURN_OVER
            )
        case ev.CubeTaken(player=player, cube=cube):
            return changed(
                state,
                table={c: p for c, p in state.table.items() if c != cube},
                stash={**state.stash, player: (*state.stash[player], cube)},
                take_left=state.take_left - 1,
                phase=Phase.TAKE if state.take_left > 1 else Phase.TURN_OVER,
            )
        case ev.TakeSkipped():
            return changed(state, phase=Phase.TURN_OVER)
        case ev.TurnEnded():
            turn = state.turn + 1
            return changed(
                state,
                turn=turn,
                turns_played=state.turns_played + 1,
                active=None,
                phase=Phase.NEXT_TURN if turn < len(state.order) else Phase.ROUND_OVER,
            )
        case ev.RoundEnded(round=done, order=order):
            last = done >= CONTENT.rounds
            return changed(
                state,
                round=done + 1 if not last else done,
                turn=0,
                order=order,
                phase=Phase.REVEAL if last else Phase.NEXT_TURN,
            )
        case ev.QuestsRevealed():
            return changed(state, quests_revealed=True, phase=Phase.SCORING)
        case ev.ChestsRolled(rolls=rolls):
            return changed(
                state, chests_rolled=True, chest_rolls={r.player: r.values for r in rolls}
            )
        case ev.MatchEnded(scores=scores, winner=winner):
            return changed(state, scores=dict(scores), winner=winner, phase=Phase.OVER)
    raise TypeError(f"not a Dungeon Drop event: {event!r}")
