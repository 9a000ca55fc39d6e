import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { MatchClockSchema, SeatClockSchema } from "../src/gen/tabletop/v1/match_pb";
import { clockLine, duration, seatTimes } from "../src/clock";

const clock = create(MatchClockSchema, {
  control: "live:10m+5s",
  onTimeout: "bot",
  sinceMs: 1_000_000n,
  seats: [
    create(SeatClockSchema, { seat: "ann", remainingMs: 600_000n, deadlineMs: 1_600_000n }),
    create(SeatClockSchema, { seat: "bob", remainingMs: 75_000n, timeouts: 1 }),
  ],
});

test("a running seat counts down to its deadline; a waiting one shows its bank", () => {
  const [ann, bob] = seatTimes(clock, 1_019_000);
  assert.deepEqual([ann.text, ann.running, ann.low], ["9:41", true, false]);
  assert.deepEqual([bob.text, bob.running], ["1:15", false]);
  assert.equal(seatTimes(clock, 1_590_000)[0].low, true);
  assert.equal(clockLine(clock, 1_019_000), "Clock live:10m+5s (on timeout: bot) · ann ▶ 9:41 · bob 1:15 (1 timeouts)");
});

test("long times read in hours and days, and time past the deadline as zero", () => {
  assert.equal(duration(2 * 86_400_000 + 3 * 3_600_000), "2d03h");
  assert.equal(duration(3_900_000), "1h05m");
  assert.equal(duration(-5), "0:00");
});
