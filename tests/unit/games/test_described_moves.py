"""Every legal action of every game, as ``Game.describe`` names it for the seat that may
take it: on every decision of seeded matches, its targets and the elements it affects are
elements of the picture of that very view (unique ids), a template's axes name its own
parameters, labels read as words, not as a dataclass, and no two moves of one decision
look the same (label and targets)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from functools import cache
from typing import Any

import pytest

from services.games.contract import ActionTemplate, Described, Game
from services.games.playout import Policy, play, random_policy
from services.games.registry import all_games

MEASURES = {"x", "y", "angle", "length"}
#: what a dataclass repr or a Python name looks like in a label
CODE = re.compile(r"[A-Za-z]\w*\(\w+=|\b\w+=|\w_\w")
#: a negative number in a label is a coordinate, not what a player counts
NEGATIVE = re.compile(r"(?:^|\s)-\d")


def picture_ids(svg: str) -> list[str]:
    return [e.attrib["id"] for e in ET.fromstring(svg).iter() if "id" in e.attrib]


@cache
def decisions(name: str) -> tuple[tuple[Any, str, tuple[Any, ...]], ...]:
    """(state, player, legal actions) of every decision of a few seeded random matches."""
    game = all_games()[name]
    seen: list[tuple[Any, str, tuple[Any, ...]]] = []
    for seed in range({"crashland": 12, "dungeon_drop": 2}.get(name, 4)):
        players = [f"p{i + 1}" for i in range(min(game.min_players + seed % 3, game.max_players))]
        random = {p: random_policy(seed * 7 + i) for i, p in enumerate(players)}

        def policy(
            state: Any, player: str, legal: Sequence[Any], random: dict[str, Policy] = random
        ) -> Any:
            seen.append((state, player, tuple(legal)))
            return random[player](state, player, legal)

        play(game, players, {}, dict.fromkeys(players, policy), seed)
    return tuple(seen)


def described(game: Game[Any], view: Any, entry: Any) -> Described:
    return game.describe(view, entry.example if isinstance(entry, ActionTemplate) else entry)


@pytest.mark.parametrize("name", sorted(all_games()))
def test_every_move_targets_elements_of_its_own_picture(name: str) -> None:
    game = all_games()[name]
    picked = 0
    for state, player, legal in decisions(name)[::3]:
        view = game.view(state, player)
        svg = game.picture(view)
        assert svg is not None
        ids = picture_ids(svg)
        assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1][:5]
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for entry in legal[:800]:
            d = described(game, view, entry)
            assert d.label and not CODE.search(d.label), d.label
            assert not NEGATIVE.search(d.label), d.label  # "-2 places right of": a coordinate
            assert set(d.targets) <= set(ids), (d.label, set(d.targets) - set(ids))
            assert set(d.affects) <= set(ids), (d.label, set(d.affects) - set(ids))
            assert (d.label, d.targets) not in seen, d.label
            seen.add((d.label, d.targets))
            picked += bool(d.targets)
            if isinstance(entry, ActionTemplate):
                assert set(d.axes) <= {r.name for r in entry.ranges}
                assert all(a.measure in MEASURES for a in d.axes.values())
            else:
                assert not d.axes
    assert picked > 0, "no move is made on the picture"
