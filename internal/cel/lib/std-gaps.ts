// internal/cel/lib/std-gaps owns standard CEL conversions the engine lacks that Kubernetes rules
// use (found by tools/cel-conformance.mjs): int(uint), int(timestamp), string(timestamp) and
// string(duration), with cel-go's spellings (RFC 3339 with only the fraction it needs; seconds
// with a fraction and `s`). Imports: lib/common.

import { CelLibraryError, type Environment, fn } from './common.js';

const TS = 'google.protobuf.Timestamp';
const DUR = 'google.protobuf.Duration';

interface EngineDuration {
  readonly seconds: bigint;
  readonly nanos: number;
}

export function formatTimestamp(d: Date): string {
  return d.toISOString().replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac ? `.${frac}Z` : 'Z'));
}

export function formatDuration(d: EngineDuration): string {
  const negative = d.seconds < 0n || d.nanos < 0;
  const secs = d.seconds < 0n ? -d.seconds : d.seconds;
  const nanos = Math.abs(d.nanos);
  const frac = nanos === 0 ? '' : `.${String(nanos).padStart(9, '0').replace(/0+$/, '')}`;
  return `${negative ? '-' : ''}${secs}${frac}s`;
}

export function registerStdGaps(env: Environment): void {
  fn(env, 'int(uint): int', (u: { valueOf(): bigint }) => {
    const v = BigInt(u.valueOf());
    if (v > 9223372036854775807n) throw new CelLibraryError('integer overflow');
    return v;
  }, 'int');
  fn(env, `int(${TS}): int`, (d: Date) => BigInt(Math.floor(d.getTime() / 1000)), 'int');
  fn(env, `string(${TS}): string`, (d: Date) => formatTimestamp(d), 'string');
  fn(env, `string(${DUR}): string`, (d: EngineDuration) => formatDuration(d), 'string');
}
