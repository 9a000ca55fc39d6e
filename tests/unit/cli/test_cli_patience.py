"""The CLI's lobby calls wait out the gateway's quota (retry-after-ms) and a service
restarting (UNAVAILABLE) instead of failing, but only while the wait fits its patience."""

from __future__ import annotations

import grpc
import pytest

from services.cli.client import patiently


class Refused(grpc.RpcError):  # type: ignore[misc]
    def __init__(self, code: grpc.StatusCode, retry_after_ms: int) -> None:
        self._code = code
        self._retry = retry_after_ms

    def code(self) -> grpc.StatusCode:
        return self._code

    def trailing_metadata(self) -> tuple[tuple[str, str], ...]:
        return (("retry-after-ms", str(self._retry)),)


def test_a_quota_refusal_is_waited_out_and_asked_again() -> None:
    answers: list[grpc.RpcError | str] = [Refused(grpc.StatusCode.RESOURCE_EXHAUSTED, 20), "ok"]
    calls = 0

    def call() -> str:
        nonlocal calls
        calls += 1
        answer = answers.pop(0)
        if isinstance(answer, grpc.RpcError):
            raise answer
        return answer

    assert patiently(call) == "ok" and calls == 2


def test_a_wait_longer_than_the_patience_or_another_refusal_is_raised_at_once() -> None:
    for refusal in (
        Refused(grpc.StatusCode.RESOURCE_EXHAUSTED, 100_000),
        Refused(grpc.StatusCode.PERMISSION_DENIED, 0),
    ):

        def call(refusal: grpc.RpcError = refusal) -> str:
            raise refusal

        with pytest.raises(grpc.RpcError):
            patiently(call, patience_s=1.0)


def test_unavailable_is_asked_again_with_growing_pauses_within_the_patience() -> None:
    answers: list[grpc.RpcError | str] = [
        Refused(grpc.StatusCode.UNAVAILABLE, 0),
        Refused(grpc.StatusCode.UNAVAILABLE, 0),
        "ok",
    ]
    calls = 0

    def call() -> str:
        nonlocal calls
        calls += 1
        answer = answers.pop(0)
        if isinstance(answer, grpc.RpcError):
            raise answer
        return answer

    assert patiently(call) == "ok" and calls == 3

    def down() -> str:
        raise Refused(grpc.StatusCode.UNAVAILABLE, 0)

    with pytest.raises(grpc.RpcError) as raised:
        patiently(down, patience_s=0.5)
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
