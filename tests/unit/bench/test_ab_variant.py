"""How the A/B tool reads a variant: ``NAME[:KEY=VALUE,...]``."""

from __future__ import annotations

from pathlib import Path

from tests.bench.ab import Variant


def test_broker_keys_are_broker_settings_and_others_the_services_environment() -> None:
    variant = Variant.parse(
        "off:broker.transaction.partition.verification.enable=false,BOARD_X=1,loop=uvloop"
    )
    assert variant.name == "off"
    assert variant.broker == {"transaction.partition.verification.enable": "false"}
    assert variant.env == {"TABLETOP_BOARD_X": "1"}
    assert variant.loop == "uvloop"


def test_a_tree_puts_its_code_first_for_the_services() -> None:
    variant = Variant.parse("base:tree=/tmp/base")
    assert variant.broker == {}
    assert variant.stack_env()["PYTHONPATH"] == f"{Path('/tmp/base').resolve()}:" + str(
        Path("/tmp/base").resolve() / "protos"
    )
