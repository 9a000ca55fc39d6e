"""A full Dungeon Drop state consistent with a seat's view, for search bots.

The whole table is public (every cube's position and rotation, stashes, health, meeples).
Hidden from the seat: the other heroes' Quests until they are revealed, and which cubes
are still in the box and in what order they come out (the view shows how many). The
other Quests are dealt from those not shown, weighted by what each hero took; the box is
drawn from the cubes in no room, stash or aside pile, as many as it holds, in a random
order.

Counters the view leaves out: a hero's spent Shields are the Shields in the stash less
those shown ready; what a Teleport still lets the hero take after looting shows only once
the hero is taking (then at least one); the match statistics start at zero.

A whole playout simulates every flick and drop, so search stops its playouts early and
takes ``evaluate``: the chance of winning that the scores the stashes would have now give
and, at 3-4 seats, the rooms the table leaves each hero still to play (``Outlook``, fitted
to greedy matches). Of the flicks and Pillar moves an ability allows, search plays out
those ``proposals`` ranks best at a glance.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.bots.search.determinization import Determinization
from services.games.contract import ActionTemplate
from services.games.dungeon_drop import actions as act
from services.games.dungeon_drop import bots
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.flow import BOX, HERO_DECKS
from services.games.dungeon_drop.placement import Placement
from services.games.dungeon_drop.rooms import open_rooms
from services.games.dungeon_drop.scoring import pairs, quest_points, score
from services.games.dungeon_drop.state import DungeonDropState, Phase
from services.games.dungeon_drop.table import FLICK_REALS, REAL_SIDES, ROLLOUT, flick
from services.games.dungeon_drop.view import DungeonDropView, SeatView, own_seat


def sample(
    view: DungeonDropView, player: str, legal: Sequence[Any], rng: random.Random
) -> Determinization:
    phase = Phase(view.phase)
    seats = view.seats
    quests = {s.player: s.quest for s in seats if s.quest is not None}
    quests.update(_deal_quests(view, quests, rng))
    table = {c.cube: Placement(c.cube, c.x, c.y, c.angle) for c in view.table}
    placed = {*table, *view.aside, *(c for s in seats for c in s.stash)}
    unseen_cubes = sorted(c for c in CONTENT.box_cubes() if c not in placed)
    box = rng.sample(unseen_cubes, min(view.box_left, len(unseen_cubes)))
    shields_used = {
        s.player: sum(1 for c in s.stash if CONTENT.kind(c).shield) - s.shields_ready
        for s in seats
        if s.race
    }
    active = view.active
    state = DungeonDropState(
        players=tuple(s.player for s in seats),
        variant=view.variant,
        phase=phase,
        shuffled=(*HERO_DECKS, BOX),
        races={s.player: s.race for s in seats if s.race},
        classes={s.player: s.hero_class for s in seats if s.hero_class},
        quests=quests,
        health={s.player: s.health for s in seats if s.race},
        table=table,
        aside=view.aside,
        box_left=view.box_left,
        to_draw=0,
        pending_drop=(),
        stash={s.player: s.stash for s in seats if s.race},
        shields_used={p: n for p, n in shields_used.items() if n},
        round=view.round,
        order=view.order,
        turn=view.order.index(active) if active in view.order else 0,
        active=active,
        ability=view.ability,
        ability_left=view.ability_left,
        pending_flick=None,
        ward=view.ward,
        take_left=1 if phase is Phase.TAKE else 0,
        meeples={m.player: (m.x, m.y) for m in view.meeples},
        teamwork={s.player: s.teamwork for s in seats if s.teamwork},
        last_room=view.last_room,
        quests_revealed=phase in (Phase.REVEAL, Phase.SCORING, Phase.OVER),
        chests_rolled=False,
        chest_rolls={s.player: s.chest_rolls for s in seats if s.chest_rolls},
        scores=dict(view.scores),
        winner=view.winner,
    )
    return Determinization(state, {BOX: tuple(box)})


#: how much a hero's stash tells of its Quest: heroes take what their Quest pays for, so
#: a hidden Quest is dealt with weight exp(QUEST_EVIDENCE x the points it would make of the
#: stash). Fitted by likelihood to the stashes of greedy matches at their decisions: 0.25
#: gives the true Quest -2.08 nats a stash at 4 seats (2,186 stashes; -1.95 in the last
#: round) and -2.04 at 2 seats (691), against -2.30 for a uniform deal; 0.15 and 0.4 do
#: worse at both
QUEST_EVIDENCE = 0.25


def _deal_quests(
    view: DungeonDropView, shown: dict[str, str], rng: random.Random
) -> dict[str, str]:
    """The Quests the seat cannot see, one hero at a time in a random order, each drawn
    from those left by how well it fits the hero's stash (``QUEST_EVIDENCE``)."""
    left = sorted(set(CONTENT.quests) - set(shown.values()))
    hidden = [s for s in view.seats if s.player not in shown and s.race]
    rng.shuffle(hidden)
    dealt = {}
    for seat in hidden:
        weights = [math.exp(QUEST_EVIDENCE * quest_points(seat.stash, q)) for q in left]
        quest = rng.choices(left, weights)[0]
        left.remove(quest)
        dealt[seat.player] = quest
    return dealt


#: the evaluation's temperature at 2 seats, in points: a lead of this much is a 73% chance
#: of winning (logistic); greedy 2-seat matches end ~9 points apart (a standard deviation),
#: and a lead now is not yet the match
MARGIN_SCALE = 5.0


@dataclass(frozen=True)
class Outlook:
    """The chance of winning at one table size: a softmax of each hero's outlook, its
    standing and its best room on the table now (``Prospects``) weighted by how soon it
    plays, at a temperature that falls as the match's turns run out (a lead early is worth
    little, a lead at the last turn nearly everything). Fitted by likelihood to the
    winners of greedy matches at their decisions (``tests.bench.dd_outlook``)."""

    #: a room's weight for a hero whose turn this round is over, whose turn is under way,
    #: and who plays 1, 2, 3 turns from now
    weights: tuple[float, float, float, float, float]
    #: the temperature in points is exp(log_scale + slope x the share of turns left)
    log_scale: float
    slope: float

    def scale(self, turns_left: int, seats: int) -> float:
        return math.exp(self.log_scale + self.slope * turns_left / (CONTENT.rounds * seats))


#: per table size past 2 (2 seats keep the logistic at ``MARGIN_SCALE``, as measured), from
#: ``python -m tests.bench.dd_outlook --seats N --matches 3000``: the winner's mean held-out
#: log-likelihood at 4 seats -1.025, against -1.248 for the logistic's softmax at 5 points
#: and -1.386 for none; at 3 seats -0.805, against -1.078 and -1.099. The temperature runs
#: from ~11 points with the match to play to ~2.4 at its last turn; a room counts ~0.96
#: for the hero whose turn is under way and less the later a hero plays
OUTLOOKS: Mapping[int, Outlook] = {
    3: Outlook((-0.412, 0.927, 0.805, 0.739, 0.0), log_scale=0.82, slope=1.792),
    4: Outlook((-0.347, 0.96, 0.811, 0.695, 0.591), log_scale=0.729, slope=1.646),
}

#: phases in which the active hero has not looted yet
_BEFORE_LOOT = frozenset(
    (Phase.NEXT_TURN, Phase.EXPLORE, Phase.ACT, Phase.ABILITY, Phase.MEEPLES, Phase.LOOT)
)


@dataclass(frozen=True)
class Prospects:
    """What an ``Outlook`` reads of a state: the hero-turns left in the match, and per
    hero its standing, its best room on the table now and how many turns until it plays
    (0: its turn is under way, -1: it has played this round)."""

    turns_left: int
    standing: Mapping[str, float]
    room: Mapping[str, float]
    turns_to_play: Mapping[str, int]


def prospects(state: DungeonDropState) -> Prospects:
    order, turn = state.order, state.turn
    under_way = state.phase in _BEFORE_LOOT
    rooms = open_rooms(state.table)
    room: dict[str, float] = {}
    to_play: dict[str, int] = {}
    for p in state.players:
        room[p] = bots.best_room(state.table, own_seat(state, p), False, rooms)[0]
        at = order.index(p) if p in order else -1
        to_play[p] = at - turn if at > turn else 0 if at == turn and under_way else -1
    seats = len(state.players)
    left = (CONTENT.rounds - state.round) * seats + seats - turn - (0 if under_way else 1)
    return Prospects(left, {p: standing(state, p) for p in state.players}, room, to_play)


def evaluate(state: DungeonDropState, player: str) -> float:
    """How well ``player`` stands in a match under way, in [0, 1]: its chance of winning.
    Alone, the score against the Solo target; at 2 seats, the logistic of its lead in
    standings (``win_chance``); at more, the softmax of the heroes' ``Outlook``, which
    counts what the table leaves each hero still to play. A lead's size counts, not only
    who leads: a playout stopped early after a better move often leaves the same hero
    ahead, only further."""
    outlook = OUTLOOKS.get(len(state.players))
    if outlook is not None:
        return outlook_chance(outlook, prospects(state), player)
    mine = standing(state, player)
    others = [standing(state, p) for p in state.players if p != player]
    if not others:
        return min(1.0, mine / CONTENT.solo_target)
    return win_chance([mine - s for s in others])


def outlook_chance(outlook: Outlook, seen: Prospects, player: str) -> float:
    """``player``'s chance of winning under ``outlook``, from what it reads of a state."""
    weights = outlook.weights
    value = {
        p: seen.standing[p] + weights[seen.turns_to_play[p] + 1] * seen.room[p]
        for p in seen.standing
    }
    mine = value[player]
    scale = outlook.scale(seen.turns_left, len(value))
    return 1.0 / sum(math.exp((v - mine) / scale) for v in value.values())


def win_chance(leads: Sequence[float]) -> float:
    """The chance of winning, given the lead over each other hero: the softmax of the
    standings at temperature ``MARGIN_SCALE``, so the heroes' chances add up to one (even
    with all of N is 1/N) and at 2 seats it is the logistic of the lead. A point taken
    from the leader is worth more than one taken from the last hero: only one wins.
    (Against the product of the pairwise logistic chances, which makes an even 4-seat
    table 1/8: +0.57 +- 0.36 points of margin a match over 400 seeded 4-seat matches.)"""
    return 1.0 / (1.0 + sum(math.exp(-lead / MARGIN_SCALE) for lead in leads))


def standing(state: DungeonDropState, player: str) -> float:
    """The hero's score if the match ended now, with each paired Chest not yet rolled
    worth its die's mean: the rolls come only at the end, and a stash's pairs count."""
    points = float(score(state, player))
    if not state.chests_rolled:
        points += pairs(state.stash.get(player, ())) * (CONTENT.chest_die_sides + 1) / 2
    return points


def _ahead(lead: float) -> float:
    return 1.0 / (1.0 + math.exp(-lead / MARGIN_SCALE))


#: how many concrete moves of each template ``proposals`` draws and weighs: a glance at a
#: Pillar move costs ~0.5 ms (rooms only), at a flick ~1 ms (a simulation), and a table
#: holds ~9 Pillars and ~40 cubes
PROPOSAL_DRAWS = {act.MovePillar: 12, act.Flick: 3}

#: every flick die at its middle value: the flick as aimed, without its noise
_AS_AIMED = ((REAL_SIDES + 1) // 2,) * FLICK_REALS


def proposals(
    view: DungeonDropView, player: str, legal: Sequence[Any], rng: random.Random
) -> list[Any]:
    """The flicks and Pillar moves worth playing out, best first: draws of each template,
    ranked by the best room the move would leave the hero, the flick as aimed (the greedy
    bot's look at its few aimed moves, over draws from the whole table: a move that frees
    a room of its monster or opens a new one is found too)."""
    me = bots.seat(view, player)
    table = bots.table_of(view)
    drawn: list[tuple[float, float, Any]] = []
    for entry in legal:
        if not isinstance(entry, ActionTemplate):
            continue
        for _ in range(PROPOSAL_DRAWS.get(type(entry.example), 0)):
            action = entry.sample(rng)
            drawn.append((_room_after(table, action, me, view.ward), rng.random(), action))
    drawn.sort(key=lambda d: (-d[0], d[1]))
    return [action for _, _, action in drawn]


def _room_after(table: Mapping[str, Placement], action: Any, me: SeatView, ward: bool) -> float:
    """The hero's best room on the table the move leaves (a Pillar set down where it is
    put, without the cubes it would push aside)."""
    if isinstance(action, act.MovePillar):
        moved = dict(table)
        moved[action.pillar] = Placement(
            action.pillar, action.x, action.y, table[action.pillar].angle
        )
    else:
        settled = flick(table, action.cube, action.direction, action.strength, _AS_AIMED, ROLLOUT)
        moved = {p.cube: p for p in settled.placements}
    return bots.best_room(moved, me, ward)[0]
