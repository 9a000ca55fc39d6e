// Tabletop in a browser: the lobby, a match's board (an SVG the gateway draws of exactly the
// view this page's token may see), its legal moves played on the picture (onboard.ts) and as
// buttons, live updates (WatchMatch), a replay scrubber (ReplayMatchBatches + GetPicture at a
// version) and a finished match's verification. Every call is gRPC-Web to the gateway's own servicers, with the same tokens.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import type { LegalAction, MatchSummary, MatchView } from "./gen/tabletop/v1/match_pb";
import { MatchStatus } from "./gen/tabletop/v1/match_pb";
import type { GameAction } from "./gen/tabletop/v1/games_pb";
import { GameViewSchema } from "./gen/tabletop/v1/games_pb";
import type { Picture, ReplayStep } from "./gen/tabletop/v1/gateway_pb";
import { Gateway } from "./gen/tabletop/v1/gateway_pb";
import { PictureMoves } from "./onboard";
import { paramsOf, withParams } from "./params";
import { session } from "./player";
import { boardImageUrl } from "./picture";
import { bdi, isolate } from "./names";
import { seatTimes } from "./clock";
import { sanitizeSvg } from "./sanitize";
import { fillStandings } from "./standings";
import { TalkPanel, showReplayTalk } from "./talk";
import { type Tokens, loadTokens, saveTokens } from "./tokens";
import { Zoom } from "./zoom";

const gateway = createClient(Gateway, createGrpcWebTransport({ baseUrl: location.origin }));

function $<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing`);
  return element as T;
}

function auth(token: string | undefined): { headers: Record<string, string> } {
  return { headers: token ? { authorization: `Bearer ${token}` } : {} };
}

/** The player's session as headers: the lobby's calls are the player's own. */
async function asPlayer(): Promise<{ headers: Record<string, string> }> {
  return auth((await session(gateway)).accessToken);
}

function say(message: string): void {
  $("status").textContent = message;
}

/** A refusal as a player reads it: the gateway's message and the reason code. */
export function describeError(error: unknown): string {
  const e = ConnectError.from(error);
  const reason = e.metadata.get("tabletop-reason") ?? Code[e.code];
  return `${e.rawMessage} [${reason}]`;
}

function showError(error: unknown): void {
  $("error").textContent = error ? `Refused: ${describeError(error)}` : "";
}

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function list(text: string): string[] {
  return text.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
}

/** A button; a label of parts shows each name in it as a <bdi> (names.ts). */
function button(label: string | (string | Node)[], onClick: () => void, id?: string): HTMLButtonElement {
  const b = document.createElement("button");
  b.type = "button";
  b.append(...(typeof label === "string" ? [label] : label));
  if (id) b.id = id;
  b.addEventListener("click", onClick);
  return b;
}

// -- lobby --------------------------------------------------------------------------------
const GAMES = GameViewSchema.fields.map((f) => f.name);

function setUpLobby(): void {
  const select = $<HTMLSelectElement>("create-game");
  for (const game of GAMES) select.append(new Option(game, game));
  $("create-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void createMatch();
  });
  $("join-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void joinSeat($<HTMLInputElement>("join-match").value.trim(), $<HTMLInputElement>("join-seat").value.trim());
  });
  $("spectate-button").addEventListener("click", () => {
    void spectate($<HTMLInputElement>("join-match").value.trim());
  });
  $("refresh").addEventListener("click", () => {
    void listMatches();
    void listMine();
    void listStandings();
  });
  const standingsGame = $<HTMLSelectElement>("standings-game");
  for (const game of GAMES) standingsGame.append(new Option(game, game));
  standingsGame.addEventListener("change", () => void listStandings());
}

/** The chosen game's standings (public), the player's own row marked. */
async function listStandings(): Promise<void> {
  const body = $("standings").querySelector("tbody");
  if (!body) return;
  try {
    const game = $<HTMLSelectElement>("standings-game").value;
    const reply = await gateway.getStandings({ game });
    fillStandings(body, reply, (await session(gateway)).playerId);
  } catch (error) {
    say(`Could not load the standings: ${describeError(error)}`);
  }
}

async function createMatch(): Promise<void> {
  const players = list($<HTMLInputElement>("create-seats").value);
  const bots = list($<HTMLInputElement>("create-bots").value);
  const level = $<HTMLSelectElement>("create-bot-level").value;
  const options: Record<string, string> = {};
  for (const pair of list($<HTMLInputElement>("create-options").value)) {
    const [key, ...value] = pair.split("=");
    options[key.trim()] = value.join("=").trim();
  }
  const clock = $<HTMLInputElement>("create-clock").value.trim();
  if (clock) {
    options.clock = clock; // the gateway checks it and says why when it cannot be read
    options.on_timeout = $<HTMLSelectElement>("create-on-timeout").value;
  }
  try {
    const reply = await gateway.createMatch(
      {
        game: $<HTMLSelectElement>("create-game").value,
        players,
        bots,
        // every bot seat at the chosen level: the bots service plays seats with a level
        botLevels: Object.fromEntries(bots.map((seat) => [seat, level])),
        options,
        private: $<HTMLInputElement>("create-private").checked,
        commandId: randomId(),
      },
      await asPlayer(),
    );
    saveTokens(reply.matchId, { ...loadTokens(reply.matchId), creator: reply.creatorToken });
    $<HTMLInputElement>("join-match").value = reply.matchId;
    const created = $("created");
    created.replaceChildren(`Created match ${reply.matchId}. Take a seat: `);
    for (const seat of players.filter((p) => !bots.includes(p))) {
      created.append(button(["Play as ", bdi(seat)], () => void joinSeat(reply.matchId, seat)));
    }
    say(`Created a ${$<HTMLSelectElement>("create-game").value} match`);
    void listMatches();
    void listMine();
  } catch (error) {
    say(`Could not create the match: ${describeError(error)}`);
  }
}

async function joinSeat(matchId: string, seat: string): Promise<void> {
  const tokens = loadTokens(matchId);
  try {
    // as the player: a free seat, or its own seat again (from this device or another)
    const reply = await gateway.joinMatch(
      { matchId, seat, displayName: $<HTMLInputElement>("join-name").value.trim() },
      await asPlayer(),
    );
    saveTokens(matchId, { ...tokens, seat: reply.seat, seatToken: reply.token, watching: false });
    openMatch(matchId);
  } catch (error) {
    say(`Could not take the seat: ${describeError(error)}`);
  }
}

async function spectate(matchId: string): Promise<void> {
  const tokens = loadTokens(matchId);
  try {
    const reply = await gateway.joinMatch(
      { matchId, spectate: true },
      tokens.creator || tokens.seatToken ? auth(tokens.creator ?? tokens.seatToken) : await asPlayer(),
    );
    saveTokens(matchId, { ...tokens, spectator: reply.token, watching: true });
    openMatch(matchId);
  } catch (error) {
    say(`Could not watch: ${describeError(error)}`);
  }
}

function statusText(status: MatchStatus): string {
  return status === MatchStatus.FINISHED ? "finished" : status === MatchStatus.ACTIVE ? "in play" : "—";
}

/** "bot (hard)" for a seat the bots service plays at a level, "bot" for one its creator's bot plays */
function botLabel(seat: string, levels: Record<string, string>): string {
  return levels[seat] ? `bot (${levels[seat]})` : "bot";
}

/** how a seat given up stands (MatchSummary.seat_states) */
const VACATED: Record<string, string> = { left: "left, to be handed over", open: "open to a new player" };

/** who sits at each seat, as the lobby and the table show it: each name a <bdi> */
function seatsLine(summary: MatchSummary): (string | Node)[] {
  const parts: (string | Node)[] = [];
  summary.players.forEach((p, i) => {
    const state = summary.seatStates[p] ?? "";
    parts.push(i ? ", " : "", bdi(p), ": ");
    if (VACATED[state]) parts.push(VACATED[state]);
    else if (summary.bots.includes(p)) parts.push(botLabel(p, summary.botLevels));
    else if (p in summary.seats) parts.push(bdi(summary.seats[p]));
    else parts.push("free");
  });
  return parts;
}

/** the seats a player may join: never joined (no bot's), or opened after a hand-over */
function freeSeats(summary: MatchSummary): string[] {
  return summary.players.filter(
    (p) => (!(p in summary.seats) && !summary.bots.includes(p)) || summary.seatStates[p] === "open",
  );
}

/** the most matches the lobby lists (ListMatches allows 200 a page) */
const LOBBY_PAGE = 200;

async function listMatches(): Promise<void> {
  const body = $("matches").querySelector("tbody");
  if (!body) return;
  try {
    // Matches in play only (a finished one has nothing to join), those with a free seat
    // first: the server pages by match id, so a page of every match showed an arbitrary
    // 50, and a match created a moment ago was often not among them.
    const reply = await gateway.listMatches({ status: MatchStatus.ACTIVE, pageSize: LOBBY_PAGE });
    const matches = [...reply.matches].sort(
      (a, b) => Number(freeSeats(b).length > 0) - Number(freeSeats(a).length > 0),
    );
    body.replaceChildren();
    for (const summary of matches) {
      const row = body.insertRow();
      row.insertCell().textContent = summary.game;
      row.insertCell().textContent = summary.matchId;
      row.insertCell().textContent = statusText(summary.status);
      row.insertCell().append(...seatsLine(summary));
      const open = row.insertCell();
      open.append(button("Watch", () => void spectate(summary.matchId)));
      for (const seat of freeSeats(summary)) {
        open.append(button(["Join as ", bdi(seat)], () => void joinSeat(summary.matchId, seat)));
      }
    }
    if (reply.matches.length === 0) body.insertRow().insertCell().textContent = "No public matches in play.";
  } catch (error) {
    say(`Could not list the matches: ${describeError(error)}`);
  }
}

/** The player's own matches (created or seated in), in play and finished. */
async function listMine(): Promise<void> {
  const body = $("my-matches").querySelector("tbody");
  if (!body) return;
  try {
    const reply = await gateway.listMatches({ mine: true, pageSize: LOBBY_PAGE }, await asPlayer());
    body.replaceChildren();
    for (const summary of reply.matches) {
      const row = body.insertRow();
      row.insertCell().textContent = summary.game;
      row.insertCell().textContent = summary.matchId;
      row.insertCell().textContent = statusText(summary.status);
      const yours = row.insertCell();
      summary.yourSeats.forEach((seat, i) => yours.append(i ? ", " : "", bdi(seat)));
      if (!summary.yourSeats.length) yours.textContent = "—";
      const open = row.insertCell();
      for (const seat of summary.yourSeats) {
        open.append(button(["Play as ", bdi(seat)], () => void joinSeat(summary.matchId, seat)));
      }
      open.append(button("Watch", () => void spectate(summary.matchId)));
    }
    if (reply.matches.length === 0) body.insertRow().insertCell().textContent = "None yet.";
  } catch (error) {
    say(`Could not list your matches: ${describeError(error)}`);
  }
}

// -- a match ------------------------------------------------------------------------------
interface Current {
  matchId: string;
  tokens: Tokens;
  token: string | undefined;
  seat: string;
  live: MatchView | undefined;
  steps: ReplayStep[] | undefined; // set while replaying
  stop: AbortController;
  drawn: number; // the newest picture request, so a slow reply never overwrites a newer one
  legal: LegalAction[]; // the moves offered now (buttons and picture)
  talk: TalkPanel; // the table's talk (talk.ts)
  seatsShownAt: number; // when the seats line was last looked up (ms)
  seatsAgain?: ReturnType<typeof setTimeout>; // the next look, when one is due
}

let current: Current | undefined;

function openMatch(matchId: string): void {
  current?.stop.abort();
  const tokens = loadTokens(matchId);
  const seat = tokens.watching ? "" : (tokens.seat ?? "");
  const token = seat ? tokens.seatToken : (tokens.spectator ?? tokens.creator);
  const stop = new AbortController();
  current = {
    matchId,
    tokens,
    seat,
    token,
    live: undefined,
    steps: undefined,
    stop,
    drawn: 0,
    legal: [],
    talk: new TalkPanel(gateway, matchId, auth(token).headers, seat, stop.signal, describeError),
    seatsShownAt: 0,
  };
  if (location.hash !== `#match/${matchId}`) history.pushState(null, "", `#match/${matchId}`);
  $("lobby").hidden = true;
  $("match").hidden = false;
  $("match-h").textContent = `Match ${matchId}`;
  $("replay-controls").hidden = true;
  $("verify-section").hidden = true;
  $("actions").replaceChildren();
  // the line is there before the picture is drawn: filled in later, it moves nothing
  $("match-seats").textContent = "Seats: …";
  $("seat-controls").replaceChildren();
  showError(undefined);
  say(seat ? `You play ${isolate(seat)}` : "You watch as a spectator");
  $("replay-talk").hidden = true;
  void watch(current);
  void current.talk.follow();
}

function showLobby(): void {
  current?.stop.abort();
  current = undefined;
  $("match").hidden = true;
  $("lobby").hidden = false;
  void listMatches();
  void listMine();
  void listStandings();
}

// A stream cut short (a gateway restarted, the network dropped) is opened again after a
// growing pause, resumed after the newest version this page has: it sends no view twice.
async function watch(c: Current): Promise<void> {
  let pause = 500;
  while (!c.stop.signal.aborted) {
    try {
      for await (const view of gateway.watchMatch(
        { matchId: c.matchId, afterVersion: c.live?.version ?? 0n },
        { ...auth(c.token), signal: c.stop.signal },
      )) {
        pause = 500;
        await onView(c, view);
      }
      if (c.live?.status === MatchStatus.FINISHED) return;
    } catch (error) {
      if (c.stop.signal.aborted) return;
      const code = ConnectError.from(error).code;
      if (code === Code.Unauthenticated || code === Code.PermissionDenied || code === Code.NotFound) {
        showError(error);
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, pause)); // reconnect
    pause = Math.min(pause * 2, 10_000);
  }
}

async function onView(c: Current, view: MatchView): Promise<void> {
  if (c !== current) return;
  c.live = view;
  const next = view.next?.players.map(isolate).join(", ") || view.next?.chance || "—";
  const finished = view.status === MatchStatus.FINISHED;
  const info: (string | Node)[] = [`${view.game} · version ${view.version} · ${statusText(view.status)}`];
  if (finished) {
    info.push(" · results: ");
    Object.entries(view.results).forEach(([p, r], i) => info.push(i ? ", " : "", bdi(p), ` ${r}`));
    if (view.endReason) info.push(` (${view.endReason})`);
  } else info.push(` · next: ${next}`);
  info.push(" · you: ", c.seat ? bdi(c.seat) : "spectator");
  $("match-info").replaceChildren(...info);
  showClock(c);
  if (!c.steps) await drawPicture(c, undefined);
  void showSeats(c, view.game);
  await refreshActions(c, view);
  if (finished) void verify(c, view);
}

/** The seats' clocks, counted down each second while the game waits for them. */
function showClock(c: Current): void {
  const line = $("match-clock");
  const clock = c.live?.clock;
  line.hidden = !clock;
  if (!clock || c !== current) return;
  const times = seatTimes(clock, Date.now());
  line.replaceChildren(`Clock ${clock.control} (on timeout: ${clock.onTimeout}):`);
  for (const t of times) {
    const seat = document.createElement("span");
    seat.className = `seat-clock${t.running ? " running" : ""}${t.low ? " low" : ""}`;
    seat.dataset.seat = t.seat;
    seat.textContent = ` ${isolate(t.seat)} ${t.running ? "▶ " : ""}${t.text}` + (t.timeouts ? ` (${t.timeouts} timeouts)` : "");
    line.append(seat);
  }
}

setInterval(() => {
  if (current?.live?.clock && current.live.status !== MatchStatus.FINISHED) showClock(current);
}, 1000);

/** how often the table looks its seats up again (who joined, left, was handed a seat) */
const SEATS_EVERY_MS = 10_000;

/** The match's seats with their players and bots' levels, from its lobby entry (listed to a
 * token of the match also when it is private). */
async function showSeats(c: Current, game: string): Promise<void> {
  const wait = c.seatsShownAt + SEATS_EVERY_MS - Date.now();
  if (wait > 0) {
    // a seat left or handed over meanwhile shows at the next look, even if no view comes
    c.seatsAgain ??= setTimeout(() => {
      c.seatsAgain = undefined;
      if (c === current) void showSeats(c, game);
    }, wait);
    return;
  }
  c.seatsShownAt = Date.now();
  let pageToken = "";
  try {
    for (let page = 0; page < 10; page++) {
      const reply = await gateway.listMatches({ game, pageSize: LOBBY_PAGE, pageToken }, auth(c.token));
      const found = reply.matches.find((m) => m.matchId === c.matchId);
      if (found) {
        if (c === current) {
          $("match-seats").replaceChildren("Seats: ", ...seatsLine(found));
          showSeatControls(c, found);
        }
        return;
      }
      pageToken = reply.nextPageToken;
      if (!pageToken) return;
    }
  } catch {
    // the seats line is a courtesy: the match plays on without it
  }
}

/** The seat's holder may give it up (Leave); a seat given up may be handed over, to a bot or
 * to a new player, by the match's creator or a player seated in it (the gateway refuses
 * anyone else, with a reason shown here). Both are events every player sees. */
function showSeatControls(c: Current, summary: MatchSummary): void {
  const controls = $("seat-controls");
  const shown: HTMLElement[] = [];
  const playing = summary.status !== MatchStatus.FINISHED;
  if (playing && c.seat && summary.seatStates[c.seat] === "held") {
    shown.push(button(["Leave seat ", bdi(c.seat)], () => void leaveSeat(c), "leave-seat"));
  }
  if (playing && (c.seat || c.tokens.creator)) {
    for (const [seat, state] of Object.entries(summary.seatStates)) {
      if (state !== "left" && state !== "open") continue;
      shown.push(button(["Give ", bdi(seat), " to a bot"], () => void handOver(c, seat, "easy")));
      if (state === "left") shown.push(button(["Open ", bdi(seat), " to a new player"], () => void handOver(c, seat)));
    }
  }
  controls.replaceChildren(...shown);
}

async function leaveSeat(c: Current): Promise<void> {
  if (!confirm(`Leave ${isolate(c.seat)}? Your seat's tokens stop working; the table may hand it to a bot or a new player.`)) return;
  try {
    await gateway.leaveSeat({ matchId: c.matchId, seat: c.seat }, auth(c.token));
    saveTokens(c.matchId, { ...c.tokens, seat: undefined, seatToken: undefined });
    say(`You left ${isolate(c.seat)}`);
    await spectate(c.matchId);
  } catch (error) {
    showError(error);
  }
}

async function handOver(c: Current, seat: string, botLevel?: string): Promise<void> {
  try {
    await gateway.handOverSeat(
      {
        matchId: c.matchId,
        seat,
        to: botLevel ? { case: "botLevel", value: botLevel } : { case: "open", value: true },
      },
      await asPlayer(),
    );
    say(botLevel ? `${isolate(seat)} goes to a bot (${botLevel})` : `${isolate(seat)} is open to a new player`);
    c.seatsShownAt = 0;
    void showSeats(c, c.live?.game ?? "");
  } catch (error) {
    showError(error);
  }
}

async function drawPicture(c: Current, version: bigint | undefined): Promise<void> {
  const ticket = ++c.drawn;
  let picture: Picture;
  try {
    picture = await gateway.getPicture({ matchId: c.matchId, version }, auth(c.token));
  } catch (error) {
    showError(error);
    return;
  }
  if (ticket !== c.drawn || c !== current) return;
  const board = $("board");
  const who = picture.viewer || "a spectator";
  const label = `The ${picture.game} board at version ${picture.version}, as ${who} sees it`;
  const svg = picture.svg ? sanitizeSvg(picture.svg, PICTURE_IDS) : null;
  onBoard.clear();
  board.dataset.moves = ""; // none offered on this picture yet
  zoom.attach(svg ?? undefined);
  if (svg) {
    const scroller = document.createElement("div");
    scroller.className = "scroller";
    scroller.append(svg);
    board.replaceChildren(scroller);
    keepLegible(svg);
  } else if (picture.svg) {
    // Not parsable as a document: an image still shows it (and can run nothing).
    const img = new Image();
    img.src = boardImageUrl(picture.svg);
    img.alt = label;
    board.replaceChildren(img);
  } else {
    board.replaceChildren();
  }
  board.hidden = !picture.svg;
  board.setAttribute("aria-label", label);
  $<HTMLDetailsElement>("text-details").open = !picture.svg;
  $("board-text").textContent = picture.text;
  $("board-caption").textContent = `Version ${picture.version}, as ${who} sees it`;
  $("board-area").dataset.version = String(picture.version);
}

/** The smallest size (CSS px) a picture's text renders at on a wide screen: a picture too
 * wide for its box at that size scrolls sideways instead of shrinking further (an Imperial
 * Miners Mine grows wide). Small print in zoom pieces is the magnifier's (zoom.ts); a phone
 * shows the whole picture and its owner zooms. */
const LEGIBLE_PX = 11;

function keepLegible(svg: SVGSVGElement): void {
  const width = svg.viewBox.baseVal?.width;
  if (!width || !matchMedia("(min-width: 40rem)").matches) return;
  const sizes = Array.from(svg.querySelectorAll("text"))
    .filter((t) => !t.closest(".zoom") && t.textContent?.trim())
    .map((t) => parseFloat(getComputedStyle(t).fontSize))
    .filter((size) => size > 0);
  // one px more: layout rounds the scale a hair below the exact ratio
  if (sizes.length) svg.style.minWidth = `${Math.ceil((width * LEGIBLE_PX) / Math.min(...sizes)) + 1}px`;
}

async function refreshActions(c: Current, view: MatchView): Promise<void> {
  const actions = $("actions");
  const turn = $("turn");
  c.legal = [];
  delete actions.dataset.version; // the version the moves listed are legal at (when listed)
  showUndo(c, false);
  if (!c.seat) {
    actions.replaceChildren();
    turn.textContent = "Spectators watch; only seats move.";
    return;
  }
  if (view.status === MatchStatus.FINISHED) {
    actions.replaceChildren();
    turn.textContent = "The match is over.";
    return;
  }
  if (!view.next?.players.includes(c.seat)) {
    if (actions.contains(document.activeElement)) turn.focus();
    actions.replaceChildren();
    turn.textContent = `Waiting for ${view.next?.players.map(isolate).join(", ") || view.next?.chance || "the board"}.`;
    // a move just made (a secret choice, say) may still be taken back while others play
    try {
      const legal = await gateway.getLegalActions({ matchId: c.matchId }, auth(c.token));
      if (c === current && c.live === view) showUndo(c, legal.canUndo);
    } catch {
      // the Undo button is a courtesy: waiting goes on without it
    }
    return;
  }
  try {
    const legal = await gateway.getLegalActions({ matchId: c.matchId }, auth(c.token));
    if (c !== current || c.live !== view) return; // a newer view came meanwhile
    showUndo(c, legal.canUndo);
    c.legal = legal.actions;
    showActions(c, legal.actions);
    actions.dataset.version = String(legal.version);
    // On the picture only if it shows the very version the moves are legal at.
    const svg = $("board").querySelector("svg");
    const same = $("board-area").dataset.version === String(legal.version);
    if (svg && !c.steps && same) onBoard.offer(svg, legal.actions);
    $("board").dataset.moves = same ? String(legal.version) : ""; // the version offered
  } catch (error) {
    showError(error);
  }
}

function showActions(c: Current, legal: LegalAction[]): void {
  // A keyboard user who just moved keeps the focus in the list when it is redrawn.
  const hadFocus = $("actions").contains(document.activeElement);
  $("turn").textContent = legal.length ? `Your move, ${isolate(c.seat)}:` : "No move available.";
  $("actions").replaceChildren(
    ...legal.map((action, i) => {
      const item = document.createElement("li");
      const params = paramsOf(action);
      if (params.length === 0) {
        item.append(button(action.label, () => void submit(c, action.label, action.action), `action-${i}`));
        return item;
      }
      // A parametric move: a range input per parameter, then the button plays it.
      const values: Record<string, number> = {};
      const fields = document.createElement("fieldset");
      const legend = document.createElement("legend");
      legend.textContent = action.label;
      fields.append(legend);
      for (const p of params) {
        values[p.name] = (p.low + p.high) / 2;
        const label = document.createElement("label");
        const input = document.createElement("input");
        const shown = document.createElement("output");
        input.type = "range";
        input.min = String(p.low);
        input.max = String(p.high);
        input.step = "any";
        input.value = String(values[p.name]);
        shown.textContent = values[p.name].toFixed(2);
        input.addEventListener("input", () => {
          values[p.name] = Number(input.value);
          shown.textContent = values[p.name].toFixed(2);
        });
        label.append(`${p.name} (${p.low} to ${p.high})`, input, shown);
        fields.append(label);
      }
      fields.append(
        button(`Play: ${action.label}`, () => {
          if (action.action) void submit(c, action.label, withParams(action.action, params, values));
        }, `action-${i}`),
      );
      item.append(fields);
      return item;
    }),
  );
  if (hadFocus && c.steps === undefined) $("actions").querySelector("button")?.focus();
}

/** Take back the seat's last move: offered while the board says the rules allow it (its
 * own move of this turn, nothing rolled, drawn or revealed since). */
function showUndo(c: Current, can: boolean): void {
  $("undo").replaceChildren(...(can ? [button("Take back my last move", () => void undo(c), "undo-move")] : []));
}

async function undo(c: Current): Promise<void> {
  showError(undefined);
  try {
    const reply = await gateway.undoAction({ matchId: c.matchId, commandId: randomId() }, auth(c.token));
    say(`Your last move was taken back (version ${reply.version})`);
  } catch (error) {
    showError(error);
  }
}

async function submit(c: Current, label: string, action: GameAction | undefined): Promise<void> {
  showError(undefined);
  try {
    const reply = await gateway.submitAction(
      { matchId: c.matchId, action, commandId: randomId() },
      auth(c.token),
    );
    say(`Played “${label}” (version ${reply.version})`);
  } catch (error) {
    showError(error);
    // Refused: the same moves again, on the picture too (a move made there took them off).
    if (c === current && c.live) void refreshActions(c, c.live);
  }
}

/** Ids of the picture's elements get this prefix in the page (sanitize.ts). */
const PICTURE_IDS = "pic-";

const zoom = new Zoom($("board"));
const onBoard = new PictureMoves($("board"), $("board-hint"), $("board-bar"), PICTURE_IDS, (move, values) => {
  const c = current;
  const action = move.legal.action;
  // Offered with the moves legal now, never an older list's.
  if (!c || !action || !c.legal.includes(move.legal)) return;
  // The picture offers nothing while the move is under way (the next view offers again).
  $("board").dataset.moves = "";
  void submit(c, move.label, move.params.length ? withParams(action, move.params, values) : action);
});

// -- replay ---------------------------------------------------------------------------------
function setUpReplay(): void {
  const range = $<HTMLInputElement>("replay-step");
  $("replay-load").addEventListener("click", () => void loadReplay());
  range.addEventListener("input", () => void showStep(Number(range.value)));
  $("replay-prev").addEventListener("click", () => void showStep(Number(range.value) - 1));
  $("replay-next").addEventListener("click", () => void showStep(Number(range.value) + 1));
  $("replay-live").addEventListener("click", () => {
    if (!current) return;
    const c = current;
    c.steps = undefined;
    $("replay-controls").hidden = true;
    $("replay-talk").hidden = true;
    $("replay-label").textContent = "";
    void drawPicture(c, undefined).then(() => (c.live ? refreshActions(c, c.live) : undefined));
  });
}

async function loadReplay(): Promise<void> {
  const c = current;
  if (!c) return;
  const steps: ReplayStep[] = [];
  try {
    // many steps a message: a long match loads in a few messages instead of one per step
    for await (const batch of gateway.replayMatchBatches({ matchId: c.matchId }, auth(c.token))) {
      steps.push(...batch.steps);
    }
  } catch (error) {
    showError(error);
    return;
  }
  if (c !== current || steps.length === 0) return;
  c.steps = steps;
  const range = $<HTMLInputElement>("replay-step");
  range.max = String(steps.length);
  $("replay-controls").hidden = false;
  await showStep(steps.length);
  range.focus();
}

async function showStep(n: number): Promise<void> {
  const c = current;
  if (!c?.steps) return;
  const index = Math.min(Math.max(n, 1), c.steps.length);
  const step = c.steps[index - 1];
  $<HTMLInputElement>("replay-step").value = String(index);
  $("replay-label").textContent = `Step ${index} of ${c.steps.length}: ${step.description}`;
  showReplayTalk(c.steps, index);
  await drawPicture(c, step.view?.version ?? BigInt(index));
}

// -- verification -----------------------------------------------------------------------------
async function sha256Hex(hex: string): Promise<string> {
  const bytes = new Uint8Array((hex.match(/../g) ?? []).map((b) => parseInt(b, 16)));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The gateway re-derives every roll and shuffle; this page checks the seeds itself too. */
async function verify(c: Current, view: MatchView): Promise<void> {
  const out = $("verify-result");
  $("verify-section").hidden = false;
  const lines: string[] = [];
  let ok = true;
  const p = view.provenance;
  // A game commits seeds only with the chance services it uses (Crashland: decks only).
  const seeds = p
    ? [
        { seed: p.diceSeed, commitment: p.diceCommitment },
        { seed: p.decksSeed, commitment: p.decksCommitment },
      ].filter((s) => s.commitment)
    : [];
  if (!p || seeds.length === 0 || seeds.some((s) => !s.seed)) {
    out.textContent = "The match is over; waiting for the dice and decks to reveal their seeds…";
    out.className = "";
    return;
  }
  if (crypto.subtle) {
    let same = true;
    for (const s of seeds) same &&= (await sha256Hex(s.seed)) === s.commitment;
    ok &&= same;
    lines.push(same ? "The revealed seeds match their commitments (checked in this browser)." : "A revealed seed does NOT match its commitment.");
  }
  try {
    const result = await gateway.verifyMatch({ matchId: c.matchId }, auth(c.token));
    ok &&= result.ok;
    lines.push(
      result.ok
        ? `Verified: ${result.checked} seeds, rolls, shuffles and draws re-derive.`
        : `NOT verified: ${result.problems.join("; ")}`,
    );
  } catch (error) {
    ok = false;
    lines.push(`Not verified yet: ${describeError(error)}`);
  }
  if (c !== current) return;
  out.textContent = lines.join(" ");
  out.className = ok ? "ok" : "bad";
}

// -- start ----------------------------------------------------------------------------------
function route(): void {
  const match = /^#match\/([\w-]{1,64})$/.exec(location.hash);
  if (match) {
    if (current?.matchId !== match[1]) openMatch(match[1]);
  } else {
    showLobby();
  }
}

function setUpTalk(): void {
  $("talk-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void current?.talk.post();
  });
  $("talk-text").addEventListener("input", () => current?.talk.showLeft());
}

setUpLobby();
setUpReplay();
setUpTalk();
window.addEventListener("popstate", route);
$("home").addEventListener("click", (event) => {
  event.preventDefault();
  history.pushState(null, "", location.pathname);
  showLobby();
});
route();
