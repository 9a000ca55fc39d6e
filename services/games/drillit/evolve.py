"""Folding events into the state. Never refuses: events are facts.

Each event's handler reads the state and returns its changes (field -> new value); the
folds below copy the state once and lay the changes of all their events over that copy,
instead of a whole copy of the state per event. The handlers of the frequent events
(``_IN_PLACE``) write their changes into the copy's attributes themselves, each value
worked out from the state before any is written."""

from __future__ import annotations

from typing import Any, Final

from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT
from services.games.drillit.records import made
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
    SectorGoblins,
    setup_radar,
)

#: the state's fields an event changes, with their new values
Changes = dict[str, Any]
#: a copy's attributes (its ``__dict__``), which an in-place handler writes its changes in
Attributes = dict[str, Any]

_new: Final = object.__new__


def copied(state: DrillitState) -> DrillitState:
    """``state.copied``, compiled with the folds (the turn flow's copy too): an
    uncompiled function called from here costs a Python frame."""
    new: DrillitState = _new(DrillitState)
    attributes = new.__dict__
    attributes.update(state.__dict__)  # (compiled: a direct call of the C function)
    return new


#: sector -> its place on the radar (``state._SECTOR_AT``, compiled)
_SECTOR_AT: Final = {sector: i for i, sector in enumerate(CONTENT.sectors)}


def sector_goblins(sector: int, spaces: tuple[int, ...]) -> SectorGoblins:
    """``state.sector_goblins``, compiled with the folds and remembered in a dict read
    here (a call of the state's, through its lru_cache's wrapper, builds the key and
    moves the entry: several times this look-up; they are immutable, one instance of each
    serves every radar)."""
    key = (sector, spaces)
    known = _SECTOR_GOBLINS.get(key)
    if known is None:
        if len(_SECTOR_GOBLINS) >= 4096:
            _SECTOR_GOBLINS.clear()
        # SectorGoblins(sector, spaces), compiled (records.made)
        known = _SECTOR_GOBLINS[key] = made(SectorGoblins, {"sector": sector, "spaces": spaces})
    return known


_SECTOR_GOBLINS: Final[dict[tuple[int, tuple[int, ...]], SectorGoblins]] = {}


def _goblins(s: DrillitState, sector: int) -> tuple[int, ...]:
    """``s.goblins(sector)``, compiled (the state's method is uncompiled Python)."""
    at = _SECTOR_AT.get(sector)
    return s.radar[CONTENT.sectors.index(sector) if at is None else at].spaces


def _radar_with(s: DrillitState, sector: int, spaces: tuple[int, ...]) -> tuple[SectorGoblins, ...]:
    """``s.radar_with(sector, spaces)``, compiled."""
    radar = s.radar
    at = _SECTOR_AT.get(sector, -1)
    if 0 <= at < len(radar) and radar[at].sector == sector:
        changed = list(radar)
        changed[at] = sector_goblins(sector, spaces)
        return tuple(changed)
    return tuple([sector_goblins(g.sector, spaces) if g.sector == sector else g for g in radar])


def evolve(state: DrillitState, event: Any) -> DrillitState:
    in_place = _IN_PLACE.get(type(event))
    if in_place is not None:
        new = copied(state)
        in_place(new, event, new.__dict__)
        return new
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise TypeError(f"not a Drillit event: {event!r}")
    new = copied(state)
    attributes = new.__dict__
    attributes |= handler(state, event)
    return new


def fold(state: DrillitState, events: list[Any]) -> DrillitState:
    """``evolve`` over ``events`` in order, in one copy of ``state``."""
    if not events:
        return state
    new = copied(state)
    fold_into(new, events)
    return new


def fold_into(draft: DrillitState, events: list[Any]) -> None:
    """Fold ``events`` into ``draft`` in place: a copy of the caller's own (``copied``)
    that nobody has seen yet (nor remembered anything about, as ``setup_step`` and
    ``next_step`` remember their last state), which the turn flow folds a whole decision's
    or chance outcome's events into."""
    handlers = _HANDLERS
    attributes = draft.__dict__  # (past the frozen __setattr__, as ``copied`` fills it)
    for event in events:
        # the frequent events by their class, most frequent first: a direct call of the
        # compiled handler (one from a dict goes through Python's call protocol)
        kind = type(event)
        if kind is _GNOME_MOVED:
            _moved(draft, event, attributes)
        elif kind is _PILE_SHUFFLED:
            _shuffled(draft, event, attributes)
        elif kind is _PIECE_PLACED:
            _piece_placed(draft, event, attributes)
        elif kind is _CRYSTAL_COLLECTED:
            _crystal(draft, event, attributes)
        elif kind is _TURN_STARTED:
            _turn_started(draft, event, attributes)
        elif kind is _CARDS_STAGED:
            _staged(draft, event, attributes)
        elif kind is _ATTACK_DIE:
            _attack_die(draft, event, attributes)
        elif kind is _ACTIONS_ENDED:
            _actions_ended(draft, event, attributes)
        elif kind is _TURN_ENDED:
            _turn_ended(draft, event, attributes)
        elif kind is _CARD_REVEALED:
            _revealed(draft, event, attributes)
        elif kind is _PIECES_DRAWN:
            _drawn(draft, event, attributes)
        elif kind is _GOBLINS_ARRIVED:
            _arrived(draft, event, attributes)
        elif kind is _ARMOR_DESTROYED:
            _armor_destroyed(draft, event, attributes)
        elif kind is _GOBLINS_ADVANCED:
            _advanced(draft, event, attributes)
        elif kind is _FIRES_INTENSIFIED:
            _intensified(draft, event, attributes)
        elif kind is _FIRE_DIE:
            _fire_die(draft, event, attributes)
        elif kind is _ROOM_ROLLED:
            _rolled_room(draft, event, attributes)
        elif kind is _GNOME_PLACED:
            _placed_gnome(draft, event, attributes)
        elif kind is _FIRE_STARTED:
            _fire_started(draft, event, attributes)
        elif kind is _CRYSTALS_SPENT:
            _spent(draft, event, attributes)
        elif kind is _GOBLINS_DEFEATED:
            _defeated(draft, event, attributes)
        elif kind is _CRYSTAL_FOUND:
            _crystal(draft, event, attributes)
        elif kind is _PERMANENT_DAMAGE:
            _permanent(draft, event, attributes)
        else:
            try:  # (a subscript, not ``get`` and a test)
                handler = handlers[kind]
            except KeyError:
                raise TypeError(f"not a Drillit event: {event!r}") from None
            # (``update``: compiled, a direct call of the C function; ``|=`` goes through
            # the number protocol)
            attributes.update(handler(draft, event))


def _setup(s: DrillitState, e: ev.MatchSetUp) -> Changes:
    return {
        "phase": SETUP,
        "players": e.players,
        "difficulty": e.difficulty,
        "distance": e.distance,
        "storage_limit": e.storage_limit,
        "exit": e.exit,
        "plan_b": e.plan_b,
        "path_pile": len(CONTENT.pieces),
        "radar": setup_radar(),
    }


def _shuffled(s: DrillitState, e: ev.PileShuffled, d: Attributes) -> None:
    d["shuffled_decks"] = (*s.shuffled_decks, e.deck)


def _drawn(s: DrillitState, e: ev.PathPiecesDrawn, d: Attributes) -> None:
    d["hands"] = {**s.hands, **e.pieces}
    d["path_pile"] = e.pile_left


def _dealt(s: DrillitState, e: ev.CharactersDealt) -> Changes:
    return {"characters": dict(e.characters)}


def _staged(s: DrillitState, e: ev.EventCardsStaged, d: Attributes) -> None:
    d["staged"] = {**s.staged, e.deck: e.cards}


def _built(s: DrillitState, e: ev.EventDeckBuilt) -> Changes:
    return {"event_deck": assemble_event_deck(s.staged), "event_deck_built": True}


def _rolled_room(s: DrillitState, e: ev.StartRoomRolled, d: Attributes) -> None:
    d["choosing_room"] = e.player if e.value == 6 else s.choosing_room


def _placed_gnome(s: DrillitState, e: ev.GnomePlaced, d: Attributes) -> None:
    d["rooms"] = {**s.rooms, e.player: e.room}
    d["choosing_room"] = None


def _starter(s: DrillitState, e: ev.StartingPlayerChosen) -> Changes:
    return {"active": e.player}


def _turn_started(s: DrillitState, e: ev.TurnStarted, d: Attributes) -> None:
    d["phase"] = TURN_START if e.turn > 1 else ACTIONS
    d["active"] = e.player
    d["turn"] = e.turn
    d["action_points"] = e.action_points
    d["current_card"] = None
    d["blackout"] = False
    d["trap"] = False
    d["actions_done"] = False
    d["fire_criticals"] = 0
    d["attack_sixes"] = 0
    d["mechanic_free_repair_used"] = False


def _revealed(s: DrillitState, e: ev.EventCardRevealed, d: Attributes) -> None:
    d["current_card"] = e.card
    d["event_deck"] = s.event_deck[1:]
    d["phase"] = FIRE if e.main_event == "fire" else ATTACK


def _skipped(s: DrillitState, e: ev.SubEventSkipped) -> Changes:
    return {}


def _advanced(s: DrillitState, e: ev.GoblinsAdvanced, d: Attributes) -> None:
    d["radar"] = e.radar


def _armor_destroyed(s: DrillitState, e: ev.ArmorDestroyed, d: Attributes) -> None:
    d["armor_destroyed"] = tuple(sorted({*s.armor_destroyed, e.room}))


def _reached_centre(s: DrillitState, e: ev.GoblinsReachedCentre) -> Changes:
    return {}  # the Goblins already left the radar in GoblinsAdvanced


def _permanent(s: DrillitState, e: ev.PermanentDamageTaken, d: Attributes) -> None:
    d["permanent_damage"] = s.permanent_damage + e.amount


def _intensified(s: DrillitState, e: ev.FiresIntensified, d: Attributes) -> None:
    fires = dict(s.fires)
    for room in e.rooms:
        fires[room] = fires.get(room, 0) + 1
    d["fires"] = fires


def _exploded(s: DrillitState, e: ev.RoomExploded) -> Changes:
    return {"fires": {r: n for r, n in s.fires.items() if r != e.room}}


def _overheated(s: DrillitState, e: ev.CrystalStorageOverheated) -> Changes:
    return {"crystals": dict.fromkeys(s.crystals, 0)}


def _crystal(s: DrillitState, e: ev.CrystalFound | ev.CrystalCollected, d: Attributes) -> None:
    d["crystals"] = {**s.crystals, e.colour: s.crystals[e.colour] + 1}


def _abyss(s: DrillitState, e: ev.AbyssOpened) -> Changes:
    abysses = s.abysses if e.cell is None else (*s.abysses, e.cell)
    return {"abysses": abysses, "abysses_found": s.abysses_found + 1}


def _blackout(s: DrillitState, e: ev.BlackoutBegan) -> Changes:
    return {"blackout": True, "phase": ACTIONS}


def _trap(s: DrillitState, e: ev.TrapSet) -> Changes:
    return {"trap": True}


def _fire_die(s: DrillitState, e: ev.FireDieRolled, d: Attributes) -> None:
    d["fire_criticals"] = s.fire_criticals + (e.value == 6)


def _fire_started(s: DrillitState, e: ev.FireStarted, d: Attributes) -> None:
    d["fires"] = {**s.fires, e.room: s.fires.get(e.room, 0) + e.fires}
    d["fire_criticals"] = 0
    d["phase"] = ATTACK


def _critical_explosion(s: DrillitState, e: ev.CriticalFireExploded) -> Changes:
    return {"fire_criticals": 0, "phase": ATTACK}


def _attack_die(s: DrillitState, e: ev.AttackDieRolled, d: Attributes) -> None:
    d["attack_sixes"] = s.attack_sixes + (e.value == 6)


def _after_attack(s: DrillitState) -> Changes:
    return {"attack_sixes": 0, "phase": REFILL if s.actions_done else ACTIONS}


def _arrived(s: DrillitState, e: ev.GoblinsArrived, d: Attributes) -> None:
    spaces = list(_goblins(s, e.sector))
    spaces[-1] += e.count
    d["radar"] = _radar_with(s, e.sector, tuple(spaces))
    d["attack_sixes"] = 0
    d["phase"] = REFILL if s.actions_done else ACTIONS


def _horde(s: DrillitState, e: ev.HordeArrived) -> Changes:
    # one more Goblin on the outermost space of every sector (the radar holds each once)
    radar = tuple(sector_goblins(g.sector, (*g.spaces[:-1], g.spaces[-1] + 1)) for g in s.radar)
    return {"radar": radar, **_after_attack(s)}


def _moved(s: DrillitState, e: ev.GnomeMoved, d: Attributes) -> None:
    d["rooms"] = {**s.rooms, e.player: e.room}
    d["action_points"] = s.action_points - e.action_points


def _carried(s: DrillitState, e: ev.GnomeCarried) -> Changes:
    rooms = {**s.rooms, e.robot: e.room, e.passenger: e.room}
    return {"rooms": rooms, "action_points": s.action_points - e.action_points}


def _defeated(s: DrillitState, e: ev.GoblinsDefeated, d: Attributes) -> None:
    spaces = list(_goblins(s, e.sector))
    for space in e.spaces:
        spaces[space] -= 1
    d["radar"] = _radar_with(s, e.sector, tuple(spaces))
    d["goblins_defeated"] = s.goblins_defeated + len(e.spaces)
    d["action_points"] = s.action_points - e.action_points


def _repaired(s: DrillitState, e: ev.ArmorRepaired) -> Changes:
    free = e.action_points == 0 and s.is_(e.player, "mechanic")
    return {
        "armor_destroyed": tuple(r for r in s.armor_destroyed if r != e.room),
        "mechanic_free_repair_used": s.mechanic_free_repair_used or free,
        "action_points": s.action_points - e.action_points,
    }


def _extinguished(s: DrillitState, e: ev.FireExtinguished) -> Changes:
    fires = dict(s.fires)
    fires[e.room] -= 1
    if fires[e.room] <= 0:
        del fires[e.room]
    return {"fires": fires, "action_points": s.action_points - e.action_points}


def _piece_placed(s: DrillitState, e: ev.PathPiecePlaced, d: Attributes) -> None:
    d["hands"] = {p: t for p, t in s.hands.items() if p != e.owner}
    # PlacedPiece(e.piece, e.cell, e.rotation), compiled (records.made)
    laid = made(PlacedPiece, {"piece": e.piece, "cell": e.cell, "rotation": e.rotation})
    d["placed"] = (*s.placed, laid)
    d["action_points"] = s.action_points - e.action_points


def _spent(s: DrillitState, e: ev.CrystalsSpent, d: Attributes) -> None:
    d["crystals"] = {**s.crystals, e.colour: s.crystals[e.colour] - e.count}
    d["crystals_used"] = s.crystals_used + e.count
    d["action_points"] = s.action_points - e.action_points


def _put_out(s: DrillitState, e: ev.FiresPutOut) -> Changes:
    return {"fires": {r: n for r, n in s.fires.items() if r != e.room}}


def _restored(s: DrillitState, e: ev.ArmorRestored) -> Changes:
    return {"armor_destroyed": tuple(r for r in s.armor_destroyed if r not in e.rooms)}


def _bombed(s: DrillitState, e: ev.SectorBombed) -> Changes:
    inside = _goblins(s, e.sector)[0]
    radar = _radar_with(s, e.sector, (inside,) + (0,) * CONTENT.radar_spaces)
    return {"radar": radar, "goblins_defeated": s.goblins_defeated + e.goblins}


def _turbo_started(s: DrillitState, e: ev.TurboStarted) -> Changes:
    return {"phase": TURBO, "turbo_left": e.pieces, "turbo_anchor": None}


def _turbo_drawn(s: DrillitState, e: ev.TurboPieceDrawn) -> Changes:
    return {"turbo_piece": e.piece, "path_pile": e.pile_left}


def _turbo_done(left: int) -> Changes:
    if left > 0:
        return {"turbo_left": left, "turbo_piece": None}
    return {"turbo_left": 0, "turbo_piece": None, "turbo_anchor": None, "phase": ACTIONS}


def _turbo_placed(s: DrillitState, e: ev.TurboPiecePlaced) -> Changes:
    placed = (*s.placed, PlacedPiece(e.piece, e.cell, e.rotation))
    return {"placed": placed, "turbo_anchor": e.cell, **_turbo_done(s.turbo_left - 1)}


def _turbo_discarded(s: DrillitState, e: ev.TurboPieceDiscarded) -> Changes:
    return _turbo_done(0)  # the next piece would have to touch this one


def _turbo_stopped(s: DrillitState, e: ev.TurboStopped) -> Changes:
    return _turbo_done(0)


def _plan_b(s: DrillitState, e: ev.PlanBTaken) -> Changes:
    return {"exit": e.exit, "plan_b": False}


def _actions_ended(s: DrillitState, e: ev.ActionsEnded, d: Attributes) -> None:
    d["actions_done"] = True
    d["phase"] = ATTACK if s.blackout else REFILL


def _turn_ended(s: DrillitState, e: ev.TurnEnded, d: Attributes) -> None:
    d["phase"] = TURN_OVER


def _won(s: DrillitState, e: ev.MatchWon) -> Changes:
    return {"phase": OVER, "won": True, "end_reason": e.reason}


def _lost(s: DrillitState, e: ev.MatchLost) -> Changes:
    return {"phase": OVER, "won": False, "end_reason": e.reason}


#: (Final: compiled, read from a C static, not looked up in the module's dict per fold)
_HANDLERS: Final[dict[type, Any]] = {
    ev.MatchSetUp: _setup,
    ev.CharactersDealt: _dealt,
    ev.EventDeckBuilt: _built,
    ev.StartingPlayerChosen: _starter,
    ev.SubEventSkipped: _skipped,
    ev.GoblinsReachedCentre: _reached_centre,
    ev.RoomExploded: _exploded,
    ev.CrystalStorageOverheated: _overheated,
    ev.AbyssOpened: _abyss,
    ev.BlackoutBegan: _blackout,
    ev.TrapSet: _trap,
    ev.CriticalFireExploded: _critical_explosion,
    ev.HordeArrived: _horde,
    ev.GnomeCarried: _carried,
    ev.ArmorRepaired: _repaired,
    ev.FireExtinguished: _extinguished,
    ev.FiresPutOut: _put_out,
    ev.ArmorRestored: _restored,
    ev.SectorBombed: _bombed,
    ev.TurboStarted: _turbo_started,
    ev.TurboPieceDrawn: _turbo_drawn,
    ev.TurboPiecePlaced: _turbo_placed,
    ev.TurboPieceDiscarded: _turbo_discarded,
    ev.TurboStopped: _turbo_stopped,
    ev.PlanBTaken: _plan_b,
    ev.MatchWon: _won,
    ev.MatchLost: _lost,
}

#: the handlers writing their changes in place (``Attributes``), by event class
_IN_PLACE: Final[dict[type, Any]] = {
    ev.GnomeMoved: _moved,
    ev.PileShuffled: _shuffled,
    ev.PathPiecePlaced: _piece_placed,
    ev.CrystalCollected: _crystal,
    ev.TurnStarted: _turn_started,
    ev.EventCardsStaged: _staged,
    ev.AttackDieRolled: _attack_die,
    ev.ActionsEnded: _actions_ended,
    ev.TurnEnded: _turn_ended,
    ev.EventCardRevealed: _revealed,
    ev.PathPiecesDrawn: _drawn,
    ev.GoblinsArrived: _arrived,
    ev.ArmorDestroyed: _armor_destroyed,
    ev.GoblinsAdvanced: _advanced,
    ev.FiresIntensified: _intensified,
    ev.FireDieRolled: _fire_die,
    ev.StartRoomRolled: _rolled_room,
    ev.GnomePlaced: _placed_gnome,
    ev.FireStarted: _fire_started,
    ev.CrystalsSpent: _spent,
    ev.GoblinsDefeated: _defeated,
    ev.CrystalFound: _crystal,
    ev.PermanentDamageTaken: _permanent,
}
# their classes as compiled constants, for ``fold_into``'s tests by identity (``ev.X`` is a
# look-up in the module's dict and one in the events module's)
_GNOME_MOVED: Final = ev.GnomeMoved
_PILE_SHUFFLED: Final = ev.PileShuffled
_PIECE_PLACED: Final = ev.PathPiecePlaced
_CRYSTAL_COLLECTED: Final = ev.CrystalCollected
_TURN_STARTED: Final = ev.TurnStarted
_CARDS_STAGED: Final = ev.EventCardsStaged
_ATTACK_DIE: Final = ev.AttackDieRolled
_ACTIONS_ENDED: Final = ev.ActionsEnded
_TURN_ENDED: Final = ev.TurnEnded
_CARD_REVEALED: Final = ev.EventCardRevealed
_PIECES_DRAWN: Final = ev.PathPiecesDrawn
_GOBLINS_ARRIVED: Final = ev.GoblinsArrived
_ARMOR_DESTROYED: Final = ev.ArmorDestroyed
_GOBLINS_ADVANCED: Final = ev.GoblinsAdvanced
_FIRES_INTENSIFIED: Final = ev.FiresIntensified
_FIRE_DIE: Final = ev.FireDieRolled
_ROOM_ROLLED: Final = ev.StartRoomRolled
_GNOME_PLACED: Final = ev.GnomePlaced
_FIRE_STARTED: Final = ev.FireStarted
_CRYSTALS_SPENT: Final = ev.CrystalsSpent
_GOBLINS_DEFEATED: Final = ev.GoblinsDefeated
_CRYSTAL_FOUND: Final = ev.CrystalFound
_PERMANENT_DAMAGE: Final = ev.PermanentDamageTaken
