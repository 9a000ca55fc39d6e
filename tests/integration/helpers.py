"""Helpers for integration tests: playing bots through the gateway, reading topics."""

from __future__ import annotations

import asyncio
import queue
import random
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import grpc
from aiokafka import AIOKafkaConsumer, TopicPartition

from services.cli.client import GatewayClient, play_on
from services.cli.stack import ORDER, Stack
from services.common.eventlog import partitions_of, read_stream
from services.common.kafka_access import KafkaAccess
from services.common.kafka_acls import BENCH
from services.common.topics import STREAMS, event_topic, topic_specs, views_topic
from tabletop.v1 import envelope_pb2, gateway_pb2, match_pb2, scoring_pb2

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


def topic_events(stack: Stack) -> dict[str, dict[str, list[envelope_pb2.EventEnvelope]]]:
    """stream → match id → envelopes, read back from Kafka (not from any service), as the
    stack's bench user."""
    kafka, prefix = stack.kafka_as(BENCH), stack.topic_prefix

    async def read() -> dict[str, dict[str, list[envelope_pb2.EventEnvelope]]]:
        out: dict[str, dict[str, list[envelope_pb2.EventEnvelope]]] = {}
        for stream in STREAMS:
            by_match: dict[str, list[envelope_pb2.EventEnvelope]] = defaultdict(list)
            async for envelope in read_stream(kafka, [event_topic(stream, prefix)]):
                by_match[envelope.match_id].append(envelope)
            out[stream] = dict(by_match)
        return out

    return asyncio.run(read())


def newest_published(stack: Stack, match_id: str) -> match_pb2.ViewUpdate | None:
    """The match's newest update on the views topic, read from Kafka."""

    async def read() -> match_pb2.ViewUpdate | None:
        consumer = AIOKafkaConsumer(
            **stack.kafka_as(BENCH).client_options(),
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        newest: match_pb2.ViewUpdate | None = None
        try:
            topic = views_topic(stack.topic_prefix)
            partitions = [TopicPartition(topic, p) for p in await partitions_of(consumer, topic)]
            consumer.assign(partitions)
            ends = await consumer.end_offsets(partitions)
            while [p for p in partitions if await consumer.position(p) < ends[p]]:
                for records in (await consumer.getmany(timeout_ms=1000)).values():
                    for record in records:
                        if record.key == match_id.encode():
                            newest = match_pb2.ViewUpdate.FromString(record.value)
        finally:
            await consumer.stop()
        return newest

    return asyncio.run(read())


async def delete_topics(admin_access: KafkaAccess, names: list[str]) -> None:
    """Remove topics from the shared broker (as admin, or the bench user its own)."""
    from aiokafka.admin import AIOKafkaAdminClient

    if not names:
        return
    admin = AIOKafkaAdminClient(**admin_access.client_options())
    await admin.start()
    try:
        await admin.delete_topics(names)
    finally:
        await admin.close()


async def topics_named(admin_access: KafkaAccess, start: str) -> list[str]:
    """The topics whose names start with ``start``."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(**admin_access.client_options())
    await admin.start()
    try:
        return [name for name in await admin.list_topics() if name.startswith(start)]
    finally:
        await admin.close()


def remove(stack: Stack) -> None:
    """Remove a test stack's topics, Kafka users and ACLs from the shared broker (after
    ``stack.down()``)."""
    asyncio.run(delete_topics(stack.kafka, [s.name for s in topic_specs(stack.topic_prefix)]))
    stack.revoke()


@contextmanager
def running(stack: Stack, services: tuple[str, ...] = ORDER) -> Iterator[Stack]:
    """A test stack's ``services`` up for the block (the tail of each log printed if it
    fails), then stopped and removed from the shared broker."""
    try:
        stack.up(services)
        yield stack
    except BaseException:
        for log in sorted(stack.run_dir.glob("*.log")):
            print(f"==== {log.name}\n{log.read_text()[-4000:]}")
        raise
    finally:
        stack.down()
        remove(stack)


def scratch(kafka: KafkaAccess, name: str) -> str:
    """A topic (or group, or transactional id) of the tests' own user: its names start with
    the user's name and a dot (services/common/kafka_acls.py)."""
    return f"{kafka.username}.{name}"


#: the longest a test waits for the next update on a PlayMatch stream
PLAY_TIMEOUT_S = 30.0


class PlaySession:
    """A PlayMatch stream driven from a test: requests in, each update read in order."""

    views: list[match_pb2.MatchView]

    def __init__(self, client: GatewayClient, metadata: Any, watch: gateway_pb2.PlayRequest):
        self._requests: queue.Queue[gateway_pb2.PlayRequest | None] = queue.Queue()
        self._requests.put(watch)
        # no metadata: no one's (not even the client's player's session)
        stub = client.stub if metadata else client.bare
        self.call = stub.PlayMatch(self._send(), metadata=metadata, timeout=120)
        self.updates: queue.Queue[gateway_pb2.PlayUpdate | grpc.RpcError | None] = queue.Queue()
        self.views = []
        threading.Thread(target=self._receive, daemon=True).start()

    def _send(self) -> Iterator[gateway_pb2.PlayRequest]:
        while (request := self._requests.get()) is not None:
            yield request

    def _receive(self) -> None:
        try:
            for update in self.call:
                self.updates.put(update)
            self.updates.put(None)
        except grpc.RpcError as error:
            self.updates.put(error)

    def send(self, request: gateway_pb2.PlayRequest) -> None:
        self._requests.put(request)

    def next(self) -> gateway_pb2.PlayUpdate | grpc.RpcError | None:
        return self.updates.get(timeout=PLAY_TIMEOUT_S)

    def answer(self, ident: int) -> gateway_pb2.PlayUpdate:
        """The answer to request ``ident`` (views met on the way are kept in ``views``)."""
        while True:
            update = self.next()
            assert isinstance(update, gateway_pb2.PlayUpdate), update
            if update.HasField("view"):
                self.views.append(update.view)
            elif update.id == ident:
                return update

    def view_at_least(self, version: int) -> match_pb2.MatchView:
        while not self.views or self.views[-1].version < version:
            update = self.next()
            assert isinstance(update, gateway_pb2.PlayUpdate), update
            if update.HasField("view"):
                self.views.append(update.view)
        return self.views[-1]

    def close(self) -> None:
        self.call.cancel()


def open_play(
    client: GatewayClient, match_id: str, seat: str | None, views_with_acks: bool = False
) -> PlaySession:
    metadata = client.auth(match_id, seat) if seat else ()
    session = PlaySession(
        client,
        metadata,
        gateway_pb2.PlayRequest(
            watch=gateway_pb2.WatchMatchRequest(match_id=match_id, viewer=seat or ""),
            views_with_acks=views_with_acks,
        ),
    )
    return session
