"""Which of a seat's actions Dungeon Drop's search plays out, and where its playouts stop.

A Loot step offers ~70 rooms and a decision plays out at most ``max_candidates`` of them:
those that look best at a glance (the evaluation of the state each leads to), not a
uniform draw. A playout that reaches its horizon goes on while the seat is still to act,
so an ability whose flicks pay only at the Loot is not cut off before they do."""

from __future__ import annotations

from typing import Any

from services.bots.search.budget import Budget
from services.bots.search.determinization import sampler_for
from services.bots.search.rollouts import Search, SearchSettings
from services.games.contract import ActionTemplate, AwaitingPlayers
from services.games.dungeon_drop import actions as act
from services.games.dungeon_drop.sampling import evaluate, standing
from services.games.registry import get_game
from tests.unit.bots.sampling_kit import Decision, decisions

ENGINE = get_game("dungeon_drop")


def _loot_decision(seats: int, more_than: int) -> Decision:
    for seed in range(5):
        for decision in decisions("dungeon_drop", seats, seed):
            rooms = [a for a in decision.legal if isinstance(a, act.LootRoom)]
            if len(rooms) > more_than:
                return decision
    raise AssertionError("no Loot step with that many rooms")


def _search(rank: bool, **settings: Any) -> Search:
    chosen = SearchSettings(
        Budget(iterations=1), max_candidates=8, horizon=4, rank_candidates=rank, **settings
    )
    return Search(ENGINE, sampler_for("dungeon_drop"), chosen, seed=3, evaluation=evaluate)


def _played_out(rank: bool) -> tuple[Decision, Any, list[Any]]:
    """A 2-seat Loot step with more than 20 rooms, the greedy choice and the 7 others the
    search played out (at 2 seats the glance is the seat's standing alone: at more, it also
    weighs what the room leaves the others, by Quests sampled)."""
    decision = _loot_decision(2, 20)
    me = decision.player
    bot = _search(rank=rank)
    bot(ENGINE.view(decision.state, me), me, decision.legal)
    own, *others = bot.last_candidates
    assert len(others) == 7
    return decision, own.action, [c.action for c in others]


def _worth(decision: Decision, room: Any) -> float:
    """What a room leaves the seat: its own Quest and the public table decide it, so no
    sample of the hidden Quests and box changes the order."""
    me = decision.player
    return standing(ENGINE.decide_folded(decision.state, me, room)[1], me)


def test_the_rooms_played_out_are_those_worth_most_to_the_seat() -> None:
    decision, own, played = _played_out(rank=True)
    left = [a for a in decision.legal if a not in played and a != own]
    assert min(_worth(decision, a) for a in played) >= max(_worth(decision, a) for a in left)


def test_without_ranking_the_rooms_are_a_uniform_draw() -> None:
    """The control: a draw of 7 of ~70 rooms is not the best 7 (for this seed)."""
    decision, own, played = _played_out(rank=False)
    best = sorted((a for a in decision.legal if a != own), key=lambda a: -_worth(decision, a))
    assert set(played) != set(best[:7])


def test_a_playout_is_not_evaluated_while_the_seat_is_to_act() -> None:
    """The horizon is 0 steps; every playout still runs to a step where another seat
    acts, or to the end, before it is evaluated."""
    found = [
        d
        for seed in range(2)
        for d in decisions("dungeon_drop", 2, seed)
        if len(d.legal) > 1 and not all(isinstance(a, ActionTemplate) for a in d.legal)
    ][:6]
    assert found
    evaluated: list[tuple[Any, str]] = []

    def recording(state: Any, player: str) -> float:
        evaluated.append((state, player))
        return evaluate(state, player)

    for decision in found:
        settings = SearchSettings(
            Budget(iterations=2), max_candidates=3, horizon=0, rank_candidates=False
        )
        bot = Search(ENGINE, sampler_for("dungeon_drop"), settings, 1, evaluation=recording)
        bot(ENGINE.view(decision.state, decision.player), decision.player, decision.legal)
    assert evaluated
    for state, player in evaluated:
        step = ENGINE.next_step(state)
        assert isinstance(step, AwaitingPlayers) and player not in step.players
