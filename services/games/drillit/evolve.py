"""Folding events into the state. Never refuses: events are facts."""

from __future__ import annotations

from typing import Any

from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT
from services.games.drillit.setup_rules import assemble_event_deck
from services.games.drillit.state import (
    ACTIONS,
    ATTACK,
    FIRE,
    OVER,
    REFILL,
    SETUP,
    TURBO,
    TURN_OVER,
    TURN_START,
    DrillitState,
    PlacedPiece,
    changed,
    setup_radar,
)


def evolve(state: DrillitState, event: Any) -> DrillitState:
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise TypeError(f"not a Drillit event: {event!r}")
    new: DrillitState = handler(state, event)
    return new


def fold(state: DrillitState, events: list[Any]) -> DrillitState:
    """``evolve`` over ``events`` in order, each dispatched here (the turn flow folds most
    events of a match through this: one call fewer per event)."""
    handlers = _HANDLERS
    for event in events:
        handler = handlers.get(type(event))
        if handler is None:
            raise TypeError(f"not a Drillit event: {event!r}")
        state = handler(state, event)
    return state


def _setup(s: DrillitState, e: ev.MatchSetUp) -> DrillitState:
    return changed(
        s,
        phase=SETUP,
        players=e.players,
        difficulty=e.difficulty,
        distance=e.distance,
        storage_limit=e.storage_limit,
        exit=e.exit,
        plan_b=e.plan_b,
        path_pile=len(CONTENT.pieces),
        radar=setup_radar(),
    )


def _shuffled(s: DrillitState, e: ev.PileShuffled) -> DrillitState:
    return changed(s, shuffled_decks=(*s.shuffled_decks, e.deck))


def _drawn(s: DrillitState, e: ev.PathPiecesDrawn) -> DrillitState:
    return changed(s, hands={**s.hands, **e.pieces}, path_pile=e.pile_left)


def _dealt(s: DrillitState, e: ev.CharactersDealt) -> DrillitState:
    return changed(s, characters=dict(e.characters))


def _staged(s: DrillitState, e: ev.EventCardsStaged) -> DrillitState:
    return changed(s, staged={**s.staged, e.deck: e.cards})


def _built(s: DrillitState, e: ev.EventDeckBuilt) -> DrillitState:
    return changed(s, event_deck=assemble_event_deck(s.staged), event_deck_built=True)


def _rolled_room(s: DrillitState, e: ev.StartRoomRolled) -> DrillitState:
    return changed(s, choosing_room=e.player if e.value == 6 else s.choosing_room)


def _placed_gnome(s: DrillitState, e: ev.GnomePlaced) -> DrillitState:
    return changed(s, rooms={**s.rooms, e.player: e.room}, choosing_room=None)


def _starter(s: DrillitState, e: ev.StartingPlayerChosen) -> DrillitState:
    return changed(s, active=e.player)


def _turn_started(s: DrillitState, e: ev.TurnStarted) -> DrillitState:
    return changed(
        s,
        phase=TURN_START if e.turn > 1 else ACTIONS,
        active=e.player,
        turn=e.turn,
        action_points=e.action_points,
        current_card=None,
        blackout=False,
        trap=False,
        actions_done=False,
        fire_criticals=0,
        attack_sixes=0,
        mechanic_free_repair_used=False,
    )


def _revealed(s: DrillitState, e: ev.EventCardRevealed) -> DrillitState:
    return changed(
        s,
        current_card=e.card,
        event_deck=s.event_deck[1:],
        phase=FIRE if e.main_event == "fire" else ATTACK,
    )


def _skipped(s: DrillitState, e: ev.SubEventSkipped) -> DrillitState:
    return s


def _advanced(s: DrillitState, e: ev.GoblinsAdvanced) -> DrillitState:
    return changed(s, radar=e.radar)


def _armor_destroyed(s: DrillitState, e: ev.ArmorDestroyed) -> DrillitState:
    return changed(s, armor_destroyed=tuple(sorted({*s.armor_destroyed, e.room})))


def _reached_centre(s: DrillitState, e: ev.GoblinsReachedCentre) -> DrillitState:
    return s  # the Goblins already left the radar in GoblinsAdvanced


def _permanent(s: DrillitState, e: ev.PermanentDamageTaken) -> DrillitState:
    return changed(s, permanent_damage=s.permanent_damage + e.amount)


def _intensified(s: DrillitState, e: ev.FiresIntensified) -> DrillitState:
    fires = dict(s.fires)
    for room in e.rooms:
        fires[room] = fires.get(room, 0) + 1
    return changed(s, fires=fires)


def _exploded(s: DrillitState, e: ev.RoomExploded) -> DrillitState:
    return changed(s, fires={r: n for r, n in s.fires.items() if r != e.room})


def _overheated(s: DrillitState, e: ev.CrystalStorageOverheated) -> DrillitState:
    return changed(s, crystals=dict.fromkeys(s.crystals, 0))


def _crystal(s: DrillitState, e: ev.CrystalFound | ev.CrystalCollected) -> DrillitState:
    return changed(s, crystals={**s.crystals, e.colour: s.crystals[e.colour] + 1})


def _abyss(s: DrillitState, e: ev.AbyssOpened) -> DrillitState:
    abysses = s.abysses if e.cell is None else (*s.abysses, e.cell)
    return changed(s, abysses=abysses, abysses_found=s.abysses_found + 1)


def _blackout(s: DrillitState, e: ev.BlackoutBegan) -> DrillitState:
    return changed(s, blackout=True, phase=ACTIONS)


def _trap(s: DrillitState, e: ev.TrapSet) -> DrillitState:
    return changed(s, trap=True)


def _fire_die(s: DrillitState, e: ev.FireDieRolled) -> DrillitState:
    return changed(s, fire_criticals=s.fire_criticals + (e.value == 6))


def _fire_started(s: DrillitState, e: ev.FireStarted) -> DrillitState:
    fires = {**s.fires, e.room: s.fires.get(e.room, 0) + e.fires}
    return changed(s, fires=fires, fire_criticals=0, phase=ATTACK)


def _critical_explosion(s: DrillitState, e: ev.CriticalFireExploded) -> DrillitState:
    return changed(s, fire_criticals=0, phase=ATTACK)


def _attack_die(s: DrillitState, e: ev.AttackDieRolled) -> DrillitState:
    return changed(s, attack_sixes=s.attack_sixes + (e.value == 6))


def _after_attack(s: DrillitState) -> DrillitState:
    return changed(s, attack_sixes=0, phase=REFILL if s.actions_done else ACTIONS)


def _arrived(s: DrillitState, e: ev.GoblinsArrived) -> DrillitState:
    spaces = list(s.goblins(e.sector))
    spaces[-1] += e.count
    radar = s.radar_with(e.sector, tuple(spaces))  # and _after_attack, in one copy
    return changed(s, radar=radar, attack_sixes=0, phase=REFILL if s.actions_done else ACTIONS)


def _horde(s: DrillitState, e: ev.HordeArrived) -> DrillitState:
    for sector in CONTENT.sectors:
        spaces = list(s.goblins(sector))
        spaces[-1] += 1
        s = s.with_goblins(sector, tuple(spaces))
    return _after_attack(s)


# The folds of an action spend its Action Points in the same copy of the state as their
# other changes (spending them after the other changes copied the whole state twice).


def _moved(s: DrillitState, e: ev.GnomeMoved) -> DrillitState:
    rooms = {**s.rooms, e.player: e.room}
    return changed(s, rooms=rooms, action_points=s.action_points - e.action_points)


def _carried(s: DrillitState, e: ev.GnomeCarried) -> DrillitState:
    rooms = {**s.rooms, e.robot: e.room, e.passenger: e.room}
    return changed(s, rooms=rooms, action_points=s.action_points - e.action_points)


def _defeated(s: DrillitState, e: ev.GoblinsDefeated) -> DrillitState:
    spaces = list(s.goblins(e.sector))
    for space in e.spaces:
        spaces[space] -= 1
    return changed(
        s,
        radar=s.radar_with(e.sector, tuple(spaces)),
        goblins_defeated=s.goblins_defeated + len(e.spaces),
        action_points=s.action_points - e.action_points,
    )


def _repaired(s: DrillitState, e: ev.ArmorRepaired) -> DrillitState:
    free = e.action_points == 0 and s.is_(e.player, "mechanic")
    return changed(
        s,
        armor_destroyed=tuple(r for r in s.armor_destroyed if r != e.room),
        mechanic_free_repair_used=s.mechanic_free_repair_used or free,
        action_points=s.action_points - e.action_points,
    )


def _extinguished(s: DrillitState, e: ev.FireExtinguished) -> DrillitState:
    fires = dict(s.fires)
    fires[e.room] -= 1
    if fires[e.room] <= 0:
        del fires[e.room]
    return changed(s, fires=fires, action_points=s.action_points - e.action_points)


def _piece_placed(s: DrillitState, e: ev.PathPiecePlaced) -> DrillitState:
    hands = {p: t for p, t in s.hands.items() if p != e.owner}
    placed = (*s.placed, PlacedPiece(e.piece, e.cell, e.rotation))
    return changed(s, hands=hands, placed=placed, action_points=s.action_points - e.action_points)


def _spent(s: DrillitState, e: ev.CrystalsSpent) -> DrillitState:
    crystals = {**s.crystals, e.colour: s.crystals[e.colour] - e.count}
    return changed(
        s,
        crystals=crystals,
        crystals_used=s.crystals_used + e.count,
        action_points=s.action_points - e.action_points,
    )


def _put_out(s: DrillitState, e: ev.FiresPutOut) -> DrillitState:
    return changed(s, fires={r: n for r, n in s.fires.items() if r != e.room})


def _restored(s: DrillitState, e: ev.ArmorRestored) -> DrillitState:
    return changed(s, armor_destroyed=tuple(r for r in s.armor_destroyed if r not in e.rooms))


def _bombed(s: DrillitState, e: ev.SectorBombed) -> DrillitState:
    inside = s.goblins(e.sector)[0]
    radar = s.radar_with(e.sector, (inside,) + (0,) * CONTENT.radar_spaces)
    return changed(s, radar=radar, goblins_defeated=s.goblins_defeated + e.goblins)


def _turbo_started(s: DrillitState, e: ev.TurboStarted) -> DrillitState:
    return changed(s, phase=TURBO, turbo_left=e.pieces, turbo_anchor=None)


def _turbo_drawn(s: DrillitState, e: ev.TurboPieceDrawn) -> DrillitState:
    return changed(s, turbo_piece=e.piece, path_pile=e.pile_left)


def _turbo_done(s: DrillitState, left: int) -> DrillitState:
    if left > 0:
        return changed(s, turbo_left=left, turbo_piece=None)
    return changed(s, turbo_left=0, turbo_piece=None, turbo_anchor=None, phase=ACTIONS)


def _turbo_placed(s: DrillitState, e: ev.TurboPiecePlaced) -> DrillitState:
    placed = (*s.placed, PlacedPiece(e.piece, e.cell, e.rotation))
    return _turbo_done(changed(s, placed=placed, turbo_anchor=e.cell), s.turbo_left - 1)


def _turbo_discarded(s: DrillitState, e: ev.TurboPieceDiscarded) -> DrillitState:
    return _turbo_done(s, 0)  # the next piece would have to touch this one


def _turbo_stopped(s: DrillitState, e: ev.TurboStopped) -> DrillitState:
    return _turbo_done(s, 0)


def _plan_b(s: DrillitState, e: ev.PlanBTaken) -> DrillitState:
    return changed(s, exit=e.exit, plan_b=False)


def _actions_ended(s: DrillitState, e: ev.ActionsEnded) -> DrillitState:
    return changed(s, actions_done=True, phase=ATTACK if s.blackout else REFILL)


def _turn_ended(s: DrillitState, e: ev.TurnEnded) -> DrillitState:
    return changed(s, phase=TURN_OVER)


def _won(s: DrillitState, e: ev.MatchWon) -> DrillitState:
    return changed(s, phase=OVER, won=True, end_reason=e.reason)


def _lost(s: DrillitState, e: ev.MatchLost) -> DrillitState:
    return changed(s, phase=OVER, won=False, end_reason=e.reason)


_HANDLERS: dict[type, Any] = {
    ev.MatchSetUp: _setup,
    ev.PileShuffled: _shuffled,
    ev.PathPiecesDrawn: _drawn,
    ev.CharactersDealt: _dealt,
    ev.EventCardsStaged: _staged,
    ev.EventDeckBuilt: _built,
    ev.StartRoomRolled: _rolled_room,
    ev.GnomePlaced: _placed_gnome,
    ev.StartingPlayerChosen: _starter,
    ev.TurnStarted: _turn_started,
    ev.EventCardRevealed: _revealed,
    ev.SubEventSkipped: _skipped,
    ev.GoblinsAdvanced: _advanced,
    ev.ArmorDestroyed: _armor_destroyed,
    ev.GoblinsReachedCentre: _reached_centre,
    ev.PermanentDamageTaken: _permanent,
    ev.FiresIntensified: _intensified,
    ev.RoomExploded: _exploded,
    ev.CrystalStorageOverheated: _overheated,
    ev.CrystalFound: _crystal,
    ev.AbyssOpened: _abyss,
    ev.BlackoutBegan: _blackout,
    ev.TrapSet: _trap,
    ev.FireDieRolled: _fire_die,
    ev.FireStarted: _fire_started,
    ev.CriticalFireExploded: _critical_explosion,
    ev.AttackDieRolled: _attack_die,
    ev.GoblinsArrived: _arrived,
    ev.HordeArrived: _horde,
    ev.GnomeMoved: _moved,
    ev.GnomeCarried: _carried,
    ev.GoblinsDefeated: _defeated,
    ev.ArmorRepaired: _repaired,
    ev.FireExtinguished: _extinguished,
    ev.PathPiecePlaced: _piece_placed,
    ev.CrystalCollected: _crystal,
    ev.CrystalsSpent: _spent,
    ev.FiresPutOut: _put_out,
    ev.ArmorRestored: _restored,
    ev.SectorBombed: _bombed,
    ev.TurboStarted: _turbo_started,
    ev.TurboPieceDrawn: _turbo_drawn,
    ev.TurboPiecePlaced: _turbo_placed,
    ev.TurboPieceDiscarded: _turbo_discarded,
    ev.TurboStopped: _turbo_stopped,
    ev.PlanBTaken: _plan_b,
    ev.ActionsEnded: _actions_ended,
    ev.TurnEnded: _turn_ended,
    ev.MatchWon: _won,
    ev.MatchLost: _lost,
}
