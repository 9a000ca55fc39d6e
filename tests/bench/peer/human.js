// The human-paced load against boardgame.io, the peer of Tabletop's Go load generator
// (tests/bench/human/loadgen): the same commands on stdin, the same answers on stdout, the
// same people. Each table plays the dice game with its seats (one socket.io connection a
// person, as a browser holds); the seat whose turn it is thinks, then rolls, and its next
// turn comes once its socket showed the update; spectators sync with no player id.
//
//   node human.js SOCKET_URL API_URL SEATS SPECTATORS THINK_MEAN_S THINK_MIN_S TIMEOUT_S SEED
//
// SEATS: the seats of each table in turn, e.g. 1,2,2,2. Commands (one JSON line each):
// matches {count, wait_s}, acting {on}, watchers {count}, mark, collect, status, quit.
const readline = require('node:readline');
const { io } = require('socket.io-client');
const { performance } = require('node:perf_hooks');
const { DiceTable } = require('./game');

const now = () => performance.now() / 1000;
const sleep = (s) => new Promise((resolve) => setTimeout(resolve, 1000 * Math.max(0, s)));
const GAME = DiceTable.name;

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function post(url, body, timeoutS) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutS * 1000),
  });
  if (!response.ok) throw new Error(`HTTP_${response.status}`);
  return response.json();
}

class Stats {
  constructor() {
    this.mark();
  }

  mark() {
    this.start = now();
    this.view_ms = [];
    this.others_ms = [];
    this.setup_ms = [];
    this.actions = 0;
    this.matches_ready = 0;
    this.matches_ended = 0;
    this.own_views_lost = 0;
    this.others_lost = 0;
    this.errors = {};
    this.views_received = 0;
  }

  inWindow(stamp) {
    return stamp >= this.start;
  }

  error(kind) {
    this.errors[kind] = (this.errors[kind] || 0) + 1;
  }

  collect() {
    return {
      window_s: now() - this.start,
      actions: this.actions,
      actions_by_game: { [GAME]: this.actions },
      // boardgame.io answers a move with its update only: no acknowledgement of its own
      ack_ms: [],
      view_ms: this.view_ms,
      others_ms: this.others_ms,
      setup_ms: this.setup_ms,
      legal_ms: [],
      matches_ready: this.matches_ready,
      matches_ended: this.matches_ended,
      raced: 0,
      own_views_lost: this.own_views_lost,
      others_lost: this.others_lost,
      refusals: {},
      errors: { ...this.errors },
      views_received: this.views_received,
    };
  }
}

let socketsOpen = 0;

// One person's socket: the newest state it showed, and when each state id arrived.
class Person {
  constructor(fleet, match, index, playerID, credentials) {
    this.fleet = fleet;
    this.match = match;
    this.index = index;
    this.playerID = playerID;
    this.credentials = credentials;
    this.state = null;
    this.arrivals = [];
    this.waiters = [];
    this.closed = false;
    this.leaving = false;
  }

  open() {
    const { fleet, match } = this;
    this.socket = io(`${fleet.url}/${GAME}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false, // a lost socket is an error here, not something to ride out
    });
    socketsOpen += 1;
    this.socket.on('sync', (id, info) => this.arrive(info.state));
    this.socket.on('update', (id, state) => this.arrive(state));
    this.socket.on('disconnect', () => this.lost('socket disconnected'));
    this.socket.on('connect_error', () => this.lost('socket connect_error'));
    this.socket.emit('sync', match.id, this.playerID, this.credentials, match.seats);
  }

  lost(why) {
    if (!this.leaving) this.fleet.stats.error(why);
    this.end();
  }

  end() {
    if (this.closed) return;
    this.closed = true;
    socketsOpen -= 1;
    for (const w of this.waiters.splice(0)) w();
  }

  close() {
    this.leaving = true;
    if (this.socket) this.socket.close();
    this.end();
  }

  arrive(state) {
    if (!state || (this.state && state._stateID <= this.state._stateID)) return;
    const stamp = now();
    this.state = state;
    this.fleet.stats.views_received += 1;
    this.arrivals.push([state._stateID, stamp]);
    if (this.arrivals.length > 8) this.arrivals.shift();
    this.match.shown(this, state._stateID, stamp);
    for (const w of this.waiters.splice(0)) w();
  }

  // until the socket shows a state id above `after` (the stamp), or null after limitS
  async newer(after, limitS) {
    const deadline = now() + limitS;
    while (!this.closed && !(this.state && this.state._stateID > after)) {
      const left = deadline - now();
      if (left <= 0) return null;
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left * 1000);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    if (this.closed && !(this.state && this.state._stateID > after)) return null;
    const found = this.arrivals.find(([id]) => id > after);
    return found ? found[1] : now();
  }
}

class Match {
  constructor(fleet, seats) {
    this.fleet = fleet;
    this.seats = seats;
    this.people = [];
    this.pending = []; // { after, sent, actor, seen: Set }
  }

  shown(person, stateID, stamp) {
    const stats = this.fleet.stats;
    this.pending = this.pending.filter((p) => {
      if (p.actor !== person.index && !p.seen.has(person.index) && stateID > p.after) {
        p.seen.add(person.index);
        if (stats.inWindow(p.sent)) stats.others_ms.push(1000 * (stamp - p.sent));
      }
      if (p.seen.size === this.people.length) return false;
      if (stamp - p.sent > 60) {
        stats.others_lost += this.people.length - p.seen.size;
        return false;
      }
      return true;
    });
  }

  close() {
    for (const person of this.people) person.close();
  }
}

class Table {
  constructor(fleet, index) {
    this.fleet = fleet;
    this.index = index;
    this.seats = fleet.seats[index % fleet.seats.length];
    this.random = mulberry32(fleet.seed * 7919 + index);
    this.stopped = false;
    this.naps = new Set();
    this.match = null;
    this.readyOnce = null;
    this.ready = new Promise((resolve) => {
      this.readyOnce = resolve;
    });
    this.done = this.run();
  }

  async run() {
    const { fleet } = this;
    while (!this.stopped) {
      let match;
      try {
        match = await this.setup();
      } catch (error) {
        if (!this.stopped) fleet.stats.error(`setup: ${String(error.message || error).split(' ')[0]}`);
        await this.nap(0.5 + this.random());
        continue;
      }
      this.match = match;
      this.readyOnce();
      const over = await this.play(match);
      this.match = null;
      match.close();
      if (over) fleet.stats.matches_ended += 1;
    }
  }

  async setup() {
    const { fleet } = this;
    const began = now();
    const match = new Match(fleet, this.seats);
    const { matchID } = await post(
      `${fleet.api}/games/${GAME}/create`,
      { numPlayers: this.seats },
      fleet.timeoutS,
    );
    match.id = matchID;
    for (let seat = 0; seat < this.seats; seat += 1) {
      const { playerCredentials } = await post(
        `${fleet.api}/games/${GAME}/${matchID}/join`,
        { playerID: String(seat), playerName: `p${seat + 1}` },
        fleet.timeoutS,
      );
      match.people.push(new Person(fleet, match, seat, String(seat), playerCredentials));
    }
    for (let i = 0; i < fleet.spectators; i += 1) {
      match.people.push(new Person(fleet, match, match.people.length, null, undefined));
    }
    try {
      for (const person of match.people) person.open();
      for (const person of match.people) {
        if ((await person.newer(-1, fleet.timeoutS)) === null) throw new Error('TIMEOUT first state');
      }
    } catch (error) {
      match.close();
      throw error;
    }
    if (fleet.stats.inWindow(began)) {
      fleet.stats.matches_ready += 1;
      fleet.stats.setup_ms.push(1000 * (now() - began));
    }
    return match;
  }

  async play(match) {
    const results = await Promise.all(
      match.people.filter((p) => p.playerID !== null).map((seat) => this.act(match, seat)),
    );
    return results.every((over) => over);
  }

  think() {
    const { thinkMeanS, thinkMinS } = this.fleet;
    return thinkMinS + -Math.log(1 - this.random()) * (thinkMeanS - thinkMinS);
  }

  // one seat's person: true once the match is over
  async act(match, seat) {
    const { fleet } = this;
    const stats = fleet.stats;
    while (!this.stopped && !seat.closed) {
      await fleet.actingOn();
      if (this.stopped) return false;
      let state = seat.state;
      if (state.ctx.gameover !== undefined) return true;
      if (state.ctx.currentPlayer !== seat.playerID) {
        await seat.newer(state._stateID, 3600);
        continue;
      }
      await this.nap(this.think());
      if (this.stopped || !fleet.acting) continue;
      state = seat.state;
      if (state.ctx.gameover !== undefined) return true;
      if (state.ctx.currentPlayer !== seat.playerID) continue;
      const after = state._stateID;
      const sent = now();
      match.pending.push({ after, sent, actor: seat.index, seen: new Set([seat.index]) });
      seat.socket.emit(
        'update',
        {
          type: 'MAKE_MOVE',
          payload: { type: 'roll', args: [], playerID: seat.playerID, credentials: seat.credentials },
        },
        after,
        match.id,
        seat.playerID,
      );
      const seen = await seat.newer(after, fleet.timeoutS);
      if (seen === null) {
        if (!this.stopped && !seat.closed) {
          stats.own_views_lost += 1;
          stats.error('view: not shown');
        }
        return false;
      }
      if (stats.inWindow(sent)) {
        stats.actions += 1;
        stats.view_ms.push(1000 * (seen - sent));
      }
    }
    return false;
  }

  // a think time (or a pause) that ends early when the table stops
  nap(seconds) {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.naps.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, 1000 * Math.max(0, seconds));
      this.naps.add(wake);
    });
  }

  async stop() {
    this.stopped = true;
    for (const wake of [...this.naps]) wake();
    if (this.match) this.match.close();
    this.fleet.wake();
    await this.done;
  }
}

class Fleet {
  constructor(url, api, seats, spectators, thinkMeanS, thinkMinS, timeoutS, seed) {
    Object.assign(this, { url, api, seats, spectators, thinkMeanS, thinkMinS, timeoutS, seed });
    this.stats = new Stats();
    this.tables = [];
    this.made = 0;
    this.acting = false;
    this.actingWaiters = [];
    this.extra = [];
  }

  actingOn() {
    if (this.acting) return Promise.resolve();
    return new Promise((resolve) => this.actingWaiters.push(resolve));
  }

  wake() {
    for (const w of this.actingWaiters.splice(0)) w();
  }

  setActing(on) {
    this.acting = on;
    if (on) this.wake();
  }

  async ensure(count, waitS) {
    const began = now();
    while (this.tables.length < count) this.tables.push(new Table(this, this.made++));
    const leaving = this.tables.splice(count);
    await Promise.all(leaving.map((t) => t.stop()));
    let ready = 0;
    const deadline = sleep(waitS).then(() => 'late');
    for (const table of this.tables) {
      if ((await Promise.race([table.ready.then(() => 'ready'), deadline])) !== 'ready') break;
      ready += 1;
    }
    return {
      matches: this.tables.length,
      ready,
      streams: socketsOpen,
      connections: socketsOpen,
      seconds: now() - began,
    };
  }

  // more spectators over the tables' matches (socket.io: a connection each); 0 closes them
  async watchers(count) {
    const began = now();
    let open = 0;
    let failed = 0;
    if (count === 0) {
      for (const person of this.extra.splice(0)) person.close();
    } else {
      const people = [];
      for (let i = 0; i < count; i += 1) {
        const match = this.tables.length ? this.tables[i % this.tables.length].match : null;
        if (!match) {
          failed += 1;
          continue;
        }
        // not one of match.people: the match's latencies are its own people's
        const person = new Person(this, { id: match.id, seats: match.seats, shown() {} }, -1, null);
        person.open();
        people.push(person);
      }
      this.extra.push(...people);
      for (const person of people) {
        if ((await person.newer(-1, this.timeoutS)) === null) failed += 1;
        else open += 1;
      }
    }
    // socket.io cannot share one connection among sockets of one namespace: one each
    const connections = count === 0 ? 0 : open + failed;
    return { open, failed, streams: socketsOpen, connections, seconds: now() - began };
  }

  status() {
    const memory = process.memoryUsage();
    return {
      matches: this.tables.length,
      streams: socketsOpen,
      connections: socketsOpen,
      heap_bytes: memory.heapUsed,
      sys_bytes: memory.rss,
    };
  }
}

async function main() {
  const [url, api, seats, spectators, thinkMean, thinkMin, timeout, seed] = process.argv.slice(2);
  const fleet = new Fleet(
    url,
    api,
    seats.split(',').map(Number),
    Number(spectators),
    Number(thinkMean),
    Number(thinkMin),
    Number(timeout),
    Number(seed),
  );
  const answer = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    let command;
    try {
      command = JSON.parse(line);
    } catch (error) {
      answer({ error: String(error) });
      continue;
    }
    switch (command.cmd) {
      case 'matches':
        answer(await fleet.ensure(Math.max(0, command.count), command.wait_s || 600));
        break;
      case 'acting':
        fleet.setActing(Boolean(command.on));
        answer({ acting: Boolean(command.on) });
        break;
      case 'watchers':
        answer(await fleet.watchers(Math.max(0, command.count)));
        break;
      case 'mark':
        fleet.stats.mark();
        answer({ marked: true });
        break;
      case 'collect':
        answer(fleet.stats.collect());
        break;
      case 'status':
        answer(fleet.status());
        break;
      case 'quit':
        await fleet.watchers(0);
        await fleet.ensure(0, 1);
        answer({ quit: true });
        process.exit(0);
        break;
      default:
        answer({ error: `unknown command ${command.cmd}` });
    }
  }
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
