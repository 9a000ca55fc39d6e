// The player this browser is: a device secret made once and kept in localStorage (it is the
// player, as a device id is in a device sign-in), and the session the gateway gave for it.
// The lobby's calls (create, join, "your matches") carry the session's access token; one
// about to expire is refreshed, and a refused refresh signs in again with the same secret,
// so the player stays the same.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Session } from "./gen/tabletop/v1/gateway_pb";

const SECRET_KEY = "tabletop.player.secret";
const SESSION_KEY = "tabletop.player.session";
/** an access token this close to its expiry (seconds) is refreshed before a call */
const MARGIN_S = 60;

interface Kept {
  playerId: string;
  accessToken: string;
  accessExpiresAt: number;
  refreshToken: string;
  refreshExpiresAt: number;
}

/** What the player needs of the gateway's client. */
export interface SessionCalls {
  authenticate(request: { credential: { case: "device"; value: { secret: string } } }): Promise<Session>;
  refreshSession(request: { refreshToken: string }): Promise<Session>;
}

function secret(): string {
  let kept = localStorage.getItem(SECRET_KEY);
  if (!kept) {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    kept = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    localStorage.setItem(SECRET_KEY, kept);
  }
  return kept;
}

function load(): Kept | undefined {
  try {
    const kept = localStorage.getItem(SESSION_KEY);
    return kept ? (JSON.parse(kept) as Kept) : undefined;
  } catch {
    return undefined;
  }
}

function keep(session: Session): Kept {
  const kept: Kept = {
    playerId: session.playerId,
    accessToken: session.accessToken,
    accessExpiresAt: Number(session.accessExpiresAt),
    refreshToken: session.refreshToken,
    refreshExpiresAt: Number(session.refreshExpiresAt),
  };
  localStorage.setItem(SESSION_KEY, JSON.stringify(kept));
  return kept;
}

let pending: Promise<Kept> | undefined;

async function fresh(calls: SessionCalls, kept: Kept | undefined): Promise<Kept> {
  const now = Date.now() / 1000;
  if (kept && kept.refreshExpiresAt - MARGIN_S > now) {
    try {
      return keep(await calls.refreshSession({ refreshToken: kept.refreshToken }));
    } catch (error) {
      if (ConnectError.from(error).code !== Code.Unauthenticated) throw error;
    }
  }
  return keep(await calls.authenticate({ credential: { case: "device", value: { secret: secret() } } }));
}

/** The player's session, signing up or refreshing when needed (one at a time). */
export async function session(calls: SessionCalls): Promise<Kept> {
  const kept = load();
  if (kept && kept.accessExpiresAt - MARGIN_S > Date.now() / 1000) return kept;
  pending ??= fresh(calls, kept).finally(() => {
    pending = undefined;
  });
  return pending;
}
