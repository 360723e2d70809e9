// Linearizability of the replicated key-value store under the simulator's faults, judged by
// the checker; and proof that the checker has teeth: a store that serves reads from any
// node's local state without ReadIndex is caught. RAFT_SIM_SEEDS/2 seeds run (1000 by
// default) from RAFT_SIM_FIRST (default 1); RAFT_SIM_SEED=<n> runs only seed n.
import { describe, expect, it } from 'vitest';
import { checkOperations } from './checker.js';
import { kvModel } from './kv-model.js';
import { runKvSeed } from './kv-sim.js';

const single = process.env.RAFT_SIM_SEED;
const total = single !== undefined ? 1 : Math.max(1, Math.floor(Number(process.env.RAFT_SIM_SEEDS ?? 2000) / 2));
const first = single !== undefined ? Number(single) : Number(process.env.RAFT_SIM_FIRST ?? 1);
if (!Number.isSafeInteger(first) || first < 0) throw new Error(`RAFT_SIM_FIRST / RAFT_SIM_SEED must be a whole number ≥ 0, not ${first}`);
const CHUNK = 200;

describe('linearizable key-value store on simulated raft', () => {
  for (let start = 0; start < total; start += CHUNK) {
    const lo = first + start;
    const hi = lo + Math.min(CHUNK, total - start) - 1;
    it(`ReadIndex reads and logged writes are linearizable, seeds ${lo}..${hi}`, { timeout: 120_000 }, () => {
      let ops = 0;
      for (let seed = lo; seed <= hi; seed++) {
        const history = runKvSeed(seed, { readMode: 'read-index' });
        ops += history.length;
        const r = checkOperations(kvModel, history);
        if (r.result !== 'ok') {
          const described = (r.failedPartition ?? []).map((o) => kvModel.describe?.(o)).join('\n');
          expect.fail(`seed ${seed}: history is ${r.result} (reproduce with RAFT_SIM_SEED=${seed})\n${described}`);
        }
      }
      expect(ops).toBeGreaterThan(hi - lo + 1); // histories are not trivially empty
    });
  }

  it('catches stale reads served by followers without ReadIndex', { timeout: 60_000 }, () => {
    let caught = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const history = runKvSeed(seed, { readMode: 'local-follower' });
      if (checkOperations(kvModel, history).result === 'illegal') caught++;
    }
    expect(caught).toBeGreaterThan(0);
  });
});
