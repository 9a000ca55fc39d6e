"""The view drawn from what the last views kept (each seat) equals the view drawn plainly
from the state, whatever order states come in."""

from __future__ import annotations

import copy

from services.games.imperial_miners import GAME
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.mine import complete_carts
from services.games.imperial_miners.state import ImperialMinersState
from services.games.imperial_miners.view import (
    ImperialMinersChainView,
    ImperialMinersSeatView,
    ImperialMinersView,
)
from tests.unit.games import view_reference as reference

SEATS = ["p1", "p2", "p3"]


def plain_seat(s: ImperialMinersState, p: str) -> ImperialMinersSeatView:
    chain = s.chains.get(p)
    return ImperialMinersSeatView(
        player=p,
        coins=s.coins[p],
        vp=s.vp[p],
        progress=s.progress[p],
        carts=complete_carts(s.mine(p)),
        mine=s.mine(p),
        hand_size=len(s.hands[p]),
        has_chosen=p in s.chosen,
        played=s.chosen.get(p) if s.revealed else None,
        chain_stage=chain.stage.value if chain is not None else "",
    )


def plain_view(s: ImperialMinersState, viewer: str | None) -> ImperialMinersView:
    """The view as it was written before anything was kept from view to view."""
    seat = viewer if viewer in s.players else None
    chain = s.chains.get(seat) if seat is not None else None
    return ImperialMinersView(
        viewer=viewer,
        phase=s.phase.value,
        round=s.round,
        rounds_left=CONTENT.event_deck - s.events_revealed,
        event=s.event,
        progress_sides=s.sides,
        seats=tuple(plain_seat(s, p) for p in s.players),
        hand=s.hands.get(seat, ()) if seat is not None else (),
        my_choice=s.chosen.get(seat) if seat is not None else None,
        chain=(
            ImperialMinersChainView(chain.card, chain.stage.value, chain.level, chain.column)
            if chain is not None
            else None
        ),
        deck_sizes={**s.piles, "level_4": len(s.level_4)},
        discard_sizes={d: len(cards) for d, cards in s.discards.items()},
        scores=dict(s.scores),
        results=dict(s.results),
    )


def playout_states(seed: int) -> list[ImperialMinersState]:
    return reference.playout_states(GAME, SEATS, seed)


def test_views_in_fold_order_and_shuffled_equal_the_plain_view() -> None:
    states = [s for seed in range(2) for s in playout_states(seed)]
    reference.assert_views_equal_the_plain_view(GAME, plain_view, states, (None, "p1", "p3"))


def test_a_state_copied_shows_what_the_state_shows() -> None:
    """Nothing kept is found by identity for a copy: every part is drawn afresh."""
    for state in playout_states(5):
        assert GAME.view(copy.deepcopy(state), "p2") == GAME.view(state, "p2")
