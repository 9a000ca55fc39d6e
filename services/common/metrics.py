"""Prometheus metrics: gRPC RED metrics with the standard names, and the domain's own.

Label values never carry match or player ids (unbounded cardinality).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from prometheus_client import Counter, Gauge, Histogram, start_http_server

from services.common.logging import get_logger

log = get_logger(__name__)

GRPC_STARTED = Counter(
    "grpc_server_started_total",
    "RPCs started on the server.",
    ["grpc_type", "grpc_service", "grpc_method"],
)
GRPC_HANDLED = Counter(
    "grpc_server_handled_total",
    "RPCs completed on the server, regardless of success or failure.",
    ["grpc_type", "grpc_service", "grpc_method", "grpc_code"],
)
GRPC_HANDLING = Histogram(
    "grpc_server_handling_seconds",
    "Time from the start of an RPC to its completion on the server.",
    ["grpc_type", "grpc_service", "grpc_method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)

EVENTS_APPENDED = Counter(
    "tabletop_events_appended", "Events appended to an event stream.", ["stream", "game"]
)
MATCHES_CREATED = Counter("tabletop_matches_created", "Matches created.", ["game"])
MATCHES_ACTIVE = Gauge("tabletop_matches_active", "Matches in play on this board shard.", ["game"])
BOARD_MATCHES_EVICTED = Counter(
    "tabletop_board_matches_evicted_total",
    "Started matches the board let go of after TABLETOP_BOARD_IDLE_HELD_S unused "
    "(reloaded from the log at their next command).",
)
MATCHES_LET_GO = Counter(
    "tabletop_matches_let_go_total",
    "Matches dice, decks or scoring let go of from memory, unused for their IDLE_HELD_S or "
    "past their MATCHES_HELD (read back from the log at their next use).",
    ["stream"],
)
MATCHES_READ_BACK = Counter(
    "tabletop_matches_read_back_total",
    "Matches dice, decks or scoring let go of and read back from the log at their next use.",
    ["stream"],
)
BOARD_TIMEOUTS = Counter(
    "tabletop_board_timeouts_total",
    "Seats whose time ran out (a match's clock option), by what the timeout did.",
    ["game", "policy"],
)
MATCHES_FINISHED = Counter(
    "tabletop_matches_finished", "Matches that reached their end.", ["game", "result"]
)
ACTIONS = Counter(
    "tabletop_actions", "Player actions submitted, by how they ended.", ["game", "result"]
)
COMMAND_SECONDS = Histogram(
    "tabletop_board_command_seconds",
    "Time the board took for one submitted action (rules, chance, append), whether it came "
    "by a SubmitCommand call of its own or on a Calls stream.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
REVEALS_PENDING = Gauge(
    "tabletop_board_seed_reveals_pending",
    "Finished matches whose seed reveal failed and waits to be retried (dice or decks "
    "unreachable); the reveals being made just after a match ended are not counted.",
)
REVEALS_FAILED = Counter(
    "tabletop_board_seed_reveals_abandoned",
    "Seed reveals given up because retrying cannot help (see seed_reveal_abandoned logs).",
)
PROJECTOR_FOLDED = Counter(
    "tabletop_projector_events_folded", "Events folded into read models.", ["stream"]
)
PROJECTOR_FOLD_ERRORS = Counter(
    "tabletop_projector_fold_errors",
    "Events the projector could not fold (the match's view stops moving; see the logs).",
    ["stream"],
)
PROJECTOR_GAPS = Counter(
    "tabletop_projector_gaps",
    "Matches whose next event came after one the projector had not folded: each was "
    "folded again from its events in the log (its view was late, not wrong).",
)
PROJECTOR_DEAD_LETTERS = Counter(
    "tabletop_projector_dead_letters",
    "Events set aside on the dead-letter topic (their match's views stop; the rest go on).",
    ["reason"],
)
PROJECTOR_LAG = Gauge(
    "tabletop_projector_lag_seconds", "Age of the newest event the projector has folded."
)
PROJECTOR_ASSIGNED = Gauge(
    "tabletop_projector_assigned_partitions",
    "Partitions this projector instance folds (0 while rebalancing or recovering tables).",
)
LOG_DUPLICATES = Counter(
    "tabletop_log_duplicate_sequences",
    "Events read back at a (match, stream, sequence) already held by another event id.",
    ["stream"],
)
APPENDS_SETTLED = Counter(
    "tabletop_log_appends_settled",
    "Appends whose outcome was unknown (failure or timeout), settled by reading the log "
    "back: committed or not.",
    ["stream", "outcome"],
)
TRANSACTION_BATCHES = Histogram(
    "tabletop_log_transaction_batches",
    "Appends (one command's events each) committed together in one Kafka transaction.",
    ["topic"],
    buckets=(1, 2, 4, 8, 16, 32, 64),
)
SNAPSHOT_AGE = Gauge(
    "tabletop_snapshot_age_seconds",
    "Time since the newest snapshot of this process's state was taken (a restart reads the "
    "stream from there).",
    ["stream"],
)
SNAPSHOT_BYTES = Gauge(
    "tabletop_snapshot_size_bytes", "Size of the newest snapshot written.", ["stream"]
)
SNAPSHOT_DURATION = Histogram(
    "tabletop_snapshot_duration_seconds",
    "Time to take a snapshot of the state (appends wait meanwhile), write it, or load it.",
    ["stream", "operation"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
SNAPSHOT_FAILURES = Counter(
    "tabletop_snapshot_failures",
    "Snapshots that could not be taken or written (retried later) or read (the stream is "
    "replayed from its start).",
    ["stream", "operation"],
)
GATEWAY_WATCHERS = Gauge("tabletop_gateway_watchers", "Open WatchMatch and PlayMatch streams.")
GATEWAY_MATCHES_IN_PLAY = Gauge(
    "tabletop_gateway_matches_in_play",
    "Unfinished matches with a view in the idle timeout, as this gateway counts them.",
)
GATEWAY_MATCHES_HELD = Gauge(
    "tabletop_gateway_matches_held",
    "Matches whose state and views this gateway holds in memory (the rest are evicted).",
)
GATEWAY_MATCHES_FETCHED = Counter(
    "tabletop_gateway_matches_fetched_total",
    "Evicted matches fetched again from their events for a view.",
)
GATEWAY_VIEW_LAG = Gauge(
    "tabletop_gateway_view_lag_seconds",
    "How long after the board acknowledged a version its view came from the projector: "
    "the median of the last second, admission control's signal (0 without samples).",
)
GATEWAY_MATCHES_REFUSED = Counter(
    "tabletop_gateway_matches_refused",
    "New matches refused because the matches in play reached their bound.",
)
GATEWAY_STREAMS_REFUSED = Counter(
    "tabletop_gateway_streams_refused",
    "WatchMatch and PlayMatch streams refused: their caller, connection or address had "
    "the most streams open.",
)
BOTS_LAG = Histogram(
    "tabletop_bots_lag_seconds",
    "Bots service: from the moment a bot seat's turn is seen to have begun (the seat's "
    "legal actions say it must act) to the gateway's acknowledgement of its action.",
    ["game", "level"],
    buckets=(0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60),
)
BOTS_ACTIONS = Counter(
    "tabletop_bots_actions",
    "Bots service: actions it submitted, by how they ended (accepted; duplicate: another "
    "replica made it first under the same command id; stale: the match had moved on; "
    "refused).",
    ["game", "result"],
)
BOTS_SEATS = Gauge("tabletop_bots_seats", "Bots service: bot seats this replica plays now.")
PROJECTOR_DEAD_LETTERED_MATCHES = Gauge(
    "tabletop_projector_dead_lettered_matches",
    "Matches with a dead-lettered event not successfully re-folded since (their views "
    "stopped), as this projector worker knows them.",
)


def start_metrics_server(port: int, host: str = "127.0.0.1") -> None:
    if port:
        start_http_server(port, addr=host)


def _rpc_type(handler: grpc.RpcMethodHandler) -> str:
    if handler.request_streaming and handler.response_streaming:
        return "bidi_stream"
    if handler.request_streaming:
        return "client_stream"
    if handler.response_streaming:
        return "server_stream"
    return "unary"


def _go_name(code: grpc.StatusCode) -> str:
    if code is grpc.StatusCode.OK:
        return "OK"
    if code is grpc.StatusCode.CANCELLED:
        return "Canceled"  # Go's spelling
    return "".join(word.capitalize() for word in code.name.split("_"))


#: grpc_code as the grpc-ecosystem exporters write it (Go's codes.Code names: "OK",
#: "InvalidArgument", "Internal"), which dashboards and alert rules match on
GRPC_CODE_LABEL: dict[grpc.StatusCode, str] = {code: _go_name(code) for code in grpc.StatusCode}


def _code_of(context: grpc.aio.ServicerContext, error: BaseException | None) -> str:
    # grpc.aio has code(); sonora's gRPC-Web context keeps the code as an attribute.
    code = context.code if isinstance(context.code, grpc.StatusCode) else context.code()
    if isinstance(code, grpc.StatusCode):
        return GRPC_CODE_LABEL[code]
    if isinstance(error, asyncio.CancelledError):
        # the client cancelled, hung up or ran out of its deadline: the handler was cut
        # short, it did not fail (a bench bot closing its PlayMatch stream counted Unknown)
        return GRPC_CODE_LABEL[grpc.StatusCode.CANCELLED]
    return GRPC_CODE_LABEL[grpc.StatusCode.OK if error is None else grpc.StatusCode.UNKNOWN]


#: what a client hears of a handler's own fault; grpc's default details name the Python
#: exception ("Unexpected <class 'KeyError'>: 'level_4'"), which is the log's business
INTERNAL_DETAILS = "the service failed on this request; the fault is logged"


async def _shield(context: grpc.aio.ServicerContext, path: str, exc: BaseException) -> None:
    """An exception no handler meant (not an abort, a cancellation or an exit) is logged
    with its traceback and answered INTERNAL with ``INTERNAL_DETAILS`` (this raises)."""
    if not isinstance(exc, Exception) or isinstance(exc, grpc.aio.AbortError):
        return
    # sonora's gRPC-Web abort sets the code and raises a bare RpcError
    code = context.code if isinstance(context.code, grpc.StatusCode) else context.code()
    if isinstance(code, grpc.StatusCode) and code != grpc.StatusCode.OK:
        return
    log.error("rpc_handler_failed", method=path, exc_info=exc)
    await context.abort(grpc.StatusCode.INTERNAL, INTERNAL_DETAILS)


class WrappingInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """A server interceptor that wraps each method's handler (``wrap``) once: a registered
    method's handler is one object, so it is wrapped once instead of on every call."""

    def __init__(self) -> None:
        #: method → (its handler, wrapped)
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        raise NotImplementedError

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        known = self._wrapped.get(method)
        if known is None or known[0] is not handler:
            known = self._wrapped[method] = (handler, self.wrap(handler, method))
        return known[1]


class MetricsInterceptor(WrappingInterceptor):
    """Counts and times every RPC under the grpc-ecosystem standard metric names."""

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        return instrument(handler, method)


def instrument(
    handler: grpc.RpcMethodHandler, path: str, protocol: str = ""
) -> grpc.RpcMethodHandler:
    """The handler, counted and timed. ``protocol`` prefixes grpc_type (``grpc_web_unary``)
    for calls that arrive another way than native gRPC (the gateway's gRPC-Web)."""
    service, _, method = path.lstrip("/").partition("/")
    labels = (f"{protocol}{_rpc_type(handler)}", service, method)

    started, handling = GRPC_STARTED.labels(*labels), GRPC_HANDLING.labels(*labels)
    #: status code → its labelled counter (a label lookup per call costs more than the count)
    handled: dict[str, Any] = {}

    def finished(context: grpc.aio.ServicerContext, start: float, error: Any) -> None:
        handling.observe(time.perf_counter() - start)
        code = _code_of(context, error)
        counter = handled.get(code)
        if counter is None:
            counter = handled[code] = GRPC_HANDLED.labels(*labels, code)
        counter.inc()

    if handler.unary_unary is not None:
        inner_uu = handler.unary_unary

        async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started.inc()
            start, error = time.perf_counter(), None
            try:
                return await inner_uu(request, context)
            except BaseException as exc:
                error = exc
                await _shield(context, path, exc)
                raise
            finally:
                finished(context, start, error)

        return grpc.unary_unary_rpc_method_handler(
            unary_unary,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        inner_us = handler.unary_stream

        async def unary_stream(
            request: Any, context: grpc.aio.ServicerContext
        ) -> AsyncIterator[Any]:
            started.inc()
            start, error = time.perf_counter(), None
            try:
                async for item in inner_us(request, context):
                    yield item
            except BaseException as exc:
                error = exc
                await _shield(context, path, exc)
                raise
            finally:
                finished(context, start, error)

        return grpc.unary_stream_rpc_method_handler(
            unary_stream,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.stream_stream is not None:
        inner_ss = handler.stream_stream

        async def stream_stream(
            requests: AsyncIterator[Any], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[Any]:
            started.inc()
            start, error = time.perf_counter(), None
            try:
                async for item in inner_ss(requests, context):
                    yield item
            except BaseException as exc:
                error = exc
                await _shield(context, path, exc)
                raise
            finally:
                finished(context, start, error)

        return grpc.stream_stream_rpc_method_handler(
            stream_stream,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    return handler
