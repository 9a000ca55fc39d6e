"""What thousands of open watch streams cost the gateway (issue 40, item 4).

On a stack of its own, in alternated rounds: a move's latency (SubmitAction's round trip
in a Crashland match) with no extra streams, then with ``--streams`` WatchMatch streams
opened at once (half for public matches in play, each holding its first view, half for
match ids that do not exist, refused), then the same streams closed. The gateway's
resident memory is read before, during and after each round.

The streams come from this one address over connections of their own (``--per-connection``
each, the shipped bound): the stack's bound per address is off here so that the
thousands stand for many clients; the bounds themselves are tested in
tests/integration/test_stream_bounds.py.

    python -m tests.bench.streams [--streams 4000] [--rounds 3] [--moves 40] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import grpc

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from tabletop.v1 import gateway_pb2, gateway_pb2_grpc
from tests.bench.procstat import process_rss
from tests.bench.suite import ephemeral_stack

#: matches the real half of the streams watch
WATCHED_MATCHES = 20
MB = 1 << 20


class Streams:
    """Watch streams held open on an event loop of their own thread."""

    def __init__(self, address: str, per_connection: int) -> None:
        self._address = address
        self._per_connection = per_connection
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._channels: list[grpc.aio.Channel] = []
        self._calls: list[Any] = []
        #: each refusal's first details
        self.details: dict[str, str] = {}

    def _run(self, coroutine: Any) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result()

    def open(self, match_ids: list[str]) -> dict[str, int]:
        """One stream per id; how many were opened (first view read) and refused, by code."""
        return dict(self._run(self._open(match_ids)))

    async def _open(self, match_ids: list[str]) -> dict[str, int]:
        outcomes: dict[str, int] = {}
        stubs = []
        for _ in range(0, len(match_ids), self._per_connection):
            channel = grpc.aio.insecure_channel(
                self._address, options=[("grpc.use_local_subchannel_pool", 1)]
            )
            self._channels.append(channel)
            stubs.append(gateway_pb2_grpc.GatewayStub(channel))

        async def one(index: int, match_id: str) -> None:
            call = stubs[index // self._per_connection].WatchMatch(
                gateway_pb2.WatchMatchRequest(match_id=match_id)
            )
            try:
                await call.read()
                self._calls.append(call)
                code = "OK"
            except grpc.aio.AioRpcError as refused:
                code = refused.code().name
                self.details.setdefault(code, refused.details() or "")
            outcomes[code] = outcomes.get(code, 0) + 1

        # a connection's streams at once, connection after connection (thousands of calls
        # begun at once on one client loop come back CANCELLED from the client's side)
        size = self._per_connection
        for start in range(0, len(match_ids), size):
            batch = match_ids[start : start + size]
            await asyncio.gather(*(one(start + i, m) for i, m in enumerate(batch)))
        return outcomes

    def close(self) -> None:
        self._run(self._close())

    async def _close(self) -> None:
        for call in self._calls:
            call.cancel()
        for channel in self._channels:
            await channel.close()
        self._calls, self._channels = [], []

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()


class Mover:
    """A player making moves in Crashland matches (a new match when one ends)."""

    def __init__(self, client: GatewayClient, rng: random.Random) -> None:
        self._client = client
        self._rng = rng
        self._match = ""

    def _new_match(self) -> None:
        self._match = self._client.create("crashland", ["solo"], {}, seat="solo")
        self._legal = self._client.legal(self._match, "solo")

    def moves(self, count: int) -> list[float]:
        """Seconds each of ``count`` moves took, SubmitAction's round trip."""
        took: list[float] = []
        while len(took) < count:
            if not self._match or self._legal.next.finished:
                self._new_match()
            choice = self._rng.choice(list(self._legal.actions))
            began = time.perf_counter()
            reply = self._client.submit(
                self._match, "solo", choice.action, self._legal.version, return_legal_actions=True
            )
            took.append(time.perf_counter() - began)
            self._legal = reply.legal_actions
        return took


def _rss_mb(stack: Stack) -> float:
    pid = stack.pid("gateway")
    rss = process_rss(pid) if pid is not None else None
    return round((rss or 0) / MB, 1)


def measure(
    stack: Stack, streams: int, rounds: int, moves: int, per_connection: int
) -> dict[str, Any]:
    client = GatewayClient(stack.addr("gateway"))
    watched = [
        client.create("crashland", ["solo"], {}, seat="solo") for _ in range(WATCHED_MATCHES)
    ]
    missing = [f"m-{uuid.uuid4().hex}" for _ in range(streams - streams // 2)]
    targets = [watched[i % len(watched)] for i in range(streams // 2)] + missing
    mover = Mover(client, random.Random(40))
    mover.moves(10)  # warm: the first match made, its views followed
    out: list[dict[str, Any]] = []
    for round_ in range(rounds):
        held = Streams(stack.addr("gateway"), per_connection)
        before = _rss_mb(stack)
        idle = statistics.median(mover.moves(moves))
        began = time.monotonic()
        outcomes = held.open(targets)
        opened_s = time.monotonic() - began
        during = _rss_mb(stack)
        loaded = statistics.median(mover.moves(moves))
        held.close()
        held.stop()
        time.sleep(5)  # the gateway sees the cancellations
        after = _rss_mb(stack)
        row = {
            "round": round_ + 1,
            "rss_before_mb": before,
            "rss_during_mb": during,
            "rss_after_mb": after,
            "streams": outcomes,
            "refusals": held.details,
            "open_s": round(opened_s, 2),
            "move_idle_ms": round(idle * 1000, 2),
            "move_with_streams_ms": round(loaded * 1000, 2),
            "ratio": round(loaded / idle, 2),
        }
        out.append(row)
        print(json.dumps(row), flush=True)
    client.close()
    return {
        "streams": streams,
        "per_connection": per_connection,
        "moves_per_median": moves,
        "rounds": out,
        "median_ratio": round(statistics.median(r["ratio"] for r in out), 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--moves", type=int, default=40, help="moves per median")
    parser.add_argument("--per-connection", type=int, default=100)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--run-dir", type=Path, help="keep the stack's logs here")
    args = parser.parse_args(argv)
    env = {
        "TABLETOP_GATEWAY_MAX_STREAMS_PER_ADDRESS": "0",
        "TABLETOP_GATEWAY_MAX_STREAMS_PER_CONNECTION": str(args.per_connection),
    }
    with (
        tempfile.TemporaryDirectory() as temporary,
        _stack(args.run_dir or Path(temporary), env) as stack,
    ):
        figures = measure(stack, args.streams, args.rounds, args.moves, args.per_connection)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for row in figures["rounds"]:
            print(
                f"round {row['round']}: RSS {row['rss_before_mb']} → {row['rss_during_mb']} → "
                f"{row['rss_after_mb']} MB; streams {row['streams']}; move "
                f"{row['move_idle_ms']} ms idle, {row['move_with_streams_ms']} ms with them "
                f"(×{row['ratio']})"
            )
        print(f"median ratio ×{figures['median_ratio']}")


def _stack(run_dir: Path, env: dict[str, str]) -> Any:
    return ephemeral_stack(f"streams{uuid.uuid4().hex[:8]}.", run_dir, extra_env=env)


if __name__ == "__main__":
    main()
