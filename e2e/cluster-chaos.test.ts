// The long chaos run of the multi-replica cluster: the failover scenario of
// cluster-failover.test.ts (support/failover-scenario.ts) with hundreds of faults drawn from a
// seeded mix — kill -9 of the leader, of a follower and of all three at once, SIGTERM restarts,
// the leader or a follower cut off from its peers, a follower cut off while the leader dies,
// processes frozen with SIGSTOP — under the same load processes and retrying watchers, judged
// the same way (no acknowledged write lost, linearizable per key, every watch stream valid).
//
// It takes tens of minutes, so `make test` skips it: `make test-chaos` runs it (it sets
// CLUSTERD_CHAOS=1; CHAOS_ROUNDS=n and CHAOS_SEED=n choose the number of fault rounds and the
// seed of the fault mix).
import { describe, expect, it } from 'vitest';
import { runFailoverScenario } from './support/failover-scenario.js';

const ROUNDS = Number(process.env.CLUSTERD_CHAOS_ROUNDS ?? 250);
const SEED = Number(process.env.CLUSTERD_CHAOS_SEED ?? 7);

describe.skipIf(process.env.CLUSTERD_CHAOS !== '1')('chaos: hundreds of faults under load (make test-chaos)', () => {
  it(`${ROUNDS} fault rounds: no acknowledged write lost, linearizable per key, every watch stream valid`, async () => {
    const report = await runFailoverScenario({ mode: 'chaos', rounds: ROUNDS, seed: SEED, log: (l) => console.log(l) });
    console.log(`chaos run (seed ${SEED}) took ${(report.elapsedMs / 60_000).toFixed(1)} min\n${report.summary}`);
    expect(report.problems, report.summary).toEqual([]);
    expect(report.analysis.counts.lost).toBe(0);
    expect(report.analysis.linearizability, report.analysis.illegalDetail ?? report.summary).toBe('ok');
    expect(report.faultsTotal).toBeGreaterThanOrEqual(ROUNDS);
    expect(report.analysis.counts.acknowledged).toBeGreaterThan(ROUNDS);
  }, ROUNDS * 30_000 + 600_000);
});
