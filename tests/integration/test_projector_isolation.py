"""One match cannot stop the projector: a view over the message limit is dead-lettered,
and every other match's views go on (issue: five 60,000-character player names; now
seats joined under long display names, since one command's append must fit a record)."""

from __future__ import annotations

import asyncio
import json
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from services.common.kafka_access import KafkaAccess
from services.common.kafka_acls import BENCH
from services.common.topics import dead_letter_topic
from tabletop.v1 import board_pb2, board_pb2_grpc
from tests.integration.helpers import play_bot_match, remove


@pytest.fixture
def own_stack(kafka_admin: KafkaAccess, tmp_path: Path) -> Iterator[Stack]:
    """A stack of its own: the dead-lettered match must not reach other tests' checks."""
    prefix = f"iso{uuid.uuid4().hex[:8]}."
    stack = Stack.ephemeral(tmp_path / "run", topic_prefix=prefix, partitions=1)
    stack.kafka = kafka_admin
    try:
        stack.up()
        yield stack
    finally:
        stack.down()
        remove(stack)


async def _dead_letters(kafka: KafkaAccess, topic: str) -> list[dict[str, object]]:
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(topic, **kafka.client_options(), auto_offset_reset="earliest")
    await consumer.start()
    try:
        batches = await consumer.getmany(timeout_ms=5000)
        return [json.loads(r.value) for records in batches.values() for r in records]
    finally:
        await consumer.stop()


def test_a_match_whose_views_exceed_the_message_limit_is_set_aside_and_others_go_on(
    own_stack: Stack,
) -> None:
    # Straight to the board, past any size limit the gateway applies to requests: the
    # projector must hold by design, not only thanks to validation at the edge. Each
    # append fits in a record (a command is one record, so five 60,000-character names at
    # once, as in the report, no longer reach the projector); the seats joined under long
    # display names add up in the match's record and views past the limit.
    with own_stack.peer_channel("board") as channel:
        huge = board_pb2_grpc.BoardStub(channel).CreateMatch(
            board_pb2.CreateMatchRequest(
                game="drillit",
                players=[f"{i}" + "n" * 20_000 for i in range(5)],
                options={"player_count_variant": "house"},  # five seats, as in the report
                match_id="huge-names",
                command_id="huge-names",
            ),
            timeout=60,
        )
        lobby = board_pb2_grpc.LobbyStub(channel)
        for i in range(5):
            lobby.JoinSeat(
                board_pb2.JoinSeatRequest(
                    match_id="huge-names",
                    display_name=f"{i}" + "d" * 150_000,
                    join_id=f"join-{i}",
                    by="free",
                ),
                timeout=60,
            )
    assert huge.version > 0  # under the record limit: the board may append it
    client = GatewayClient(own_stack.addr("gateway"))
    match_id, _ = play_bot_match(client, "crashland", ["solo"], seed=7)
    assert client.view(match_id, "").version > 0  # the projector still folds and publishes
    letters = asyncio.run(
        _dead_letters(own_stack.kafka_as(BENCH), dead_letter_topic(own_stack.topic_prefix))
    )
    # The first join too large to store; the match's later events cannot fold past it.
    # When they come in a later batch, the table is behind them and the match is folded
    # again from the log, which sets the same join aside again: any other "too_large"
    # letter is that event's.
    assert {str(d["match_id"]) for d in letters} == {"huge-names"}
    assert letters[0]["reason"] == "too_large"
    too_large = {str(d["event_id"]) for d in letters if d["reason"] == "too_large"}
    assert too_large == {str(letters[0]["event_id"])}
    assert {str(d["reason"]) for d in letters[1:]} <= {"fold_error", "too_large"}
    with urllib.request.urlopen(f"http://{own_stack.metrics_addr('projector')}/metrics") as r:
        metrics = r.read().decode()
    assert 'tabletop_projector_dead_letters_total{reason="too_large"}' in metrics
    assert own_stack.pid("projector") is not None
