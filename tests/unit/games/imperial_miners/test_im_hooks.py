"""The Game's platform hooks: identity and options, bots, the terminal board, seat
summaries (by faction, as `tabletop simulate` groups them) and statistics."""

from __future__ import annotations

import pytest

from services.games.contract import OptionSpec
from services.games.imperial_miners import GAME
from services.games.imperial_miners import actions as act
from services.games.imperial_miners.view import ImperialMinersView
from services.games.playout import play, random_policy
from tests.unit.games.imperial_miners.im_given import (
    card,
    gain,
    given,
    greedy_policy,
    mine_phase,
    placed,
)


def test_identity_and_options() -> None:
    assert (GAME.name, GAME.title, GAME.min_players, GAME.max_players) == (
        "imperial_miners",
        "Imperial Miners",
        1,
        5,
    )
    assert GAME.view_type is ImperialMinersView
    assert GAME.options[0] == OptionSpec(
        "first_game", "false", GAME.options[0].help, ("false", "true")
    )
    assert set(GAME.bots()) == {"random", "greedy"}


def test_greedy_decides_from_its_view_and_takes_the_better_effect() -> None:
    tunnel = card("Supply Lift")
    state = given(
        placed("ann", "Old Tunnel", 1, 0),
        gain("ann", coins=5),
        *mine_phase(3),
        players=("ann", "bob"),
        hands={"ann": (tunnel,), "bob": (card("Old Tunnel", 1),)},
    )
    bot = GAME.bots()["greedy"](0)
    view = GAME.view(state, "ann")
    assert bot(view, "ann", GAME.legal_actions(state, "ann")) == act.ChooseCard(tunnel)


@pytest.mark.parametrize("round_no", [3, 10])
def test_greedy_always_resolves_a_surface_effect_and_prefers_the_vp(round_no: int) -> None:
    """Round 10: coins are worth next to nothing. Round 3: 2 coins are worth a VP to it,
    and a tie goes to the later effect, the VP (as for a Mine card's effects)."""
    tunnel = card("Old Tunnel")
    state = given(*mine_phase(round_no), players=("ann",), hands={"ann": (tunnel,)})
    for action in (act.ChooseCard(tunnel), act.PlaceCard(0), act.SkipEffect()):
        state = GAME.fold(GAME.decide(state, "ann", action), state)
    bot = GAME.bots()["greedy"](0)
    legal = GAME.legal_actions(state, "ann")
    assert bot(GAME.view(state, "ann"), "ann", legal) == act.UseEffect(1)


def test_greedy_outscores_random() -> None:
    players = ("g", "r")
    totals = {"g": 0, "r": 0}
    for seed in range(4):
        pols = {"g": greedy_policy(seed), "r": random_policy(seed)}
        result = play(GAME, players, {}, pols, seed)
        for p in players:
            totals[p] += result.outcome.scores[p]
    assert totals["g"] > totals["r"]


def test_render_draws_the_mine_as_a_staggered_pyramid_and_the_hand() -> None:
    mine = [
        placed("ann", "Old Tunnel", 1, 0),
        placed("ann", card("Old Tunnel", 1), 1, 1),
        placed("ann", "Supply Lift", 2, 0),
    ]
    state = given(*mine, *mine_phase(2), players=("ann", "bob"), hands={"ann": (card("Sun Ramp"),)})
    text = GAME.render(GAME.view(state, "ann"))
    lines = text.splitlines()
    level1 = next(line for line in lines if line.startswith("1 "))
    level2 = next(line for line in lines if line.startswith("2 "))
    assert "I-31" in level1 and "I-32" in level1 and "II-43" in level2

    def start(line: str) -> int:
        return len(line) - len(line[2:].lstrip())

    assert start(level2) - start(level1) == 16 // 2  # half a card further right
    assert "SURFACE" in text and "Progress boards" in text and "Jubilee" in text
    assert "Your hand:" in text and "Sun Ramp" in text
    assert "Your hand:" not in GAME.render(GAME.view(state, None))


def test_seat_summaries_and_statistics() -> None:
    players = ("p1", "p2", "p3")
    result = play(GAME, players, {}, {p: greedy_policy(1) for p in players}, 1)
    rows = GAME.seat_summaries(result.state)
    assert [r["seat"] for r in rows] == list(players)
    assert sum(float(r["won"]) for r in rows) >= 1
    assert all({"score", "faction", "carts", "cards_scots"} <= set(r) for r in rows)
    stats = GAME.statistics(result.state)
    assert stats["rounds"] == 10 and stats["vp.p1"] == rows[0]["score"]
