import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { TalkChannel, TalkMessageSchema } from "../src/gen/tabletop/v1/talk_pb";
import { MAX_TALK_BYTES, bytesLeft, talkLine } from "../src/talk";

test("a line names its author, a spectator marked as such", () => {
  const seat = create(TalkMessageSchema, {
    channel: TalkChannel.PLAYERS,
    seat: "ann",
    displayName: "Ann",
    text: "dig left",
  });
  assert.equal(talkLine(seat), "Ann: dig left");
  const fan = create(TalkMessageSchema, { channel: TalkChannel.SPECTATORS, displayName: "Fan", text: "go" });
  assert.equal(talkLine(fan), "Fan (spectator): go");
  assert.equal(talkLine(create(TalkMessageSchema, { seat: "bo", text: "hi" })), "bo: hi");
});

test("the bound is counted in UTF-8 bytes, as the gateway counts it", () => {
  assert.equal(bytesLeft(""), MAX_TALK_BYTES);
  assert.equal(bytesLeft("a".repeat(500)), 0);
  assert.equal(bytesLeft("é".repeat(250)), 0);
  assert.equal(bytesLeft("é".repeat(251)), -2);
});
