import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { GetStandingsReplySchema, PlayerKind } from "../src/gen/tabletop/v1/scoring_pb";
import { standingsRows } from "../src/standings";

const reply = create(GetStandingsReplySchema, {
  game: "imperial_miners",
  players: [
    { player: "p-ann", displayName: "Ann", kind: PlayerKind.PLAYER, played: 3, won: 2, lost: 1 },
    { player: "bot:hard", displayName: "bot (hard)", kind: PlayerKind.BOT, played: 3, won: 1, lost: 2 },
    { player: "red", displayName: "Red", kind: PlayerKind.SEAT, played: 1, drawn: 1 },
  ],
});

test("rows keep scoring's order, name each kind and mark the viewer's own", () => {
  const rows = standingsRows(reply, "p-ann");
  assert.deepEqual(
    rows.map((r) => [r.rank, r.name, r.mine]),
    [
      [1, "Ann", true],
      [2, "bot (hard)", false],
      [3, "Red (seat)", false],
    ],
  );
  assert.deepEqual([rows[0].played, rows[0].won, rows[0].lost, rows[0].drawn], [3, 2, 1, 0]);
});

test("a seat named like the viewer's id is not the viewer's row", () => {
  const rows = standingsRows(reply, "red");
  assert.ok(rows.every((r) => !r.mine));
});
