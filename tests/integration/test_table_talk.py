"""Table talk through the real gateway and Kafka: seats and spectators post, readers see
it live and in the replay (each by what it may read), bad input, floods and strangers are
refused with nothing appended, and the game's own log and play are untouched."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from services.cli.client import GatewayClient, TokenStore
from services.cli.stack import Stack
from services.common.eventlog import read_stream
from services.common.kafka_acls import BENCH
from services.common.topics import talk_topic
from services.gateway.talk import PLAYERS, SPECTATORS, TALK_BURST
from tabletop.v1 import envelope_pb2, gateway_pb2, talk_pb2
from tests.integration.helpers import open_match, topic_events

SEATS = ["ana", "bo"]
ROOT = Path(__file__).resolve().parents[2]


class Reader:
    """A WatchTalk stream read on a thread of its own."""

    def __init__(self, client: GatewayClient, match_id: str, seat: str = "", after: int = 0):
        self.call = client.watch_talk(match_id, seat, after)
        self.messages: queue.Queue[talk_pb2.TalkMessage] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for message in self.call:
                self.messages.put(message)
        except grpc.RpcError:
            pass

    def texts(self, count: int, timeout: float = 15.0) -> list[str]:
        return [self.messages.get(timeout=timeout).text for _ in range(count)]

    def nothing_more(self, wait: float = 1.5) -> bool:
        try:
            self.messages.get(timeout=wait)
        except queue.Empty:
            return True
        return False

    def close(self) -> None:
        self.call.cancel()


def talk_records(stack: Stack, match_id: str) -> list[envelope_pb2.EventEnvelope]:
    async def read() -> list[envelope_pb2.EventEnvelope]:
        topic = talk_topic(stack.topic_prefix)
        return [
            e async for e in read_stream(stack.kafka_as(BENCH), [topic]) if e.match_id == match_id
        ]

    return asyncio.run(read())


def refused(call: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as error:
        call()
    return error.value


@pytest.fixture
def table(stack: Stack) -> Iterator[tuple[GatewayClient, str]]:
    client = GatewayClient(stack.addr("gateway"))
    match_id = open_match(client, "drillit", SEATS, {"difficulty": "easy"})
    client.join(match_id, spectate=True)
    yield client, match_id
    client.close()


def test_seats_and_spectators_talk_live_and_in_the_replay(
    stack: Stack, table: tuple[GatewayClient, str]
) -> None:
    client, match_id = table
    seat_reader = Reader(client, match_id, "ana")
    spectator_reader = Reader(client, match_id)  # the spectator token
    stranger = GatewayClient(stack.addr("gateway"))  # no token: a public match's spectator
    stranger_reader = Reader(stranger, match_id)
    try:
        posted = client.talk(match_id, "  I dig the left tunnel  ", seat="ana").message
        assert (posted.channel, posted.seat, posted.text) == (
            PLAYERS,
            "ana",
            "I dig the left tunnel",
        )
        assert posted.display_name == "ana" and posted.board_version >= 1 and posted.message_id
        watched = client.talk(match_id, "the goblin is behind you", name="kibitzer").message
        assert (watched.channel, watched.seat, watched.display_name) == (SPECTATORS, "", "kibitzer")
        client.talk(match_id, "on it", seat="bo")

        assert spectator_reader.texts(3) == [
            "I dig the left tunnel",
            "the goblin is behind you",
            "on it",
        ]
        assert stranger_reader.texts(3) == spectator_reader_texts(client, match_id)
        # a seat does not read the spectators while the match is in play
        assert seat_reader.texts(2) == ["I dig the left tunnel", "on it"]
        assert seat_reader.nothing_more()
    finally:
        for reader in (seat_reader, spectator_reader, stranger_reader):
            reader.close()
        stranger.close()

    # a watch resumes after the last message it saw
    resumed = Reader(client, match_id, "", after=1)
    try:
        assert resumed.texts(2) == ["the goblin is behind you", "on it"]
    finally:
        resumed.close()

    # the replay shows the talk with the step its author saw, as each reader may read it
    def replay_talk(seat: str) -> list[talk_pb2.TalkMessage]:
        steps = client.stub.ReplayMatch(
            gateway_pb2.ReplayMatchRequest(match_id=match_id, viewer=seat),
            metadata=client.auth(match_id, seat),
        )
        return [m for step in steps for m in step.talk if step.event.sequence == m.board_version]

    assert [m.text for m in replay_talk("")] == [
        "I dig the left tunnel",
        "the goblin is behind you",
        "on it",
    ]
    assert [m.text for m in replay_talk("ana")] == ["I dig the left tunnel", "on it"]
    batches = client.stub.ReplayMatchBatches(
        gateway_pb2.ReplayMatchBatchesRequest(match_id=match_id), metadata=client.auth(match_id)
    )
    assert sum(len(s.talk) for b in batches for s in b.steps) == 3

    # talk is on its own stream, and the game's log holds none of it
    records = talk_records(stack, match_id)
    assert [r.stream for r in records] == ["talk"] * 3
    game_log = topic_events(stack)
    assert not any(
        "Talk" in e.event_type for stream in game_log.values() for e in stream.get(match_id, [])
    )


def spectator_reader_texts(client: GatewayClient, match_id: str) -> list[str]:
    reader = Reader(client, match_id)
    try:
        return reader.texts(3)
    finally:
        reader.close()


def test_bad_talk_is_refused_plainly_and_appends_nothing(
    stack: Stack, table: tuple[GatewayClient, str]
) -> None:
    client, match_id = table
    long = "x" * 501
    for text, words in (
        (long, "longer than 500 bytes"),
        ("é" * 251, "longer than 500 bytes"),
        ("   ", "blank"),
        ("left\u202etfel", "printable"),
        ("two\nlines", "printable"),
        ("nul\x00", "printable"),
    ):
        error = refused(lambda text=text: client.talk(match_id, text, seat="ana"))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, text
        details = error.details() or ""
        assert words in details
        assert "xxxxxxxx" not in details and "Error" not in details and "Exception" not in details
    error = refused(lambda: client.talk(match_id, "hi", name="n" * 41))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert talk_records(stack, match_id) == []


def test_strangers_cannot_talk(stack: Stack, table: tuple[GatewayClient, str]) -> None:
    client, match_id = table
    other = open_match(client, "drillit", SEATS, {"difficulty": "easy"})
    stub = client.stub
    request = gateway_pb2.PostTalkRequest(match_id=match_id, text="hello")

    def post(token: str | None) -> grpc.RpcError:
        metadata = (("authorization", f"Bearer {token}"),) if token else ()
        # no token at all: the client's bare stub (its stub signs calls as its player)
        return refused(
            lambda: (stub if token else client.bare).PostTalk(request, metadata=metadata)
        )

    assert post(None).code() == grpc.StatusCode.UNAUTHENTICATED
    session = refused(lambda: stub.PostTalk(request))  # a player, not at this table
    assert session.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "join a seat or as a spectator" in (session.details() or "")
    assert post(client.token(other, "ana")).code() == grpc.StatusCode.PERMISSION_DENIED
    assert post("not-a-token").code() == grpc.StatusCode.UNAUTHENTICATED
    creator = post(client.token(match_id, "@creator"))
    assert creator.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "join a seat or as a spectator" in (creator.details() or "")
    # reading another match's talk with this match's token
    with pytest.raises(grpc.RpcError) as error:
        next(
            iter(
                stub.WatchTalk(
                    gateway_pb2.WatchTalkRequest(match_id=other),
                    metadata=client.auth(match_id, "ana"),
                )
            )
        )
    assert error.value.code() == grpc.StatusCode.PERMISSION_DENIED
    unknown = refused(
        lambda: stub.PostTalk(
            gateway_pb2.PostTalkRequest(match_id=str(uuid.uuid4()), text="hi"),
            metadata=client.auth(match_id, "ana"),
        )
    )
    assert unknown.code() == grpc.StatusCode.PERMISSION_DENIED
    assert talk_records(stack, match_id) == []


def test_a_flood_is_refused_with_when_to_come_back_and_play_goes_on(
    stack: Stack, table: tuple[GatewayClient, str]
) -> None:
    client, match_id = table
    answers: list[str | grpc.RpcError] = []
    for i in range(int(TALK_BURST) + 5):
        try:
            answers.append(client.talk(match_id, f"spam {i}", seat="ana").message.text)
        except grpc.RpcError as error:
            answers.append(error)
    accepted = [a for a in answers if isinstance(a, str)]
    floods = [a for a in answers if isinstance(a, grpc.RpcError)]
    assert int(TALK_BURST) <= len(accepted) < len(answers)
    for flood in floods:
        assert flood.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        retry = dict(flood.trailing_metadata() or ())["retry-after-ms"]
        assert 0 < int(retry) <= 1000
    # another seat still talks (its own bucket), and the flooding seat still plays
    client.talk(match_id, "stop it", seat="bo")
    legal = client.legal(match_id, "ana")
    mover = legal.next.players[0]
    legal = client.legal(match_id, mover)
    reply = client.submit(match_id, mover, legal.actions[0].action, expected_version=legal.version)
    assert reply.version > legal.version
    assert len(talk_records(stack, match_id)) == len(accepted) + 1


def test_talk_at_the_terminal(stack: Stack, tmp_path: Path) -> None:
    """`tabletop talk MATCH "…"` as a seat and as a spectator (joined for the purpose),
    `tabletop talk MATCH --json` following the talk, `tabletop replay` showing it."""
    tokens = tmp_path / "tokens.json"

    def tabletop(*args: str, store: Path = tokens) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "services.cli.main", "--gateway", stack.addr("gateway"), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "TABLETOP_TOKENS": str(store)},
        )

    client = GatewayClient(stack.addr("gateway"), store=TokenStore(tokens))
    match_id = open_match(client, "drillit", SEATS, {"difficulty": "easy"})
    client.close()
    follower = tabletop("talk", match_id, "--seat", "bo", "--json")
    try:
        said = tabletop("talk", match_id, "I take the drill", "--seat", "ana")
        assert said.wait(60) == 0, said.stderr.read() if said.stderr else ""
        # someone else, holding no token of the match, talks as a spectator
        other = tabletop("talk", match_id, "go go", "--name", "fan", store=tmp_path / "b.json")
        assert other.wait(60) == 0, other.stderr.read() if other.stderr else ""
        bad = tabletop("talk", match_id, "x" * 600, "--seat", "ana")
        assert bad.wait(60) == 2
        assert bad.stderr is not None and "longer than 500 bytes" in bad.stderr.read()
        assert follower.stdout is not None
        first = json.loads(follower.stdout.readline())
        assert (first["seat"], first["text"], first["channel"]) == (
            "ana",
            "I take the drill",
            "players",
        )
    finally:
        follower.terminate()
        follower.wait(10)
    replay = tabletop("replay", match_id, "--json", store=tmp_path / "b.json")
    out, err = replay.communicate(timeout=120)
    assert replay.returncode == 0, err
    talk = [said for step in map(json.loads, out.splitlines()) for said in step["talk"]]
    assert talk == ["[1] ana: I take the drill", "[2] fan (spectator): go go"]
