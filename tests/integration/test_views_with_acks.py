"""The gateway that carried a command shows its result from the board's acknowledgement:
its watchers see every acknowledged version even while the projector is stopped, and once
the projector is back the views topic holds the very update they were shown (one read
model, two ways in)."""

from __future__ import annotations

import threading
import uuid

import grpc

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from services.gateway.viewstore import ViewStore
from tabletop.v1 import board_pb2, gateway_pb2
from tests.integration.helpers import eventually, newest_published, open_match, open_play

PLAYER = "astronaut"


def test_acknowledged_versions_are_shown_while_the_projector_is_stopped(stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    session = open_play(client, match_id, PLAYER)
    spectated: list[int] = []
    watch = client.stub.WatchMatch(gateway_pb2.WatchMatchRequest(match_id=match_id), timeout=120)

    def spectate() -> None:
        try:
            for view in watch:
                spectated.append(view.version)
        except grpc.RpcError:
            pass

    threading.Thread(target=spectate, daemon=True).start()
    try:
        session.view_at_least(legal.version)
        stack.stop("projector")
        try:
            for ident in range(1, 6):
                session.send(
                    gateway_pb2.PlayRequest(
                        id=ident,
                        action=board_pb2.SubmitActionRequest(
                            player=PLAYER,
                            action=legal.actions[0].action,
                            command_id=str(uuid.uuid4()),
                            expected_version=legal.version,
                            return_legal_actions=True,
                        ),
                    )
                )
                answer = session.answer(ident)
                assert answer.WhichOneof("kind") == "ack", answer
                # no projector: the view of the acknowledged version comes all the same
                assert session.view_at_least(answer.ack.version).version == answer.ack.version
                legal = answer.ack.legal_actions
            shown = session.views[-1]
            assert shown.version == legal.version
            # every watcher on this gateway has it, and so does a read with min_version
            eventually(lambda: True if legal.version in spectated else None, timeout=10)
            assert client.view(match_id, PLAYER, min_version=legal.version) == shown
        finally:
            stack.start("projector")
            stack.wait_healthy("projector")
        # the projector folds the same events into the same update
        published = eventually(
            lambda: (
                update
                if (update := newest_published(stack, match_id)) is not None
                and update.summary.version >= legal.version
                else None
            ),
            timeout=60,
        )
        assert published.summary.version == legal.version
        assert ViewStore().view(published, PLAYER) == shown
    finally:
        session.close()
        watch.cancel()
