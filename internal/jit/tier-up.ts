// internal/jit/tier-up owns how soon V8 optimizes the server's hot code. A fresh clusterd runs
// its request and apply paths in V8's interpreter and baseline code for tens of seconds under
// load before the optimizing compiler takes them (measured on the 2-core machine: a replica's
// compiler threads were about 30 % of its CPU 8-20 s in, 9 % after a minute), so a started or
// restarted server, or a replica that has just become leader, serves far below its steady
// rate meanwhile. V8 optimizes a function once it has run through its interrupt budget
// (bytecode executed since its last tiering decision); a quarter of the default budget gets
// the hot paths there about four times sooner at the same steady state (README: Performance).
// It is set once the server is ready: the start's own code (the store's load, the schemas,
// the bootstrap) runs once, and optimizing it sooner made a start with 10,000 pods 14 % slower
// and the idle server 3.5 MB larger. Functions that ran before keep the budget they have until
// it runs out, and take the new one from then. An operator's own --interrupt-budget (a node flag:
// NODE_OPTIONS does not take it) wins.
// Imports: node, heap (operatorFlag).

import { setFlagsFromString } from 'node:v8';
import { operatorFlag } from '../heap/release-memory.js';

/** V8 11.3's default is 67,584 (66 KiB of bytecode). */
export const SERVER_INTERRUPT_BUDGET = 16 * 1024;

/**
 * Sets the server's interrupt budget unless the operator chose one; returns the flag set, or
 * undefined when none was. V8 reads the flag whenever it gives a function a budget: when it
 * first allocates the function's feedback, and again at each tiering decision.
 */
export function setServerTierUp(
  o: { execArgv?: readonly string[]; set?: (flags: string) => void } = {},
): string | undefined {
  if (operatorFlag('interrupt-budget', o.execArgv ?? process.execArgv)) return undefined;
  const flag = `--interrupt-budget=${SERVER_INTERRUPT_BUDGET}`;
  (o.set ?? setFlagsFromString)(flag);
  return flag;
}
