// internal/cel/lib/lists owns upstream's Kubernetes `lists` library: isSorted, sum, min, max,
// indexOf and lastIndexOf on lists. Imports: lib/common.

import { CelLibraryError, type Environment, compareCel, equalCel, fn, isDuration } from './common.js';

function sum(list: readonly unknown[]): unknown {
  if (list.length === 0) return 0n;
  let acc = list[0];
  for (let i = 1; i < list.length; i++) {
    const v = list[i];
    if (typeof acc === 'bigint' && typeof v === 'bigint') acc = checkedInt(acc + v);
    else if (typeof acc === 'number' && typeof v === 'number') acc = acc + v;
    else if (isDuration(acc) && isDuration(v)) acc = acc.addDuration(v);
    else throw new CelLibraryError('no such overload: sum() needs a list of one numeric type');
  }
  return acc;
}

function checkedInt(v: bigint): bigint {
  if (v > 9223372036854775807n || v < -9223372036854775808n) throw new CelLibraryError('integer overflow');
  return v;
}

function extreme(list: readonly unknown[], name: string, sign: number): unknown {
  if (list.length === 0) throw new CelLibraryError(`${name} called on empty list`);
  let best = list[0];
  for (let i = 1; i < list.length; i++) if (compareCel(list[i], best) * sign > 0) best = list[i];
  return best;
}

export function registerLists(env: Environment): void {
  fn(env, 'list<T>.isSorted(): bool', (list: unknown[]) => {
    for (let i = 1; i < list.length; i++) if (compareCel(list[i - 1], list[i]) > 0) return false;
    return true;
  });
  fn(env, 'list<T>.sum(): T', (list: unknown[]) => sum(list));
  fn(env, 'list<T>.min(): T', (list: unknown[]) => extreme(list, 'min', -1));
  fn(env, 'list<T>.max(): T', (list: unknown[]) => extreme(list, 'max', 1));
  fn(env, 'list<T>.indexOf(T): int', (list: unknown[], v: unknown) => BigInt(list.findIndex((x) => equalCel(x, v))));
  fn(env, 'list<T>.lastIndexOf(T): int', (list: unknown[], v: unknown) => {
    for (let i = list.length - 1; i >= 0; i--) if (equalCel(list[i], v)) return BigInt(i);
    return -1n;
  });
}
