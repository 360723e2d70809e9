// internal/cel/lib/quantity owns upstream's Kubernetes `quantity` library: quantity(),
// isQuantity and the Quantity methods (sign, isInteger, asInteger, asApproximateFloat, add, sub,
// compareTo, isGreaterThan, isLessThan) and equality by value. Values are the exact nano-unit
// counts of internal/validation/quantity, so `quantity('1Gi') == quantity('1073741824')`.
// Imports: lib/common, internal/validation/quantity.

import { type Quantity, compareQuantities, formatQuantity, parseQuantity } from '../../validation/quantity.js';
import { CelLibraryError, type Environment, fn } from './common.js';

const NANO = 1_000_000_000n;
const MAX_INT = 9223372036854775807n;
const MIN_INT = -9223372036854775808n;

export class CelQuantity {
  constructor(readonly q: Quantity) {}
  toString(): string {
    return formatQuantity(this.q);
  }
}

function toQuantity(s: string): CelQuantity {
  const q = parseQuantity(s);
  if (!q) throw new CelLibraryError(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  return new CelQuantity(q);
}

const isInteger = (q: CelQuantity): boolean => q.q.nanos % NANO === 0n && q.q.nanos / NANO <= MAX_INT && q.q.nanos / NANO >= MIN_INT;
const plus = (a: CelQuantity, nanos: bigint): CelQuantity => new CelQuantity({ nanos: a.q.nanos + nanos, format: a.q.format });

export function registerQuantity(env: Environment): void {
  env.registerType('kubernetes.Quantity', CelQuantity);
  fn(env, 'quantity(string): kubernetes.Quantity', toQuantity);
  fn(env, 'isQuantity(string): bool', (s: string) => parseQuantity(s) !== undefined);
  fn(env, 'kubernetes.Quantity.sign(): int', (q: CelQuantity) => BigInt(q.q.nanos > 0n ? 1 : q.q.nanos < 0n ? -1 : 0));
  fn(env, 'kubernetes.Quantity.isInteger(): bool', isInteger);
  fn(env, 'kubernetes.Quantity.asInteger(): int', (q: CelQuantity) => {
    if (!isInteger(q)) throw new CelLibraryError('cannot convert value to integer');
    return q.q.nanos / NANO;
  });
  fn(env, 'kubernetes.Quantity.asApproximateFloat(): double', (q: CelQuantity) => Number(q.q.nanos) / 1e9);
  fn(env, 'kubernetes.Quantity.add(kubernetes.Quantity): kubernetes.Quantity', (a: CelQuantity, b: CelQuantity) => plus(a, b.q.nanos));
  fn(env, 'kubernetes.Quantity.add(int): kubernetes.Quantity', (a: CelQuantity, b: bigint) => plus(a, b * NANO));
  fn(env, 'kubernetes.Quantity.sub(kubernetes.Quantity): kubernetes.Quantity', (a: CelQuantity, b: CelQuantity) => plus(a, -b.q.nanos));
  fn(env, 'kubernetes.Quantity.sub(int): kubernetes.Quantity', (a: CelQuantity, b: bigint) => plus(a, -b * NANO));
  fn(env, 'kubernetes.Quantity.compareTo(kubernetes.Quantity): int', (a: CelQuantity, b: CelQuantity) => BigInt(compareQuantities(a.q, b.q)));
  fn(env, 'kubernetes.Quantity.isGreaterThan(kubernetes.Quantity): bool', (a: CelQuantity, b: CelQuantity) => compareQuantities(a.q, b.q) > 0);
  fn(env, 'kubernetes.Quantity.isLessThan(kubernetes.Quantity): bool', (a: CelQuantity, b: CelQuantity) => compareQuantities(a.q, b.q) < 0);
  env.registerOperator('kubernetes.Quantity == kubernetes.Quantity', (a: CelQuantity, b: CelQuantity) => a.q.nanos === b.q.nanos);
}
