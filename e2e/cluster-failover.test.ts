// Failover under load with real processes: three clusterd replicas, three load processes doing
// consistent reads and compare-and-set updates (resourceVersion preconditions) of ConfigMaps
// through every replica, and retrying watchers on every replica, while the leader is killed
// with SIGKILL again and again (restarted on its data each time) and a follower is cut off from
// its peers (alone, and once while the leader dies). Afterwards no acknowledged write may be
// lost, the history must be linearizable per key, and every watcher's stream must be in order,
// without duplicates, gaps or time travel, ending at the replicas' final state.
// The scenario lives in support/failover-scenario.ts (shared with the chaos run).
import { describe, expect, it } from 'vitest';
import { runFailoverScenario } from './support/failover-scenario.js';

describe('three replicas under load while the leader is killed and a follower is cut off', () => {
  it('loses no acknowledged write, stays linearizable per key, and every watch stream validates', async () => {
    const report = await runFailoverScenario({ mode: 'failover', rounds: 5, log: (l) => console.log(l) });
    expect(report.problems, report.summary).toEqual([]);
    expect(report.analysis.counts.lost).toBe(0);
    expect(report.analysis.linearizability, report.analysis.illegalDetail ?? report.summary).toBe('ok');
    expect(report.faults['kill-leader']).toBeGreaterThanOrEqual(4);
    expect(report.faults['isolate-follower']).toBe(2);
    // The load got through between the faults (a run that acknowledged nothing proves nothing).
    expect(report.analysis.counts.acknowledged, report.summary).toBeGreaterThan(100);
  }, 600_000);
});
