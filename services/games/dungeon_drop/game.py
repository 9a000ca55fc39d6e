"""Dungeon Drop as a contract ``Game``: wires setup, chance (dice drive the physics),
players' decisions, views and the platform's hooks.

Readings where the rulebook is short (each listed with the clause it fills in the content
pack's ``house_choices``; house content is labelled there):

- Setup: Race, Class and Quest cards are dealt from shuffled decks (the decks service);
  the larger cubes form the face-down "box" deck, so Explore draws them blind. The first
  hero in Initiative order drops the small cubes and the Dragon over the table's centre;
  the height (6-12 inches) and each cube's landing are random reals from the dice
  service (a die with 1,000,000 sides per real), the landing is simulated (table.py)
  and the resulting placements are recorded. A drop that does not "spread evenly
  across the table, without more than one or two touching each other" (spread.py) is
  recorded (SetupDropRedone) and dropped again from new dice.
- Explore draws min(6/4/3, cubes left) from the box; cubes that fell off the table since
  the previous Explore (including at setup) are dropped with them ("the next player to
  act will drop them into the Dungeon as part of their Explore step").
- Act: one ability, Race or Class, or none. Flicks and Pillar moves may be stopped early.
  A hand-moved Pillar is set down exactly (no dice) and rests exactly there, turned as it
  was (held still while the table settles); cubes it overlaps are pushed aside.
- Loot: any three Pillars not in a line form a room; a room is allowed when no other
  Pillar is within or touching it and its monsters leave the hero at least 1 Health
  (loot.py: shields, potions, ward). ``LeaveEmptyHanded`` stands for forming a room that
  collects nothing, which is always possible, so the list of rooms offered only holds
  rooms that collect something.
- Teamwork: each opponent, in turn order from the active hero, places a meeple anywhere
  on the table before the room is formed; a meeple within or touching the room scores 1
  for its owner; meeples are picked up after the Loot.
- End: Quests revealed; all paired Chests are rolled in one dice request, assigned to
  heroes in seat order; ties go to the highest starting Initiative.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    CardsDrawn,
    ChanceOutcome,
    DeckShuffled,
    Described,
    DiceRolled,
    DrawCards,
    Game,
    MalformedAction,
    OptionSpec,
    RollDice,
    RuleViolation,
    ShuffleDeck,
    Step,
    ViewPolicy,
    random_view_policy,
)
from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop import naming
from services.games.dungeon_drop.actions import ACTION_TYPES
from services.games.dungeon_drop.bots import greedy_view_policy
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.decide import decide_action, phase_actions
from services.games.dungeon_drop.events import EVENT_TYPES
from services.games.dungeon_drop.evolve import evolve
from services.games.dungeon_drop.flow import BOX, advance_folded, next_step, outcome
from services.games.dungeon_drop.picture import picture
from services.games.dungeon_drop.placement import Physics
from services.games.dungeon_drop.render import render
from services.games.dungeon_drop.scoring import breakdown, pairs
from services.games.dungeon_drop.spread import spread_evenly, touching_pairs
from services.games.dungeon_drop.state import DungeonDropState, Phase
from services.games.dungeon_drop.table import FLICK_REALS, FULL, ROLLOUT, drop, drop_height, flick
from services.games.dungeon_drop.view import DungeonDropView, make_view

VARIANTS = ("standard", "teamwork", "solo")


def match_set_up(players: Sequence[str], options: Mapping[str, str]) -> list[Any]:
    players = tuple(players)
    if not CONTENT.min_players <= len(players) <= CONTENT.max_players:
        raise MalformedAction("PLAYER_COUNT", "Dungeon Drop is for 1 to 4 players.")
    if len(set(players)) != len(players):
        raise MalformedAction("DUPLICATE_PLAYER", "Each player takes one seat.")
    unknown = set(options) - {"variant"}
    if unknown:
        raise MalformedAction("UNKNOWN_OPTION", f"Unknown option(s): {', '.join(sorted(unknown))}.")
    variant = options.get("variant", "solo" if len(players) == 1 else "standard")
    if variant not in VARIANTS:
        raise MalformedAction("BAD_VARIANT", f"variant is one of {', '.join(VARIANTS)}.")
    if (variant == "solo") != (len(players) == 1):
        raise MalformedAction("SOLO", "The Solo variant is played by exactly one player.")
    return [ev.MatchSetUp(players, variant, CONTENT.rules_version)]


class DungeonDrop(Game[DungeonDropState]):
    name: ClassVar[str] = "dungeon_drop"
    title: ClassVar[str] = "Dungeon Drop"
    rules_version: ClassVar[str] = CONTENT.rules_version
    min_players: ClassVar[int] = CONTENT.min_players
    max_players: ClassVar[int] = CONTENT.max_players
    action_types: ClassVar[tuple[type, ...]] = ACTION_TYPES
    event_types: ClassVar[tuple[type, ...]] = EVENT_TYPES
    view_type: ClassVar[type] = DungeonDropView
    #: what the table shows only once the cubes are dropped or flicked (the physics), the
    #: cubes drawn blind from the box, the Chests' rolls and the secret Quests
    revealing_events: ClassVar[frozenset[type] | None] = frozenset(
        {
            ev.CubesExplored,
            ev.CubesDropped,
            ev.SetupDropRedone,
            ev.CubeFlicked,
            ev.ChestRoll,
            ev.ChestsRolled,
            ev.QuestsRevealed,
        }
    )
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec(
            "variant",
            "standard",
            "standard, teamwork (opponents' meeples score in the room) or solo (1 player, "
            "house rules)",
            VARIANTS,
        ),
    )

    def __init__(self, physics: Physics = FULL) -> None:
        #: how drops, flicks and Pillar moves are simulated: FULL for matches, ROLLOUT
        #: only in the engine search bots play out with (``rollout_engine``)
        self.physics = physics

    def rollout_engine(self) -> DungeonDrop:
        return self if self.physics == ROLLOUT else _rollout_engine()

    def initial_state(self) -> DungeonDropState:
        return DungeonDropState()

    def setup(self, players: Sequence[str], options: Mapping[str, str]) -> list[Any]:
        return match_set_up(players, options)

    def evolve(self, state: DungeonDropState, event: Any) -> DungeonDropState:
        return evolve(state, event)

    def next_step(self, state: DungeonDropState) -> Step:
        return next_step(state)

    # --- players -------------------------------------------------------------------

    def decide(self, state: DungeonDropState, player: str, action: Any) -> list[Any]:
        return self.decide_folded(state, player, action)[0]

    def decide_folded(
        self, state: DungeonDropState, player: str, action: Any
    ) -> tuple[list[Any], DungeonDropState]:
        """The events, and the state ``advance`` folded them into on the way."""
        step = next_step(state)
        if not isinstance(step, AwaitingPlayers) or not step.players:
            raise RuleViolation("NOT_NOW", "Nobody may act now; the cubes are still falling.")
        if player not in step.players:
            raise RuleViolation("NOT_YOUR_TURN", f"It is {step.players[0]}'s move.")
        return advance_folded(state, decide_action(state, player, action, self.physics))

    def legal_actions(self, state: DungeonDropState, player: str) -> tuple[Any, ...]:
        step = next_step(state)
        if not isinstance(step, AwaitingPlayers) or player not in step.players:
            return ()
        return phase_actions(state, player)

    # --- chance --------------------------------------------------------------------

    def resolve(self, state: DungeonDropState, outcome: ChanceOutcome) -> list[Any]:
        return self.resolve_folded(state, outcome)[0]

    def resolve_folded(
        self, state: DungeonDropState, outcome: ChanceOutcome
    ) -> tuple[list[Any], DungeonDropState]:
        step = next_step(state)
        if not isinstance(step, AwaitingChance):
            raise RuleViolation("NO_CHANCE_PENDING", "No dice or cubes are awaited now.")
        return advance_folded(state, self._resolve(state, step.request, outcome))

    def _resolve(self, state: DungeonDropState, request: Any, outcome: ChanceOutcome) -> list[Any]:
        match request, outcome:
            case ShuffleDeck(deck=deck), DeckShuffled(deck=got, size=size) if got == deck:
                return [ev.PileShuffled(deck, size)]
            case DrawCards(deck=deck, count=n), CardsDrawn(deck=got, cards=cards) if (
                got == deck and len(cards) == n
            ):
                return [self._drawn(state, deck, cards)]
            case RollDice(count=n, sides=sides), DiceRolled(values=values) if len(
                values
            ) == n and all(1 <= v <= sides for v in values):
                return [self._rolled(state, values)]
        raise RuleViolation("UNEXPECTED_OUTCOME", f"{outcome!r} does not answer {request!r}.")

    def _drawn(self, state: DungeonDropState, deck: str, cards: tuple[str, ...]) -> Any:
        dealt = dict(zip(state.players, cards, strict=True)) if deck != BOX else {}
        if deck == "races":
            return ev.RacesDealt(dealt)
        if deck == "classes":
            return ev.ClassesDealt(dealt)
        if deck == "quests":
            return ev.QuestsDealt(dealt)
        assert state.active is not None
        return ev.CubesExplored(state.active, cards, state.box_left - len(cards))

    def _rolled(self, state: DungeonDropState, values: tuple[int, ...]) -> Any:
        if state.phase == Phase.SCORING:
            rolls: list[ev.ChestRoll] = []
            at = 0
            for p in state.players:
                n = pairs(state.stash[p])
                rolls.append(ev.ChestRoll(p, values[at : at + n]))
                at += n
            return ev.ChestsRolled(tuple(rolls))
        if state.pending_flick is not None:
            aim = state.pending_flick
            assert state.active is not None and len(values) == FLICK_REALS
            settled = flick(
                state.table, aim.cube, aim.direction, aim.strength, values, self.physics
            )
            return ev.CubeFlicked(
                state.active,
                aim.cube,
                aim.direction,
                aim.strength,
                settled.placements,
                settled.off_table,
            )
        if state.phase == Phase.SETUP:
            return self._setup_drop(state, values)
        cubes = state.pending_drop
        assert state.active is not None
        player, reason = state.active, "explore" if state.phase == Phase.EXPLORE else "ability"
        settled = drop(state.table, cubes, values, self.physics)
        return ev.CubesDropped(
            player,
            reason,
            tuple(sorted(cubes)),
            drop_height(values),
            settled.placements,
            settled.off_table,
        )

    def _setup_drop(self, state: DungeonDropState, values: tuple[int, ...]) -> Any:
        """The first player's drop of the smaller cubes; one that does not spread them is
        picked up and redone from new dice (up to ``max_setup_drops``: that one stands)."""
        cubes = CONTENT.setup_cubes(state.variant == "solo")
        player, height = state.order[0], drop_height(values)
        settled = drop({}, cubes, values, self.physics)
        touching = touching_pairs(settled.placements)
        last = state.setup_redrops + 1 >= CONTENT.table.max_setup_drops
        if not spread_evenly(settled, touching) and not last:
            return ev.SetupDropRedone(
                player, height, settled.placements, settled.off_table, touching
            )
        return ev.CubesDropped(
            player, "setup", tuple(sorted(cubes)), height, settled.placements, settled.off_table
        )

    # --- reading -------------------------------------------------------------------

    def view(self, state: DungeonDropState, viewer: str | None) -> DungeonDropView:
        return make_view(state, viewer)

    def statistics(self, state: DungeonDropState) -> dict[str, float]:
        return {
            "turns": float(state.turns_played),
            "flicks": float(state.flicks),
            "cubes_fallen": float(state.fallen),
            "cubes_left_on_table": float(len(state.table)),
            "box_left": float(state.box_left),
            "setup_redrops": float(state.setup_redrops),
        }

    def seat_summaries(self, state: DungeonDropState) -> list[dict[str, str | float]]:
        if state.phase != Phase.OVER:
            return []
        rows: list[dict[str, str | float]] = []
        won = {p: r == "won" for p, r in outcome(state).results.items()}
        for seat, player in enumerate(state.players):
            rows.append(
                {
                    "seat": float(seat),
                    "won": 1.0 if won[player] else 0.0,
                    "score": float(state.scores[player]),
                    "race": state.races[player],
                    "class": state.classes[player],
                    "quest": state.quests[player],
                    **{k: float(v) for k, v in breakdown(state, player).items()},
                }
            )
        return rows

    def bots(self) -> Mapping[str, Callable[[int], ViewPolicy]]:
        physics = self.physics

        def greedy(seed: int) -> ViewPolicy:
            """Its trial flicks simulated as this engine simulates flicks."""
            return greedy_view_policy(seed, physics)

        return {"random": random_view_policy, "greedy": greedy}

    def render(self, view: Any) -> str:
        return render(view)

    def picture(self, view: Any) -> str | None:
        return picture(view)

    def describe(self, view: Any, action: Any) -> Described:
        return naming.describe(view, action)

    def describe_action(self, action: Any) -> str:
        name = type(action).__name__
        fields = ", ".join(
            f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in vars(action).items()
        )
        return f"{name}({fields})" if fields else name


@functools.cache
def _rollout_engine() -> DungeonDrop:
    return DungeonDrop(ROLLOUT)
