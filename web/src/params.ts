// Parametric legal actions: a template whose fields named in LegalAction.params take any
// value in [low, high] (e.g. where a piece is dropped). The page offers a range input per
// parameter and fills the chosen values into a copy of the template before submitting.
import { ScalarType, clone } from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import type { GameAction } from "./gen/tabletop/v1/games_pb";
import { GameActionSchema } from "./gen/tabletop/v1/games_pb";
import type { LegalAction } from "./gen/tabletop/v1/match_pb";

export interface ParamRange {
  name: string;
  low: number;
  high: number;
  unit?: string;
  /** how a pointer on the picture sets it (value = offset + scale * measure) */
  picture?: { measure: string; scale: number; offset: number };
}

/** The action's parameters (none for a concrete action). */
export function paramsOf(legal: LegalAction): ParamRange[] {
  return legal.params;
}

const INTEGERS = new Set([ScalarType.INT32, ScalarType.UINT32, ScalarType.SINT32, ScalarType.FIXED32, ScalarType.SFIXED32]);
const LONGS = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

/** Sets the scalar field ``name`` of the chosen action (depth first through the oneofs). */
function assign(message: ReflectMessage, name: string, value: number): boolean {
  for (const field of message.fields) {
    if (field.oneof && message.oneofCase(field.oneof) !== field) continue;
    if (field.fieldKind === "scalar" && field.name === name) {
      const scalar = field.scalar;
      if (INTEGERS.has(scalar)) message.set(field, Math.round(value));
      else if (LONGS.has(scalar)) message.set(field, BigInt(Math.round(value)));
      else if (scalar === ScalarType.DOUBLE || scalar === ScalarType.FLOAT) message.set(field, value);
      else return false;
      return true;
    }
    if (field.fieldKind === "message" && message.isSet(field)) {
      if (assign(message.get(field) as ReflectMessage, name, value)) return true;
    }
  }
  return false;
}

/** A copy of ``template`` with each parameter set to its value, clamped to its range. */
export function withParams(template: GameAction, params: ParamRange[], values: Record<string, number>): GameAction {
  const action = clone(GameActionSchema, template);
  const r = reflect(GameActionSchema, action);
  for (const p of params) {
    const value = Math.min(Math.max(values[p.name] ?? p.low, p.low), p.high);
    if (!assign(r, p.name, value)) throw new Error(`the action has no number field ${p.name}`);
  }
  return action;
}
