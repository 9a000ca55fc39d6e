// boardgame.io's own server for the peer benchmark:
//   node server.js PORT API_PORT memory
//   node server.js PORT API_PORT flatfile DIR     (FlatFile: node-persist files in DIR)
// Prints "ready" on stdout once the socket server and the lobby API listen. The lobby API has
// its own port (boardgame.io's lobbyConfig.apiPort): on the shared port, koa >= 2.14 (what
// npm resolves for 0.50.2 today) composes its middleware when koa-socket-2 attaches, before
// the lobby routes are added, and every lobby call answers 404.
//
// FlatFile stores through node-persist 3 (the version boardgame.io 0.50 is tested with), whose
// default write queue holds writes for up to a second (one move a second per match). The peer
// turns that queue off (node-persist's own option): every state is in its file before the
// match's next move is handled, which is what "durable" means here. Neither side fsyncs each
// write (Kafka leaves flushing to the OS too).
const { Server, FlatFile } = require('boardgame.io/server');
const { DiceRace, DiceTable } = require('./game');

class FlatFileWrittenAtOnce extends FlatFile {
  async connect() {
    await this.games.init({ dir: this.dir, logging: this.logging, ttl: this.ttl, writeQueue: false });
  }
}

async function main() {
  const [port, apiPort, storage, dir] = process.argv.slice(2);
  const db = storage === 'flatfile' ? new FlatFileWrittenAtOnce({ dir, logging: false }) : undefined;
  if (storage !== 'memory' && storage !== 'flatfile') throw new Error(`storage: ${storage}`);
  const server = Server({ games: [DiceRace, DiceTable], db, origins: [/.*/] });
  await server.run({ port: Number(port), lobbyConfig: { apiPort: Number(apiPort) } });
  process.stdout.write('ready\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
