"""Dice, decks and scoring hold a match only while it is used (services/common/holding.py),
and so does the board: against real services and Kafka, a Drillit match left idle
mid-play is let go of by all four, two of them restart from the snapshots they write as
they stop, and the match plays on to its end (the board, not restarted, reads it back
from board.events at its next command): its randomness verifies from the revealed seeds,
and the result scoring records is the one a fresh fold of the board's events gives."""

from __future__ import annotations

import random
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.adapters.folding import fold_board_events
from services.adapters.verify import verify_match
from services.cli.client import GatewayClient, play_on
from services.cli.stack import Stack
from services.common.envelope import unpack
from services.common.kafka_access import KafkaAccess
from tabletop.v1 import match_pb2, platform_events_pb2
from tests.integration.helpers import eventually, open_match, remove, scored, topic_events

#: dice, decks, scoring and the board let go of a match unused this long (1800 s as
#: shipped)
IDLE_HELD_S = 2
PLAYERS = ["ann", "bob"]
HOLDERS = ("dice", "decks", "scoring")


@pytest.fixture
def forgetful_stack(kafka_admin: KafkaAccess, tmp_path: Path) -> Iterator[Stack]:
    prefix = f"letgo{uuid.uuid4().hex[:8]}."
    stack = Stack.ephemeral(tmp_path / "run", topic_prefix=prefix, partitions=1)
    stack.kafka = kafka_admin
    stack.extra_env = {
        f"TABLETOP_{service.upper()}_IDLE_HELD_S": str(IDLE_HELD_S)
        for service in (*HOLDERS, "board")
    }
    try:
        stack.up()
        yield stack
    finally:
        stack.down()
        remove(stack)


def counter(stack: Stack, service: str, series: str) -> float:
    """A counter's series as ``service`` exports it (0 before it first counts)."""
    with urllib.request.urlopen(f"http://{stack.metrics_addr(service)}/metrics", timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(f"{series} "):
                return float(line.split()[1])
    return 0.0


def counted(stack: Stack, name: str, stream: str) -> float:
    """A counter of ``stream`` the service of that stream exports."""
    return counter(stack, stream, f'{name}{{stream="{stream}"}}')


def let_go_by(stack: Stack, *services: str) -> bool | None:
    gone = [counted(stack, "tabletop_matches_let_go_total", s) >= 1 for s in services]
    return all(gone) or None


def evicted_by_the_board(stack: Stack) -> bool | None:
    return counter(stack, "board", "tabletop_board_matches_evicted_total") >= 1 or None


def test_a_match_let_go_of_mid_play_finishes_verified_and_scored_the_same(
    forgetful_stack: Stack,
) -> None:
    stack = forgetful_stack
    client = GatewayClient(stack.addr("gateway"))
    match_id = open_match(client, "drillit", PLAYERS, {"difficulty": "easy"})
    rng = random.Random(5)

    def choose(_: str, legal: object) -> object:
        actions = legal.actions  # type: ignore[attr-defined]
        return actions[rng.randrange(len(actions))]

    played, legal = play_on(client, match_id, "ann", choose, max_actions=6)
    assert played == 6 and not legal.next.finished
    eventually(lambda: let_go_by(stack, *HOLDERS), timeout=30)
    eventually(lambda: evicted_by_the_board(stack), timeout=30)
    # decks and scoring restart from the snapshots they write as they stop: decks' holds
    # the match only as its place in decks.events, scoring's as its board events
    for service in ("decks", "scoring"):
        stack.stop(service)
        stack.start(service)
        stack.wait_healthy(service)
    # decks holds the match no more; scoring restored it whole, and lets go of it again
    assert counted(stack, "tabletop_matches_let_go_total", "decks") == 0
    eventually(lambda: let_go_by(stack, "scoring"), timeout=30)

    _, legal = play_on(client, match_id, legal.next.players[0], choose)
    assert legal.next.finished
    scored(client, "drillit", 1)

    # each one read the match back to serve or score it: dice and decks at the latest for
    # the seeds' reveals, which the board asks for after the end (so wait for them)
    def revealed() -> match_pb2.Provenance | None:
        shown = client.view(match_id).provenance
        return shown if shown.dice_seed and shown.decks_seed else None

    eventually(revealed, timeout=60)
    for service in HOLDERS:
        assert counted(stack, "tabletop_matches_read_back_total", service) >= 1, service

    events = topic_events(stack)
    log = [e for stream in events.values() for e in stream.get(match_id, [])]
    verification = verify_match(log)
    assert verification.ok, verification.problems
    assert any(e.event_type == "tabletop.v1.DiceRolled" for e in events["dice"][match_id])
    assert any(e.event_type == "tabletop.v1.CardsDrawn" for e in events["decks"][match_id])

    board = events["board"][match_id]
    folded = fold_board_events(board)
    ended = unpack(board[-1], platform_events_pb2.MatchEnded)
    assert isinstance(ended, platform_events_pb2.MatchEnded)
    [recorded] = events["scoring"][match_id]
    result = unpack(recorded, platform_events_pb2.MatchScored)
    assert isinstance(result, platform_events_pb2.MatchScored)
    assert dict(result.results) == dict(ended.results) and result.reason == ended.reason
    assert dict(result.scores) == dict(ended.scores)
    assert dict(result.statistics) == folded.game.statistics(folded.state)
    assert result.board_events == len(board)
