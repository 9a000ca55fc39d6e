"""Helpers for integration tests: playing bots through the gateway, reading topics."""

from __future__ import annotations

import asyncio
import random
import time
from collections import defaultdict
from collections.abc import Callable
from typing import TypeVar

from services.cli.client import GatewayClient, play_on
from services.common.eventlog import read_stream
from services.common.topics import STREAMS, event_topic
from tabletop.v1 import envelope_pb2, scoring_pb2

T = TypeVar("T")


def eventually(probe: Callable[[], T | None], timeout: float = 30.0) -> T:
    """``probe()`` once it answers (not None): read models follow the log, they do not
    lead it (scoring, for one, fetches board.events a few times a second)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = probe()
        if answer is not None or time.monotonic() > deadline:
            assert answer is not None, f"nothing after {timeout} s"
            return answer
        time.sleep(0.1)


def scored(
    client: GatewayClient, game: str, at_least: int, timeout: float = 30.0
) -> scoring_pb2.GetStandingsReply:
    """The game's standings once they count ``at_least`` matches (or after ``timeout``)."""

    def probe() -> scoring_pb2.GetStandingsReply | None:
        reply = client.stub.GetStandings(scoring_pb2.GetStandingsRequest(game=game))
        return reply if reply.matches >= at_least else None

    try:
        return eventually(probe, timeout)
    except AssertionError:
        last: scoring_pb2.GetStandingsReply = client.stub.GetStandings(
            scoring_pb2.GetStandingsRequest(game=game)
        )
        return last


def open_match(
    client: GatewayClient,
    game: str,
    players: list[str],
    options: dict[str, str] | None = None,
    private: bool = False,
) -> str:
    """Create a match and take every seat with the creator's token (the client keeps the
    seat tokens)."""
    match_id = client.create(game, players, options or {}, private=private)
    client.join_all(match_id, players)
    return match_id


def play_bot_match(
    client: GatewayClient,
    game: str,
    players: list[str],
    seed: int,
    options: dict[str, str] | None = None,
    max_actions: int = 5000,
) -> tuple[str, int]:
    """Play one match to its end with random legal actions; returns (match id, actions)
    once the projected view has caught up with the last event (read your writes)."""
    rng = random.Random(seed)
    match_id = client.create(game, players, options or {}, bots=players)
    client.join_all(match_id, players)  # bots are ordinary clients with seat tokens
    actions, legal = play_on(
        client,
        match_id,
        players[0],
        lambda mover, legal: legal.actions[rng.randrange(len(legal.actions))],
        max_actions=max_actions,
    )
    assert legal.next.finished, f"{game} match {match_id} did not end in {max_actions} actions"
    client.view(match_id, "", min_version=legal.version)
    return match_id, actions


def topic_events(
    bootstrap: str, prefix: str
) -> dict[str, dict[str, list[envelope_pb2.EventEnvelope]]]:
    """stream → match id → envelopes, read back from Kafka (not from any service)."""

    async def read() -> dict[str, dict[str, list[envelope_pb2.EventEnvelope]]]:
        out: dict[str, dict[str, list[envelope_pb2.EventEnvelope]]] = {}
        for stream in STREAMS:
            by_match: dict[str, list[envelope_pb2.EventEnvelope]] = defaultdict(list)
            async for envelope in read_stream(bootstrap, [event_topic(stream, prefix)]):
                by_match[envelope.match_id].append(envelope)
            out[stream] = dict(by_match)
        return out

    return asyncio.run(read())


async def delete_topics(bootstrap: str, names: list[str]) -> None:
    """Remove a test stack's topics from the shared broker."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_topics(names)
    finally:
        await admin.close()
