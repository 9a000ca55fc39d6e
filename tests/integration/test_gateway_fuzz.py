"""Fuzzing every request message of the public API through the real gateway.

Messages are drawn from their protobuf descriptors (every field, nested messages, maps,
oneofs, enums with unknown values, long and odd strings, control and bidirectional
characters), with no token, a real token of a finished match, or a malformed one. Whatever
comes in: no UNKNOWN or INTERNAL status, no refusal that echoes a long input or names a
Python class, no event appended, and the gateway stays healthy. And for every string field
of every request message, at any depth: invalid UTF-8 and each kind of unprintable
character is INVALID_ARGUMENT naming the field, on unary calls and streams alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import message, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from tabletop.v1 import gateway_pb2
from tests.integration.helpers import play_bot_match, topic_events

#: cases per request message (streams wait on deadlines, so fewer of them)
CASES = 200
STREAM_CASES = 25
#: what a refusal may say, at most (the gateway cuts passed-on messages to 300)
MAX_DETAILS = 400
PYTHON_NAMES = ("Error", "Exception", "Traceback", "<class", "object at 0x", "NoneType")
BAD_STATUSES = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}
#: NUL, a control character, a line break, DEL, right-to-left override, isolate, mark
UNPRINTABLE = ["\x00", "a\x07b", "line\nbreak", "\x7f", "\u202elive", "\u2066x\u2069", "\u200f"]

INT_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}


def _is_map(field: Any) -> bool:
    return bool(
        field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry
    )


def strings(known: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(st.characters(codec="utf-8"), max_size=40),
        st.sampled_from(known),
        st.builds(lambda c, n: c * n, st.characters(codec="utf-8"), st.integers(65, 70_000)),
        st.just("\x00\ud7ff\u202e"),
        st.sampled_from(UNPRINTABLE),
    )


def scalar(field: Any, known: list[str]) -> st.SearchStrategy[Any]:
    if field.type == FieldDescriptor.TYPE_STRING:
        return strings(known)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=64)
    if field.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(width=32 if field.type == FieldDescriptor.TYPE_FLOAT else 64)
    if field.type == FieldDescriptor.TYPE_ENUM:
        numbers = [v.number for v in field.enum_type.values]
        return st.one_of(st.sampled_from(numbers), st.integers(-5, 1000))
    low, high = INT_RANGES[field.type]
    return st.one_of(st.integers(low, high), st.integers(0, 20))


def messages(descriptor: Any, known: list[str], depth: int = 0) -> st.SearchStrategy[Any]:
    """Any message of this type: each field absent or drawn from its type."""
    cls = message_factory.GetMessageClass(descriptor)

    def value(field: Any) -> st.SearchStrategy[Any]:
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if _is_map(field):
                key, val = (
                    field.message_type.fields_by_name["key"],
                    field.message_type.fields_by_name["value"],
                )
                inner = (
                    messages(val.message_type, known, depth + 1)
                    if val.type == FieldDescriptor.TYPE_MESSAGE
                    else scalar(val, known)
                )
                return st.dictionaries(scalar(key, known), inner, max_size=40 if depth == 0 else 3)
            if depth >= 4:
                return st.none()
            inner = messages(field.message_type, known, depth + 1)
        else:
            inner = scalar(field, known)
        if field.is_repeated:
            return st.lists(inner, max_size=20 if depth == 0 else 3)
        return inner

    @st.composite
    def build(draw: st.DrawFn) -> message.Message:
        msg = cls()
        for field in descriptor.fields:
            if not draw(st.booleans()):
                continue
            drawn = draw(value(field))
            if drawn is None:
                continue
            if (
                field.type == FieldDescriptor.TYPE_MESSAGE
                and field.message_type.GetOptions().map_entry
            ):
                target = getattr(msg, field.name)
                for k, v in drawn.items():
                    if isinstance(v, message.Message):
                        target[k].CopyFrom(v)
                    else:
                        target[k] = v
            elif field.is_repeated:
                target = getattr(msg, field.name)
                for item in drawn:
                    if isinstance(item, message.Message):
                        target.add().CopyFrom(item)
                    else:
                        target.append(item)
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                getattr(msg, field.name).CopyFrom(drawn)
            else:
                setattr(msg, field.name, drawn)
        return msg

    return build()


def _strings_of(msg: message.Message) -> list[str]:
    found: list[str] = []
    for field, value in msg.ListFields():
        values = value if field.is_repeated else [value]
        if _is_map(field):
            values = [*value.keys(), *value.values()]
        for item in values:
            if isinstance(item, str):
                found.append(item)
            elif isinstance(item, message.Message):
                found.extend(_strings_of(item))
    return found


@pytest.fixture(scope="module")
def target(stack: Stack) -> tuple[GatewayClient, str, dict[str, str]]:
    """A finished public match (nothing can be appended to it) and real tokens for it."""
    client = GatewayClient(stack.addr("gateway"))
    match_id, _ = play_bot_match(client, "crashland", ["fuzzer"], seed=77)
    client.join(match_id, spectate=True)
    tokens = {
        "seat": client.token(match_id, "fuzzer") or "",
        "spectator": client.token(match_id, "@spectator") or "",
    }
    return client, match_id, tokens


def _methods() -> list[tuple[str, Descriptor, bool]]:
    service = gateway_pb2.DESCRIPTOR.services_by_name["Gateway"]
    return [
        (m.name, m.input_type, m.server_streaming)
        for m in service.methods
        if not m.client_streaming
    ]


def _streams_in() -> list[tuple[str, Descriptor]]:
    """The methods a client streams requests to (PlayMatch)."""
    service = gateway_pb2.DESCRIPTOR.services_by_name["Gateway"]
    return [(m.name, m.input_type) for m in service.methods if m.client_streaming]


def _check_refusal(method: str, code: str, details: str, sent: list[message.Message]) -> None:
    assert code not in {s.name for s in BAD_STATUSES}, (method, details)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED.name and "received" in details.lower():
        return  # gRPC's own message-size refusal
    assert len(details) <= MAX_DETAILS, (method, details[:200])
    assert not any(name in details for name in PYTHON_NAMES), (method, details)
    for request in sent:
        for text in _strings_of(request):
            if len(text) > 64:
                assert text not in details, (method, "echoed a long input")


def test_fuzzed_requests_are_refused_cleanly(
    stack: Stack, target: tuple[GatewayClient, str, dict[str, str]]
) -> None:
    client, match_id, tokens = target
    known = [match_id, "fuzzer", "", "crashland-ish", "x" * 64]
    before = topic_events(stack)
    authorizations = st.one_of(
        st.just(()),
        st.sampled_from(list(tokens.values())).map(lambda t: (("authorization", f"Bearer {t}"),)),
        st.sampled_from(["Bearer ", "Bearer x.y.z", "Basic abc", "bearer " + "A" * 5000]).map(
            lambda v: (("authorization", v),)
        ),
    )
    report: dict[str, dict[str, int]] = {}
    for method, descriptor, streaming in _methods():
        outcomes = report.setdefault(method, {})
        _fuzz(client, method, descriptor, streaming, known, authorizations, outcomes)
    for method, descriptor in _streams_in():
        outcomes = report.setdefault(method, {})
        _fuzz_stream(client, method, descriptor, known, authorizations, outcomes)
    print(f"fuzz outcomes: {report}")
    assert "OK" not in report["CreateMatch"]  # no real game name is drawn: nothing created
    after = topic_events(stack)
    counts = {s: sum(map(len, m.values())) for s, m in before.items()}
    assert {s: sum(map(len, m.values())) for s, m in after.items()} == counts
    with grpc.insecure_channel(stack.addr("gateway")) as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    assert client.view(match_id, "fuzzer").match_id == match_id


def _fuzz(
    client: GatewayClient,
    method: str,
    descriptor: Descriptor,
    streaming: bool,
    known: list[str],
    authorizations: st.SearchStrategy[tuple[tuple[str, str], ...]],
    outcomes: dict[str, int],
) -> None:
    call: Callable[..., Any] = getattr(client.stub, method)

    @settings(
        max_examples=STREAM_CASES if streaming else CASES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(request=messages(descriptor, known), metadata=authorizations)
    def one(request: message.Message, metadata: tuple[tuple[str, str], ...]) -> None:
        try:
            reply = call(request, metadata=metadata, timeout=0.3 if streaming else 2)
            if streaming:
                for _ in reply:
                    break
                reply.cancel()
            code = grpc.StatusCode.OK
            details = ""
        except grpc.RpcError as error:
            code, details = error.code(), error.details() or ""
        outcomes[code.name] = outcomes.get(code.name, 0) + 1
        assert code not in BAD_STATUSES, (method, details)
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED and "received" in details.lower():
            return  # gRPC's own message-size refusal
        assert len(details) <= MAX_DETAILS, (method, details[:200])
        assert not any(name in details for name in PYTHON_NAMES), (method, details)
        for text in _strings_of(request):
            if len(text) > 64:
                assert text not in details, (method, "echoed a long input")

    one()


def _fuzz_stream(
    client: GatewayClient,
    method: str,
    descriptor: Descriptor,
    known: list[str],
    authorizations: st.SearchStrategy[tuple[tuple[str, str], ...]],
    outcomes: dict[str, int],
) -> None:
    """A few fuzzed requests on one stream: its end and every refusal on it are checked
    as a call's status is (refusals of single requests come as ``refused`` answers)."""
    call: Callable[..., Any] = getattr(client.stub, method)

    @settings(
        max_examples=STREAM_CASES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        requests=st.lists(messages(descriptor, known), min_size=1, max_size=3),
        metadata=authorizations,
    )
    def one(requests: list[message.Message], metadata: tuple[tuple[str, str], ...]) -> None:
        try:
            replies = call(iter(requests), metadata=metadata, timeout=0.3)
            for count, reply in enumerate(replies):
                if reply.HasField("refused"):
                    refused = reply.refused
                    outcomes[f"refused {refused.code}"] = (
                        outcomes.get(f"refused {refused.code}", 0) + 1
                    )
                    _check_refusal(method, refused.code, refused.message, requests)
                if count >= 10:
                    break
            replies.cancel()
            code, details = grpc.StatusCode.OK, ""
        except grpc.RpcError as error:
            code, details = error.code(), error.details() or ""
        outcomes[code.name] = outcomes.get(code.name, 0) + 1
        _check_refusal(method, code.name, details, requests)

    one()


def _string_paths(descriptor: Any, depth: int = 0) -> list[list[Any]]:
    """Every string field reachable in a message type, as the fields leading to it (map
    entries' keys and values included; recursion cut at depth 4)."""
    paths: list[list[Any]] = []
    for field in descriptor.fields:
        if field.type == FieldDescriptor.TYPE_STRING:
            paths.append([field])
        elif field.type == FieldDescriptor.TYPE_MESSAGE and depth < 4:
            paths.extend([field, *inner] for inner in _string_paths(field.message_type, depth + 1))
    return paths


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _raw(path: list[Any], value: bytes) -> bytes:
    """The wire bytes of a message with only the string at ``path`` set to ``value`` (bytes
    as they are, valid UTF-8 or not: protobuf's own encoder would refuse invalid ones)."""
    field, *rest = path
    inner = value if not rest else _raw(rest, value)
    return _varint(field.number << 3 | 2) + _varint(len(inner)) + inner


BAD_TEXTS = [b"\xff\xfe", b"ok\xc3", b"\xed\xa0\x80", *(t.encode() for t in UNPRINTABLE)]


def test_every_string_field_of_every_request_refuses_bad_text_as_invalid_argument(
    stack: Stack,
) -> None:
    service = gateway_pb2.DESCRIPTOR.services_by_name["Gateway"]
    checked = 0
    with grpc.insecure_channel(stack.addr("gateway")) as channel:
        for method in service.methods:
            name = f"/{service.full_name}/{method.name}"
            for path in _string_paths(method.input_type):
                field = ".".join(f.name for f in path)
                for text in BAD_TEXTS:
                    raw = _raw(path, text)
                    with pytest.raises(grpc.RpcError) as refused:
                        if method.client_streaming:
                            list(channel.stream_stream(name)(iter([raw]), timeout=5))
                        elif method.server_streaming:
                            list(channel.unary_stream(name)(raw, timeout=5))
                        else:
                            channel.unary_unary(name)(raw, timeout=5)
                    error = refused.value
                    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (field, text)
                    details = error.details() or ""
                    assert not any(n in details for n in PYTHON_NAMES), (field, details)
                    assert text.decode(errors="replace") not in details
                    checked += 1
    # every method has a string field to check (all but one take a match id)
    assert checked >= len(service.methods) * len(BAD_TEXTS)
