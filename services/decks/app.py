"""The decks process: recover from decks.events, then serve tabletop.v1.Decks."""

from __future__ import annotations

from services.common.config import Config
from services.common.holding import Holding
from services.common.stream_service import serve_stream_owner
from services.decks.service import DecksService
from tabletop.v1 import decks_pb2, decks_pb2_grpc


async def main(config: Config) -> None:
    await serve_stream_owner(
        config,
        "decks",
        lambda writer: DecksService(
            writer,
            config.secret,
            Holding(config.decks_idle_held_s, config.decks_matches_held),
        ),
        decks_pb2_grpc.add_DecksServicer_to_server,
        decks_pb2.DESCRIPTOR.services_by_name["Decks"].full_name,
    )
