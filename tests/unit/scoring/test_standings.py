"""Standings rows are players by identity, bot levels and unclaimed seats: given the
MatchScored events of a game, when its standings are asked for, then each result counts
for the row its seat's holder makes."""

from __future__ import annotations

from services.scoring.standings import GameStandings
from tabletop.v1 import platform_events_pb2, scoring_pb2

ANN, BEN, BOTS_SERVICE = "player-ann", "player-ben", "player-bots"


def scored(
    results: dict[str, str],
    holders: dict[str, str] | None = None,
    names: dict[str, str] | None = None,
    bot_levels: dict[str, str] | None = None,
) -> platform_events_pb2.MatchScored:
    return platform_events_pb2.MatchScored(
        game="imperial_miners",
        results=results,
        holders=holders or {},
        names=names or {},
        bot_levels=bot_levels or {},
    )


def rows(*events: platform_events_pb2.MatchScored) -> dict[str, scoring_pb2.PlayerStanding]:
    standings = GameStandings()
    for event in events:
        standings.add(event)
    return {row.player: row for row in standings.reply("imperial_miners").players}


def test_a_player_is_one_row_whichever_seat_and_name_they_played_under() -> None:
    found = rows(
        scored({"p1": "won", "p2": "lost"}, {"p1": ANN, "p2": BEN}, {"p1": "Ann", "p2": "Ben"}),
        scored({"p1": "won", "p2": "lost"}, {"p1": BEN, "p2": ANN}, {"p1": "Ben", "p2": "Annie"}),
    )
    assert set(found) == {ANN, BEN}
    ann = found[ANN]
    assert (ann.played, ann.won, ann.lost) == (2, 1, 1)
    assert ann.display_name == "Annie"  # the name last shown
    assert ann.kind == scoring_pb2.PLAYER_KIND_PLAYER


def test_bot_seats_count_for_their_level_not_for_the_credential_that_played_them() -> None:
    found = rows(
        scored(
            {"p1": "lost", "p2": "won"},
            {"p1": ANN, "p2": BOTS_SERVICE},
            {"p1": "Ann", "p2": "bot"},
            {"p2": "hard"},
        ),
        scored(
            {"p1": "won", "p2": "lost", "p3": "lost"},
            {"p1": ANN, "p2": BOTS_SERVICE, "p3": BOTS_SERVICE},
            bot_levels={"p2": "hard", "p3": "easy"},
        ),
    )
    assert set(found) == {ANN, "bot:hard", "bot:easy"}
    hard = found["bot:hard"]
    assert (hard.played, hard.won, hard.lost) == (2, 1, 1)
    assert (hard.kind, hard.display_name) == (scoring_pb2.PLAYER_KIND_BOT, "bot (hard)")


def test_a_seat_no_player_held_is_a_row_of_its_own_by_seat_name() -> None:
    found = rows(scored({"red": "drawn", "blue": "drawn"}, {"blue": BEN}, {"red": "Red"}))
    assert found["red"].kind == scoring_pb2.PLAYER_KIND_SEAT
    assert (found["red"].display_name, found["red"].drawn) == ("Red", 1)
    assert found[BEN].kind == scoring_pb2.PLAYER_KIND_PLAYER


def test_matches_scored_before_holders_were_recorded_count_by_seat_name() -> None:
    found = rows(scored({"p1": "won"}), scored({"p1": "lost"}))
    assert set(found) == {"p1"}
    assert (found["p1"].played, found["p1"].display_name) == (2, "p1")


def test_a_snapshot_keeps_each_rows_kind_and_name() -> None:
    before = GameStandings()
    before.add(scored({"p1": "won", "p2": "lost"}, {"p1": ANN}, {"p1": "Ann"}, {"p2": "medium"}))
    after = GameStandings()
    for part in before.states("imperial_miners", players_per_part=1):
        after.merge(part)
    assert after.reply("imperial_miners") == before.reply("imperial_miners")
