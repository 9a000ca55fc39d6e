"""Every Kafka topic the platform uses, and the names of its transactional ids and consumer
groups: the one definition that the services, local set-up (``tabletop admin
create-topics``), Kubernetes and the ACLs (services/common/kafka_acls.py) follow."""

from __future__ import annotations

from dataclasses import dataclass, field

from services.common.roster import ROSTER

#: the event streams, one per service that writes one (the only writer of its own)
STREAMS = tuple(s.name for s in ROSTER if s.stream)

#: table talk (services/gateway/talk.py): a stream beside the game's, written by the gateway
#: for every match, that no rule and no verification reads
TALK_STREAM = "talk"
#: refresh-token trades (services/gateway/sessionlog.py): every gateway replica's claims
SESSIONS_STREAM = "sessions"

#: Faust app id of the projector; its tables' changelog topics derive from it
PROJECTOR_APP_ID = "tabletop-projector"
#: the projector's tables (changelog-backed, keyed by match id)
PROJECTOR_TABLES = ("match_states",)

DEFAULT_PARTITIONS = 6


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    config: dict[str, str] = field(default_factory=dict)
    description: str = ""


def event_topic(stream: str, prefix: str = "") -> str:
    return f"{prefix}{stream}.events"


def snapshot_topic(stream: str, prefix: str = "") -> str:
    return f"{prefix}{stream}.snapshots"


def talk_topic(prefix: str = "") -> str:
    return event_topic(TALK_STREAM, prefix)


def sessions_topic(prefix: str = "") -> str:
    return f"{prefix}gateway.sessions"


def views_topic(prefix: str = "") -> str:
    return f"{prefix}match.views"


def dead_letter_topic(prefix: str = "") -> str:
    return f"{prefix}projector.deadletter"


def retry_topic(prefix: str = "") -> str:
    return f"{prefix}projector.retries"


def changelog_topic(table: str, prefix: str = "") -> str:
    return f"{prefix}{PROJECTOR_APP_ID}-{table}-changelog"


def transactional_id(stream: str, prefix: str = "", shard: int | None = None) -> str:
    """A stream writer's transactional id: one per shard of a sharded stream, so that a
    restarted or duplicated shard fences the old one."""
    base = f"{prefix}tabletop-{stream}"
    return base if shard is None else f"{base}-{shard}"


def projector_group(prefix: str = "") -> str:
    """The projector's consumer group (Faust's app id)."""
    return f"{prefix}{PROJECTOR_APP_ID}"


def faust_leader_topic(prefix: str = "") -> str:
    """Faust's assignor leader topic (one partition); listed so clusters create it too."""
    return f"{prefix}{PROJECTOR_APP_ID}-__assignor-__leader"


def topic_specs(prefix: str = "", partitions: int = DEFAULT_PARTITIONS) -> list[TopicSpec]:
    """All topics, for one deployment. Event streams are the system of record: kept forever."""
    keep_forever = {"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"}
    specs = [
        TopicSpec(event_topic(s, prefix), partitions, dict(keep_forever), f"{s} events")
        for s in STREAMS
    ]
    # Table talk is part of a match's log (replays show it): kept forever, partitioned by
    # match id like the game's streams.
    specs.append(TopicSpec(talk_topic(prefix), partitions, dict(keep_forever), "table talk events"))
    # Refresh-token trades, keyed by session family: compacted (a family's newest claim, or
    # its closing, is what a replica starting needs), claims kept uncompacted for an hour,
    # and nothing kept past the refresh tokens' 30 days.
    specs.append(
        TopicSpec(
            sessions_topic(prefix),
            partitions,
            {
                "cleanup.policy": "compact,delete",
                "retention.ms": str(31 * 24 * 3600 * 1000),
                "min.compaction.lag.ms": "3600000",
            },
            "refresh-token trades of every gateway replica",
        )
    )
    # A service's newest snapshot per shard (services/common/snapshots.py): compacted;
    # segments roll every 10 minutes so that old snapshots are compacted away and a restart
    # reads little more than the newest.
    specs.extend(
        TopicSpec(
            snapshot_topic(s, prefix),
            partitions,
            {
                "cleanup.policy": "compact",
                "segment.ms": "600000",
                "min.cleanable.dirty.ratio": "0.5",
            },
            f"{s} state snapshots",
        )
        for s in STREAMS
    )
    # Only the newest view of a match matters to a reader: compacted by match id.
    specs.append(
        TopicSpec(
            views_topic(prefix),
            partitions,
            {"cleanup.policy": "compact", "min.compaction.lag.ms": "60000"},
            "newest projected view per match",
        )
    )
    # What the projector could not fold (one record per event: ids and the reason, never
    # the payload), so an operator can find the matches whose views stopped.
    specs.append(
        TopicSpec(
            dead_letter_topic(prefix),
            1,
            {"retention.ms": str(30 * 24 * 3600 * 1000), "cleanup.policy": "delete"},
            "events the projector could not fold or publish",
        )
    )
    # An operator's request to fold a dead-lettered match again from its events (tabletop
    # admin deadletter retry): keyed by match id and partitioned like the event topics, so
    # the projector worker that owns the match's partition reads it in order with them.
    specs.append(
        TopicSpec(
            retry_topic(prefix),
            partitions,
            {"retention.ms": str(7 * 24 * 3600 * 1000), "cleanup.policy": "delete"},
            "matches the projector is asked to fold again from their events",
        )
    )
    specs.extend(
        TopicSpec(
            changelog_topic(t, prefix),
            partitions,
            {"cleanup.policy": "compact"},
            f"projector table {t}",
        )
        for t in PROJECTOR_TABLES
    )
    specs.append(TopicSpec(faust_leader_topic(prefix), 1, {}, "projector group leader election"))
    return specs
