"""Configuration from environment variables (12-factor), one frozen object per process."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from services.common.kafka_access import KafkaAccess
from services.common.kafka_acls import user_name
from services.common.roster import BY_NAME, ROSTER
from services.common.topics import DEFAULT_PARTITIONS

#: service → (gRPC port, metrics port), where TABLETOP_GRPC_PORT and _METRICS_PORT say none
DEFAULT_PORTS = {s.name: (s.grpc_port, s.metrics_port) for s in ROSTER}

#: the gateway's web port (page, static files and gRPC-Web)
DEFAULT_WEB_PORT = 8080
#: the built web client, from a source checkout (the container image sets TABLETOP_WEB_DIR)
DEFAULT_WEB_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "web", "dist")


def _env(name: str, default: str) -> str:
    return os.environ.get(f"TABLETOP_{name}", default)


#: hosts a dev stack may bind: its built-in secrets must never face a network
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: the shortest secret accepted (bytes): a random 32-byte value, hex- or base64-encoded
MIN_SECRET_BYTES = 32
#: the secrets each service needs; a service refuses to start without them (outside a dev stack)
SECRETS_NEEDED = {s.name: s.secrets for s in ROSTER}


class ConfigError(ValueError):
    """The process cannot start with this configuration."""


def _secret(name: str, service: str, dev_stack: bool) -> bytes:
    """TABLETOP_<name>, or (only in a dev stack) a value that says it is not one."""
    value = os.environ.get(f"TABLETOP_{name}", "")
    needed = name in SECRETS_NEEDED.get(service, ())
    if value:
        if needed and len(value) < MIN_SECRET_BYTES:
            raise ConfigError(
                f"TABLETOP_{name} is too short: give at least {MIN_SECRET_BYTES} random characters"
            )
        return value.encode()
    if needed and not dev_stack:
        raise ConfigError(
            f"TABLETOP_{name} is not set; {service} has no usable default outside a dev stack "
            "(TABLETOP_DEV_STACK=1, which binds 127.0.0.1 only)"
        )
    # Not a secret: it says what it is, and only a loopback dev stack accepts it.
    return f"dev-stack-only-{name.lower()}-not-a-secret".encode()


def _kafka(service: str, prefix: str, dev_stack: bool) -> KafkaAccess:
    """The brokers, and the service's own Kafka user (``<topic prefix><service>`` unless
    TABLETOP_KAFKA_USERNAME says otherwise) with its password, which has no default: in a
    dev stack without one, the service runs until it connects to Kafka."""
    username = _env("KAFKA_USERNAME", user_name(prefix, service))
    password = _env("KAFKA_PASSWORD", "")
    if not password and not dev_stack and BY_NAME[service].kafka:
        raise ConfigError(
            f"TABLETOP_KAFKA_PASSWORD is not set; {service} connects to Kafka as the user "
            f"{username[:64]} and has no usable default"
        )
    return KafkaAccess(_env("KAFKA_BOOTSTRAP", "127.0.0.1:9092"), username, password)


def _addrs(name: str, service: str) -> tuple[str, ...]:
    default = f"127.0.0.1:{DEFAULT_PORTS[service][0]}"
    return tuple(a.strip() for a in _env(name, default).split(",") if a.strip())


@dataclass(frozen=True)
class Config:
    service: str
    #: the brokers and this service's Kafka user
    kafka: KafkaAccess
    topic_prefix: str
    partitions: int
    replication_factor: int
    grpc_host: str
    grpc_port: int
    metrics_port: int
    #: one address per shard: board-i calls dice-i and decks-i (co-sharded single writers)
    dice_addrs: tuple[str, ...]
    decks_addrs: tuple[str, ...]
    board_addrs: tuple[str, ...]
    scoring_addr: str
    #: this process's shard (board, dice, decks) and how many there are
    shard: int
    shards: int
    #: dice/decks: per-match seeds derive from it (never revealed)
    secret: bytes
    #: gateway: signs and verifies seat, spectator and creator tokens
    token_key: bytes
    #: every internal call carries it; internal servers refuse calls without it
    peer_token: bytes
    #: the bots service's credential at the gateway: it takes seats reserved for bots only
    bots_token: bytes
    #: a local dev stack: built-in secrets allowed, loopback binding only
    dev_stack: bool
    #: TLS: this server's certificate and key (PEM paths; empty: plaintext)
    tls_cert: str
    tls_key: str
    #: CA that signs peers' client certificates (mTLS between services) and servers' ones
    tls_ca: str
    #: gateway quotas per client (token bucket): rate per second and burst
    create_rate: float
    create_burst: float
    action_rate: float
    action_burst: float
    #: gateway: how long seat and spectator tokens live
    token_ttl_seconds: int
    #: gateway: the web page and gRPC-Web (0: off), on grpc_host, TLS like the gRPC port
    web_port: int
    #: gateway: the only origins (comma-separated) whose pages may call gRPC-Web across
    #: origins; the page the gateway serves itself is same-origin and needs none
    web_origins: tuple[str, ...]
    #: gateway: the built web client (web/dist) it serves
    web_dir: str
    log_level: str
    #: scratch space (Faust's table data); /tmp is the writable emptyDir in Kubernetes
    data_dir: str
    shutdown_grace_seconds: float
    #: a stable identity of this replica (its pod name), for static Kafka group membership
    instance_id: str = ""
    #: projector: the longest a fetch waits on the broker for new events, and the most
    #: events folded as one batch (one table write and one view per match per batch) and
    #: how long a batch gathers. Batches of 200 ms fetched at most 100 ms apart, not 50
    #: and 20: the gateway that carries a command shows its result from the board's
    #: acknowledgement (DESIGN-NOTES 34), so the projector's views serve the other
    #: replicas and later readers, and a match's commands within one batch cost one
    #: record and one view (DESIGN-NOTES 39)
    projector_fetch_wait_ms: int = 100
    #: ... and the least data a fetch waits for meanwhile: while events flow, a fetch
    #: then brings up to that wait's worth of them rather than each transaction's as it
    #: commits (at 20 matches, with a 20 ms wait, the broker's fetches fell from 0.45 to
    #: 0.28 per action, the projector's CPU from 0.46 to 0.30 ms per action)
    projector_fetch_min_bytes: int = 65536
    projector_batch: int = 500
    projector_batch_wait_ms: int = 200
    #: the projector keeps a match decoded beside its table record while it is folded:
    #: at most this many, none not folded for this long (projector/folder.py)
    projector_matches_held: int = 10_000
    projector_idle_held_s: float = 300.0
    #: projector: how long its producer gathers records into one request
    projector_linger_ms: int = 5
    #: gateway admission control (0: off): commands are refused (RESOURCE_EXHAUSTED) while
    #: this many are in flight; new matches while views arrive this long after their
    #: acknowledgement (actions at four times that; services/gateway/admission.py)
    max_in_flight: int = 0
    max_view_lag_ms: int = 0
    #: gateway: the most matches in play for the whole stack (0: no bound); CreateMatch past
    #: it is refused; a match stops counting once finished or after this long without a
    #: view (services/gateway/inplay.py). Off by default: a count says nothing about load
    #: (people think for seconds between moves), so admission goes by the measured view
    #: lag and the commands in flight (max_view_lag_ms, max_in_flight); set it only to cap
    #: a machine whose capacity was measured (python -m tests.bench --capacity-only)
    max_matches_in_play: int = 0
    match_idle_s: float = 600.0
    #: how long the gateway keeps a match's state and views in memory (viewstore.Holding)
    finished_held_s: float = 300.0
    idle_held_s: float = 1800.0
    matches_held: int = 20_000
    #: gateway: a match's lobby closes (its board ends it) this long after its last seat
    #: event unless every seat has been joined; recorded with the match (0: never)
    lobby_ttl_s: int = 300
    #: gateway: open WatchMatch and PlayMatch streams per caller identity (its token's
    #: subject), per connection and per client address (0: no bound)
    max_streams_per_identity: int = 32
    max_streams_per_connection: int = 100
    max_streams_per_address: int = 1000
    #: gateway: sign-ins (Authenticate) per client address, a token bucket: what bounds how
    #: many players one address makes, hence every limit per player
    signup_rate: float = 0.2
    signup_burst: float = 20.0
    #: gateway: creates and joins per client address, the second line behind the quota
    #: per player (create_rate, create_burst); 0: five times the player's
    address_create_rate: float = 0.0
    address_create_burst: float = 0.0
    #: gateway: matches one player created that have not started (not every seat joined)
    #: nor ended, at once (0: no bound); each closes within lobby_ttl_s unless joined
    max_open_lobbies_per_player: int = 5
    #: gateway: matches one player is in (created, or holds a seat of) that have not
    #: ended, at once (0: no bound): a new one waits until the player finishes one
    max_open_matches_per_player: int = 20
    #: dice, decks, board, scoring: a snapshot of the state after this many new events, or
    #: after this many seconds when anything changed (and at a clean stop); 0 events: none
    snapshot_every_events: int = 20_000
    snapshot_every_seconds: float = 300.0
    #: bots: the gateway it plays through, how many replicas share the matches (this one
    #: is ``shard``: a StatefulSet's ordinal), its decision processes (0: one per CPU)
    gateway_addr: str = "127.0.0.1:50050"
    bots_replicas: int = 1
    bots_workers: int = 0
    #: board: the least time between the starts of two of its Kafka transactions (commands
    #: arriving meanwhile share the next); 0: as soon as the last one ends. 12, not 20,
    #: since commands and answers travel in groups (DESIGN-NOTES 24)
    board_commit_interval_ms: float = 12.0
    #: board: a started, unfinished match unused this long leaves memory and is reloaded
    #: from the log at its next command (services/board/service.py; 0: never)
    board_idle_held_s: float = 1800.0
    #: dice, decks, scoring: a match unused this long, or the least recently used past
    #: this many, leaves memory and is read back from the log at its next use
    #: (services/common/holding.py; 0 turns a limit off). Dice and decks also hold at
    #: most MATCHES_HELD revealed matches' commitments
    dice_idle_held_s: float = 1800.0
    dice_matches_held: int = 10_000
    decks_idle_held_s: float = 1800.0
    decks_matches_held: int = 10_000
    scoring_idle_held_s: float = 1800.0
    scoring_matches_held: int = 10_000

    @classmethod
    def from_env(cls, service: str) -> Config:
        grpc_port, metrics_port = DEFAULT_PORTS.get(service, (0, 0))
        shard = _env("SHARD", "")
        if not shard:
            # A StatefulSet pod is named <service>-N: its ordinal is its shard.
            tail = os.environ.get("HOSTNAME", "").rsplit("-", 1)[-1]
            shard = tail if tail.isdigit() else "0"
        board_addrs = _addrs("BOARD_ADDRS", "board")
        grpc_host = _env("GRPC_HOST", "127.0.0.1")
        dev_stack = _env("DEV_STACK", "") == "1"
        if dev_stack and grpc_host not in LOOPBACK:
            raise ConfigError(
                f"TABLETOP_DEV_STACK=1 allows built-in secrets, so it binds loopback only, "
                f"not {grpc_host[:64]}"
            )
        topic_prefix = _env("TOPIC_PREFIX", "")
        return cls(
            service=service,
            topic_prefix=topic_prefix,
            partitions=int(_env("TOPIC_PARTITIONS", str(DEFAULT_PARTITIONS))),
            replication_factor=int(_env("TOPIC_REPLICATION", "1")),
            grpc_host=grpc_host,
            grpc_port=int(_env("GRPC_PORT", str(grpc_port))),
            metrics_port=int(_env("METRICS_PORT", str(metrics_port))),
            dice_addrs=_addrs("DICE_ADDRS", "dice"),
            decks_addrs=_addrs("DECKS_ADDRS", "decks"),
            board_addrs=board_addrs,
            scoring_addr=_env("SCORING_ADDR", f"127.0.0.1:{DEFAULT_PORTS['scoring'][0]}"),
            shard=int(shard),
            shards=int(_env("SHARDS", str(len(board_addrs)))),
            secret=_secret("SECRET", service, dev_stack),
            token_key=_secret("TOKEN_KEY", service, dev_stack),
            peer_token=_secret("PEER_TOKEN", service, dev_stack),
            bots_token=_secret("BOTS_TOKEN", service, dev_stack),
            dev_stack=dev_stack,
            tls_cert=_env("TLS_CERT", ""),
            tls_key=_env("TLS_KEY", ""),
            tls_ca=_env("TLS_CA", ""),
            create_rate=float(_env("QUOTA_CREATE_PER_S", "0.2")),
            create_burst=float(_env("QUOTA_CREATE_BURST", "5")),
            action_rate=float(_env("QUOTA_ACTIONS_PER_S", "20")),
            action_burst=float(_env("QUOTA_ACTIONS_BURST", "100")),
            token_ttl_seconds=int(_env("TOKEN_TTL_SECONDS", str(7 * 24 * 3600))),
            web_port=int(_env("WEB_PORT", str(DEFAULT_WEB_PORT if service == "gateway" else 0))),
            web_origins=tuple(o.strip() for o in _env("WEB_ORIGINS", "").split(",") if o.strip()),
            web_dir=_env("WEB_DIR", DEFAULT_WEB_DIR),
            log_level=_env("LOG_LEVEL", "info"),
            data_dir=_env("DATA_DIR", os.path.join(tempfile.gettempdir(), "tabletop")),
            shutdown_grace_seconds=float(_env("SHUTDOWN_GRACE_SECONDS", "10")),
            instance_id=_env("INSTANCE_ID", ""),
            projector_fetch_wait_ms=int(_env("PROJECTOR_FETCH_WAIT_MS", "100")),
            projector_fetch_min_bytes=int(_env("PROJECTOR_FETCH_MIN_BYTES", "65536")),
            projector_batch=int(_env("PROJECTOR_BATCH", "500")),
            projector_batch_wait_ms=int(_env("PROJECTOR_BATCH_WAIT_MS", "200")),
            projector_matches_held=int(_env("PROJECTOR_MATCHES_HELD", "10000")),
            projector_idle_held_s=float(_env("PROJECTOR_IDLE_HELD_S", "300")),
            projector_linger_ms=int(_env("PROJECTOR_LINGER_MS", "5")),
            max_in_flight=int(_env("GATEWAY_MAX_IN_FLIGHT", "256")),
            max_view_lag_ms=int(_env("GATEWAY_MAX_VIEW_LAG_MS", "750")),
            max_matches_in_play=int(_env("GATEWAY_MAX_MATCHES_IN_PLAY", "0")),
            match_idle_s=float(_env("GATEWAY_MATCH_IDLE_S", "600")),
            finished_held_s=float(_env("GATEWAY_FINISHED_HELD_S", "300")),
            idle_held_s=float(_env("GATEWAY_IDLE_HELD_S", "1800")),
            matches_held=int(_env("GATEWAY_MATCHES_HELD", "20000")),
            lobby_ttl_s=int(_env("GATEWAY_LOBBY_TTL_S", "300")),
            max_streams_per_identity=int(_env("GATEWAY_MAX_STREAMS_PER_IDENTITY", "32")),
            max_streams_per_connection=int(_env("GATEWAY_MAX_STREAMS_PER_CONNECTION", "100")),
            max_streams_per_address=int(_env("GATEWAY_MAX_STREAMS_PER_ADDRESS", "1000")),
            signup_rate=float(_env("QUOTA_SIGNUP_PER_S", "0.2")),
            signup_burst=float(_env("QUOTA_SIGNUP_BURST", "20")),
            address_create_rate=float(_env("QUOTA_ADDRESS_CREATE_PER_S", "0")),
            address_create_burst=float(_env("QUOTA_ADDRESS_CREATE_BURST", "0")),
            max_open_lobbies_per_player=int(_env("GATEWAY_MAX_OPEN_LOBBIES_PER_PLAYER", "5")),
            max_open_matches_per_player=int(_env("GATEWAY_MAX_OPEN_MATCHES_PER_PLAYER", "20")),
            snapshot_every_events=int(_env("SNAPSHOT_EVERY_EVENTS", "20000")),
            snapshot_every_seconds=float(_env("SNAPSHOT_EVERY_SECONDS", "300")),
            board_commit_interval_ms=float(_env("BOARD_COMMIT_INTERVAL_MS", "12")),
            board_idle_held_s=float(_env("BOARD_IDLE_HELD_S", "1800")),
            dice_idle_held_s=float(_env("DICE_IDLE_HELD_S", "1800")),
            dice_matches_held=int(_env("DICE_MATCHES_HELD", "10000")),
            decks_idle_held_s=float(_env("DECKS_IDLE_HELD_S", "1800")),
            decks_matches_held=int(_env("DECKS_MATCHES_HELD", "10000")),
            scoring_idle_held_s=float(_env("SCORING_IDLE_HELD_S", "1800")),
            scoring_matches_held=int(_env("SCORING_MATCHES_HELD", "10000")),
            gateway_addr=_env("GATEWAY_ADDR", f"127.0.0.1:{DEFAULT_PORTS['gateway'][0]}"),
            bots_replicas=int(_env("BOTS_REPLICAS", "1")),
            bots_workers=int(_env("BOTS_WORKERS", "0")),
            # last: a missing Kafka password is reported after the other secrets
            kafka=_kafka(service, topic_prefix, dev_stack),
        )
