import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { GameActionSchema } from "../src/gen/tabletop/v1/games_pb";
import type { LegalAction } from "../src/gen/tabletop/v1/match_pb";
import { LegalActionSchema } from "../src/gen/tabletop/v1/match_pb";
import { paramsOf, withParams } from "../src/params";

function move(room: number) {
  return create(GameActionSchema, {
    game: { case: "drillit", value: { action: { case: "move", value: { room } } } },
  });
}

test("a parameter sets the chosen action's field, rounded for integers", () => {
  const template = move(0);
  const filled = withParams(template, [{ name: "room", low: 1, high: 5 }], { room: 3.4 });
  assert.equal(filled.game.case, "drillit");
  const inner = filled.game.case === "drillit" ? filled.game.value.action : undefined;
  assert.equal(inner?.case, "move");
  assert.equal(inner?.case === "move" ? inner.value.room : -1, 3);
  assert.equal(template.game.case === "drillit" && template.game.value.action.case === "move" ? template.game.value.action.value.room : -1, 0, "the template is not changed");
});

test("a value outside the range is clamped", () => {
  const filled = withParams(move(0), [{ name: "room", low: 1, high: 5 }], { room: 99 });
  assert.equal(filled.game.case === "drillit" && filled.game.value.action.case === "move" ? filled.game.value.action.value.room : -1, 5);
});

test("a parameter the action does not have is an error, not a silent no-op", () => {
  assert.throws(() => withParams(move(0), [{ name: "angle", low: 0, high: 1 }], { angle: 0.5 }), /no number field angle/);
});

test("a concrete action has no parameters", () => {
  const legal: LegalAction = create(LegalActionSchema, { action: move(2), label: "move to room 2" });
  assert.deepEqual(paramsOf(legal), []);
});
