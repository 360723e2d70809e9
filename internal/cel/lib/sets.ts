// internal/cel/lib/sets owns the `sets` extension upstream's base environment enables:
// sets.contains(list, list), sets.equivalent(list, list), sets.intersects(list, list), with CEL
// equality between elements. Imports: lib/common.

import { type Environment, equalCel, fn } from './common.js';

class SetsNamespace {}

const has = (list: readonly unknown[], v: unknown) => list.some((x) => equalCel(x, v));

export function registerSets(env: Environment): void {
  env.registerType('kubernetes.SetsNamespace', SetsNamespace);
  env.registerConstant('sets', 'kubernetes.SetsNamespace', new SetsNamespace());
  fn(env, 'kubernetes.SetsNamespace.contains(list, list): bool', (_n: unknown, a: unknown[], b: unknown[]) => b.every((v) => has(a, v)), 'sets.contains');
  fn(env, 'kubernetes.SetsNamespace.equivalent(list, list): bool', (_n: unknown, a: unknown[], b: unknown[]) => b.every((v) => has(a, v)) && a.every((v) => has(b, v)), 'sets.equivalent');
  fn(env, 'kubernetes.SetsNamespace.intersects(list, list): bool', (_n: unknown, a: unknown[], b: unknown[]) => b.some((v) => has(a, v)), 'sets.intersects');
}
