// internal/cel/lib/common owns what the Kubernetes CEL libraries share: the engine's types, the
// error a library function throws (the engine reports it as an evaluation error), CEL value
// comparison for the lists library, and the registration helper that meters every call.
// Imports: the meter.

import { Environment, Optional } from '@marcbachmann/cel-js';
import { metered } from '../meter.js';

export { Environment, Optional };

export class CelLibraryError extends Error {
  override name = 'CelLibraryError';
}

// The engine's handlers take loosely typed values; each library narrows them at its boundary.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the engine's handler type is any-typed
type Handler = (...args: any[]) => unknown;

/** Registers `signature` with its handler metered under `costName` (the function's name by default). */
export function fn(env: Environment, signature: string, handler: Handler, costName?: string): void {
  const name = costName ?? /(\w+)\(/.exec(signature)![1]!;
  env.registerFunction(signature, metered(name, handler));
}

/** CEL ordering of two values of one comparable type (int, uint, double, string, bool, bytes, timestamp, duration). */
export function compareCel(a: unknown, b: unknown): number {
  const x = numeric(a);
  const y = numeric(b);
  if (x !== undefined && y !== undefined) return x < y ? -1 : x > y ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Date && b instanceof Date) return Math.sign(a.getTime() - b.getTime());
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b);
  throw new CelLibraryError(`no such overload: cannot compare ${kindOf(a)} with ${kindOf(b)}`);
}

function numeric(v: unknown): number | bigint | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (v && typeof v === 'object' && 'valueOf' in v) {
    const p = (v as { valueOf(): unknown }).valueOf();
    if (typeof p === 'bigint' || typeof p === 'number') return p;
  }
  return undefined;
}

/** CEL equality of two values (heterogeneous numbers equal by value, lists and maps deeply). */
export function equalCel(a: unknown, b: unknown): boolean {
  const x = numeric(a);
  const y = numeric(b);
  if (x !== undefined && y !== undefined) return x == y; // eslint-disable-line eqeqeq -- bigint == number compares by value, as CEL does
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => equalCel(v, b[i]));
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && equalCel(a[k], b[k]));
  }
  return a === b;
}

/** The engine's google.protobuf.Duration value (its class is not exported). */
export interface CelDuration {
  valueOf(): number;
  addDuration(other: CelDuration): CelDuration;
}

export function isDuration(v: unknown): v is CelDuration {
  return v !== null && typeof v === 'object' && typeof (v as { addDuration?: unknown }).addDuration === 'function';
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

function kindOf(v: unknown): string {
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  return typeof v;
}
