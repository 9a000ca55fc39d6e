"""Restart time and memory of the stream services against a long history (issue 10, item 4).

Fills a private topic prefix with N finished Crashland matches (one real match played
in-process through the board, dice, decks and scoring services over in-memory logs, then
copied under new match ids straight onto the topics), then starts dice, decks, scoring and
board one at a time and reports the seconds from start to healthy and the resident memory
(VmRSS from /proc) once healthy and settled. ``measure`` first primes the snapshots: each
service is started (recovering from the whole log, or from the snapshot a previous run
left), left until it is idle, and stopped, which writes its snapshot; then each is
started again from that snapshot plus the (empty) tail. Both starts are reported. Not a
test: a measurement, run by hand::

    python -m tests.bench.restart_memory fill --prefix mem1. --matches 10000
    python -m tests.bench.restart_memory measure --prefix mem1.   # [--no-prime]
    python -m tests.bench.restart_memory drop --prefix mem1.

To measure another checkout (main, before a change) run ``measure`` with that checkout's
interpreter from its folder, e.g. ``cd /work/main && .venv/bin/python
/path/to/tests/bench/restart_memory.py measure --prefix mem1.``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import cast

from aiokafka import AIOKafkaProducer

from services.cli.stack import Stack, broker_admin
from services.common.eventlog import LogRecord, create_topics
from services.common.topics import event_topic, topic_specs
from tabletop.v1 import envelope_pb2

PARTITIONS = 3
#: the services whose restart is measured, in start order (board calls dice and decks)
MEASURED = ("dice", "decks", "scoring", "board")


async def play_one_match(seed: int) -> dict[str, list[envelope_pb2.EventEnvelope]]:
    """One finished Crashland match, scored and revealed: stream → its envelopes."""
    from services.board.chance import RemoteChance
    from services.board.service import BoardService
    from services.decks.service import DecksService
    from services.dice.service import DiceService
    from services.scoring.service import ScoringService
    from tabletop.v1 import board_pb2, decks_pb2_grpc, dice_pb2_grpc
    from tests.unit.fakes import DirectDecks, DirectDice, context, memory_writer

    secret = b"m" * 32
    dice_writer, dice_log = memory_writer("dice")
    decks_writer, decks_log = memory_writer("decks")
    board_writer, board_log = memory_writer("board")
    scoring_writer, scoring_log = memory_writer("scoring")
    chance = RemoteChance(
        cast(dice_pb2_grpc.DiceStub, DirectDice(DiceService(dice_writer, secret))),
        cast(decks_pb2_grpc.DecksStub, DirectDecks(DecksService(decks_writer, secret))),
    )
    board = BoardService(board_writer, chance)
    rng = random.Random(seed)
    match_id = "template"
    await board.CreateMatch(
        board_pb2.CreateMatchRequest(game="crashland", players=["ann"], match_id=match_id),
        context(),
    )
    for turn in range(10_000):
        legal = await board.GetLegalActions(
            board_pb2.GetLegalActionsRequest(match_id=match_id, player="ann"), context()
        )
        action = legal.actions[rng.randrange(len(legal.actions))].action
        reply = await board.SubmitCommand(
            board_pb2.SubmitActionRequest(
                match_id=match_id, player="ann", command_id=f"c{turn}", action=action
            ),
            context(),
        )
        if reply.reply.finished:
            break
    scoring = ScoringService(scoring_writer)
    await scoring.on_board_records(
        [LogRecord(0, offset, envelope) for offset, envelope in enumerate(board_log.envelopes)]
    )
    return {
        "board": board_log.envelopes,
        "dice": dice_log.envelopes,
        "decks": decks_log.envelopes,
        "scoring": scoring_log.envelopes,
    }


def copy_of(envelope: envelope_pb2.EventEnvelope, match_id: str) -> bytes:
    copied = envelope_pb2.EventEnvelope()
    copied.CopyFrom(envelope)
    copied.match_id = match_id
    copied.event_id = str(uuid.uuid4())
    return copied.SerializeToString()


async def fill(prefix: str, matches: int) -> None:
    admin = broker_admin()  # it writes every stream's events: the broker's admin
    await create_topics(admin, topic_specs(prefix, PARTITIONS))
    template = await play_one_match(2)  # the shortest of seeds 0–39
    per_match = sum(len(v) for v in template.values())
    print(f"one match: {per_match} events ({ {k: len(v) for k, v in template.items()} })")
    producer = AIOKafkaProducer(
        **admin.client_options(), acks="all", linger_ms=50, max_batch_size=512_000
    )
    await producer.start()
    started = time.monotonic()
    try:
        pending: list[asyncio.Future[object]] = []
        for n in range(matches):
            match_id = f"done-{n:07d}"
            for stream, envelopes in template.items():
                for envelope in envelopes:
                    pending.append(
                        await producer.send(
                            event_topic(stream, prefix),
                            value=copy_of(envelope, match_id),
                            key=match_id.encode(),
                        )
                    )
            if len(pending) > 20_000:
                await asyncio.gather(*pending)
                pending = []
                print(f"  {n + 1} matches written", flush=True)
        await asyncio.gather(*pending)
    finally:
        await producer.stop()
    print(
        f"wrote {matches} matches ({matches * per_match} events) in "
        f"{time.monotonic() - started:.0f} s"
    )


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_idle(pid: int, timeout: float = 1800.0) -> float:
    """Seconds until the process uses under 5% of a CPU over two seconds (its background
    recovery done: scoring following board.events, the board's reveal check)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        before = cpu_seconds(pid)
        time.sleep(2.0)
        if cpu_seconds(pid) - before < 0.1:
            return time.monotonic() - started
    raise TimeoutError("never idle")


#: the log line after which a service's state is complete and a clean stop snapshots it
#: (the board, recovering without a snapshot, first scans dice and decks for reveals)
COMPLETE = {"board": ("reveals_resumed", "snapshot_restored")}


def wait_complete(stack: Stack, service: str, timeout: float = 1800.0) -> None:
    lines = COMPLETE.get(service, ())
    deadline = time.monotonic() + timeout
    while lines and time.monotonic() < deadline:
        log = (stack.run_dir / f"{service}.log").read_text()
        if any(line in log for line in lines):
            return
        time.sleep(0.5)


def start_and_report(stack: Stack, service: str, label: str) -> None:
    started = time.monotonic()
    stack.start(service)
    stack.wait_healthy(service, timeout=1800)
    healthy = time.monotonic() - started
    pid = stack.pid(service)
    assert pid is not None
    wait_complete(stack, service)
    wait_idle(pid)
    idle = time.monotonic() - started
    cpu = cpu_seconds(pid)
    print(
        f"{label:9} {service:8} healthy after {healthy:6.1f} s, idle after {idle:6.1f} s, "
        f"CPU {cpu:6.1f} s, RSS {rss_mib(pid):6.1f} MiB",
        flush=True,
    )


def measure(prefix: str, prime: bool) -> None:
    run_dir = Path(tempfile.mkdtemp(prefix="restart-memory-"))
    stack = Stack.ephemeral(run_dir, topic_prefix=prefix, partitions=PARTITIONS)
    stack.create_topics()  # the snapshot topics, for a history filled before they existed
    stack.grant()
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    try:
        if prime:
            for service in MEASURED:
                start_and_report(stack, service, "first")
            for service in reversed(MEASURED):
                stack.stop(service, timeout=300)  # a clean stop writes the snapshot
            for service in MEASURED:
                log = (run_dir / f"{service}.log").read_text()
                # nothing to write if it restored a snapshot and nothing changed since
                assert "snapshot_written" in log or "snapshot_restored" in log, service
        for service in MEASURED:
            start_and_report(stack, service, "restart")
    finally:
        for service in reversed(MEASURED):
            stack.stop(service, timeout=300)
        print(f"logs in {run_dir}")


async def drop(prefix: str) -> None:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(**broker_admin().client_options())
    await admin.start()
    try:
        await admin.delete_topics([s.name for s in topic_specs(prefix, PARTITIONS)])
    finally:
        await admin.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("fill", "measure", "drop"))
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument(
        "--no-prime", action="store_true", help="measure: start once, from the snapshot as is"
    )
    args = parser.parse_args()
    if args.action == "fill":
        asyncio.run(fill(args.prefix, args.matches))
    elif args.action == "measure":
        measure(args.prefix, prime=not args.no_prime)
    else:
        asyncio.run(drop(args.prefix))


if __name__ == "__main__":
    main()
