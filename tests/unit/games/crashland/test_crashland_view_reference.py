"""The view drawn from what the last view kept (cells, tanks, the spaceship, card faces)
equals the view drawn plainly from the state, whatever order states come in."""

from __future__ import annotations

import copy

from services.games.contract import AwaitingChance, AwaitingPlayers, Finished
from services.games.crashland import GAME
from services.games.crashland.content import CONTENT
from services.games.crashland.model import Position
from services.games.crashland.rules import next_step, spaceship_position
from services.games.crashland.state import CrashlandState
from services.games.crashland.view import CardView, CellView, CrashlandView, TankView
from services.games.playout import random_policy
from tests.unit.games import view_reference as reference


def plain_card(card: str) -> CardView:
    if card in CONTENT.event_cards:
        event = CONTENT.event_cards[card]
        return CardView(card, "event", event.number, event.system, event.loss)
    return CardView(card, CONTENT.equipment_cards[card].kind.value, None, None, None)


def plain_view(state: CrashlandState, viewer: str | None) -> CrashlandView:
    """The view as it was written before anything was kept from view to view."""
    is_player = viewer is not None and viewer == state.player
    lying: dict[Position, int] = {}
    for number, position in sorted(state.located.items()):
        if number not in state.collected:
            lying.setdefault(position, number)
    cells = []
    for r in range(CONTENT.rows):
        for c in range(CONTENT.columns):
            p = Position(r, c)
            tank, here = lying.get(p), state.astronaut == p
            if p in state.explored:
                m = CONTENT.map_cards[state.card_at(p)]
                cells.append(CellView(p, True, m.id, m.kind, m.number, m.axis, tank, here))
            else:
                cells.append(CellView(p, False, None, None, None, None, tank, here))
    step = next_step(state)
    awaiting = (
        "over"
        if isinstance(step, Finished)
        else "chance"
        if isinstance(step, AwaitingChance)
        else step.phase
        if isinstance(step, AwaitingPlayers)
        else "?"
    )
    drawn = state.drawn if is_player else tuple(c for c in state.drawn if c in CONTENT.event_cards)
    return CrashlandView(
        viewer=viewer,
        player=state.player,
        phase=state.phase,
        turn=state.turn,
        awaiting=awaiting,
        rows=CONTENT.rows,
        columns=CONTENT.columns,
        cells=tuple(cells) if state.grid else (),
        astronaut=state.astronaut,
        spaceship=spaceship_position(state),
        oxygen=state.oxygen,
        battery=state.battery,
        max_level=CONTENT.max_level,
        tanks=tuple(
            TankView(n, state.located.get(n), n in state.collected) for n in CONTENT.tank_numbers
        ),
        hand=tuple(plain_card(c) for c in state.hand) if is_player else (),
        hand_size=len(state.hand),
        uplink_cards=tuple(plain_card(c) for c in state.known_top) if is_player else (),
        uplink_size=len(state.known_top),
        arranging=state.uplink_count,
        draw_pile_size=state.draw_pile + len(state.known_top),
        discard_pile=tuple(plain_card(c) for c in state.discard),
        cards_moved=state.cards_moved,
        free_cards_left=max(0, CONTENT.free_cards - state.cards_moved),
        last_drawn=tuple(plain_card(c) for c in drawn),
        applied_event=plain_card(state.applied_event) if state.applied_event else None,
        result=state.result,
        end_reason=state.end_reason,
    )


def playout_states(seed: int) -> list[CrashlandState]:
    return reference.playout_states(GAME, ["p1"], seed, {"p1": random_policy(seed)})


def test_views_in_fold_order_and_shuffled_equal_the_plain_view() -> None:
    states = [s for seed in range(4) for s in playout_states(seed)]
    reference.assert_views_equal_the_plain_view(GAME, plain_view, states, (None, "p1", "p2"))


def test_a_state_copied_shows_what_the_state_shows() -> None:
    """Nothing kept is found by identity for a copy: every part is drawn afresh."""
    for state in playout_states(11):
        assert GAME.view(copy.deepcopy(state), None) == GAME.view(state, None)
