"""The command handler's EventStore for the board: one command's events as envelopes on
board.events, appended in one Kafka transaction."""

from __future__ import annotations

from typing import Any

from google.protobuf import message

from services.adapters.game_adapter import messages_for
from services.common.envelope import Cause
from services.common.eventlog import LogUnavailable, RecordTooLarge
from services.common.ledger import StreamWriter
from services.games.commands import Batch, Refusal, RefusalKind
from services.games.contract import Game
from tabletop.v1 import envelope_pb2, platform_events_pb2


class BoardEventStore:
    def __init__(self, writer: StreamWriter) -> None:
        self._writer = writer
        #: match → the envelopes its last ``append`` wrote (``taken``)
        self._appended: dict[str, list[envelope_pb2.EventEnvelope]] = {}

    def taken(self, match_id: str) -> list[envelope_pb2.EventEnvelope]:
        """The envelopes of the match's last ``append`` (once; then nothing): the board
        advances the match's clock with their recorded time."""
        return self._appended.pop(match_id, [])

    async def append(self, game: Game[Any], batch: Batch) -> int:
        messages = messages_for(game.name)
        payloads: list[message.Message] = []
        if batch.opening is not None:
            opening = batch.opening
            payloads.append(
                platform_events_pb2.MatchCreated(
                    game=opening.game,
                    players=opening.players,
                    options=dict(opening.options),
                    dice_commitment=opening.dice_commitment,
                    decks_commitment=opening.decks_commitment,
                    lobby=opening.lobby,
                )
            )
            if opening.seated is not None:
                payloads.append(opening.seated)
        payloads.extend(batch.preface)
        payloads.extend(messages.event_to_any(event) for event in batch.events)
        if batch.ending is not None:
            payloads.append(
                platform_events_pb2.MatchEnded(
                    results=batch.ending.results,
                    reason=batch.ending.reason,
                    scores=batch.ending.scores,
                )
            )
        envelopes = await self.append_payloads(
            batch.match_id, game, payloads, batch.command_id, batch.actor
        )
        self._appended[batch.match_id] = envelopes
        return int(envelopes[-1].sequence)

    async def append_payloads(
        self,
        match_id: str,
        game: Game[Any],
        payloads: list[message.Message],
        command_id: str,
        actor: str,
    ) -> list[envelope_pb2.EventEnvelope]:
        """Append platform events (a seat joined …) or a command's batch in one transaction."""
        cause = Cause(causation_id=command_id, correlation_id=command_id, actor=actor)
        try:
            return await self._writer.append(
                match_id, payloads, cause, game.name, game.rules_version
            )
        except LogUnavailable as error:
            # Nothing was folded. Whether the events committed is settled from the log
            # before this match's next append, so the retry returns the first result.
            raise Refusal(
                RefusalKind.UNAVAILABLE,
                "LOG_UNAVAILABLE",
                f"the event log is unavailable ({error}); retry with the same command id",
            ) from error
        except RecordTooLarge as error:
            raise Refusal(RefusalKind.INVALID_ARGUMENT, "RECORD_TOO_LARGE", str(error)) from error
