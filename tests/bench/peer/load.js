// Bots against boardgame.io with the load shape of Tabletop's bench (tests/bench/bots.py):
// N concurrent matches; each bot creates a match and joins it through the lobby API, syncs
// over socket.io, then sends one move at a time and waits for the server's authoritative
// update before the next (as a person at a screen would); when a match ends it starts another
// until the run's time is up. Timed: move sent → update received.
//
//   node load.js SOCKET_URL API_URL MATCHES WARMUP_S DURATION_S TIMEOUT_S RESULT_FILE
//
// stdout: "window-start" and "window-end" when the measured window opens and closes (the
// caller reads the server's CPU then); the samples go to RESULT_FILE as JSON.
const fs = require('node:fs');
const { io } = require('socket.io-client');
const { performance } = require('node:perf_hooks');
const { DiceRace } = require('./game');

const now = () => performance.now() / 1000;

async function post(url, body) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`HTTP_${response.status}`);
  return response.json();
}

class Bot {
  constructor(url, api, result, stopAt, timeoutS) {
    this.url = url;
    this.api = api;
    this.result = result;
    this.stopAt = stopAt;
    this.timeoutS = timeoutS;
  }

  inWindow(stamp) {
    return this.result.start <= stamp && stamp < this.result.end;
  }

  async run() {
    while (now() < this.stopAt) {
      try {
        await this.playOne();
      } catch (error) {
        const kind = String(error.message || error).split(' ')[0];
        this.result.errors[kind] = (this.result.errors[kind] || 0) + 1;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  async playOne() {
    const began = now();
    const game = DiceRace.name;
    const { matchID } = await post(`${this.api}/games/${game}/create`, { numPlayers: 1 });
    const { playerCredentials } = await post(`${this.api}/games/${game}/${matchID}/join`, {
      playerID: '0',
      playerName: 'bot',
    });
    const socket = io(`${this.url}/${game}`, { transports: ['websocket'], forceNew: true });
    try {
      let state = null;
      let waiting = null; // { after: stateID, resolve }
      const arrive = (next) => {
        state = next;
        if (waiting && next._stateID > waiting.after) {
          const w = waiting;
          waiting = null;
          w.resolve(now());
        }
      };
      socket.on('sync', (id, info) => arrive(info.state));
      socket.on('update', (id, next) => arrive(next));
      const until = (after) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('TIMEOUT')), this.timeoutS * 1000);
          waiting = {
            after,
            resolve: (stamp) => {
              clearTimeout(timer);
              resolve(stamp);
            },
          };
          if (state && state._stateID > after) waiting.resolve(now());
        });
      const synced = until(-1);
      socket.emit('sync', matchID, '0', playerCredentials, 1);
      await synced;
      if (this.inWindow(now())) this.result.create_ms.push(1000 * (now() - began));
      while (now() < this.stopAt) {
        if (state.ctx.gameover !== undefined) {
          this.result.matches_finished += 1;
          return;
        }
        const stateID = state._stateID;
        const action = {
          type: 'MAKE_MOVE',
          payload: { type: 'roll', args: [], playerID: '0', credentials: playerCredentials },
        };
        const sent = now();
        const updated = until(stateID);
        socket.emit('update', action, stateID, matchID, '0');
        const stamp = await updated;
        if (this.inWindow(stamp)) {
          this.result.stamps.push(stamp);
          this.result.latency_ms.push(1000 * (stamp - sent));
        }
      }
    } finally {
      socket.close();
    }
  }
}

async function main() {
  const [url, api, matches, warmup, duration, timeout, resultFile] = process.argv.slice(2);
  const begin = now();
  const result = {
    concurrency: Number(matches),
    start: begin + Number(warmup),
    end: begin + Number(warmup) + Number(duration),
    stamps: [],
    latency_ms: [],
    create_ms: [],
    matches_finished: 0,
    errors: {},
  };
  const marks = (async () => {
    await new Promise((resolve) => setTimeout(resolve, 1000 * (result.start - now())));
    process.stdout.write('window-start\n');
    await new Promise((resolve) => setTimeout(resolve, 1000 * (result.end - now())));
    process.stdout.write('window-end\n');
  })();
  const bots = Array.from(
    { length: Number(matches) },
    () => new Bot(url, api, result, result.end, Number(timeout)),
  );
  await Promise.all([marks, ...bots.map((bot) => bot.run())]);
  fs.writeFileSync(resultFile, JSON.stringify(result));
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
