// Linearizability of the replicated key-value store under the simulator's faults, judged by
// the checker; and proof that the checker has teeth: a store that serves reads from any
// node's local state without ReadIndex is caught.
import { describe, expect, it } from 'vitest';
import { checkOperations } from './checker.js';
import { kvModel } from './kv-model.js';
import { runKvSeed } from './kv-sim.js';

const single = process.env.RAFT_SIM_SEED;
const seeds = single !== undefined ? [Number(single)] : Array.from({ length: Math.max(1, Math.floor(Number(process.env.RAFT_SIM_SEEDS ?? 2000) / 5)) }, (_, i) => i + 1);

describe('linearizable key-value store on simulated raft', () => {
  it(`ReadIndex reads and logged writes are linearizable (${seeds.length} seeds)`, { timeout: 300_000 }, () => {
    let ops = 0;
    for (const seed of seeds) {
      const history = runKvSeed(seed, { readMode: 'read-index' });
      ops += history.length;
      const r = checkOperations(kvModel, history);
      if (r.result !== 'ok') {
        const ops = (r.failedPartition ?? []).map((o) => kvModel.describe?.(o)).join('\n');
        expect.fail(`seed ${seed}: history is ${r.result} (reproduce with RAFT_SIM_SEED=${seed})\n${ops}`);
      }
    }
    expect(ops).toBeGreaterThan(seeds.length * 10);
  });

  it('catches stale reads served by followers without ReadIndex', { timeout: 60_000 }, () => {
    let caught = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const history = runKvSeed(seed, { readMode: 'local-follower' });
      if (checkOperations(kvModel, history).result === 'illegal') caught++;
    }
    expect(caught).toBeGreaterThan(0);
  });
});
