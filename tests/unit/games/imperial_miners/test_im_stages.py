"""The compiled rules' constants for phases and chain stages are the enums' members."""

from __future__ import annotations

from enum import StrEnum

import pytest

from services.games.imperial_miners.stages import Phases, Stages
from services.games.imperial_miners.state import Phase, Stage


@pytest.mark.parametrize(("constants", "enum"), [(Phases, Phase), (Stages, Stage)])
def test_each_member_has_its_constant_and_is_it(constants: type, enum: type[StrEnum]) -> None:
    named = {name: value for name, value in vars(constants).items() if name.isupper()}
    assert named.keys() == enum.__members__.keys()
    for name, value in named.items():
        assert value is enum[name]
