// A burst of concurrent writes through every replica must not cost the cluster its leader:
// real clusterd processes with the default timing (100 ms heartbeat, 1 s election timeout),
// several bursts of 90 concurrent creates spread over the three replicas, and the Raft term
// of every replica read before and after each one. A term that moves means an election was
// held (pre-vote keeps a healthy cluster's term still), which is what a burst on a loaded
// 2-core host used to cause (issue 13). The replicas' stall warnings (raft-liveness.ts) are
// printed with any failure, so that the cause shows, and so is the event-loop delay of this
// process, which relays the peer traffic (peer-proxy.ts).
// Opt-in (`make test-bursts`, CLUSTERD_BURSTS=n bursts, default 3): on a host loaded far
// beyond its cores the first burst after start can still stall every process for longer
// than an election timeout (see the report of issue 13), so it is a measurement, not part of
// `make test`.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess } from './support/cluster-process.js';

const BURSTS = Number(process.env.CLUSTERD_BURSTS ?? 3);
const enabled = process.env.CLUSTERD_BURSTS !== undefined;
const PER_REPLICA = 30;

describe.skipIf(!enabled)('leader stability under bursts of writes', () => {
  let cluster: ClusterProcess;
  const path = '/api/v1/namespaces/default/configmaps';

  beforeAll(async () => {
    cluster = await ClusterProcess.started();
  }, 120_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  const terms = async (): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    for (const name of cluster.names) {
      const self = (await cluster.members(name, true)).find((m) => m.name === name);
      out.set(name, self?.term ?? -1);
    }
    return out;
  };

  it(`${BURSTS} bursts of ${3 * PER_REPLICA} concurrent creates hold no election`, async () => {
    const before = await terms();
    const changes: string[] = [];
    for (let burst = 0; burst < BURSTS; burst++) {
      const start = await terms();
      const eld = monitorEventLoopDelay({ resolution: 10 });
      eld.enable();
      const results = await Promise.all(
        cluster.names.flatMap((replica) =>
          Array.from({ length: PER_REPLICA }, (_, i) =>
            cluster.http.request(cluster.url(replica), 'POST', path, {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: `burst-${burst}-${replica}-${i}` },
              // About 4 KiB each, so that a burst's appends are a few hundred KiB.
              data: { payload: 'x'.repeat(4096) },
            }, 60_000),
          ),
        ),
      );
      eld.disable();
      console.log(`burst ${burst}: test process (peer proxies) event-loop delay max ${Math.round(eld.max / 1e6)} ms p99 ${Math.round(eld.percentile(99) / 1e6)} ms`);
      const end = await terms();
      const statuses = new Map<number, number>();
      for (const r of results) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      const moved = [...end].filter(([n, t]) => t !== start.get(n)).map(([n, t]) => `${n} ${start.get(n)}→${t}`);
      if (moved.length > 0) changes.push(`burst ${burst}: ${moved.join(', ')} (statuses ${JSON.stringify([...statuses])})`);
    }
    const after = await terms();
    const stalls = cluster.names.flatMap((n) => cluster.logs(n).split('\n').filter((l) => /raft liveness/.test(l)));
    const report = `terms before ${JSON.stringify([...before])} after ${JSON.stringify([...after])}\n${changes.join('\n')}\n${stalls.slice(-80).join('\n')}`;
    console.log(report);
    expect(changes, report).toEqual([]);
  }, 600_000);
});
