"""Logs written before an event was renamed still read (``Game.renamed_events``):
Crashland's first event was ``GameStarted`` (message ``CrashlandGameStarted``) before every
game's became ``MatchSetUp``. A stored envelope and an exported log (protobuf JSON, whose
payload names its type) of the old name decode to today's class, and fold as before."""

from __future__ import annotations

from google.protobuf import any_pb2, descriptor_pool, json_format
from google.protobuf.descriptor import Descriptor

from services.adapters.game_adapter import messages_for
from services.adapters.protogen import former_event_messages
from services.common.envelope import Cause, make_envelope
from services.games.crashland import GAME
from services.games.crashland import events as ev
from services.games.playout import play, random_policy
from services.games.registry import all_games
from tabletop.v1 import gateway_pb2

OLD = "tabletop.v1.CrashlandGameStarted"


def _fields(message: Descriptor) -> list[tuple[str, int, int, object]]:
    """Each field's name, number, type and message type (a map's entry by its fields: each
    message has an entry type of its own)."""
    shape: list[tuple[str, int, int, object]] = []
    for f in message.fields:
        kind = f.message_type
        of: object = "" if kind is None else kind.full_name
        if kind is not None and kind.GetOptions().map_entry:
            of = _fields(kind)
        shape.append((f.name, f.number, f.type, of))
    return shape


def _message(full_name: str) -> Descriptor:
    return descriptor_pool.Default().FindMessageTypeByName(full_name)


def test_every_former_name_is_a_message_with_the_fields_of_its_class() -> None:
    for name, game in all_games().items():
        messages = messages_for(name)
        for former, cls in former_event_messages(game).items():
            current = messages.message_name(cls)
            assert former != current.removeprefix("tabletop.v1.")
            assert _fields(_message(f"tabletop.v1.{former}")) == _fields(_message(current))
    assert former_event_messages(GAME) == {"CrashlandGameStarted": ev.MatchSetUp}


def _as_old(packed: any_pb2.Any) -> any_pb2.Any:
    """The payload as a log from before the rename holds it (the same fields, so the same
    bytes, under the old type)."""
    return any_pb2.Any(type_url=f"type.googleapis.com/{OLD}", value=packed.value)


def test_a_stored_log_of_the_old_name_folds_to_the_same_state() -> None:
    messages = messages_for("crashland")
    events = list(play(GAME, ["ann"], {}, {"ann": random_policy(3)}, 3).events)
    assert isinstance(events[0], ev.MatchSetUp)
    stored = [messages.event_to_any(e) for e in events]
    assert stored[0].TypeName() == "tabletop.v1.CrashlandMatchSetUp"  # written by today's name
    old = [_as_old(stored[0]), *stored[1:]]
    assert messages.is_game_event(old[0])
    read = [messages.event_from_any(p) for p in old]
    assert read == events
    assert GAME.fold(read) == GAME.fold(events)


def test_an_exported_log_of_the_old_name_parses_and_reads() -> None:
    messages = messages_for("crashland")
    first = _as_old(messages.event_to_any(ev.MatchSetUp("ann", {})))
    envelope = make_envelope(
        match_id="m",
        stream="board",
        sequence=2,
        payload=first,
        cause=Cause("c", "c", "ann"),
        game="crashland",
    )
    exported = json_format.MessageToJson(gateway_pb2.MatchLog(match_id="m", events=[envelope]))
    assert f'"@type": "type.googleapis.com/{OLD}"' in exported
    assert f'"eventType": "{OLD}"' in exported
    parsed = json_format.Parse(exported, gateway_pb2.MatchLog())
    assert messages.event_from_any(parsed.events[0].payload) == ev.MatchSetUp("ann", {})
