"""``legal_actions`` builds the legal actions from the rules' conditions directly; this keeps
the slow, obviously-right reference — every candidate action offered to ``decide``, those it
does not refuse — and checks both agree, in the same order, on every state of many seeded
matches (random and greedy players, so pairs, Jetpacks, discards and uplinks all occur)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from services.games.contract import RuleViolation
from services.games.crashland import GAME, rules
from services.games.crashland import actions as act
from services.games.crashland.bots import greedy_policy
from services.games.crashland.model import Boost, Direction, Payment
from services.games.crashland.state import CrashlandState
from services.games.playout import Policy, play, random_policy

PLAYER = "ann"


def candidates(state: CrashlandState) -> Iterator[object]:
    """Every action that could be legal, in the order legal actions are listed."""
    if state.uplink_count:
        seen = state.known_top[: state.uplink_count]
        yield from (act.ArrangeUplink(order) for order in itertools.permutations(seen))
        return
    for direction in Direction:
        for pay in Payment:
            yield act.Move(direction, pay)
    yield act.EndMovement()
    for card in dict.fromkeys(state.hand):
        yield act.DiscardEquipment(card)
    yield act.KeepHand()
    for boost in Boost:
        yield act.SpendDomeShelter(boost)
    for position in sorted(state.explored):
        yield act.SpendJetpack(position)
    yield act.SpendSolarRecharge()
    yield act.SpendSatelliteUplink()
    yield act.EndTurn()


def reference_legal_actions(state: CrashlandState, player: str) -> tuple[object, ...]:
    """Generate and test: the candidates ``decide`` accepts."""
    if not _awaits(state, player):
        return ()
    legal = []
    for action in candidates(state):
        try:
            rules.decide(state, player, action)
        except RuleViolation:
            continue
        legal.append(action)
    return tuple(legal)


def _awaits(state: CrashlandState, player: str) -> bool:
    step = rules.next_step(state)
    return player in getattr(step, "players", ())


def _policy(seed: int) -> Policy:
    return greedy_policy(seed) if seed % 3 == 0 else random_policy(seed)


def test_fast_legal_actions_equal_generate_and_test_on_every_state_of_many_matches() -> None:
    compared = 0
    kinds: set[type] = set()
    for seed in range(90):
        match = play(GAME, [PLAYER], {}, {PLAYER: _policy(seed)}, seed)
        state = GAME.initial_state()
        for event in match.events:
            state = GAME.evolve(state, event)
            fast = rules.legal_actions(state, PLAYER)
            assert fast == reference_legal_actions(state, PLAYER), (seed, state)
            compared += bool(fast)
            kinds |= {type(a) for a in fast}
    assert compared > 1000
    # the matches reached every kind of action, so each condition was compared
    assert kinds >= {
        act.Move,
        act.EndMovement,
        act.EndTurn,
        act.DiscardEquipment,
        act.SpendJetpack,
        act.SpendDomeShelter,
        act.SpendSolarRecharge,
        act.SpendSatelliteUplink,
        act.ArrangeUplink,
    }, kinds


def test_nobody_else_and_no_waiting_state_has_legal_actions() -> None:
    match = play(GAME, [PLAYER], {}, {PLAYER: random_policy(1)}, 1)
    state = GAME.initial_state()
    for event in match.events:
        state = GAME.evolve(state, event)
        assert rules.legal_actions(state, "bob") == ()
        if not _awaits(state, PLAYER):
            assert rules.legal_actions(state, PLAYER) == ()
