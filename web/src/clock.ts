// A match's clocks as the page shows them: each seat's time left, counted down to its
// deadline while the game waits for it (the board records the timeout when it passes).
import type { MatchClock } from "./gen/tabletop/v1/match_pb";

export interface SeatTime {
  seat: string;
  text: string;
  running: boolean;
  /** under a tenth of the control's time, or under 30 s (the page marks it) */
  low: boolean;
  timeouts: number;
}

/** "9:41", "1h05m", "2d03h": how much time is left, never below zero. */
export function duration(ms: number): string {
  const total = Math.floor(Math.max(0, ms) / 1000);
  const days = Math.floor(total / 86400);
  const hours = Math.floor((total % 86400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const two = (n: number): string => String(n).padStart(2, "0");
  if (days) return `${days}d${two(hours)}h`;
  if (hours) return `${hours}h${two(minutes)}m`;
  return `${minutes}:${two(seconds)}`;
}

/** Each seat's time at ``nowMs`` (unix milliseconds). */
export function seatTimes(clock: MatchClock, nowMs: number): SeatTime[] {
  return clock.seats.map((s) => {
    const running = s.deadlineMs > 0n;
    const left = running ? Number(s.deadlineMs) - nowMs : Number(s.remainingMs);
    return {
      seat: s.seat,
      text: duration(left),
      running,
      low: running && left < 30_000,
      timeouts: s.timeouts,
    };
  });
}

/** The clock line for screen readers and the page: "live:10m+5s (forfeit) · ann ▶ 9:41 · bob 10:00". */
export function clockLine(clock: MatchClock, nowMs: number): string {
  const seats = seatTimes(clock, nowMs).map(
    (t) => `${t.seat} ${t.running ? "▶ " : ""}${t.text}` + (t.timeouts ? ` (${t.timeouts} timeouts)` : ""),
  );
  return `Clock ${clock.control} (on timeout: ${clock.onTimeout}) · ${seats.join(" · ")}`;
}
