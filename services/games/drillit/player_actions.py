"""The actions a Gnome spends Action Points on, their refusals, and their enumeration."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from itertools import combinations_with_replacement
from typing import Any, Final, overload

from services.games.contract import MalformedAction, RuleViolation
from services.games.drillit import actions as act
from services.games.drillit import events as ev
from services.games.drillit.characters import (
    MECHANIC,
    PILOT,
    ROBOT,
    SOLDIER,
    attack_targets,
    may_place_for,
    move_cost,
    repair_cost,
    walking_distance,
)
from services.games.drillit.content import CONTENT
from services.games.drillit.crystals import crystal_actions, use_crystals
from services.games.drillit.end_conditions import EXIT_REACHED
from services.games.drillit.hexgrid import Hex
from services.games.drillit.records import made
from services.games.drillit.setup_rules import room_has_space
from services.games.drillit.state import DrillitState
from services.games.drillit.tunnels import (
    canonical_rotation,
    excavations,
    may_lay,
    openings,
    placements,
    plan_b_exit,
    reaches_exit,
    tunnels_of,
)

ALL_ROOMS: Final = (CONTENT.centre, *CONTENT.rooms)
_CENTRE: Final = CONTENT.centre


def _need_points(state: DrillitState, cost: int) -> None:
    if cost > state.action_points:
        raise RuleViolation(
            "NO_ACTION_POINTS",
            f"That costs {cost} Action Point(s); you have {state.action_points} left.",
        )


def _room_name(room: int) -> str:
    return "the centre" if room == CONTENT.centre else f"room {room}"


# Events are immutable: one instance of each of these frequent ones serves every match
# (building a frozen event costs several times the cache's look-up).


def _moved(player: str, room: int, cost: int) -> ev.GnomeMoved:
    # (a dict read in compiled code, not an lru_cache: a call through the cache's wrapper
    # builds its key and moves its entry, several times the cost of the look-up)
    key = (player, room, cost)
    known = _MOVED.get(key)
    if known is None:
        if len(_MOVED) >= 4096:
            _MOVED.clear()
        known = _MOVED[key] = ev.GnomeMoved(player, room, cost)
    return known


_MOVED: Final[dict[tuple[str, int, int], ev.GnomeMoved]] = {}


@functools.lru_cache(maxsize=1024)
def _actions_ended(player: str) -> ev.ActionsEnded:
    return ev.ActionsEnded(player)


def move(state: DrillitState, player: str, room: int) -> list[Any]:
    if room not in ALL_ROOMS:
        raise MalformedAction("BAD_ROOM", f"The Tank has no room {room}.")
    if room == state.rooms[player]:
        raise RuleViolation("ALREADY_THERE", f"You are already in {_room_name(room)}.")
    if not room_has_space(state, room):
        raise RuleViolation(
            "ROOM_FULL", f"{_room_name(room).capitalize()} already holds 2 Gnomes; pass through."
        )
    cost = move_cost(state, player, room)
    _need_points(state, cost)
    return [_moved(player, room, cost)]


def carry(state: DrillitState, player: str, room: int, passenger: str) -> list[Any]:
    if not state.is_(player, ROBOT):
        raise RuleViolation("NOT_THE_ROBOT", "Only the Robot can carry a colleague.")
    if room not in ALL_ROOMS:
        raise MalformedAction("BAD_ROOM", f"The Tank has no room {room}.")
    if room == state.rooms[player]:
        raise RuleViolation("ALREADY_THERE", f"You are already in {_room_name(room)}.")
    if passenger == player or passenger not in state.players:
        raise MalformedAction("BAD_PASSENGER", f"{passenger!r} is not a colleague.")
    if state.rooms[passenger] != state.rooms[player]:
        raise RuleViolation("NOT_IN_YOUR_ROOM", f"{passenger} is not in your room.")
    riders = (player, passenger)
    free = CONTENT.room_capacity - len([p for p in state.occupants(room) if p not in riders])
    if free < len(riders):
        raise RuleViolation("ROOM_FULL", f"{_room_name(room).capitalize()} has no space.")
    _need_points(state, 1)
    return [ev.GnomeCarried(player, passenger, room, 1)]


def attack(state: DrillitState, player: str, spaces: tuple[int, ...]) -> list[Any]:
    room = state.rooms[player]
    if room == CONTENT.centre:
        raise RuleViolation("IN_CENTRE", "It is not possible to attack from the centre.")
    most = attack_targets(state, player)
    if not 1 <= len(spaces) <= most:
        raise MalformedAction(
            "BAD_TARGETS", "One attack removes 1 Goblin (up to 2 of one sector for the Soldier)."
        )
    sector = CONTENT.faces_sector[room]
    goblins = list(state.radar[_FACING_AT[room]].spaces)  # state.goblins(sector), compiled
    for space in spaces:
        if not 0 <= space < len(goblins):
            raise MalformedAction("BAD_SPACE", f"Sector {sector} has no space {space}.")
        if goblins[space] == 0:
            where = f"inside {_room_name(room)}" if space == 0 else f"on space {space}"
            raise RuleViolation("NO_GOBLIN", f"There is no Goblin {where} of sector {sector}.")
        goblins[space] -= 1
    _need_points(state, 1)
    return [ev.GoblinsDefeated(player, sector, tuple(sorted(spaces)), 1)]


def repair(state: DrillitState, player: str) -> list[Any]:
    room = state.rooms[player]
    if room not in state.armor_destroyed:
        raise RuleViolation("NOTHING_TO_REPAIR", f"The Armor of {_room_name(room)} is intact.")
    cost = repair_cost(state, player)
    _need_points(state, cost)
    return [ev.ArmorRepaired(player, room, cost)]


def extinguish(state: DrillitState, player: str) -> list[Any]:
    room = state.rooms[player]
    if state.fires.get(room, 0) == 0:
        raise RuleViolation("NO_FIRE", f"{_room_name(room).capitalize()} is not burning.")
    _need_points(state, 1)
    return [ev.FireExtinguished(player, room, 1)]


def _victory_if_exit(state: DrillitState, cell: Hex, piece: str, rotation: int) -> list[Any]:
    if reaches_exit(state, cell, openings(piece, rotation)):
        return [ev.MatchWon(EXIT_REACHED)]
    return []


def _check_rotation(rotation: int) -> None:
    if not 0 <= rotation < 6:
        raise MalformedAction("BAD_ROTATION", "A hex piece turns 0 to 5 sixths.")


def excavate(state: DrillitState, player: str, action: act.Excavate) -> list[Any]:
    _check_rotation(action.rotation)
    if state.trap:
        raise RuleViolation("TRAP", "A Trap: no Path piece may be placed this turn.")
    piece = state.hands.get(action.owner)
    if piece is None:
        raise RuleViolation("NO_PIECE", f"{action.owner} holds no Path piece.")
    if not may_place_for(state, player, action.owner):
        raise RuleViolation(
            "NOT_SAME_ROOM", f"You must be in the same room as {action.owner} to place their piece."
        )
    if not may_lay(state, piece, action.cell, action.rotation, None):
        raise RuleViolation(
            "BAD_PLACEMENT",
            "A Path piece must connect to the Tank or an open tunnel, on a free space "
            "(touching the Tank, never over it).",
        )
    _need_points(state, 1)
    return _excavated(state, player, action, piece)


#: events are immutable: one Crystal collected of each colour a piece shows serves every match
_COLLECTED: Final = {p.crystal: ev.CrystalCollected(p.crystal) for p in CONTENT.pieces.values()}
# (Final: compiled, read from a C static; ``CONTENT.x`` or ``ev.X`` is a look-up of the
# imported name in the module's dict and one of its attribute, at every use)
_PIECE_PLACED: Final = ev.PathPiecePlaced
_PIECES: Final = CONTENT.pieces


def _excavated(state: DrillitState, player: str, action: act.Excavate, piece: str) -> list[Any]:
    """The events of an Excavate the rules allow, ``piece`` being its owner's."""
    rotation = canonical_rotation(piece, action.rotation)
    return [
        made(  # ev.PathPiecePlaced(player, owner, piece, cell, rotation, 1), compiled
            _PIECE_PLACED,
            {
                "player": player,
                "owner": action.owner,
                "piece": piece,
                "cell": action.cell,
                "rotation": rotation,
                "action_points": 1,
            },
        ),
        _COLLECTED[_PIECES[piece].crystal],
        *_victory_if_exit(state, action.cell, piece, rotation),
    ]


def place_turbo_piece(state: DrillitState, action: act.PlaceTurboPiece) -> list[Any]:
    _check_rotation(action.rotation)
    piece = state.turbo_piece
    if piece is None:
        raise RuleViolation("NOT_NOW", "The Turbo has not drawn its piece yet.")
    if not may_lay(state, piece, action.cell, action.rotation, state.turbo_anchor):
        raise RuleViolation(
            "BAD_PLACEMENT",
            "The Turbo piece must connect to the tunnels"
            + (" and continue the first Turbo piece." if state.turbo_anchor else "."),
        )
    rotation = canonical_rotation(piece, action.rotation)
    return [
        ev.TurboPiecePlaced(piece, action.cell, rotation),
        *_victory_if_exit(state, action.cell, piece, rotation),
    ]


def take_plan_b(state: DrillitState, player: str) -> list[Any]:
    """Plan B (see setup_rules): the Exit piece moves to the other exit option, once."""
    other = plan_b_exit(state)
    if other is None:
        raise RuleViolation(
            "NO_PLAN_B", "Plan B is not available: the Exit piece has moved or the option is off."
        )
    return [ev.PlanBTaken(player, other)]


def decide_turn_action(state: DrillitState, player: str, action: Any) -> list[Any]:
    """An action of the active player during their actions."""
    match action:  # (the most frequent first: the cases are distinct classes)
        case act.Move(room=room):
            return move(state, player, room)
        case act.Excavate():
            return excavate(state, player, action)
        case act.EndTurn():
            return [_actions_ended(player)]
        case act.Attack(spaces=spaces):
            return attack(state, player, tuple(spaces))
        case act.Carry(room=room, passenger=passenger):
            return carry(state, player, room, passenger)
        case act.Repair():
            return repair(state, player)
        case act.Extinguish():
            return extinguish(state, player)
        case act.UseBlueOnFires() | act.UseBlueOnArmor() | act.UseRedBomb() | act.UseYellowTurbo():
            return use_crystals(state, player, action)
        case act.TakePlanB():
            return take_plan_b(state, player)
    raise MalformedAction("UNKNOWN_ACTION", f"{type(action).__name__} is not a Drillit! action.")


# the classes of the frequent listed actions, as compiled constants (``act.Move`` is a
# look-up in the module's dict and one in the actions module's, at every decision)
_MOVE: Final = act.Move
_EXCAVATE: Final = act.Excavate
_END: Final = act.EndTurn
_ATTACK: Final = act.Attack
_CRYSTAL_ACTIONS: Final = frozenset(
    {act.UseBlueOnFires, act.UseBlueOnArmor, act.UseRedBomb, act.UseYellowTurbo}
)
_TAKE_PLAN_B: Final = act.TakePlanB
_REPAIR_ARMOR: Final = act.Repair
_EXTINGUISH_FIRE: Final = act.Extinguish
_CARRY: Final = act.Carry


def listed_turn_action(state: DrillitState, player: str, action: Any) -> list[Any]:
    """``decide_turn_action`` for an action ``turn_choices(state, player)`` listed: the
    frequent ones without the checks that could only refuse them."""
    kind = type(action)  # (exact types: the listed actions are built here)
    if kind is _MOVE:
        room = action.room
        return [_moved(player, room, move_cost(state, player, room))]
    if kind is _EXCAVATE:
        return _excavated(state, player, action, state.hands[action.owner])
    if kind is _END:
        return [_actions_ended(player)]
    # the others by their class, as decide_turn_action's cases (checked), without the
    # failed cases before them: each reads a class from the actions module, at every try
    if kind is _ATTACK:
        return attack(state, player, tuple(action.spaces))
    if kind in _CRYSTAL_ACTIONS:
        return use_crystals(state, player, action)
    if kind is _TAKE_PLAN_B:
        return take_plan_b(state, player)
    if kind is _REPAIR_ARMOR:
        return repair(state, player)
    if kind is _EXTINGUISH_FIRE:
        return extinguish(state, player)
    if kind is _CARRY:
        return carry(state, player, action.room, action.passenger)
    return decide_turn_action(state, player, action)


#: actions are immutable: one instance of each fixed one serves every list
_MOVES: Final = {room: act.Move(room) for room in ALL_ROOMS}
#: room -> (each other room, the walk there), in the order of ``ALL_ROOMS``
_WALKS: Final = {
    here: tuple((room, walking_distance(here, room)) for room in ALL_ROOMS if room != here)
    for here in ALL_ROOMS
}


def _attacks(goblins: tuple[int, ...], most: int) -> tuple[act.Attack, ...]:
    """``_attacks_on``, remembered (actions are immutable)."""
    key = (goblins, most)
    known = _ATTACKS.get(key)
    if known is None:
        if len(_ATTACKS) >= 4096:
            _ATTACKS.clear()
        known = _ATTACKS[key] = _attacks_on(goblins, most)
    return known


#: the caches of the choices' parts: plain dicts read in compiled code, not lru_caches (a
#: call through the cache's wrapper builds its key and moves its entry at every decision).
#: Emptied when they grow past a bound.
_ATTACKS: Final[dict[tuple[tuple[int, ...], int], tuple[act.Attack, ...]]] = {}
_FULLS: Final[dict[tuple[int | None, ...], tuple[int | None, ...]]] = {}
_HEADS: Final[dict[tuple[int, bool, int, tuple[int | None, ...]], tuple[Any, ...]]] = {}


def _attacks_on(goblins: tuple[int, ...], most: int) -> tuple[act.Attack, ...]:
    """Every attack on a sector with ``goblins`` (per space) removing up to ``most``."""
    present = [s for s, n in enumerate(goblins) if n > 0]
    return tuple(
        made(_ATTACK, {"spaces": combo})  # act.Attack(combo), compiled (records.made)
        for size in range(1, most + 1)
        for combo in combinations_with_replacement(present, size)
        if all(combo.count(s) <= goblins[s] for s in combo)
    )


def _carry(room: int, passenger: str) -> act.Carry:
    """``act.Carry(room, passenger)``, one of each (actions are immutable; the Robot's
    turns list them at every decision)."""
    key = (room, passenger)
    known = _CARRIES.get(key)
    if known is None:
        if len(_CARRIES) >= 4096:
            _CARRIES.clear()
        known = _CARRIES[key] = act.Carry(room, passenger)
    return known


_CARRIES: Final[dict[tuple[int, str], act.Carry]] = {}
_REPAIR: Final = act.Repair()
_EXTINGUISH: Final = act.Extinguish()
_PLAN_B: Final = act.TakePlanB()
_END_TURN: Final = act.EndTurn()


def turn_actions(state: DrillitState, player: str) -> tuple[Any, ...]:
    """Every legal action of the active player, EndTurn last."""
    return tuple(turn_choices(state, player))


class _Excavations(Sequence[act.Excavate]):
    """The Excavate actions of one piece, built only when read: a random policy reads the
    turn's length and one entry, and Excavate actions are most of the list."""

    __slots__ = ("_owner", "_piece", "_spots", "_state")

    def __init__(
        self, state: DrillitState, owner: str, piece: str, spots: tuple[tuple[Hex, int], ...]
    ) -> None:
        self._state, self._owner, self._piece, self._spots = state, owner, piece, spots

    def __len__(self) -> int:
        return len(self._spots)

    @overload
    def __getitem__(self, index: int) -> act.Excavate: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[act.Excavate]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return excavations(self._state, self._owner, self._piece)[index]
        cell, rotation = self._spots[index]
        # act.Excavate(owner, cell, rotation), compiled (records.made)
        return made(_EXCAVATE, {"owner": self._owner, "cell": cell, "rotation": rotation})

    def __iter__(self) -> Iterator[act.Excavate]:
        return iter(excavations(self._state, self._owner, self._piece))


class TurnChoices(Sequence[Any]):
    """The contract's ``Choices`` (legal actions in parts, each read only when asked for),
    compiled with the rules: a turn's choices are built, measured and read once at every
    decision of every playout, which the contract's class does interpreted.

    ``last_read`` is the entry the last ``choices[index]`` returned (None before any): the
    action a policy picked, mostly, which ``steps.decide_folded`` decides without the
    checks that could only refuse it."""

    __slots__ = ("_length", "_parts", "_sizes", "last_read")

    def __init__(self, parts: list[Sequence[Any]]) -> None:
        self._parts = parts
        self._sizes = sizes = [len(part) for part in parts]
        length = 0
        for size in sizes:  # (a loop, not ``sum``: a builtin's call costs more, compiled)
            length += size
        self._length = length
        self.last_read: Any = None

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if not isinstance(index, int):  # (an int's test is inlined, compiled; a slice's
            return tuple(self)[index]  # is a call)
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("legal action index out of range")
        parts = self._parts
        for part, size in enumerate(self._sizes):
            if index < size:
                entry = self.last_read = parts[part][index]
                return entry
            index -= size
        raise AssertionError("unreachable: the sizes add up to the length")

    def __iter__(self) -> Iterator[Any]:
        for part in self._parts:
            yield from part

    def __repr__(self) -> str:
        return f"TurnChoices({tuple(self)!r})"


def _full(where: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """The rooms at capacity with the players in the rooms ``where`` (``room_has_space``)."""
    capacity = CONTENT.room_capacity
    return tuple(room for room in set(where) if where.count(room) >= capacity)


def _head(here: int, robot: bool, points: int, where: tuple[int | None, ...]) -> tuple[Any, ...]:
    """``_moves`` from ``here`` with the players in the rooms ``where``, remembered: the
    rooms at capacity by ``where``, the moves by those (far fewer keys)."""
    full = _FULLS.get(where)
    if full is None:
        if len(_FULLS) >= 4096:
            _FULLS.clear()
        full = _FULLS[where] = _full(where)
    key = (here, robot, points, full)
    known = _HEADS.get(key)
    if known is None:
        if len(_HEADS) >= 1024:
            _HEADS.clear()
        known = _HEADS[key] = _moves(here, robot, points, full)
    return known


def _moves(here: int, robot: bool, points: int, full: tuple[int | None, ...]) -> tuple[Any, ...]:
    """The moves from ``here`` with ``points`` AP left, the rooms ``full`` at capacity
    (``move``'s checks: the Robot flies anywhere for 1 AP, the others pay the walk)."""
    return tuple(
        _MOVES[room]
        for room, walk in _WALKS[here]
        if room not in full and (1 if robot else walk) <= points
    )


#: room -> the place on the radar of the sector it faces (``state.goblins``' look-up, once)
_FACING_AT: Final = {
    room: CONTENT.sectors.index(CONTENT.faces_sector[room]) for room in CONTENT.rooms
}


def turn_choices(state: DrillitState, player: str) -> TurnChoices:
    """``turn_actions`` in order: moves, carries, attacks, repair, extinguish; an Excavate
    for each placement of each piece the player may lay (built only when read); crystal
    abilities, Plan B, EndTurn.

    Asked before every decision of every turn, so the character rules it needs are read
    here from the player's character, read once (``attack_targets``, ``repair_cost``,
    ``may_place_for``: a call and a look-up each), and the tunnels asked for once."""
    rooms, players = state.rooms, state.players
    here = rooms[player]
    points = state.action_points
    character = state.characters.get(player)
    robot = character == ROBOT
    where = tuple([rooms.get(p) for p in players])  # each player's room, in seat order
    head = _head(here, robot, points, where)
    out: list[Any] = []
    if robot and points >= 1:
        for seat in range(len(players)):  # state.occupants(here)
            passenger = players[seat]
            if where[seat] != here or passenger == player:
                continue
            for room in ALL_ROOMS:
                if room != here and room not in where:  # nobody in it
                    out.append(_carry(room, passenger))
    if here != _CENTRE and points >= 1:
        goblins = state.radar[_FACING_AT[here]].spaces  # state.goblins(sector facing here)
        for count in goblins:  # any(goblins), without a call of the builtin
            if count:
                out += _attacks(goblins, 2 if character == SOLDIER else 1)  # attack_targets
                break
    if here in state.armor_destroyed:
        free = character == MECHANIC and not state.mechanic_free_repair_used  # repair_cost
        if (0 if free else 1) <= points:
            out.append(_REPAIR)
    if points >= 1 and state.fires.get(here, 0) > 0:
        out.append(_EXTINGUISH)
    if out:
        head += tuple(out)
    parts: list[Sequence[Any]] = [head]
    if not state.trap and points >= 1:
        hands, pilot, dug = state.hands, character == PILOT, tunnels_of(state)
        for owner in players:
            piece = hands.get(owner)
            # may_place_for: own piece anywhere, a colleague's from the same room (the
            # Pilot's from any room)
            if piece is not None and (owner == player or pilot or rooms.get(owner) == here):
                parts.append(_Excavations(state, owner, piece, dug.placements(piece, None)))
    last = crystal_actions(state, player)
    if state.plan_b and plan_b_exit(state) is not None:
        last.append(_PLAN_B)
    last.append(_END_TURN)
    parts.append(tuple(last))
    return TurnChoices(parts)


class TurboChoices(Sequence[act.PlaceTurboPiece]):
    """The placements of the Turbo's piece as ``PlaceTurboPiece`` actions, each built only
    when read (a random policy reads one)."""

    __slots__ = ("_spots",)

    def __init__(self, spots: tuple[tuple[Hex, int], ...]) -> None:
        self._spots = spots

    def __len__(self) -> int:
        return len(self._spots)

    @overload
    def __getitem__(self, index: int) -> act.PlaceTurboPiece: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[act.PlaceTurboPiece]: ...

    def __getitem__(
        self, index: int | slice
    ) -> act.PlaceTurboPiece | Sequence[act.PlaceTurboPiece]:
        if isinstance(index, slice):
            return tuple(self)[index]
        cell, rotation = self._spots[index]
        return act.PlaceTurboPiece(cell, rotation)

    def __iter__(self) -> Iterator[act.PlaceTurboPiece]:
        for cell, rotation in self._spots:
            yield act.PlaceTurboPiece(cell, rotation)

    def __repr__(self) -> str:
        return f"TurboChoices({tuple(self)!r})"


def turbo_actions(state: DrillitState) -> tuple[Any, ...]:
    return tuple(turbo_choices(state))


def turbo_choices(state: DrillitState) -> Sequence[act.PlaceTurboPiece]:
    """``turbo_actions``, each built only when read."""
    if state.turbo_piece is None:
        return ()
    return TurboChoices(placements(state, state.turbo_piece, state.turbo_anchor))
