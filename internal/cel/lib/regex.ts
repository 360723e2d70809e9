// internal/cel/lib/regex owns upstream's Kubernetes `regex` library (find, findAll) and the
// global `matches(string, string)` the engine lacks, all with RE2 semantics (re2js: linear-time,
// so a hostile pattern cannot stall the server). Patterns are compiled once and cached.
// Imports: lib/common, lazy/re2js.

import type { RE2JS } from 're2js';
import { re2js } from '../../lazy/re2js.js';
import { CelLibraryError, type Environment, fn } from './common.js';

const cache = new Map<string, RE2JS>();
const CACHE_LIMIT = 512;

export function compileRegex(pattern: string): RE2JS {
  let re = cache.get(pattern);
  if (re) return re;
  try {
    re = re2js().RE2JS.compile(pattern);
  } catch (e) {
    throw new CelLibraryError(`error parsing regexp: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pattern, re);
  return re;
}

function findAll(s: string, pattern: string, limit: number): string[] {
  const out: string[] = [];
  if (limit === 0) return out;
  const m = compileRegex(pattern).matcher(s);
  let from = 0;
  while (from <= s.length && m.find(from)) {
    out.push(m.group() ?? '');
    if (limit > 0 && out.length >= limit) break;
    from = m.end() === m.start() ? m.end() + 1 : m.end();
  }
  return out;
}

export function registerRegex(env: Environment): void {
  fn(env, 'string.find(string): string', (s: string, p: string) => {
    const m = compileRegex(p).matcher(s);
    return m.find() ? (m.group() ?? '') : '';
  });
  fn(env, 'string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p, -1));
  fn(env, 'string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) => findAll(s, p, Number(n)));
  fn(env, 'matches(string, string): bool', (s: string, p: string) => compileRegex(p).matcher(s).find());
}
