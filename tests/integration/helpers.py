"""Helpers for integration tests: playing bots through the gateway, reading topics."""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict

from services.cli.client import GatewayClient, play_on
from services.common.eventlog import read_stream
from services.common.topics import STREAMS, event_topic
from tabletop.v1 import envelope_pb2


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
