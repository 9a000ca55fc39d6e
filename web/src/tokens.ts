// The tokens this browser holds per match (localStorage): the creator's, the seat's, the
// spectator's. They never leave this origin except as the authorization header of a call.
export interface Tokens {
  creator?: string;
  seat?: string;
  seatToken?: string;
  spectator?: string;
  watching?: boolean; // opened as a spectator (a seat holder may watch too)
}

const KEY = "tabletop.tokens.";

export function loadTokens(matchId: string): Tokens {
  try {
    return JSON.parse(localStorage.getItem(KEY + matchId) ?? "{}") as Tokens;
  } catch {
    return {};
  }
}

export function saveTokens(matchId: string, tokens: Tokens): void {
  localStorage.setItem(KEY + matchId, JSON.stringify(tokens));
}
