// A rolling restart of a three-replica cluster with real processes — each replica in turn gets
// SIGTERM (it must exit 0), is started again on its data and must become ready before the next
// — twice over, while load processes read and compare-and-set ConfigMaps through every replica
// and retrying watchers stay connected. A watcher whose replica goes away resumes from the last
// resourceVersion it saw on the next replica: it must never be answered 410 Gone nor need a
// relist, and its stream must validate (in order, no duplicates, no gaps, the final state).
// The history must lose no acknowledged write and be linearizable per key.
import { describe, expect, it } from 'vitest';
import { ClusterProcess, sleep } from './support/cluster-process.js';
import { finalLists, waitWatchersCaughtUp } from './support/final-state.js';
import { analyzeHistory } from './support/history-analysis.js';
import { LoadClients } from './support/load-clients.js';
import { RetryingWatcher } from './support/retrying-watcher.js';

const NAMESPACE = 'rolling';

describe('rolling restart of every replica', () => {
  it('watchers resume from their last resourceVersion on another replica: no 410, no relist, nothing lost', async () => {
    const started = Date.now();
    const log = (l: string): void => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${l}`);
    const cluster = await ClusterProcess.create({ log });
    let load: LoadClients | undefined;
    const watchers: RetryingWatcher[] = [];
    try {
      load = new LoadClients(
        [1, 2].map((clientId) => ({
          clientId,
          workers: 3,
          replicas: Object.fromEntries(cluster.names.map((n) => [n, cluster.url(n)])),
          pkiDir: cluster.pkiDir,
          namespace: NAMESPACE,
          keys: ['r0', 'r1', 'r2', 'r3', 'r4', 'r5'],
          seed: clientId,
          requestTimeoutMs: 20_000,
          thinkMs: 0,
        })),
      );
      await cluster.startAll();
      await cluster.waitAllReady();
      const leader = await cluster.waitForLeader();
      const ns = await cluster.http.request(cluster.url(leader), 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
      expect(ns.status, ns.body).toBe(200);
      const replicas = (): Array<[string, string]> => cluster.names.map((n) => [n, cluster.url(n)]);
      // Streams that the server would keep for ten minutes: every resume below is a restart's doing.
      for (const [i, name] of [...cluster.names, ...cluster.names].entries()) {
        const w = new RetryingWatcher({ id: `w${i}@${name}`, replicas, preferred: name, creds: cluster.creds, path: `/api/v1/namespaces/${NAMESPACE}/configmaps`, streamSeconds: [600, 600] });
        await w.start();
        watchers.push(w);
      }
      load.begin();
      while (load.acknowledged() < 20) await sleep(100);
      log(`load running (${load.acknowledged()} acknowledged)`);

      for (let pass = 0; pass < 2; pass++) {
        for (const name of cluster.names) {
          log(`pass ${pass}: SIGTERM ${name} (leader ${String(await cluster.leader())}, ${load.acknowledged()} acknowledged)`);
          expect(await cluster.stop(name), `${name} exit code after SIGTERM`).toBe(0);
          await sleep(500);
          await cluster.start(name);
          await cluster.waitAllReady(90_000);
          await sleep(1000);
        }
      }
      await sleep(1000);
      await load.stop();
      log(`load stopped: ${load.records.length} operations`);
      const finals = await finalLists(cluster, NAMESPACE);
      expect(await waitWatchersCaughtUp(watchers, finals[0]!), 'every watcher reaches the final state').toBe(true);
      await Promise.all(watchers.map((w) => w.stop()));

      const analysis = analyzeHistory(load.records, finals, watchers);
      const c = analysis.counts;
      const summary = [
        `restarts: 6 (SIGTERM, two passes); operations ${c.operations}; writes acknowledged ${c.acknowledged}, certainly failed ${c.failedCertainly}, unknown ${c.unknown} (applied ${c.unknownApplied}); writes lost ${c.lost}; linearizability ${analysis.linearizability}`,
        `non-acknowledged write outcomes: ${JSON.stringify(analysis.outcomes)}`,
        ...watchers.map((w) => `${w.id}: ${w.events.length} events, ${w.resumes} resumes ${JSON.stringify(Object.fromEntries(w.streamsBy))}, ${w.relists} relists, ${w.expired} × 410, incidents ${JSON.stringify(w.incidents.reduce<Record<string, number>>((m, i) => ((m[i.kind] = (m[i.kind] ?? 0) + 1), m), {}))}`),
      ].join('\n');
      log(summary);
      expect([...analysis.problems, ...load.errors], summary).toEqual([]);
      expect(analysis.linearizability, analysis.illegalDetail).toBe('ok');
      expect(c.acknowledged).toBeGreaterThan(50);
      for (const w of watchers) {
        expect(w.expired, `${w.id}: 410 Gone`).toBe(0);
        expect(w.relists, `${w.id}: relists`).toBe(0);
        // Each watcher lost its replica at least once (every replica restarted twice).
        expect(w.resumes, `${w.id}: resumes`).toBeGreaterThanOrEqual(1);
        expect(w.incidents.filter((i) => i.kind === 'error-event' || i.kind === 'bookmark-back' || i.kind === 'parse'), w.id).toEqual([]);
      }
      expect(cluster.unexpectedExits).toEqual([]);
      expect(cluster.fatalLines()).toEqual([]);
    } finally {
      load?.kill();
      await Promise.all(watchers.map((w) => w.stop().catch(() => undefined)));
      await cluster.destroy();
    }
  }, 600_000);
});
