"""A replay's views, refilled only where they changed, equal views drawn afresh."""

from __future__ import annotations

import random
from typing import Any

import pytest

from services.adapters.folding import FoldedMatch
from services.adapters.game_adapter import messages_for
from services.adapters.projection import Projection, StepViews
from services.adapters.protoconv import fill
from services.adapters.refill import Refill
from services.common.envelope import Cause, make_envelope
from services.games.playout import play, random_policy
from services.games.registry import all_games, get_game
from tabletop.v1 import envelope_pb2, games_pb2, platform_events_pb2

GAMES = sorted(all_games())


def players(game: str) -> list[str]:
    return [f"p{i + 1}" for i in range(get_game(game).min_players)]


def board_events(game: str, seed: int) -> list[envelope_pb2.EventEnvelope]:
    """A random playout's board envelopes, MatchCreated first."""
    seats = players(game)
    policies = {p: random_policy(seed * 7 + i) for i, p in enumerate(seats)}
    playout = play(get_game(game), seats, {}, policies, seed)
    messages = messages_for(game)
    created = platform_events_pb2.MatchCreated(game=game, players=seats)
    payloads = [created, *(messages.event_to_any(e) for e in playout.events)]
    cause = Cause("test", "test", "board")
    return [
        make_envelope(
            match_id="m", stream="board", sequence=i + 1, payload=p, cause=cause, game=game
        )
        for i, p in enumerate(payloads)
    ]


@pytest.mark.parametrize("game", GAMES)
def test_every_step_of_a_playout_shows_what_a_fresh_view_shows(game: str) -> None:
    for viewer in ("", players(game)[0]):
        events = board_events(game, seed=3)
        match = FoldedMatch.created(events[0])
        projection = Projection(match)
        views = StepViews(projection, viewer)
        for step, envelope in enumerate(events, start=1):
            if step > 1:
                match.fold(envelope)
            fresh = projection.view_for(viewer)
            kept = views.view()
            assert kept == fresh, (viewer, step)
            assert kept.SerializeToString(deterministic=True) == fresh.SerializeToString(
                deterministic=True
            )


@pytest.mark.parametrize("game", GAMES)
def test_views_in_any_order_refill_to_what_fill_makes(game: str) -> None:
    """Far-apart views: lists that grow and shrink, parts that appear and vanish, maps."""
    engine = get_game(game)
    views: list[Any] = []
    for seed in range(3):
        events = board_events(game, seed)
        match = FoldedMatch.created(events[0])
        for envelope in events[1:]:
            match.fold(envelope)
            views.append(engine.view(match.state, None))
    random.Random(5).shuffle(views)
    refill = Refill(getattr(games_pb2.GameView(), game))
    for view in views:
        expected = fill(getattr(games_pb2.GameView(), game), view)
        assert refill.update(view) == expected
