"""Does a flood of table talk slow the game? One client plays matches through the gateway
(SubmitAction with its legal actions back, one at a time, timed), while windows without a
flood, with a talk flood and with a control flood alternate: a flood is another process
whose threads call as fast as they can from many spectator tokens: PostTalk (most refused
by the talk quotas, as a real flood is), or GetView (the control: any flood of calls
shares the gateway's and the machine's CPU; talk should cost the game no more than it).

``python -m tests.bench.talk_flood [--rounds 6] [--window 8]``

Prints, per window kind, the median over rounds of the action round trip's p50 and p99 and
actions/s, the paired ratio flood/quiet per round (with a sign test), and the flood's
posts/s accepted and refused. Starts an ephemeral stack on the local broker (`make kafka`).
Never part of ``make test``.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import grpc

from services.cli.client import GatewayClient
from tabletop.v1 import gateway_pb2

from .paired import paired
from .stats import median, percentile
from .suite import ephemeral_stack

GAME = "drillit"
OPTIONS = {"difficulty": "easy"}
SPECTATORS = 40
THREADS = 8
#: the floods, beside the quiet windows
FLOODS = ("talk", "view")


def flood(address: str, match_id: str, rpc: str) -> None:
    """Call ``rpc`` (talk: PostTalk, view: GetView) from many spectator tokens as fast as
    the threads go; on SIGTERM print ``accepted refused``."""
    client = GatewayClient(address)
    tokens = [client.join(match_id, spectate=True).token for _ in range(SPECTATORS)]
    counts = {"accepted": 0, "refused": 0}
    lock = threading.Lock()

    def post(n: int) -> None:
        stub = client.stub
        i = n
        while True:
            token = tokens[i % len(tokens)]
            i += THREADS
            metadata = (("authorization", f"Bearer {token}"),)
            try:
                if rpc == "talk":
                    stub.PostTalk(
                        gateway_pb2.PostTalkRequest(
                            match_id=match_id, text=f"flood {i} " + "x" * 200
                        ),
                        metadata=metadata,
                    )
                else:
                    stub.GetView(gateway_pb2.GetViewRequest(match_id=match_id), metadata=metadata)
                key = "accepted"
            except grpc.RpcError:
                key = "refused"
            with lock:
                counts[key] += 1

    for n in range(THREADS):
        threading.Thread(target=post, args=(n,), daemon=True).start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print("ready", flush=True)
    done.wait()
    print(counts["accepted"], counts["refused"], flush=True)


def play_for(client: GatewayClient, seconds: float, rng: random.Random) -> list[float]:
    """Play (new matches as they end) for ``seconds``; each action's round trip, in ms."""
    times: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        match_id = client.create(GAME, ["a", "b"], OPTIONS, bots=["a", "b"])
        client.join_all(match_id, ["a", "b"])
        legal, holder = client.legal(match_id, "a"), "a"
        while not legal.next.finished and time.monotonic() < end:
            mover = legal.next.players[0]
            if holder != mover:  # as play_on: the reply's legal actions are the submitter's
                legal, holder = client.legal(match_id, mover), mover
                continue
            action = legal.actions[rng.randrange(len(legal.actions))].action
            started = time.perf_counter()
            reply = client.submit(match_id, mover, action, legal.version, return_legal_actions=True)
            times.append((time.perf_counter() - started) * 1000)
            legal = reply.legal_actions
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--window", type=float, default=8.0, help="seconds per window")
    parser.add_argument("--flood", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood:
        flood(*args.flood)
        return
    prefix = f"talkflood{uuid.uuid4().hex[:6]}."
    run_dir = Path(tempfile.mkdtemp(prefix="tabletop-talk-flood-"))
    with ephemeral_stack(prefix, run_dir) as stack:
        address = stack.addr("gateway")
        client = GatewayClient(address)
        table = client.create(GAME, ["a", "b"], OPTIONS)  # the flooded table (public, projected)
        client.view(table, min_version=1)
        flooders = {
            kind: subprocess.Popen(
                [sys.executable, "-m", "tests.bench.talk_flood", "--flood", address, table, kind],
                stdout=subprocess.PIPE,
                text=True,
                env=os.environ,
            )
            for kind in FLOODS
        }
        for flooder in flooders.values():
            assert flooder.stdout is not None and flooder.stdout.readline().strip() == "ready"
            os.kill(flooder.pid, signal.SIGSTOP)
        rng = random.Random(1)
        play_for(client, args.window, rng)  # warm-up
        kinds = ["quiet", *FLOODS]
        rows: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
        for round_ in range(args.rounds):
            order = kinds[round_ % 3 :] + kinds[: round_ % 3]  # each kind in each place
            for kind in order:
                if kind in flooders:
                    os.kill(flooders[kind].pid, signal.SIGCONT)
                times = play_for(client, args.window, rng)
                if kind in flooders:
                    os.kill(flooders[kind].pid, signal.SIGSTOP)
                rows[kind].append(
                    {
                        "p50_ms": median(times),
                        "p99_ms": percentile(times, 99),
                        "actions_per_s": len(times) / args.window,
                    }
                )
                print(f"round {round_ + 1} {kind:5}: {rows[kind][-1]}", flush=True)
        counts = {}
        for kind, flooder in flooders.items():
            os.kill(flooder.pid, signal.SIGCONT)
            flooder.terminate()
            out, _ = flooder.communicate(timeout=30)
            counts[kind] = [int(n) / (args.rounds * args.window) for n in out.split()[-2:]]
        for kind, figures in rows.items():
            print(
                f"{kind:5}: p50 {median([r['p50_ms'] for r in figures]):.2f} ms, "
                f"p99 {median([r['p99_ms'] for r in figures]):.2f} ms, "
                f"{median([r['actions_per_s'] for r in figures]):.1f} actions/s"
            )
        for base, other in (("quiet", "talk"), ("quiet", "view"), ("view", "talk")):
            for figure, higher in (("p50_ms", False), ("p99_ms", False), ("actions_per_s", True)):
                print(f"{other}/{base}", paired(rows[base], rows[other], figure, higher))
        for kind, (accepted, refused) in counts.items():
            print(f"{kind} flood: {accepted:.1f} calls/s answered, {refused:.1f} calls/s refused")


if __name__ == "__main__":
    main()
