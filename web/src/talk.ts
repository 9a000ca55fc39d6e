// Table talk on the match page: the match's talk as this page's token may read it (WatchTalk,
// resumed after the last message seen when the stream is cut), and a line to post to it
// (PostTalk: a seat to the players, a spectator to the spectators, who seats read only once
// the match is over). Drillit! is played by talking, so the panel sits beside the moves and
// Enter posts. Text is shown as text, never as markup.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Gateway } from "./gen/tabletop/v1/gateway_pb";
import type { ReplayStep } from "./gen/tabletop/v1/gateway_pb";
import { type TalkMessage, TalkChannel } from "./gen/tabletop/v1/talk_pb";
import { bdi } from "./names";

/** The gateway's bound on a message, in UTF-8 bytes. */
export const MAX_TALK_BYTES = 500;

type GatewayClient = Client<typeof Gateway>;

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing`);
  return element as T;
}

/** A message as a line of the log: "ann: dig left", a spectator marked as such. */
export function talkLine(m: TalkMessage): string {
  const who = m.displayName || m.seat || "?";
  const spectator = m.channel === TalkChannel.SPECTATORS ? " (spectator)" : "";
  return `${who}${spectator}: ${m.text}`;
}

/** How many more bytes the gateway takes after ``text`` (negative: too long). */
export function bytesLeft(text: string): number {
  return MAX_TALK_BYTES - new TextEncoder().encode(text).length;
}

function entry(m: TalkMessage): HTMLLIElement {
  const li = document.createElement("li");
  // talkLine's text, its author's name isolated (names.ts)
  const spectator = m.channel === TalkChannel.SPECTATORS ? " (spectator)" : "";
  li.append(bdi(m.displayName || m.seat || "?"), `${spectator}: ${m.text}`);
  li.dataset.sequence = String(m.sequence);
  if (m.channel === TalkChannel.SPECTATORS) li.className = "spectator";
  return li;
}

export class TalkPanel {
  private seen = 0n;

  constructor(
    private readonly gateway: GatewayClient,
    private readonly matchId: string,
    private readonly headers: Record<string, string>,
    private readonly seat: string,
    private readonly signal: AbortSignal,
    private readonly describe: (error: unknown) => string,
  ) {
    byId("talk-log").replaceChildren();
    byId("talk-error").textContent = "";
    const text = byId<HTMLInputElement>("talk-text");
    text.value = "";
    byId("talk-name-label").hidden = seat !== "";
    if (seat) byId("talk-who").replaceChildren("You talk as ", bdi(seat), ", to everyone at the table.");
    else
      byId("talk-who").textContent =
        "You talk as a spectator, to the spectators (the players read it once the match is over).";
    this.showLeft();
  }

  /** Follow the talk until the page leaves the match; a cut stream resumes where it was. */
  async follow(): Promise<void> {
    let wait = 500;
    while (!this.signal.aborted) {
      try {
        for await (const m of this.gateway.watchTalk(
          { matchId: this.matchId, afterSequence: this.seen },
          { headers: this.headers, signal: this.signal },
        )) {
          this.add(m);
          wait = 500;
        }
      } catch (error) {
        if (this.signal.aborted) return;
        const code = ConnectError.from(error).code;
        if (code === Code.Unauthenticated || code === Code.PermissionDenied) return;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, 10_000);
    }
  }

  private add(m: TalkMessage): void {
    if (m.sequence <= this.seen) return;
    this.seen = m.sequence;
    const log = byId("talk-log");
    log.append(entry(m));
    log.scrollTop = log.scrollHeight;
  }

  showLeft(): void {
    const left = bytesLeft(byId<HTMLInputElement>("talk-text").value);
    const counter = byId("talk-left");
    counter.textContent = left < 100 ? `${left} left` : "";
    counter.className = left < 0 ? "bad" : "";
  }

  async post(): Promise<void> {
    const input = byId<HTMLInputElement>("talk-text");
    const text = input.value.trim();
    const error = byId("talk-error");
    if (!text) return;
    if (bytesLeft(text) < 0) {
      error.textContent = `A message is at most ${MAX_TALK_BYTES} bytes.`;
      return;
    }
    const displayName = this.seat ? "" : byId<HTMLInputElement>("talk-name").value.trim();
    try {
      await this.gateway.postTalk(
        { matchId: this.matchId, text, displayName },
        { headers: this.headers },
      );
      input.value = "";
      error.textContent = "";
      this.showLeft();
    } catch (refused) {
      error.textContent = `Not said: ${this.describe(refused)}`;
    }
  }
}

/** The replay's talk: every message of steps 1..n (what had been said by then). */
export function showReplayTalk(steps: ReplayStep[], n: number): void {
  const said = steps.slice(0, n).flatMap((s) => s.talk);
  byId("replay-talk").replaceChildren(...said.map(entry));
  byId("replay-talk").hidden = said.length === 0;
}
