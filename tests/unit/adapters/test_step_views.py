"""A replay's views, refilled only where they changed, equal views drawn afresh."""

from __future__ import annotations

import copy
import dataclasses
import random
from typing import Any

import pytest

from services.adapters.folding import created, fold
from services.adapters.game_adapter import messages_for
from services.adapters.protoconv import fill
from services.adapters.refill import Refill
from services.adapters.views import StepViews, view
from services.common.envelope import Cause, make_envelope
from services.games.playout import play, random_policy
from services.games.registry import all_games, get_game
from tabletop.v1 import envelope_pb2, games_pb2, match_pb2, platform_events_pb2

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


def kept_views(events: list[envelope_pb2.EventEnvelope], viewer: str) -> list[match_pb2.MatchView]:
    """A copy of ``StepViews``' view at every step, drawn with nothing else in between
    (the engines' views keep what they drew last: another view would replace it)."""
    match = created(events[0])
    views = StepViews(match, viewer)
    kept = []
    for step, envelope in enumerate(events, start=1):
        if step > 1:
            fold(match, envelope)
        shown = match_pb2.MatchView()
        shown.CopyFrom(views.view())
        kept.append(shown)
    return kept


@pytest.mark.parametrize("game", GAMES)
def test_every_step_of_a_playout_shows_what_a_fresh_view_shows(game: str) -> None:
    for viewer in ("", players(game)[0]):
        events = board_events(game, seed=3)
        kept = kept_views(events, viewer)
        match = created(events[0])
        for step, envelope in enumerate(events, start=1):
            if step > 1:
                fold(match, envelope)
            shown = kept[step - 1]
            fresh = view(match, viewer)
            assert shown == fresh, (viewer, step)
            assert shown.SerializeToString(deterministic=True) == fresh.SerializeToString(
                deterministic=True
            )
            # a copy of the state shares nothing an engine's view finds by identity
            copied = view(dataclasses.replace(match, state=copy.deepcopy(match.state)), viewer)
            assert shown == copied, (viewer, step)


@pytest.mark.parametrize("game", GAMES)
def test_views_in_any_order_refill_to_what_fill_makes(game: str) -> None:
    """Far-apart views: lists that grow and shrink, parts that appear and vanish, maps."""
    engine = get_game(game)
    views: list[Any] = []
    for seed in range(3):
        events = board_events(game, seed)
        match = created(events[0])
        for envelope in events[1:]:
            fold(match, envelope)
            views.append(engine.view(match.state, None))
    random.Random(5).shuffle(views)
    refill = Refill(getattr(games_pb2.GameView(), game))
    for drawn in views:
        expected = fill(getattr(games_pb2.GameView(), game), drawn)
        assert refill.update(drawn) == expected
