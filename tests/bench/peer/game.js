// The peer's game: a one-player dice game of the same shape as the match Tabletop's bench
// plays (Crashland, solitaire, ~25 actions a match). Each move rolls one die on the server
// (boardgame.io's random plugin, so the client cannot apply it optimistically and must wait
// for the authoritative update); the match ends when the total reaches TARGET.
const TARGET = 88; // 88 / 3.5 ≈ 25 moves, like a Crashland match in the bench

const DiceRace = {
  name: 'dicerace',
  setup: () => ({ total: 0, rolls: [] }),
  moves: {
    roll: ({ G, random }) => {
      const value = random.D6();
      G.total += value;
      G.rolls.push(value);
    },
  },
  endIf: ({ G }) => (G.total >= TARGET ? { total: G.total } : undefined),
};

// The human-paced peer's game (human.js): the same dice race for 1 to 4 seats, one roll a
// turn, so a table's seats take turns as Tabletop's seats do; ends when a seat reaches TARGET.
const DiceTable = {
  name: 'dicetable',
  minPlayers: 1,
  maxPlayers: 4,
  setup: ({ ctx }) => ({ totals: Array(ctx.numPlayers).fill(0), rolls: [] }),
  turn: { minMoves: 1, maxMoves: 1 },
  moves: {
    roll: ({ G, ctx, random }) => {
      const value = random.D6();
      G.totals[Number(ctx.currentPlayer)] += value;
      G.rolls.push(value);
    },
  },
  endIf: ({ G }) => (G.totals.some((total) => total >= TARGET) ? { totals: G.totals } : undefined),
};

module.exports = { DiceRace, DiceTable };
