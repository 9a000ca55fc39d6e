"""What every command group uses: the console for messages, the gateway client the global
options describe, ``KEY=VALUE`` game options and game names as typed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from services.cli.client import GatewayClient, TokenStore
from services.cli.session import Credential, default_path
from services.common.config import DEFAULT_PORTS

if TYPE_CHECKING:
    #: what ``add_to`` of each command group adds its parsers to
    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]

DEFAULT_GATEWAY = f"127.0.0.1:{DEFAULT_PORTS['gateway'][0]}"

#: messages and progress go to stderr, so stdout carries only results (and --json)
console = Console(stderr=True)


def game_name(text: str) -> str:
    """``imperial-miners`` on the command line is the game ``imperial_miners``."""
    return text.replace("-", "_")


def game_options(pairs: list[str]) -> dict[str, str]:
    chosen = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--option takes KEY=VALUE, not {pair!r}")
        chosen[key] = value
    return chosen


def client_for(args: argparse.Namespace) -> GatewayClient:
    """A gateway client signed in as this user's player, with the tokens this user kept
    (TLS when asked)."""
    path = Path(args.credentials) if getattr(args, "credentials", None) else default_path()
    return GatewayClient(
        args.gateway, args.tls, args.ca, TokenStore.default(), credential=Credential.load(path)
    )
