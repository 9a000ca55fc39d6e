"""gRPC-Web on the real gateway: every call answers as over gRPC (same servicer, same
authorisation), server streams work, pictures come in the caller's view, and the web port
speaks TLS with the gRPC port's certificate when it has one."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import grpc
import pytest
from google.protobuf.message import Message

from services.cli.client import GatewayClient, TokenStore
from services.cli.main import main as cli_main
from services.cli.stack import Stack, free_ports
from services.games.contract import Game
from services.games.registry import get_game
from tabletop.v1 import board_pb2, gateway_pb2, match_pb2
from tests.integration.grpc_web import WebReply, call
from tests.integration.helpers import open_match

pytestmark = pytest.mark.integration

SEATS = ["ann", "bob"]


def _grpc_status(invoke: Callable[[], Any]) -> int:
    try:
        result = invoke()
        if hasattr(result, "__next__"):
            next(result)
            result.cancel()
        return 0
    except grpc.RpcError as error:
        code: grpc.StatusCode = error.code()
        return int(code.value[0])


def test_grpc_web_answers_every_caller_as_grpc_does(stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    match = open_match(client, "drillit", SEATS, {"difficulty": "easy"}, private=True)
    other = open_match(client, "drillit", SEATS, {"difficulty": "easy"})
    client.join(match, spectate=True)
    tokens = {
        "none": "",
        "wrong_match": client.token(other, "ann") or "",
        "spectator": client.token(match, "@spectator") or "",
        "ann": client.token(match, "ann") or "",
        "bob": client.token(match, "bob") or "",
        "garbage": "not-a-token",
    }
    requests: dict[str, tuple[Message, type[Message]]] = {
        "GetView": (gateway_pb2.GetViewRequest(match_id=match), match_pb2.MatchView),
        "GetView(ann)": (
            gateway_pb2.GetViewRequest(match_id=match, viewer="ann"),
            match_pb2.MatchView,
        ),
        "GetPicture": (gateway_pb2.GetPictureRequest(match_id=match), gateway_pb2.Picture),
        "GetPicture(v1)": (
            gateway_pb2.GetPictureRequest(match_id=match, version=1),
            gateway_pb2.Picture,
        ),
        "GetLegalActions": (
            board_pb2.GetLegalActionsRequest(match_id=match),
            board_pb2.GetLegalActionsReply,
        ),
        "ReplayMatch": (gateway_pb2.ReplayMatchRequest(match_id=match), gateway_pb2.ReplayStep),
        "ReplayMatchBatches": (
            gateway_pb2.ReplayMatchBatchesRequest(match_id=match),
            gateway_pb2.ReplayStepBatch,
        ),
        "ReplayMatchBatches(too many)": (
            gateway_pb2.ReplayMatchBatchesRequest(match_id=match, max_steps=10**6),
            gateway_pb2.ReplayStepBatch,
        ),
        "ExportMatch": (gateway_pb2.ExportMatchRequest(match_id=match), gateway_pb2.MatchLog),
        "VerifyMatch": (
            gateway_pb2.VerifyMatchRequest(match_id=match),
            gateway_pb2.MatchVerification,
        ),
        "ListMatches": (gateway_pb2.ListMatchesRequest(), gateway_pb2.ListMatchesReply),
    }
    stub = client.bare  # each call as its caller: its token, or none
    different = {}
    for caller, token in tokens.items():
        metadata = (("authorization", f"Bearer {token}"),) if token else ()
        for name, (request, reply_type) in requests.items():
            rpc = name.split("(")[0]
            method = getattr(stub, rpc)
            native = _grpc_status(lambda: method(request, metadata=metadata))  # noqa: B023
            web = call(stack.web_url, rpc, request, reply_type, token=token)
            if web.status != native:
                different[f"{name} as {caller}"] = (native, web.status, web.message)
    assert not different, different


class _Wire:
    """A request as raw bytes (protobuf's encoder refuses to write invalid UTF-8)."""

    def __init__(self, raw: bytes) -> None:
        self._raw = raw

    def SerializeToString(self) -> bytes:  # a Message's name
        return self._raw


def test_bad_text_is_invalid_argument_over_grpc_web_as_over_grpc(stack: Stack) -> None:
    # GetViewRequest.match_id (field 1) holding invalid UTF-8, then a right-to-left override
    for text in (b"\xff\xfe", "\u202elive".encode()):
        raw = bytes([1 << 3 | 2, len(text)]) + text
        web = call(stack.web_url, "GetView", cast(Message, _Wire(raw)), match_pb2.MatchView)
        assert web.status == grpc.StatusCode.INVALID_ARGUMENT.value[0], web.message
        assert "match_id" in web.message or "valid message" in web.message
        assert "Error" not in web.message


def test_pictures_and_streams_over_grpc_web(stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    match = open_match(client, "drillit", SEATS, {"difficulty": "easy"})
    client.view(match, "ann", min_version=2)  # projected
    ann = client.token(match, "ann") or ""
    seat: WebReply[gateway_pb2.Picture] = call(
        stack.web_url,
        "GetPicture",
        gateway_pb2.GetPictureRequest(match_id=match),
        gateway_pb2.Picture,
        token=ann,
    )
    assert seat.one.viewer == "ann" and seat.one.text and seat.one.game == "drillit"
    public = call(
        stack.web_url,
        "GetPicture",
        gateway_pb2.GetPictureRequest(match_id=match),
        gateway_pb2.Picture,
    )
    assert public.one.viewer == ""  # no token on a public match: the spectator's view
    early = call(
        stack.web_url,
        "GetPicture",
        gateway_pb2.GetPictureRequest(match_id=match, version=2),
        gateway_pb2.Picture,
        token=ann,
    )
    assert early.one.version == 2 and early.one.viewer == ""  # in play: a spectator's replay
    beyond = call(
        stack.web_url,
        "GetPicture",
        gateway_pb2.GetPictureRequest(match_id=match, version=10**6),
        gateway_pb2.Picture,
        token=ann,
    )
    assert beyond.status == grpc.StatusCode.OUT_OF_RANGE.value[0]
    steps = call(
        stack.web_url,
        "ReplayMatch",
        gateway_pb2.ReplayMatchRequest(match_id=match),
        gateway_pb2.ReplayStep,
        token=ann,
    )
    assert steps.status == 0 and [s.step for s in steps.messages] == list(
        range(1, len(steps.messages) + 1)
    )
    assert len(steps.messages) >= 3
    batches = call(
        stack.web_url,
        "ReplayMatchBatches",
        gateway_pb2.ReplayMatchBatchesRequest(match_id=match, max_steps=2),
        gateway_pb2.ReplayStepBatch,
        token=ann,
    )
    assert batches.status == 0 and all(1 <= len(b.steps) <= 2 for b in batches.messages)
    assert [s for b in batches.messages for s in b.steps] == steps.messages


def test_the_web_port_speaks_tls_with_the_gateway_certificate(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl to make a test certificate")
    run_dir = tmp_path_factory.mktemp("webtls")
    cert, key = run_dir / "tls.crt", run_dir / "tls.key"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    shutil.copy(stack.run_dir / "secrets.env", run_dir / "secrets.env")
    ports = dict(stack.ports)
    grpc_port, metrics_port, web_port = free_ports(3)
    ports["gateway"] = (grpc_port, metrics_port)
    tls = Stack(
        run_dir,
        kafka=stack.kafka,
        topic_prefix=stack.topic_prefix,
        partitions=stack.partitions,
        ports=ports,
        extra_env={"TABLETOP_TLS_CERT": str(cert), "TABLETOP_TLS_KEY": str(key)},
        web_port=web_port,
    )
    tls.start("gateway")
    https = f"https://127.0.0.1:{tls.web_port}/"
    context = ssl.create_default_context(cafile=str(cert))
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(https, context=context, timeout=5) as page:
                    assert b"<title>Tabletop</title>" in page.read()
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "the TLS web port did not come up"
                time.sleep(0.5)
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            urllib.request.urlopen(tls.web_url, timeout=5)  # plaintext is not served
    finally:
        tls.stop("gateway")


def test_tabletop_render_writes_the_picture_of_the_view_the_token_sees(
    stack: Stack,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "tokens.json"
    monkeypatch.setenv("TABLETOP_TOKENS", str(store))
    client = GatewayClient(stack.addr("gateway"), store=TokenStore(store))
    match = open_match(client, "drillit", SEATS, {"difficulty": "easy"})
    client.view(match, "ann", min_version=2)
    out = tmp_path / "board.svg"
    argv = ["--gateway", stack.addr("gateway"), "render", match, "--viewer", "ann"]
    with pytest.raises(SystemExit) as done:
        cli_main([*argv, "--version", "2", "-o", str(out)])
    has_picture = type(get_game("drillit")).picture is not Game.picture
    if has_picture:
        assert done.value.code == 0 and out.read_text().lstrip().startswith(("<svg", "<?xml"))
    else:  # no picture yet: the text of the same view, and a non-zero exit
        assert done.value.code == 1 and not out.exists()
        assert "Drillit!" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        cli_main([*argv, "--version", "100000", "-o", str(out)])
    assert refused.value.code == 2
