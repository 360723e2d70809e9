// internal/cluster/heap-growth owns how fast a replica's V8 heap may grow between full
// collections. A follower's heap is small (about 20 MB live under creates) and grows slowly,
// and V8 then keeps its next full-collection limit only a few megabytes above the live size
// (its conservative growing modes): measured on the 2-core machine, a follower ran a
// Mark-Compact every 300-400 applied entries (14-18 per 20 s, against 1-6 on the leader),
// and GC was about 27 % of its CPU samples in perf. A growing factor of 2 (V8's
// --heap-growing-percent=100) spaces them out at the price of a larger heap between
// collections. An operator's own --heap-growing-percent (node flags or NODE_OPTIONS) wins.
// V8 reads the flag each time it computes the next limit, so setting it after start works.
// Imports: node, heap (release-memory: what its collections restore).

import { setFlagsFromString } from 'node:v8';
import { noteRestingGrowingPercent, operatorFlag } from '../heap/release-memory.js';

export const REPLICA_HEAP_GROWING_PERCENT = 100;

/** Whether the process was started with its own heap growing factor (then it is left alone). */
export function operatorChoseGrowth(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return operatorFlag('heap-growing-percent', [...execArgv, ...(nodeOptions ?? '').split(/\s+/)]);
}

/**
 * Sets the replica's heap growing factor unless the operator chose one; returns the flag set,
 * or undefined when none was.
 */
export function setReplicaHeapGrowth(
  o: { execArgv?: readonly string[]; nodeOptions?: string; set?: (flags: string) => void } = {},
): string | undefined {
  if (operatorChoseGrowth(o.execArgv ?? process.execArgv, 'nodeOptions' in o ? o.nodeOptions : process.env.NODE_OPTIONS)) return undefined;
  const flag = `--heap-growing-percent=${REPLICA_HEAP_GROWING_PERCENT}`;
  if (o.set) o.set(flag);
  else {
    setFlagsFromString(flag);
    // The start's low-memory collections change the factor for their own run: they put this back.
    noteRestingGrowingPercent(REPLICA_HEAP_GROWING_PERCENT);
  }
  return flag;
}
