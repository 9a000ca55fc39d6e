"""``tabletop-serve SERVICE``: the one entry point of the image; the command picks the service."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import signal
import sys
from types import FrameType

import uvloop

from services.common.config import Config, ConfigError
from services.common.kafka_access import wait_for_login
from services.common.logging import configure_logging, get_logger
from services.common.roster import BY_NAME, NAMES

#: what ``tabletop-serve`` runs: each service of the roster
SERVICES = NAMES

# Before grpc is imported (it reads its experiments once): serve gRPC on its classic
# endpoints, whose reads and writes the completion queue's poller thread does itself,
# instead of EventEngine endpoints, which hand each one to a thread pool of their own.
# An operator's own GRPC_EXPERIMENTS wins.
os.environ.setdefault("GRPC_EXPERIMENTS", "-event_engine_listener,-event_engine_client")


def _exit_while_starting(signum: int, frame: FrameType | None) -> None:
    sys.exit(128 + signum)


def log_in_to_kafka(config: Config) -> None:
    """Wait until the service's Kafka user logs in (the installation's setup may still be
    creating it), or exit with the reason."""
    log = get_logger(__name__)

    def waiting(error: BaseException) -> None:
        log.warning("kafka_login_waiting", user=config.kafka.username, error=str(error)[:200])

    try:
        asyncio.run(wait_for_login(config.kafka, waiting=waiting))
    except Exception as error:
        raise SystemExit(
            f"tabletop-serve {config.service}: Kafka at {config.kafka.bootstrap} does not let "
            f"the user {config.kafka.username} log in: {error}"
        ) from None


def main(argv: list[str] | None = None) -> None:
    # As PID 1 in a container, SIGTERM is ignored unless handled: until the service installs
    # its graceful handler (after startup), a stop request simply ends the process.
    signal.signal(signal.SIGTERM, _exit_while_starting)
    parser = argparse.ArgumentParser(
        prog="tabletop-serve",
        description="Run one Tabletop service (configured by TABLETOP_* environment variables).",
    )
    parser.add_argument("service", choices=SERVICES)
    args = parser.parse_args(argv)
    try:
        config = Config.from_env(args.service)
    except ConfigError as refused:
        raise SystemExit(f"tabletop-serve {args.service}: {refused}") from None
    configure_logging(args.service, config.log_level)
    if BY_NAME[args.service].kafka:
        log_in_to_kafka(config)
    module = importlib.import_module(f"services.{args.service}.app")
    if args.service == "projector":
        module.main(config)  # Faust runs its own event loop
        return
    # uvloop: the event loop's own work (scheduling, socket reads and writes for Kafka
    # and gRPC) costs far less than asyncio's pure-Python selector loop.
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(module.main(config))


if __name__ == "__main__":
    main()
