"""An action read from the turn choices handed out for a state (``TurnChoices.last_read``) is
decided without the checks that could only refuse it: its events and state must be those
the checked path gives an equal action, not the one read, for every entry of the choices
of every state seeded matches meet."""

from __future__ import annotations

import copy
from typing import Any

from services.games.drillit import GAME
from services.games.drillit.player_actions import TurnChoices
from services.games.drillit.state import DrillitState, Phase
from services.games.playout import Policy, play, random_policy


def _checked_everywhere(seed: int) -> Policy:
    pick = random_policy(seed)

    def choose(state: DrillitState, player: str, legal: Any) -> Any:
        if state.phase == Phase.ACTIONS:
            assert isinstance(legal, TurnChoices)
            for index in range(len(legal)):
                listed = legal[index]  # read: the next decide skips its checks
                assert legal.last_read is listed
                fast = GAME.decide_folded(state, player, listed)
                checked = GAME.decide_folded(state, player, copy.copy(listed))
                assert fast == checked, (state, listed)
            legal = GAME.legal_choices(state, player)  # handed out afresh: none read
        return pick(state, player, legal)

    return choose


def test_listed_actions_decide_as_checked_ones() -> None:
    for seed in range(12):
        players = [f"p{i + 1}" for i in range(2 + seed % 3)]
        policies = {p: _checked_everywhere(seed * 7 + i) for i, p in enumerate(players)}
        play(GAME, players, {}, policies, seed)


def test_an_action_read_for_another_player_or_state_is_checked() -> None:
    players = ["p1", "p2"]
    seen: list[tuple[DrillitState, str, Any]] = []

    def record(state: DrillitState, player: str, legal: Any) -> Any:
        action = random_policy(0)(state, player, legal)
        seen.append((state, player, action))
        return action

    play(GAME, players, {}, dict.fromkeys(players, record), 3)
    state, player, _ = next(s for s in seen if s[0].phase == Phase.ACTIONS)
    legal = GAME.legal_choices(state, player)
    listed = legal[len(legal) - 1]  # EndTurn
    other = next(p for p in players if p != player)
    try:
        GAME.decide_folded(state, other, listed)
    except Exception as refused:  # the checks ran: it is not the other player's turn
        assert getattr(refused, "code", "") == "NOT_YOUR_TURN"
    else:
        raise AssertionError("an action listed for one player was taken for another")
