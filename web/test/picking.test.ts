import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { LegalActionSchema } from "../src/gen/tabletop/v1/match_pb";
import { choose, describeValues, movesOffPicture, movesOnPicture, pointerKind, pointerValues } from "../src/picking";

function legal(label: string, targets: string[], affects: string[] = [], params: object[] = []) {
  return create(LegalActionSchema, { label, targets, affects, params } as never);
}

const loot = [
  legal("loot the room of Pillars 1, 2 and 3", ["p1", "p2", "p3"], ["gold1"]),
  legal("loot the room of Pillars 1, 3 and 4", ["p1", "p3", "p4"]),
  legal("leave empty-handed", []),
];
const rooms = movesOnPicture(loot);

test("a move without targets is not made on the picture, but in the bar above it", () => {
  assert.deepEqual(rooms.map((m) => m.label), ["loot the room of Pillars 1, 2 and 3", "loot the room of Pillars 1, 3 and 4"]);
  assert.deepEqual(movesOffPicture(loot).map((m) => m.label), ["leave empty-handed"]);
});

test("targets are picked in any order; the next picks are the candidates' other targets", () => {
  const start = choose(rooms, []);
  assert.deepEqual([...start.next].sort(), ["p1", "p2", "p3", "p4"]);
  const two = choose(rooms, ["p3", "p2"]);
  assert.deepEqual(two.candidates.map((m) => m.label), ["loot the room of Pillars 1, 2 and 3"]);
  assert.deepEqual([...two.next], ["p1"]);
  assert.equal(two.complete.length, 0);
  const all = choose(rooms, ["p3", "p2", "p1"]);
  assert.deepEqual(all.complete.map((m) => m.affects), [["gold1"]]);
  assert.equal(choose(rooms, ["p2", "p4"]).candidates.length, 0);
});

test("moves sharing their element are all complete together (the page offers them)", () => {
  const moves = movesOnPicture([legal("move up (costs 1 oxygen)", ["c3"]), legal("move up (costs 1 battery)", ["c3"])]);
  assert.equal(choose(moves, ["c3"]).complete.length, 2);
});

const flick = {
  name: "direction", low: 0, high: 360, unit: "degrees", picture: { measure: "angle", scale: 1, offset: 0 },
};
const strength = { name: "strength", low: 0, high: 1, unit: "", picture: { measure: "length", scale: 1 / 240, offset: 0 } };

test("a drag's angle is counter-clockwise with y up, wrapped into the range", () => {
  const up = pointerValues([flick], { x0: 10, y0: 10, x: 10, y: 0 });
  assert.equal(Math.round(up.direction), 90);
  const downLeft = pointerValues([flick], { x0: 0, y0: 0, x: -1, y: 1 });
  assert.equal(Math.round(downLeft.direction), 225);
  const shifted = pointerValues([{ ...flick, picture: { measure: "angle", scale: 1, offset: 400 } }], { x0: 0, y0: 0, x: 1, y: 0 });
  assert.equal(Math.round(shifted.direction), 40);
});

test("a drag's length is clamped into the range, and read as a player reads it", () => {
  const half = pointerValues([strength], { x0: 0, y0: 0, x: 120, y: 0 });
  assert.equal(half.strength, 0.5);
  const far = pointerValues([flick, strength], { x0: 0, y0: 0, x: 0, y: -999 });
  assert.equal(far.strength, 1);
  assert.equal(describeValues([flick, strength], far), "direction 90°, strength 100%");
});

test("a point is the picture's x and y through the axis (y flipped for the table)", () => {
  const params = [
    { name: "x", low: 0, high: 500, unit: "mm", picture: { measure: "x", scale: 1, offset: 0 } },
    { name: "y", low: 0, high: 400, unit: "mm", picture: { measure: "y", scale: -1, offset: 450 } },
  ];
  assert.deepEqual(pointerValues(params, { x0: 0, y0: 0, x: 30, y: 100 }), { x: 30, y: 350 });
  assert.deepEqual(pointerValues(params, { x0: 0, y0: 0, x: -5, y: 0 }), { x: 0, y: 400 });
  const move = movesOnPicture([legal("put your meeple on the table", ["table"], [], params)])[0];
  assert.equal(pointerKind(move), "point");
});

test("a parameter without a picture axis keeps its move off the picture (buttons set it)", () => {
  const moves = movesOnPicture([legal("drop", ["table"], [], [{ name: "x", low: 0, high: 1 }])]);
  assert.equal(moves.length, 0);
});
