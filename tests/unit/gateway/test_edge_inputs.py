"""What the gateway's edge takes (services/gateway/inputs.py): a request that parses,
every string printable; a refusal names the field, never the value."""

from __future__ import annotations

import pytest

from services.gateway.inputs import BadInput, check_name, parse
from tabletop.v1 import board_pb2, gateway_pb2

BAD = [
    "\x00",
    "a\x00b",
    "\u202eevil",
    "line\nbreak",
    "tab\there",
    "\u2066x\u2069",
    "\u200f",
    "\x7f",
]


def _refused(raw: bytes, decode: object = gateway_pb2.GetViewRequest.FromString) -> str:
    with pytest.raises(BadInput) as refused:
        parse(decode, raw)
    return str(refused.value)


def test_invalid_utf8_in_a_string_field_is_refused_as_a_request_that_does_not_parse() -> None:
    raw = gateway_pb2.GetViewRequest(match_id="m" * 8).SerializeToString().replace(b"m", b"\xff")
    message = _refused(raw)
    assert "not a valid message" in message and "Error" not in message


@pytest.mark.parametrize("text", BAD)
def test_control_format_and_bidirectional_characters_are_refused_in_any_field(text: str) -> None:
    assert "match_id" in _refused(gateway_pb2.GetViewRequest(match_id=text).SerializeToString())
    nested = board_pb2.SubmitActionRequest(match_id="m", command_id=f"c{text}")
    assert "command_id" in _refused(
        nested.SerializeToString(), board_pb2.SubmitActionRequest.FromString
    )
    repeated = gateway_pb2.OpenMatchRequest(game="crashland", players=["ann", text])
    assert "players" in _refused(
        repeated.SerializeToString(), gateway_pb2.OpenMatchRequest.FromString
    )
    for options in ({text: "v"}, {"k": text}):
        opening = gateway_pb2.OpenMatchRequest(game="crashland", options=options)
        message = _refused(opening.SerializeToString(), gateway_pb2.OpenMatchRequest.FromString)
        assert "options" in message and text not in message
    watch = gateway_pb2.PlayRequest(watch=gateway_pb2.WatchMatchRequest(viewer=text))
    assert "watch.viewer" in _refused(watch.SerializeToString(), gateway_pb2.PlayRequest.FromString)


def test_printable_text_of_any_script_passes() -> None:
    request = gateway_pb2.OpenMatchRequest(
        game="crashland", players=["Zoë", "小明", "Ayşe", "عمر", "🙂"], display_name="Ana María"
    )
    assert parse(gateway_pb2.OpenMatchRequest.FromString, request.SerializeToString()) == request


def test_a_name_must_not_be_blank() -> None:
    check_name("display_name", "Ana")
    check_name("display_name", "")  # empty: the seat's own name stands in
    with pytest.raises(BadInput):
        check_name("display_name", "   ")
