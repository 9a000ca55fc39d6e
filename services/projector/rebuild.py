"""Rebuild the read models from offset 0 and compare them with the live views (DESIGN §6).

Reads every event stream from the beginning (read_committed), folds it with the projector's
own ``ProjectionFolder``, and compares each match's views with what the gateway serves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import grpc

from services.adapters.views import view
from services.common.eventlog import read_stream
from services.common.kafka_access import KafkaAccess
from services.common.topics import STREAMS, event_topic
from services.games.match import Match
from services.gateway.auth import Role, Tokens
from services.projector.folder import ProjectionFolder
from tabletop.v1 import gateway_pb2, gateway_pb2_grpc, match_pb2


@dataclass
class RebuildReport:
    events: int = 0
    matches: int = 0
    compared: int = 0
    differences: list[str] = field(default_factory=list)


async def rebuild(kafka: KafkaAccess, prefix: str) -> tuple[dict[str, Match], int]:
    """Every match folded afresh from all four streams; and the event count."""
    folder = ProjectionFolder()
    events = 0
    topics = [event_topic(s, prefix) for s in STREAMS]
    # Board first per match would be ideal; the folder keeps seeds that arrive earlier.
    # Nothing is stored: the folder's matches are the read model.
    async for envelope in read_stream(kafka, topics):
        events += 1
        folder.fold(envelope)
    return folder.matches(), events


def _comparable(view: match_pb2.MatchView) -> bytes:
    return view.SerializeToString(deterministic=True)


async def compare_with_live(
    kafka: KafkaAccess, prefix: str, gateway: str, token_key: bytes
) -> RebuildReport:
    """``token_key`` is the gateway's: the operator reads every seat's view with a token
    made for it, as that seat's player would."""
    tokens = Tokens(token_key, ttl_seconds=600)
    matches, events = await rebuild(kafka, prefix)
    report = RebuildReport(events=events, matches=len(matches))
    async with grpc.aio.insecure_channel(gateway) as channel:
        stub = gateway_pb2_grpc.GatewayStub(channel)
        for match_id, match in sorted(matches.items()):
            for viewer in [*match.players, ""]:
                if viewer in match.vacated:  # given up: no token of it sees it (SeatLeft)
                    continue
                fresh = view(match, viewer)
                role = Role.SEAT if viewer else Role.SPECTATOR
                # the seat's newest token id: older ones no longer see the seat
                newest = match.seat_tokens.get(viewer)
                token, _ = tokens.issue(match_id, role, "operator", viewer, token_id=newest)
                try:
                    live = await stub.GetView(
                        gateway_pb2.GetViewRequest(match_id=match_id, viewer=viewer),
                        metadata=(("authorization", f"Bearer {token}"),),
                    )
                except grpc.aio.AioRpcError as error:
                    report.differences.append(
                        f"{match_id} [{viewer or 'spectator'}]: {error.code().name}"
                    )
                    continue
                report.compared += 1
                if live.version != fresh.version:
                    continue  # still in play and moved on since the read: not comparable
                if _comparable(live) != _comparable(fresh):
                    report.differences.append(f"{match_id} [{viewer or 'spectator'}] differs")
    return report
