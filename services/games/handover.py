"""What a seat's new holder may see of what its old holder saw, game by game.

A seat abandoned (its holder left) and handed over (to a bot, or opened for a new player)
keeps its place in the game: what the seat holds now (its hand, its quest) is the seat's,
and its new holder needs it to play, as a substitute at a real table picks up the
player's cards. What the old holder alone saw and that the rules keep face down is not
passed on: the seat's view shows its new holder only what the rules let a player who
sat down at that moment see. The platform records, when the seat is handed over, what to
keep back (``seal``: a plain string, folded the same way by every reader), and the seat's
views leave it out (``mask``) for as long as it stays hidden.

- Imperial Miners: the hand is shown (it is the seat's, and its legal actions name it).
  A card the old holder already chose this round stays face down to the new holder until
  the round's reveal shows it to everyone, as another seat's choice does (``has_chosen``
  tells that a choice is made): the rules show a chosen card to no one but the player who
  chose it before the reveal.
- Drillit: cooperative, every piece in hand and on the table is public; only the decks'
  order is hidden, from every seat alike. Nothing to keep back.
- Dungeon Drop: the seat's Quest is shown (hidden from the other heroes until the end, it
  is the seat's goal and scores for it); the box's contents are hidden from every seat
  alike. Nothing to keep back.
- Crashland: solo. There is no other player to hand the seat to nor to see the hand-over,
  so a one-seat match is never handed over (services/board/lobby.py refuses it); its
  player may still leave it.

Plain data: nothing of protobuf, Kafka or gRPC.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from services.games.imperial_miners.state import ImperialMinersState
from services.games.imperial_miners.view import ImperialMinersView


def _im_seal(state: ImperialMinersState, seat: str) -> str:
    """The card the seat chose this round, still face down."""
    return "" if state.revealed else state.chosen.get(seat, "")


def _im_mask(view: ImperialMinersView, sealed: str) -> ImperialMinersView:
    if not sealed or view.my_choice != sealed:
        return view
    played = next((s.played for s in view.seats if s.player == view.viewer), None)
    if played is not None:  # revealed to everyone since
        return view
    return dataclasses.replace(view, my_choice=None)


#: game → (seal, mask); a game not named keeps nothing back (see the module's text)
_POLICIES: dict[str, tuple[Callable[[Any, str], str], Callable[[Any, str], Any]]] = {
    "imperial_miners": (_im_seal, _im_mask),
}

#: games a seat is never handed over in: one seat, no table to hand it to
SOLO_REASON = "a solo match has no other player to hand its seat to; its player may leave it"


def seal(game: str, state: Any, seat: str) -> str:
    """What the seat's new holder must not see, as the match stands at the hand-over."""
    policy = _POLICIES.get(game)
    return policy[0](state, seat) if policy is not None else ""


def mask(game: str, view: Any, sealed: str) -> Any:
    """The seat's game view without what ``seal`` kept back (``view`` itself when nothing)."""
    if not sealed:
        return view
    policy = _POLICIES.get(game)
    return policy[1](view, sealed) if policy is not None else view
