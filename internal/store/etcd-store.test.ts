// The RevisionStore contract and the etcd-specific behaviour (compaction → expired, an
// unreachable etcd → a fast unavailable error, the watch resuming after an etcd restart without
// losing or repeating events) against a real etcd (Debian's etcd-server, started here with the
// bench's launcher). Without etcd the file is skipped, except under CI=true where it fails.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProcess, etcdVersion } from '../../bench/targets/etcd-process.js';
import { ensurePki } from '../pki/pki.js';
import { readFileSync } from 'node:fs';
import { EtcdRevisionStore } from './etcd-store.js';
import { runStoreSuite } from './store-suite.js';
import { isStoreError, type AppliedBatch } from './types.js';

const installed = etcdVersion() !== undefined;
if (!installed && process.env.CI === 'true') throw new Error('etcd is not installed (tools/ensure-test-deps.sh installs etcd-server)');

describe.runIf(installed)('EtcdRevisionStore on a real etcd', () => {
  let dir: string;
  let etcd: EtcdProcess;
  let tls: { ca: Buffer; cert: Buffer; key: Buffer };
  let member: Parameters<typeof EtcdProcess.spawnMember>[0];
  let n = 0;
  const open = (prefix = `/t${++n}`, extra: { requestTimeoutMs?: number; watchWaitMs?: number } = {}) =>
    EtcdRevisionStore.open({ servers: [etcd.url], prefix, tls, ...extra });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcd-store-'));
    const pki = await ensurePki(dir, '127.0.0.1');
    tls = { ca: readFileSync(pki.caCert), cert: readFileSync(pki.adminCert), key: readFileSync(pki.adminKey) };
    const agent = new Agent({ ca: tls.ca, cert: tls.cert, key: tls.key });
    // Fresh ports when one is taken before etcd binds it; restarts later reuse the member's ports.
    ({ etcd, member } = await EtcdProcess.startOnFreePorts(
      (ports, attempt) => ({ name: 'test', dataDir: join(dir, attempt === 1 ? 'etcd' : `etcd-${attempt}`), ...ports, certFile: pki.serverCert, keyFile: pki.serverKey, initialCluster: `test=http://127.0.0.1:${ports.peerPort}` }),
      agent,
      30_000,
    ));
    agent.destroy();
  }, 60_000);

  afterAll(async () => {
    if (etcd?.running) await etcd.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  runStoreSuite('etcd', () => open());

  const enc = (s: string) => Buffer.from(s);

  it('reads at a compacted revision fail as compacted, for this server and one that learns it from the watch', async () => {
    const a = await open('/compact');
    const b = await open('/compact');
    try {
      const r1 = (await a.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/x', value: enc('1') }] })).revision;
      const r2 = (await a.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/x', value: enc('2') }] })).revision;
      // Another server reads another's write once its watch has it (a consistent read waits for that).
      await b.consistentRevision();
      expect(Buffer.from((await b.get('/x', r1))!.value).toString()).toBe('1');
      const batches: AppliedBatch[] = [];
      b.subscribe((batch) => batches.push(batch));
      await a.compact(r2);
      await expect(a.get('/x', r1)).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_COMPACTED'));
      await b.consistentRevision();
      expect(b.compactedRevision()).toBe(r2);
      expect(batches.some((x) => x.compactedRevision === r2)).toBe(true);
      await expect(b.get('/x', r1)).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_COMPACTED'));
      await expect(b.eventsSince('/', r1)).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_COMPACTED'));
      expect(Buffer.from((await b.get('/x', r2))!.value).toString()).toBe('2');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a write through one store reaches another through its watch, and consistent reads wait for it', async () => {
    const a = await open('/two');
    const b = await open('/two');
    try {
      const seen: string[] = [];
      b.subscribe((batch) => batch.events.forEach((e) => seen.push(`${e.type} ${e.kv.key} ${e.kv.modRevision}`)));
      const r = (await a.execute({ type: 'txn', compares: [{ key: '/k', modRevision: 0 }], ops: [{ type: 'put', key: '/k', value: enc('v') }] })).revision;
      expect(await b.consistentRevision()).toBeGreaterThanOrEqual(r);
      expect(b.currentRevision()).toBeGreaterThanOrEqual(r);
      expect(seen).toContain(`put /k ${r}`);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('fails fast with unavailable while etcd is down, and the watch resumes after a restart without losing or repeating events', async () => {
    const store = await open('/restart', { requestTimeoutMs: 1000, watchWaitMs: 5000 });
    const other = await open('/restart');
    try {
      const seen: number[] = [];
      store.subscribe((batch) => batch.events.forEach((e) => seen.push(e.kv.modRevision)));
      const before = (await other.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/a', value: enc('1') }] })).revision;
      await etcd.kill();
      const started = performance.now();
      await expect(store.get('/a')).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_READ_UNAVAILABLE'));
      await expect(store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/b', value: enc('x') }] })).rejects.toSatisfy(
        (e: unknown) => isStoreError(e) && ['STORE_NOT_PROPOSED', 'STORE_OUTCOME_UNKNOWN', 'STORE_UNAVAILABLE'].includes(e.code),
      );
      // Bounded by the request timeout (and the client's retries), not the default gRPC wait.
      expect(performance.now() - started).toBeLessThan(20_000);
      etcd = EtcdProcess.spawnMember(member);
      const agent = new Agent({ ca: tls.ca, cert: tls.cert, key: tls.key });
      await etcd.waitHealthy(agent, 30_000);
      agent.destroy();
      // Written through the other store while the first one's watch is still re-establishing.
      const written: number[] = [];
      for (let i = 0; i < 20; i++) {
        for (;;) {
          try {
            written.push((await other.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: `/c/${i}`, value: enc(String(i)) }] })).revision);
            break;
          } catch {
            await new Promise((r) => setTimeout(r, 200));
          }
        }
      }
      let last = 0;
      for (let attempt = 0; attempt < 100; attempt++) {
        try {
          last = await store.consistentRevision();
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      expect(last).toBeGreaterThanOrEqual(written[written.length - 1]!);
      const after = seen.filter((r) => r > before);
      expect(after).toEqual(written);
      expect(new Set(seen).size).toBe(seen.length);
    } finally {
      await store.close();
      await other.close();
    }
  }, 120_000);
});
