// A game's standings in the lobby: players by identity, bot levels and unclaimed seats
// (scoring's rows, services/scoring/standings.py), the viewer's own row marked.
import type { GetStandingsReply, PlayerStanding } from "./gen/tabletop/v1/scoring_pb";
import { PlayerKind } from "./gen/tabletop/v1/scoring_pb";

export interface StandingsRow {
  rank: number;
  name: string;
  played: number;
  won: number;
  lost: number;
  drawn: number;
  mine: boolean;
}

/** What a row shows for a player: its name, and what kind of player it is when not a person. */
export function rowName(row: PlayerStanding): string {
  const name = row.displayName || row.player;
  return row.kind === PlayerKind.SEAT ? `${name} (seat)` : name;
}

/** The rows as shown, in the order scoring ranks them (most wins first). */
export function standingsRows(reply: GetStandingsReply, me: string | undefined): StandingsRow[] {
  return reply.players.map((row, i) => ({
    rank: i + 1,
    name: rowName(row),
    played: row.played,
    won: row.won,
    lost: row.lost,
    drawn: row.drawn,
    mine: me !== undefined && row.kind === PlayerKind.PLAYER && row.player === me,
  }));
}

/** The table body for ``reply``: names are text (never markup) inside <bdi>, so a
 * right-to-left name cannot reorder the columns around it. */
export function fillStandings(body: HTMLTableSectionElement, reply: GetStandingsReply, me: string | undefined): void {
  body.replaceChildren();
  for (const row of standingsRows(reply, me)) {
    const tr = body.insertRow();
    if (row.mine) tr.classList.add("mine");
    tr.insertCell().textContent = String(row.rank);
    const name = tr.insertCell();
    const bdi = document.createElement("bdi");
    bdi.textContent = row.name;
    name.append(bdi);
    if (row.mine) name.append(" (you)");
    for (const figure of [row.played, row.won, row.lost, row.drawn]) {
      tr.insertCell().textContent = String(figure);
    }
  }
  if (reply.players.length === 0) body.insertRow().insertCell().textContent = "No match of this game scored yet.";
}
