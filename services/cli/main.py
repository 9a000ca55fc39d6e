"""``tabletop``: play, replay, verify and run Tabletop from the terminal."""

from __future__ import annotations

import argparse
import sys

import grpc

from services.cli.client import reason_of
from services.cli.commands import history, lobby, operate, play, simulate, talk, watch
from services.cli.commands.shared import DEFAULT_GATEWAY, console

#: the command groups, in the order ``tabletop --help`` lists their commands
GROUPS = (play, talk, watch, history, lobby, simulate, operate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tabletop", description=__doc__)
    parser.add_argument("--gateway", default=DEFAULT_GATEWAY, help="gateway address (host:port)")
    parser.add_argument("--tls", action="store_true", help="connect with TLS (system roots)")
    parser.add_argument("--ca", help="connect with TLS, trusting this CA certificate (PEM)")
    parser.add_argument(
        "--credentials",
        help="your player's credential file (made on first use; default "
        "$TABLETOP_CREDENTIALS, else $XDG_CONFIG_HOME/tabletop/credentials.json)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.add_to(sub)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        sys.exit(args.func(args))
    except grpc.RpcError as error:
        console.print(f"[red]error:[/] {reason_of(error)}")
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
