// internal/jit/tier-up owns how soon V8 optimizes the server's hot code, and how much inlining
// each optimization does. A fresh clusterd runs its request and apply paths in V8's interpreter
// and baseline code for tens of seconds under load before the optimizing compiler takes them
// (measured on the 2-core machine: a replica's compiler threads were about 30 % of its CPU
// 8-20 s in, 9 % after a minute), so a started or restarted server, or a replica that has
// just become leader, serves far below its steady rate meanwhile. V8 optimizes a function once it
// has run through its interrupt budget (bytecode executed since its last tiering decision); a
// quarter of the default budget gets the hot paths there about four times sooner at the same
// steady state (README: Performance). It is set once the server is ready: the start's own code
// (the store's load, the schemas, the bootstrap) runs once, and optimizing it sooner made a
// start with 10,000 pods 14 % slower and the idle server 3.5 MB larger. Functions that ran
// before keep the budget they have until it runs out, and take the new one from then.
// From the start, it also makes each optimized compilation cheaper by inlining less (a callee
// of at most 200 bytes of bytecode instead of 460, at most 300 inlined bytes per function
// instead of 920). A replica's compiler threads spent about 5 s of CPU in the first 5 s of load
// and 12 s over a minute, some single compilations 50-70 ms (Raft's apply and ready handling),
// three replicas at once on two cores. With the smaller limits given at start, the quick
// three-replica create rows at 32 in flight rose 9-18 % in four alternated pairs, and
// steady-state CPU per create or PUT did not move beyond the noise; set only once the server
// was ready, they showed no clear gain.
// An operator's own value of any of these node flags (NODE_OPTIONS does not take them) wins.
// Imports: node, heap (operatorFlag).

import { setFlagsFromString } from 'node:v8';
import { operatorFlag } from '../heap/release-memory.js';

/** V8 11.3's default is 67,584 (66 KiB of bytecode). */
export const SERVER_INTERRUPT_BUDGET = 16 * 1024;

/** The node flags the server sets, and when (V8 11.3's defaults: 67,584; 920; 460). */
export const SERVER_JIT_FLAGS: ReadonlyArray<{ name: string; value: number; when: 'start' | 'ready' }> = [
  { name: 'interrupt-budget', value: SERVER_INTERRUPT_BUDGET, when: 'ready' },
  { name: 'max-inlined-bytecode-size-cumulative', value: 300, when: 'start' },
  { name: 'max-inlined-bytecode-size', value: 200, when: 'start' },
];

/**
 * Sets each of SERVER_JIT_FLAGS of that moment that the operator did not give; returns the
 * flags set. V8 reads the interrupt budget whenever it gives a function a budget (when it first
 * allocates the function's feedback, and again at each tiering decision) and the inlining
 * limits at each optimized compilation.
 */
export function setServerJitFlags(when: 'start' | 'ready', o: { execArgv?: readonly string[]; set?: (flags: string) => void } = {}): string[] {
  const set: string[] = [];
  for (const { name, value } of SERVER_JIT_FLAGS.filter((f) => f.when === when)) {
    if (operatorFlag(name, o.execArgv ?? process.execArgv)) continue;
    const flag = `--${name}=${value}`;
    (o.set ?? setFlagsFromString)(flag);
    set.push(flag);
  }
  return set;
}
