"""Dice and decks hold a match only while it is used: one unused for ``idle_held_s`` (a
fake clock), or the least recently used past ``matches_held``, leaves memory with its
writer's envelopes, and is read back from the log at its next request. It answers exactly
as a match never let go of: the same outcomes, the same replies to retried requests, the
same commitment and seed, after a restart from a snapshot too."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import message

from services.common.holding import Holding
from services.common.ledger import StreamWriter
from services.common.snapshots import Snapshot, pack
from services.decks.service import DecksService
from services.dice.service import DiceService
from tabletop.v1 import decks_pb2, dice_pb2
from tests.unit.fakes import Aborted, context, memory_writer

SECRET = b"k" * 32
MATCH = "m-1"
IDLE_S = 60.0
CARDS = [f"c{i}" for i in range(12)]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


COMMIT = dice_pb2.CommitRequest(match_id=MATCH, correlation_id="c")
REVEAL = dice_pb2.RevealRequest(match_id=MATCH, correlation_id="c")
SEAL = dice_pb2.SealRequest(match_id=MATCH)


def roll(request_id: str, defer: bool = False) -> dice_pb2.RollRequest:
    return dice_pb2.RollRequest(
        match_id=MATCH,
        count=3,
        sides=6,
        request_id=request_id,
        correlation_id=f"c-{request_id}",
        defer_append=defer,
    )


def shuffle(request_id: str) -> decks_pb2.ShuffleRequest:
    return decks_pb2.ShuffleRequest(
        match_id=MATCH, deck="d", cards=CARDS, request_id=request_id, correlation_id="c"
    )


def draw(request_id: str, defer: bool = False) -> decks_pb2.DrawRequest:
    return decks_pb2.DrawRequest(
        match_id=MATCH,
        deck="d",
        count=2,
        request_id=request_id,
        correlation_id=f"c-{request_id}",
        defer_append=defer,
    )


class Played:
    """A dice or decks service over an in-memory log, letting go of idle matches (or not)."""

    def __init__(self, kind: type[DiceService] | type[DecksService], evicting: bool) -> None:
        self.kind, self.evicting = kind, evicting
        self.clock = Clock()
        self.writer, self.log = memory_writer(kind.stream)
        self.service: Any = kind(self.writer, SECRET, Holding(IDLE_S, 100, self.clock))

    def let_go(self) -> None:
        """The holding time passes; an evicting service lets go of the match."""
        self.clock.now += IDLE_S + 1
        if self.evicting:
            held = MATCH in self.service._matches
            assert self.service.evict_idle() == int(held)
            assert MATCH not in self.service._matches and not self.writer.is_open(MATCH)
            assert MATCH not in self.writer._recent  # nor kept as a recently closed one

    async def ask(self, method: str, request: message.Message, idle: bool = True) -> bytes:
        if idle:
            self.let_go()
        reply = await getattr(self.service, method)(request, context())
        return bytes(reply.SerializeToString())

    def snapshot(self) -> Snapshot:
        return Snapshot("s", 0, pack(self.writer.snapshot() + self.service.snapshot()))

    async def restarted(self, snapshot: Snapshot) -> None:
        """A new instance from ``snapshot`` and the log's tail after it."""
        writer = StreamWriter(self.kind.stream, self.writer._event_log, self.writer._kafka)
        self.writer = writer
        self.service = self.kind(writer, SECRET, Holding(IDLE_S, 100, self.clock))
        self.service.begin_recovery()
        self.service.restore(snapshot)
        self.writer.restore_snapshot(snapshot, self.service.apply)
        tail = self.log.records(self.writer.tail_starts())
        await self.writer.restore(tail, self.service.apply)
        self.service.end_recovery()


async def dice_transcript(evicting: bool) -> tuple[list[bytes], int]:
    played = Played(DiceService, evicting)
    shown = [await played.ask("Commit", COMMIT)]
    for name in ("r1", "r2"):
        shown.append(await played.ask("Roll", roll(name)))
    shown.append(await played.ask("Roll", roll("r1")))  # a retry: its first reply
    shown.append(await played.ask("Commit", COMMIT))  # a retried Commit
    # outcomes waiting for a seal are never let go of; sealed, the match may go
    shown.append(await played.ask("Roll", roll("r3", defer=True)))
    played.clock.now += IDLE_S + 1
    assert played.service.evict_idle() == 0 and MATCH in played.service._matches
    shown.append(bytes((await played.service.Seal(SEAL, context())).SerializeToString()))
    # a restart from a snapshot taken while the match was let go of (or held), with
    # events of the match in the tail after the snapshot
    played.let_go()
    snapshot = played.snapshot()
    shown.append(await played.ask("Roll", roll("r4")))
    shown.append(await played.ask("Roll", roll("r5", defer=True)))
    shown.append(bytes((await played.service.Seal(SEAL, context())).SerializeToString()))
    await played.restarted(snapshot)
    shown.append(await played.ask("Roll", roll("r6"), idle=False))  # right after the restart
    for name in ("r7", "r4", "r5", "r2"):
        shown.append(await played.ask("Roll", roll(name)))
    shown.append(await played.ask("Reveal", REVEAL))
    shown.append(await played.ask("Reveal", REVEAL))
    shown.append(await played.ask("Commit", COMMIT))
    return shown, played.log.ranges_read


async def decks_transcript(evicting: bool) -> tuple[list[bytes], int]:
    played = Played(DecksService, evicting)
    shown = [await played.ask("Commit", COMMIT), await played.ask("Shuffle", shuffle("s1"))]
    for name in ("d1", "d2", "d1"):
        shown.append(await played.ask("Draw", draw(name)))
    shown.append(await played.ask("Draw", draw("d3", defer=True)))
    shown.append(bytes((await played.service.Seal(SEAL, context())).SerializeToString()))
    snapshot = played.snapshot()
    shown.append(await played.ask("Draw", draw("d4")))
    await played.restarted(snapshot)
    shown.append(await played.ask("Draw", draw("d5"), idle=False))  # right after the restart
    for name in ("d6", "s1", "d3", "d4"):
        request = shuffle(name) if name.startswith("s") else draw(name)
        shown.append(await played.ask("Shuffle" if name.startswith("s") else "Draw", request))
    shown.append(await played.ask("Reveal", REVEAL))
    return shown, played.log.ranges_read


async def test_an_evicted_dice_match_answers_as_one_never_evicted() -> None:
    kept, kept_reads = await dice_transcript(evicting=False)
    evicted, evicted_reads = await dice_transcript(evicting=True)
    assert evicted == kept
    # read back from the log: not from the writer's keep of recently closed matches
    assert kept_reads == 0 and evicted_reads > 5


async def test_an_evicted_decks_match_draws_as_one_never_evicted() -> None:
    kept, kept_reads = await decks_transcript(evicting=False)
    evicted, evicted_reads = await decks_transcript(evicting=True)
    assert evicted == kept
    assert kept_reads == 0 and evicted_reads > 5


async def test_past_matches_held_the_least_recently_used_go_first() -> None:
    clock = Clock()
    writer, _ = memory_writer("dice")
    dice = DiceService(writer, SECRET, Holding(0.0, 2, clock))
    for i in range(4):
        clock.now += 1
        await dice.Commit(dice_pb2.CommitRequest(match_id=f"m{i}", correlation_id="c"), context())
    clock.now += 1
    await dice.Roll(dice_pb2.RollRequest(match_id="m0", count=1, sides=6), context())
    assert dice.evict_idle() == 2
    assert sorted(dice._matches) == ["m0", "m3"]
    assert dice.evict_idle() == 0


async def test_revealed_commitments_are_bounded_and_read_back() -> None:
    writer, _ = memory_writer("dice")
    writer.recent_limit = 0
    dice = DiceService(writer, SECRET, Holding(0.0, 2))
    commitments = []
    for i in range(4):
        match_id = f"m{i}"
        commit = dice_pb2.CommitRequest(match_id=match_id, correlation_id="c")
        commitments.append((await dice.Commit(commit, context())).commitment)
        await dice.Reveal(dice_pb2.RevealRequest(match_id=match_id, correlation_id="c"), context())
    assert list(dice._revealed) == ["m2", "m3"]
    again = await dice.Reveal(dice_pb2.RevealRequest(match_id="m0", correlation_id="c"), context())
    assert again.commitment == commitments[0] and again.seed == dice.seed("m0").hex()
    assert "m0" in dice._revealed and "m0" not in dice._matches
    with pytest.raises(Aborted) as refused:
        await dice.Roll(dice_pb2.RollRequest(match_id="m1", count=1, sides=6), context())
    assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert "revealed" in refused.value.details
