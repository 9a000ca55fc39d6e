"""Round and end clauses: Weight and the new turn order, 3 rounds, Quests revealed,
Key-Chest pairs rolled through the dice (unpaired ones ignored, Quests included), Gems
per Quest, the winner and the tie-break,
Teamwork meeples, Solo."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from services.games.contract import AwaitingChance, DiceRolled, Finished, RollDice
from services.games.dungeon_drop import GAME, content
from services.games.dungeon_drop import actions as act
from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop.content import CONTENT, load
from services.games.dungeon_drop.flow import advance
from services.games.dungeon_drop.scoring import breakdown, pairs, score
from services.games.dungeon_drop.state import DungeonDropState, Phase
from tests.unit.games.dungeon_drop.dd_given import at, given, looted, room_table

PACK = Path(content.__file__).parent / "content" / "dungeon_drop.yaml"
THREE = ("ann", "bob", "cid")  # Gnome 1, Orc 9, Dwarf 6: initiative order ann, cid, bob
ROOM = ("pillar01", "pillar02", "pillar03")


def round_played(
    order: tuple[str, ...], loot: Mapping[str, tuple[str, ...]], rnd: int = 1
) -> list[Any]:
    out: list[Any] = []
    for p in order:
        out += [ev.TurnStarted(p, rnd, 0), ev.AbilityEnded(p)]
        got = loot.get(p, ())
        out.append(looted(p, *got, health=3) if got else ev.LeftEmptyHanded(p))
        out.append(ev.TurnEnded(p))
    return out


def automatic(state: DungeonDropState) -> list[Any]:
    return advance(state, [])


def test_one_turn_each_in_initiative_order_then_the_round_ends() -> None:
    state = given(players=THREE)
    assert state.order == ("ann", "cid", "bob")
    first = automatic(state)
    assert first == [ev.TurnStarted("ann", 1, 4)]  # 3 players explore 4 cubes


def test_weight_counts_treasure_not_monsters_and_orders_lightest_first() -> None:
    loot = {
        "ann": ("gold01", "gold02"),
        "cid": ("goblin01", "troll01", "troll02"),
        "bob": ("gem01",),
    }
    state = given(*round_played(("ann", "cid", "bob"), loot), players=THREE)
    assert state.phase == Phase.ROUND_OVER
    (ended, started) = automatic(state)
    assert ended == ev.RoundEnded(1, {"ann": 2, "bob": 1, "cid": 0}, ("cid", "bob", "ann"))
    assert started == ev.TurnStarted("cid", 2, 4)


def test_weight_ties_go_by_starting_initiative_lowest_first() -> None:
    loot = {"ann": ("gold01",), "cid": ("gold02",), "bob": ("gold03",)}
    state = given(*round_played(("ann", "cid", "bob"), loot), players=THREE)
    assert automatic(state)[0].order == ("ann", "cid", "bob")


def three_rounds(loot: Mapping[str, tuple[str, ...]], **setup: Any) -> DungeonDropState:
    players = setup.get("players", ("ann", "bob"))
    order = tuple(sorted(players, key=lambda p: CONTENT.races[given(**setup).races[p]].initiative))
    events: list[Any] = []
    for rnd in (1, 2, 3):
        events += round_played(order, loot if rnd == 1 else {}, rnd)
        events.append(ev.RoundEnded(rnd, {}, order))
    return given(*events, **setup)


def test_after_three_rounds_quests_are_revealed() -> None:
    state = three_rounds({})
    assert state.phase == Phase.REVEAL
    assert GAME.view(state, "bob").seats[0].quest is None
    revealed = automatic(state)[0]
    assert revealed == ev.QuestsRevealed({"ann": "jeweler", "bob": "slayer"})
    state = GAME.fold([revealed], state)
    assert GAME.view(state, "bob").seats[0].quest == "jeweler"


def test_each_key_paired_with_a_chest_rolls_the_chest_through_the_dice() -> None:
    state = three_rounds(
        {"ann": ("key01", "key02", "chest01"), "bob": ("chest02", "chest03", "key03")}
    )
    state = GAME.fold(automatic(state), state)
    step = GAME.next_step(state)
    assert step == AwaitingChance(RollDice(2, 6, "roll paired Chests"))
    out = GAME.resolve(state, DiceRolled((5, 2)))
    assert out[0] == ev.ChestsRolled((ev.ChestRoll("ann", (5,)), ev.ChestRoll("bob", (2,))))
    end = out[1]
    assert isinstance(end, ev.MatchEnded)
    assert end.scores == {"ann": 5, "bob": 2}  # unpaired Key and Chest score 0
    assert end.winner == "ann"


def test_no_pairs_no_roll() -> None:
    state = three_rounds({"ann": ("key01",), "bob": ("chest02",)})
    out = automatic(state)
    assert isinstance(out[-1], ev.MatchEnded) and out[-1].scores == {"ann": 0, "bob": 0}


QUEST_OF = {"ann": "locksmith", "bob": "explorer"}


def test_end_unpaired_keys_and_chests_score_nothing_even_for_a_quest() -> None:
    """End of the Game: "For each Key paired with a Chest in your Stash, roll the Chest to
    see how much it's worth. Ignore unpaired Keys and Chests." A Quest's bonus counts
    pairs too: the Locksmith (5 a pair) with 3 Keys and 1 Chest has one pair, the
    Explorer (4 a pair) with 2 Chests and no Key has none."""
    loot = {"ann": ("key01", "key02", "key03", "chest01"), "bob": ("chest02", "chest03")}
    state = three_rounds(loot, quests=QUEST_OF)
    state = GAME.fold(automatic(state), state)
    assert GAME.next_step(state) == AwaitingChance(RollDice(1, 6, "roll paired Chests"))
    out = GAME.resolve(state, DiceRolled((4,)))
    assert out[0] == ev.ChestsRolled((ev.ChestRoll("ann", (4,)), ev.ChestRoll("bob", ())))
    state = GAME.fold(out, state)
    assert breakdown(state, "ann") == {
        "cubes": 0,
        "gems": 0,
        "chests": 4,
        "quest_bonus": 5,  # one pair, not three Keys
        "teamwork": 0,
    }
    assert breakdown(state, "bob")["quest_bonus"] == 0 and state.scores == {"ann": 9, "bob": 0}


@pytest.mark.parametrize("quest", sorted(CONTENT.quests))
def test_end_an_unpaired_key_or_chest_never_changes_a_score(quest: str) -> None:
    """Property: for every Quest and many stashes, one more Key where Keys already
    outnumber or equal Chests (or one more Chest the other way) changes no score."""
    rng = random.Random(quest)
    base = three_rounds({}, quests={"ann": quest, "bob": "jeweler"})
    kinds = [k for k in CONTENT.kinds if k not in CONTENT.solo_kinds]
    for _ in range(60):
        stash = tuple(rng.choice(CONTENT.cubes_of(rng.choice(kinds))) for _ in range(12))
        rolls = (3,) * pairs(stash)
        keys = sum(CONTENT.cubes[c] == "key" for c in stash)
        chests = sum(CONTENT.cubes[c] == "chest" for c in stash)
        extra = "key06" if keys >= chests else "chest06"
        before = replace(base, stash={"ann": stash, "bob": ()}, chest_rolls={"ann": rolls})
        after = replace(before, stash={"ann": (*stash, extra), "bob": ()})
        assert pairs((*stash, extra)) == pairs(stash)
        assert score(after, "ann") == score(before, "ann"), (stash, extra)


def test_a_quest_may_not_pay_for_keys_or_chests(tmp_path: Path) -> None:
    pack = yaml.safe_load(PACK.read_text())
    for kind in ("key", "chest"):
        locksmith = next(q for q in pack["quests"]["cards"] if q["id"] == "locksmith")
        locksmith["bonus"] = {kind: 3}
        bad = tmp_path / f"{kind}.yaml"
        bad.write_text(yaml.safe_dump(pack))
        with pytest.raises(ValueError, match="unpaired Keys and Chests are ignored"):
            load(bad)


def test_gems_score_per_quest_plus_the_quest_bonus() -> None:
    loot = {
        "ann": ("gem01", "crystal01", "gold01"),
        "bob": ("gem02", "crystal02", "troll01", "goblin01"),
    }
    state = GAME.fold(automatic(three_rounds(loot)), three_rounds(loot))
    # ann Jeweler: gem 2, crystal 4, gold 1
    assert breakdown(state, "ann") == {
        "cubes": 1,
        "gems": 6,
        "chests": 0,
        "quest_bonus": 0,
        "teamwork": 0,
    }
    # bob Monster Slayer: gem 1, crystal 2; troll 3 + goblin 1 points; bonus troll 2 + goblin 1
    assert breakdown(state, "bob") == {
        "cubes": 4,
        "gems": 3,
        "chests": 0,
        "quest_bonus": 3,
        "teamwork": 0,
    }
    assert state.scores == {"ann": 7, "bob": 10} and state.winner == "bob"
    assert isinstance(GAME.next_step(state), Finished)
    assert GAME.next_step(state).outcome.results == {"ann": "lost", "bob": "won"}  # type: ignore[union-attr]


def test_ties_go_to_the_highest_starting_initiative() -> None:
    loot = {"ann": ("gold01",), "bob": ("gold02",)}  # Gnome 1, Orc 9
    state = GAME.fold(automatic(three_rounds(loot)), three_rounds(loot))
    assert state.scores == {"ann": 1, "bob": 1} and state.winner == "bob"


def test_the_match_is_over_after_the_end() -> None:
    state = GAME.fold(automatic(three_rounds({})), three_rounds({}))
    assert state.phase == Phase.OVER
    assert GAME.legal_actions(state, "ann") == ()


# --- Teamwork -----------------------------------------------------------------------


def teamwork_loot(*cubes: Any) -> DungeonDropState:
    return given(
        ev.TurnStarted("ann", 1, 0),
        ev.AbilityEnded("ann"),
        players=THREE,
        variant="teamwork",
        table=room_table(*cubes),
    )


def test_teamwork_opponents_place_meeples_before_the_room_in_turn_order() -> None:
    state = teamwork_loot(at("gold01", 300, 280))
    assert state.phase == Phase.MEEPLES
    assert GAME.next_step(state).players == ("cid",)  # type: ignore[union-attr]
    assert GAME.legal_actions(state, "ann") == ()
    state = GAME.fold(GAME.decide(state, "cid", act.PlaceMeeple(300.0, 300.0)), state)
    assert GAME.next_step(state).players == ("bob",)  # type: ignore[union-attr]
    state = GAME.fold(GAME.decide(state, "bob", act.PlaceMeeple(700.0, 100.0)), state)
    assert state.phase == Phase.LOOT
    out = GAME.decide(state, "ann", act.LootRoom(ROOM))
    assert out[0].meeples == ("cid",)
    assert GAME.fold(out, state).teamwork == {"ann": 0, "bob": 0, "cid": 1}


def test_teamwork_meeple_off_the_table_refused() -> None:
    from services.games.contract import MalformedAction

    with pytest.raises(MalformedAction):
        GAME.decide(teamwork_loot(), "cid", act.PlaceMeeple(-5.0, 10.0))


def test_teamwork_meeples_score_one_point_each() -> None:
    state = given(players=THREE, variant="teamwork")
    state = GAME.fold([ev.RoomLooted("ann", ROOM, (), 0, 0, 0, 3, ("cid", "bob"))], state)
    assert breakdown(state, "cid")["teamwork"] == 1


# --- Solo (house rules) -------------------------------------------------------------


def test_solo_wins_at_the_target_score() -> None:
    solo = {"players": ("ann",), "variant": "solo"}
    loot = {"ann": (*(f"bullion{i:02d}" for i in range(1, 13)), "dragon01")}  # 36 + 6
    state = GAME.fold(automatic(three_rounds(loot, **solo)), three_rounds(loot, **solo))
    assert state.scores["ann"] >= CONTENT.solo_target
    assert GAME.next_step(state).outcome.results == {"ann": "won"}  # type: ignore[union-attr]
    state = GAME.fold(automatic(three_rounds({}, **solo)), three_rounds({}, **solo))
    assert GAME.next_step(state).outcome.results == {"ann": "lost"}  # type: ignore[union-attr]
