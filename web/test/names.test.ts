import assert from "node:assert/strict";
import { test } from "node:test";
import { isolate } from "../src/names";

test("a name is isolated, so its direction cannot spill into the text around it", () => {
  const spoof = "evil\u202e"; // a right-to-left override the gateway would refuse
  assert.equal(isolate(spoof), "\u2068evil\u202e\u2069");
  assert.equal(`Join as ${isolate("ann")}`, "Join as \u2068ann\u2069");
});
