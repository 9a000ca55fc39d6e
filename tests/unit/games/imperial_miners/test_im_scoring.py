"""End of the match: VP tokens plus 1 VP per complete Cart, the house tie-break, solo bands."""

from __future__ import annotations

from services.games.imperial_miners import events as ev
from services.games.imperial_miners.rules import match_ended
from tests.unit.games.imperial_miners.im_given import card, gain, given, placed

CART = [placed("ann", card("Highland Diggers"), 1, 0), placed("ann", card("Old Tunnel"), 1, 1)]


def test_score_is_vp_tokens_plus_one_per_complete_cart() -> None:
    state = given(*CART, gain("ann", vp=10), gain("bob", vp=10), players=("ann", "bob"))
    end = match_ended(state)
    assert end.scores == {"ann": 11, "bob": 10} and end.carts == {"ann": 1, "bob": 0}
    assert end.results == {"ann": "won", "bob": "lost"}


def test_house_tie_break_most_coins_then_progress_then_a_draw() -> None:
    players = ("ann", "bob", "cid")
    state = given(
        *(gain(p, vp=5) for p in players),
        gain("bob", coins=3),
        gain("cid", coins=3),
        players=players,
    )
    end = match_ended(state)
    assert end.results == {"ann": "lost", "bob": "draw", "cid": "draw"}
    assert "house rule" in end.reason
    further = ev.EffectResolved("cid", "t", "", 0, 0, 2, (), 0, False, (), {}, 0, 0)
    assert match_ended(
        given(
            *(gain(p, vp=5) for p in players),
            gain("bob", coins=3),
            gain("cid", coins=3),
            further,
            players=players,
        )
    ).results == {"ann": "lost", "bob": "lost", "cid": "won"}


def test_solo_reports_the_score_and_its_house_band() -> None:
    for vp, band, result in [
        (20, "apprentice", "lost"),
        (35, "foreman", "won"),
        (70, "emperor", "won"),
    ]:
        end = match_ended(given(gain("ann", vp=vp), players=("ann",)))
        assert end.scores == {"ann": vp} and end.results == {"ann": result}
        assert band in end.reason and "house" in end.reason
