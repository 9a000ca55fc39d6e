// Playing on the picture, without the DOM: which legal moves are still possible once some of
// the picture's elements are picked, what a click may pick next, and the value a pointer
// gives a parameter (LegalAction.targets, .affects and ParamRange.picture say all of it).
import type { LegalAction } from "./gen/tabletop/v1/match_pb";
import { type ParamRange, paramsOf } from "./params";

/** A legal move made on the picture: the elements picked to make it, in any order. */
export interface Move {
  legal: LegalAction; // as the gateway listed it
  label: string;
  targets: string[];
  affects: string[];
  params: ParamRange[];
}

export interface Choice {
  candidates: Move[]; // moves whose targets include everything picked so far
  next: Set<string>; // the elements a click may pick now
  complete: Move[]; // candidates whose every target is picked
}

/** The moves a pointer can make: they name targets, and a pointer sets every parameter. */
export function movesOnPicture(legal: LegalAction[]): Move[] {
  const moves: Move[] = [];
  for (const action of legal) {
    const params = paramsOf(action);
    if (action.targets.length === 0 || params.some((p) => !p.picture?.measure)) continue;
    moves.push({ legal: action, label: action.label, targets: [...action.targets], affects: [...action.affects], params });
  }
  return moves;
}

/** The concrete moves made on no element (end the turn, pass): a mouse player finds them
 * in a bar above the picture. */
export function movesOffPicture(legal: LegalAction[]): Move[] {
  return legal
    .filter((action) => action.targets.length === 0 && paramsOf(action).length === 0)
    .map((action) => ({ legal: action, label: action.label, targets: [], affects: [], params: [] }));
}

/** Where the picking stands. Targets are a set: the three Pillars of a room, or the cards
 * kept, may be picked in any order. */
export function choose(moves: Move[], picked: string[]): Choice {
  const candidates = moves.filter((m) => picked.every((id) => m.targets.includes(id)));
  const next = new Set<string>();
  for (const m of candidates) for (const id of m.targets) if (!picked.includes(id)) next.add(id);
  const complete = candidates.filter((m) => m.targets.length === picked.length);
  return { candidates, next, complete };
}

/** "drag": a drag from the last element picked sets an angle or a length; "point": a point
 * on the picture (where the pointer is released); "none": the move needs nothing more. */
export function pointerKind(move: Move): "drag" | "point" | "none" {
  const measures = move.params.map((p) => p.picture?.measure);
  if (measures.some((m) => m === "angle" || m === "length")) return "drag";
  return measures.length ? "point" : "none";
}

export interface Pointer {
  x0: number; // where a drag began (picture units)
  y0: number;
  x: number; // where the pointer is (is released)
  y: number;
}

/** The pointer's measure of an axis: y up for an angle, as the picture is seen. */
export function measure(name: string, p: Pointer): number {
  switch (name) {
    case "x":
      return p.x;
    case "y":
      return p.y;
    case "angle": {
      const degrees = (Math.atan2(-(p.y - p.y0), p.x - p.x0) * 180) / Math.PI;
      return degrees < 0 ? degrees + 360 : degrees;
    }
    case "length":
      return Math.hypot(p.x - p.x0, p.y - p.y0);
  }
  throw new Error(`no pointer measure ${name}`);
}

/** Each parameter's value from the pointer, within its range (an angle wraps round). */
export function pointerValues(params: ParamRange[], p: Pointer): Record<string, number> {
  const values: Record<string, number> = {};
  for (const param of params) {
    const axis = param.picture;
    if (!axis) continue;
    let value = axis.offset + axis.scale * measure(axis.measure, p);
    const span = param.high - param.low;
    if (axis.measure === "angle" && span > 0) {
      value = param.low + ((((value - param.low) % span) + span) % span);
    }
    values[param.name] = Math.min(Math.max(value, param.low), param.high);
  }
  return values;
}

/** The values as a player reads them while dragging, e.g. "direction 45°, strength 60%". */
export function describeValues(params: ParamRange[], values: Record<string, number>): string {
  return params
    .filter((p) => p.name in values)
    .map((p) => {
      const v = values[p.name];
      if (p.unit === "degrees") return `${p.name} ${Math.round(v)}°`;
      if (p.low === 0 && p.high === 1 && !p.unit) return `${p.name} ${Math.round(v * 100)}%`;
      return `${p.name} ${Math.round(v)}${p.unit ? ` ${p.unit}` : ""}`;
    })
    .join(", ");
}
