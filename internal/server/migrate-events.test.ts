// Events that earlier versions stored under their own events.k8s.io prefix move into the
// shared core event store when a server starts on the data directory.
import { describe, it, expect } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../log/logger.js';
import { LevelRevisionStore } from '../store/revision-store.js';
import { decodeStored, encodeStored } from '../storedobject/stored-object.js';
import { startTestServer } from '../testserver/test-server.js';
import { migrateSeparateEvents } from './migrate-events.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

const OLD = '/registry/events.k8s.io/events/';
const NEW = '/registry/core/events/';

const oldEvent = (name: string, namespace = 'default'): Buffer =>
  encodeStored({
    kind: 'Event',
    apiVersion: 'events.k8s.io/v1',
    metadata: { name, namespace, uid: `uid-${name}`, creationTimestamp: '2025-01-01T00:00:00Z' },
    eventTime: '2025-01-01T00:00:00.000000Z',
    reportingController: 'example.com/ctl',
    reportingInstance: 'i',
    action: 'A',
    reason: 'R',
    note: `note of ${name}`,
    type: 'Normal',
    regarding: { kind: 'Pod', name: 'p', namespace },
  });

describe('migrateSeparateEvents', () => {
  it('moves old-prefix events into the core store in core shape; a name a core event has is dropped', async () => {
    const store = await LevelRevisionStore.open({ storage: 'memory' });
    try {
      const put = (key: string, value: Buffer) => store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key, value }] });
      await put(`${OLD}default/a`, oldEvent('a'));
      await put(`${OLD}team/b`, oldEvent('b', 'team'));
      await put(`${OLD}default/taken`, oldEvent('taken'));
      await put(`${NEW}default/taken`, encodeStored({ kind: 'Event', apiVersion: 'v1', metadata: { name: 'taken', namespace: 'default' }, message: 'core' }));
      await put(`${OLD}default/junk`, Buffer.from('not json'));

      expect(await migrateSeparateEvents(store, silentLogger)).toEqual({ moved: 2, dropped: 2 });
      expect((await store.range(OLD)).kvs).toEqual([]);
      const moved = await store.get(`${NEW}default/a`);
      expect(decodeStored(moved!.value, moved!.modRevision)).toEqual({
        kind: 'Event',
        apiVersion: 'v1',
        metadata: { resourceVersion: String(moved!.modRevision), name: 'a', namespace: 'default', uid: 'uid-a', creationTimestamp: '2025-01-01T00:00:00Z' },
        involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
        reason: 'R',
        message: 'note of a',
        type: 'Normal',
        eventTime: '2025-01-01T00:00:00.000000Z',
        action: 'A',
        reportingComponent: 'example.com/ctl',
        reportingInstance: 'i',
      });
      expect(await store.get(`${NEW}team/b`)).toBeDefined();
      const kept = await store.get(`${NEW}default/taken`);
      expect(decodeStored(kept!.value, kept!.modRevision).message).toBe('core');

      // Nothing left: a later start changes nothing.
      const revision = store.currentRevision();
      expect(await migrateSeparateEvents(store, silentLogger)).toEqual({ moved: 0, dropped: 0 });
      expect(store.currentRevision()).toBe(revision);
    } finally {
      await store.close();
    }
  });

  it('runs when a server starts on a data directory written by an earlier version', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'clusterd-events-'));
    const store = await LevelRevisionStore.open({ storage: 'leveldb', path: join(dataDir, 'store'), naming: 'kubernetes' });
    await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: `${OLD}default/old`, value: oldEvent('old') }] });
    await store.close();

    const t = await startTestServer({ dataDir, storage: 'leveldb', naming: 'kubernetes' });
    try {
      const core = (await t.admin.get('/api/v1/namespaces/default/events/old')).json<Obj>();
      expect(core).toMatchObject({ apiVersion: 'v1', message: 'note of old', metadata: { uid: 'uid-old' } });
      const v1 = (await t.admin.get('/apis/events.k8s.io/v1/namespaces/default/events/old')).json<Obj>();
      expect(v1).toMatchObject({ apiVersion: 'events.k8s.io/v1', note: 'note of old', metadata: { uid: 'uid-old', resourceVersion: core.metadata.resourceVersion } });
    } finally {
      await t.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
