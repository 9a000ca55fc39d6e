"""Restart time and memory of the stream services against a long history (issue 10, item 4).

Fills a private topic prefix with N finished Crashland matches (one real match played
in-process through the board, dice, decks and scoring services over in-memory logs, then
copied under new match ids straight onto the topics), then starts dice, decks, scoring and
board one at a time and reports the seconds from start to healthy and the resident memory
(VmRSS from /proc) once healthy and settled. Not a test: a measurement, run by hand::

    python -m tests.bench.restart_memory fill --prefix mem1. --matches 10000
    python -m tests.bench.restart_memory measure --prefix mem1.
    python -m tests.bench.restart_memory drop --prefix mem1.

To measure another checkout (main, before a change) run ``measure`` with that checkout's
interpreter from its folder, e.g. ``cd /work/main && .venv/bin/python
/path/to/tests/bench/restart_memory.py measure --prefix mem1.``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import cast

from aiokafka import AIOKafkaProducer

from services.cli.stack import Stack, default_bootstrap
from services.common.eventlog import create_topics
from services.common.topics import event_topic, topic_specs
from tabletop.v1 import envelope_pb2

PARTITIONS = 3
#: the services whose restart is measured, in start order (board calls dice and decks)
MEASURED = ("dice", "decks", "scoring", "board")
#: after healthy: time for background recovery work (board's reveal check) to finish
SETTLE_S = 3.0


async def play_one_match(seed: int) -> dict[str, list[envelope_pb2.EventEnvelope]]:
    """One finished Crashland match, scored and revealed: stream → its envelopes."""
    from services.board.chance import RemoteChance
    from services.board.service import BoardService
    from services.decks.service import DecksService
    from services.dice.service import DiceService
    from services.scoring.service import ScoringService
    from tabletop.v1 import board_pb2, decks_pb2_grpc, dice_pb2_grpc
    from tests.unit.platform.fakes import DirectDecks, DirectDice, context, memory_writer

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
        reply = await board.SubmitAction(
            board_pb2.SubmitActionRequest(
                match_id=match_id, player="ann", command_id=f"c{turn}", action=action
            ),
            context(),
        )
        if reply.finished:
            break
    scoring = ScoringService(scoring_writer)
    for envelope in board_log.envelopes:
        await scoring.on_board_event(envelope)
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
    await create_topics(default_bootstrap(), topic_specs(prefix, PARTITIONS))
    template = await play_one_match(2)  # the shortest of seeds 0–39
    per_match = sum(len(v) for v in template.values())
    print(f"one match: {per_match} events ({ {k: len(v) for k, v in template.items()} })")
    producer = AIOKafkaProducer(
        bootstrap_servers=default_bootstrap(), acks="all", linger_ms=50, max_batch_size=512_000
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


def measure(prefix: str) -> None:
    run_dir = Path(tempfile.mkdtemp(prefix="restart-memory-"))
    stack = Stack.ephemeral(run_dir, topic_prefix=prefix, partitions=PARTITIONS)
    stack.kafka_bootstrap = default_bootstrap()
    try:
        for service in MEASURED:
            started = time.monotonic()
            stack.start(service)
            stack.wait_healthy(service, timeout=900)
            healthy = time.monotonic() - started
            time.sleep(SETTLE_S)
            pid = stack.pid(service)
            assert pid is not None
            print(
                f"{service:8} healthy after {healthy:6.1f} s   RSS {rss_mib(pid):6.1f} MiB",
                flush=True,
            )
    finally:
        for service in reversed(MEASURED):
            stack.stop(service)
        print(f"logs in {run_dir}")


async def drop(prefix: str) -> None:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=default_bootstrap())
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
    args = parser.parse_args()
    if args.action == "fill":
        asyncio.run(fill(args.prefix, args.matches))
    elif args.action == "measure":
        measure(args.prefix)
    else:
        asyncio.run(drop(args.prefix))


if __name__ == "__main__":
    main()
