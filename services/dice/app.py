"""The dice process: recover from dice.events, then serve tabletop.v1.Dice."""

from __future__ import annotations

from services.common.config import Config
from services.common.holding import Holding
from services.common.stream_service import serve_stream_owner
from services.dice.service import DiceService
from tabletop.v1 import dice_pb2, dice_pb2_grpc


async def main(config: Config) -> None:
    await serve_stream_owner(
        config,
        "dice",
        lambda writer: DiceService(
            writer,
            config.secret,
            Holding(config.dice_idle_held_s, config.dice_matches_held),
        ),
        dice_pb2_grpc.add_DiceServicer_to_server,
        dice_pb2.DESCRIPTOR.services_by_name["Dice"].full_name,
    )
