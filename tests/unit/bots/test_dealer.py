"""The bots service's round (services/bots/dealer.py): a seat another replica joined after
this one is left to it while its match moves on, and taken back once the match has stood
still for the take-over time (the other replica is gone): no seat is abandoned."""

from __future__ import annotations

from services.bots.dealer import Dealer, _Left
from services.bots.replicas import Replica
from services.bots.seat import Decider

SEAT = ("m1", "bob")


async def _never(*_: object) -> bytes:
    raise AssertionError("no decision in these tests")


def _dealer(takeover_s: float = 15.0) -> Dealer:
    decider: Decider = _never
    return Dealer(None, Replica(), decider, takeover_s=takeover_s)  # type: ignore[arg-type]


def test_a_seat_nobody_else_took_is_played() -> None:
    assert not _dealer()._left_to_another(SEAT, 10, 0.0)


def test_a_seat_left_to_another_stays_its_while_the_match_moves_on() -> None:
    dealer = _dealer()
    dealer._left[SEAT] = _Left(-1, 0.0)  # just superseded
    for t, version in enumerate([10, 11, 12, 13], start=1):
        assert dealer._left_to_another(SEAT, version, t * 14.0)  # progress within 15 s


def test_a_seat_whose_match_stands_still_is_taken_back() -> None:
    dealer = _dealer()
    dealer._left[SEAT] = _Left(-1, 0.0)
    assert dealer._left_to_another(SEAT, 10, 1.0)  # seen at 10 from t=1
    assert dealer._left_to_another(SEAT, 10, 15.0)
    assert not dealer._left_to_another(SEAT, 10, 16.5)  # 15.5 s at version 10: gone
    assert SEAT not in dealer._left
