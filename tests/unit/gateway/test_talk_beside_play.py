"""Talk never stops a move: with the talk topic stuck or failing, posts are refused
(RESOURCE_EXHAUSTED once the bound of posts waiting is reached, UNAVAILABLE when Kafka
fails) while SubmitAction goes through the same gateway as before. Kafka is replaced at
the talk producer only: everything above it is the gateway's own code."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, cast

import grpc
import pytest
from aiokafka.errors import KafkaTimeoutError

from services.common.kafka_access import KafkaAccess
from services.gateway import talklog
from services.gateway.service import GatewayService
from services.gateway.shards import Shard
from services.gateway.talk import TalkQuotas, TalkStore
from services.gateway.talklog import TalkLog
from services.gateway.viewstore import ViewStore
from tabletop.v1 import board_pb2, gateway_pb2, match_pb2
from tests.unit.fakes import Aborted, FakeContext, Served
from tests.unit.gateway.test_scoring_and_gateway import CONFIG, seat_token

ANN = (("authorization", f"Bearer {seat_token('ann')}"),)
MOVE = board_pb2.SubmitActionRequest(match_id="m-1", player="ann", command_id="c" * 16)


class Board:
    async def submit(self, request: board_pb2.SubmitActionRequest) -> Any:
        return board_pb2.SubmitActionReply(version=7)


class Producer:
    """The talk producer's send: stuck until released, or failing."""

    def __init__(self, fail: bool = False) -> None:
        self.release = asyncio.Event()
        self.fail = fail
        self.sent = 0

    async def send_and_wait(self, topic: str, value: bytes, key: bytes) -> None:
        self.sent += 1
        if self.fail:
            raise KafkaTimeoutError
        await self.release.wait()


async def gateway(producer: Producer) -> Served:
    views = ViewStore()
    await views.put(
        match_pb2.ViewUpdate(
            summary=match_pb2.MatchSummary(match_id="m-1", version=6, game="drillit")
        )
    )
    config = dataclasses.replace(CONFIG, max_in_flight=0, max_view_lag_ms=0)
    talk = TalkLog(KafkaAccess("127.0.0.1:9", "gateway", "unused"), "", TalkStore())
    vars(talk)["_producer"] = producer  # never started: no Kafka in a unit test
    service = GatewayService(
        [cast(Shard, Board())], grpc.aio.insecure_channel("127.0.0.1:9"), views, config, talk
    )
    vars(service.talk)["_quotas"] = TalkQuotas(1e6, 1e6, 1e6, 1e6)  # the bound under test
    return Served(service)


def post(text: str = "hi") -> gateway_pb2.PostTalkRequest:
    return gateway_pb2.PostTalkRequest(match_id="m-1", text=text)


async def test_moves_go_on_while_talk_is_stuck_and_talk_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(talklog, "MAX_POSTS_IN_FLIGHT", 3)
    producer = Producer()
    served = await gateway(producer)
    stuck = [asyncio.create_task(served.PostTalk(post(), FakeContext(ANN))) for _ in range(3)]
    await asyncio.sleep(0.01)
    assert producer.sent == 3 and not any(task.done() for task in stuck)
    # the move does not wait for talk
    reply = await asyncio.wait_for(served.SubmitAction(MOVE, FakeContext(ANN)), 1.0)
    assert reply.version == 7
    busy = FakeContext(ANN)
    with pytest.raises(Aborted) as refused:
        await served.PostTalk(post(), busy)
    assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert int(dict(busy.trailing)["retry-after-ms"]) > 0
    assert producer.sent == 3  # the refused post reached no producer
    producer.release.set()
    said = await asyncio.gather(*stuck)
    assert [s.message.text for s in said] == ["hi"] * 3


async def test_a_talk_failure_is_unavailable_and_fails_no_move() -> None:
    served = await gateway(Producer(fail=True))
    with pytest.raises(Aborted) as refused:
        await served.PostTalk(post(), FakeContext(ANN))
    assert refused.value.code == grpc.StatusCode.UNAVAILABLE
    assert refused.value.details == "the message was not recorded; try again"
    assert (await served.SubmitAction(MOVE, FakeContext(ANN))).version == 7


async def test_a_post_waits_for_kafka_at_most_its_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(talklog, "POST_TIMEOUT_S", 0.05)
    served = await gateway(Producer())  # never released
    with pytest.raises(Aborted) as refused:
        await asyncio.wait_for(served.PostTalk(post(), FakeContext(ANN)), 2.0)
    assert refused.value.code == grpc.StatusCode.UNAVAILABLE
