// Core v1 and events.k8s.io/v1 Events share one storage (the core event store, as upstream):
// an event written through either API is read, listed with field selectors, watched, patched,
// applied and deleted through the other, with one resourceVersion and uid. Under both namings.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ProtobufCodec } from '../codec/index.js';
import { createNaming, NAMING_MODES } from '../naming/naming.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

interface WatchEvent {
  type: string;
  object: Obj;
}

describe.each(NAMING_MODES)('shared Event storage (naming %s)', (mode) => {
  const naming = createNaming(mode);
  const group = naming.group('events.k8s.io');
  const CORE = '/api/v1/namespaces/ev/events';
  const V1 = `/apis/${group}/v1/namespaces/ev/events`;
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ naming: mode });
    await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ev' } });
  });
  afterAll(() => t.stop());

  const newStyle = (name: string, extra: Obj = {}): Obj => ({
    apiVersion: `${group}/v1`,
    kind: 'Event',
    metadata: { name },
    eventTime: '2025-01-01T00:00:00.000000Z',
    reportingController: 'example.com/ctl',
    reportingInstance: 'ctl-0',
    action: 'Reconcile',
    reason: 'Tested',
    note: `note of ${name}`,
    type: 'Warning',
    regarding: { apiVersion: 'v1', kind: 'Pod', name: 'web', namespace: 'ev', uid: 'pod-uid' },
    ...extra,
  });
  const legacy = (name: string, extra: Obj = {}): Obj => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name },
    // Legacy validation (both APIs): a subject's namespace must be the event's.
    involvedObject: { kind: 'Node', name: 'n1', namespace: 'ev' },
    reason: 'NodeReady',
    message: `message of ${name}`,
    source: { component: 'kubelet', host: 'n1' },
    firstTimestamp: '2025-01-01T00:00:00Z',
    lastTimestamp: '2025-01-01T00:05:00Z',
    count: 3,
    type: 'Normal',
    ...extra,
  });
  const names = (list: Obj): string[] => list.items.map((i: Obj) => i.metadata.name).sort();

  function collect(path: string) {
    const events: WatchEvent[] = [];
    const w = t.admin.watch(path, (line) => events.push(JSON.parse(line) as WatchEvent));
    return {
      events,
      stop: w.stop,
      async until(pred: (evs: WatchEvent[]) => boolean, timeoutMs = 5000) {
        const deadline = Date.now() + timeoutMs;
        while (!pred(events)) {
          if (Date.now() > deadline) throw new Error(`watch condition not met; got ${JSON.stringify(events.map((e) => [e.type, e.object?.metadata?.name]))}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      },
    };
  }

  it('an events.k8s.io event is the same core event: get, list with field selectors, delete', async () => {
    const created = await t.admin.post(V1, newStyle('e1'));
    expect(created.status, created.text()).toBe(200);
    const v1 = created.json<Obj>();
    expect(v1).toMatchObject({ apiVersion: `${group}/v1`, note: 'note of e1', regarding: { kind: 'Pod', name: 'web' } });

    const core = (await t.admin.get(`${CORE}/e1`)).json<Obj>();
    expect(core).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'web', namespace: 'ev', uid: 'pod-uid' },
      message: 'note of e1',
      reportingComponent: 'example.com/ctl',
      reportingInstance: 'ctl-0',
      eventTime: '2025-01-01T00:00:00.000000Z',
      action: 'Reconcile',
      reason: 'Tested',
      type: 'Warning',
    });
    for (const k of ['regarding', 'note', 'reportingController', 'deprecatedSource']) expect(core).not.toHaveProperty(k);
    expect(core.metadata.uid).toBe(v1.metadata.uid);
    expect(core.metadata.resourceVersion).toBe(v1.metadata.resourceVersion);

    const byKind = (await t.admin.get(`/api/v1/events?fieldSelector=involvedObject.kind%3DPod,reportingComponent%3Dexample.com%2Fctl`)).json<Obj>();
    expect(names(byKind)).toEqual(['e1']);
    expect(names((await t.admin.get('/api/v1/events?fieldSelector=involvedObject.kind%3DNode')).json<Obj>())).not.toContain('e1');
    expect(names((await t.admin.get(`${V1}?fieldSelector=regarding.name%3Dweb,reportingController%3Dexample.com%2Fctl`)).json<Obj>())).toEqual(['e1']);

    const deleted = await t.admin.delete(`${CORE}/e1`);
    expect(deleted.status, deleted.text()).toBe(200);
    const gone = await t.admin.get(`${V1}/e1`);
    expect(gone.status).toBe(404);
    expect(gone.json<Obj>()).toMatchObject({ reason: 'NotFound', details: { group, kind: 'events', name: 'e1' } });
  });

  it('a core event is served by events.k8s.io: field selectors, merge and strategic patches, update, apply', async () => {
    expect((await t.admin.post(CORE, legacy('c1'))).status).toBe(200);
    const v1 = (await t.admin.get(`${V1}/c1`)).json<Obj>();
    expect(v1).toMatchObject({
      apiVersion: `${group}/v1`,
      regarding: { kind: 'Node', name: 'n1' },
      note: 'message of c1',
      deprecatedSource: { component: 'kubelet', host: 'n1' },
      deprecatedFirstTimestamp: '2025-01-01T00:00:00Z',
      deprecatedLastTimestamp: '2025-01-01T00:05:00Z',
      deprecatedCount: 3,
    });
    for (const k of ['involvedObject', 'message', 'source', 'count']) expect(v1).not.toHaveProperty(k);
    expect(names((await t.admin.get(`${V1}?fieldSelector=regarding.kind%3DNode,source%3Dkubelet`)).json<Obj>())).toEqual(['c1']);
    expect((await t.admin.get(`${V1}?fieldSelector=involvedObject.kind%3DNode`)).status).toBe(400);

    // A legacy event has no eventTime; events.k8s.io lets it be changed all the same, as upstream.
    const merged = await t.admin.request('PATCH', `${V1}/c1`, { body: { metadata: { labels: { via: 'merge' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(merged.status, merged.text()).toBe(200);
    const smp = await t.admin.request('PATCH', `${CORE}/c1`, { body: { count: 4, metadata: { labels: { via2: 'smp' } } }, headers: { 'content-type': 'application/strategic-merge-patch+json' } });
    expect(smp.status, smp.text()).toBe(200);
    const after = (await t.admin.get(`${V1}/c1`)).json<Obj>();
    expect(after.metadata.labels).toEqual({ via: 'merge', via2: 'smp' });
    expect(after.deprecatedCount).toBe(4);
    expect(after.metadata.resourceVersion).toBe(smp.json<Obj>().metadata.resourceVersion);

    // PUT through events.k8s.io; immutable fields stay immutable there.
    const put = await t.admin.put(`${V1}/c1`, { ...after, metadata: { ...after.metadata, annotations: { a: 'b' } } });
    expect(put.status, put.text()).toBe(200);
    expect((await t.admin.get(`${CORE}/c1`)).json<Obj>().metadata.annotations).toEqual({ a: 'b' });
    const immutable = await t.admin.put(`${V1}/c1`, { ...put.json<Obj>(), note: 'rewritten' });
    expect(immutable.status).toBe(422);

    // Server-side apply through both APIs.
    const apply = (path: string, body: Obj, manager: string) =>
      t.admin.request('PATCH', `${path}?fieldManager=${manager}`, { body, headers: { 'content-type': 'application/apply-patch+yaml' } });
    const a1 = await apply(`${V1}/c1`, { apiVersion: `${group}/v1`, kind: 'Event', metadata: { name: 'c1', labels: { applied: 'v1' } } }, 'applier-v1');
    expect(a1.status, a1.text()).toBe(200);
    // count belongs to the strategic-merge patcher above (an Update in v1): a conflict.
    const conflict = await apply(`${CORE}/c1`, { apiVersion: 'v1', kind: 'Event', metadata: { name: 'c1' }, count: 5 }, 'applier-core');
    expect(conflict.status).toBe(409);
    const a2 = await apply(`${CORE}/c1`, { apiVersion: 'v1', kind: 'Event', metadata: { name: 'c1', labels: { applied2: 'core' } }, action: 'Observed' }, 'applier-core');
    expect(a2.status, a2.text()).toBe(200);
    const applied = (await t.admin.get(`${CORE}/c1`)).json<Obj>();
    expect(applied.metadata.labels).toMatchObject({ applied: 'v1', applied2: 'core' });
    expect(applied.action).toBe('Observed');
    // Each manager's entry keeps the apiVersion (and field names) it wrote with.
    const entries = Object.fromEntries(applied.metadata.managedFields.map((m: Obj) => [m.manager, m]));
    expect(entries['applier-v1']).toMatchObject({ operation: 'Apply', apiVersion: `${group}/v1` });
    expect(entries['applier-core']).toMatchObject({ operation: 'Apply', apiVersion: 'v1', fieldsV1: { 'f:action': {} } });

    // Creating an event through apply on events.k8s.io stores it for core readers too.
    const created = await apply(`${V1}/a1`, newStyle('a1'), 'applier-v1');
    expect(created.status, created.text()).toBe(201);
    expect((await t.admin.get(`${CORE}/a1`)).json<Obj>()).toMatchObject({ message: 'note of a1', involvedObject: { name: 'web' } });
  });

  it('watches through one API see writes through the other, converted', async () => {
    const core = collect(`${CORE}?watch=1&fieldSelector=involvedObject.name%3Dweb`);
    const v1 = collect(`${V1}?watch=1&fieldSelector=regarding.kind%3DNode`);
    try {
      await core.until((evs) => evs.some((e) => e.object.metadata.name === 'a1'));
      await v1.until((evs) => evs.some((e) => e.object.metadata.name === 'c1'));
      const w1 = (await t.admin.post(V1, newStyle('w1'))).json<Obj>();
      const w2 = (await t.admin.post(CORE, legacy('w2'))).json<Obj>();
      const patched = await t.admin.request('PATCH', `${V1}/w1`, { body: { metadata: { labels: { x: 'y' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
      expect((await t.admin.delete(`${V1}/w2`)).status).toBe(200);
      await core.until((evs) => evs.some((e) => e.type === 'MODIFIED' && e.object.metadata.name === 'w1'));
      await v1.until((evs) => evs.some((e) => e.type === 'DELETED' && e.object.metadata.name === 'w2'));

      const coreW1 = core.events.filter((e) => e.object.metadata.name === 'w1');
      expect(coreW1.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
      expect(coreW1[0]!.object).toMatchObject({ apiVersion: 'v1', message: 'note of w1', involvedObject: { kind: 'Pod' } });
      expect(coreW1[0]!.object.metadata.resourceVersion).toBe(w1.metadata.resourceVersion);
      expect(coreW1[1]!.object.metadata.resourceVersion).toBe(patched.json<Obj>().metadata.resourceVersion);

      const v1W2 = v1.events.filter((e) => e.object.metadata.name === 'w2');
      expect(v1W2.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
      expect(v1W2[0]!.object).toMatchObject({ apiVersion: `${group}/v1`, note: 'message of w2', regarding: { kind: 'Node' }, deprecatedCount: 3 });
      expect(v1W2[0]!.object.metadata.uid).toBe(w2.metadata.uid);
      expect(v1.events.some((e) => e.object.metadata.name === 'w1')).toBe(false);
    } finally {
      core.stop();
      v1.stop();
    }
  });

  it('keeps the APIs apart on validation: events.k8s.io is strict on create, core lenient', async () => {
    const strict = await t.admin.post(V1, { apiVersion: `${group}/v1`, kind: 'Event', metadata: { name: 'bad' }, type: 'Normal', deprecatedCount: 2 });
    expect(strict.status).toBe(422);
    const fields = strict.json<Obj>().details.causes.map((c: Obj) => c.field);
    for (const f of ['eventTime', 'reportingController', 'reportingInstance', 'action', 'reason', 'deprecatedCount']) expect(fields).toContain(f);
    expect((await t.admin.post(CORE, { apiVersion: 'v1', kind: 'Event', metadata: { name: 'lenient' }, involvedObject: { kind: 'Node', name: 'n', namespace: 'ev' } })).status).toBe(200);
    expect((await t.admin.get(`${V1}/lenient`)).json<Obj>()).toMatchObject({ regarding: { kind: 'Node', name: 'n' } });
  });

  it('encodes both views as protobuf and Tables', async () => {
    await t.admin.post(V1, newStyle('p1'));
    const codec = new ProtobufCodec(naming);
    const accept = { accept: naming.protobufMediaType };
    const asCore = codec.decode((await t.admin.get(`${CORE}/p1`, accept)).body) as Obj;
    const asV1 = codec.decode((await t.admin.get(`${V1}/p1`, accept)).body) as Obj;
    expect(asCore).toMatchObject({ apiVersion: 'v1', message: 'note of p1', involvedObject: { name: 'web' }, reportingComponent: 'example.com/ctl' });
    expect(asV1).toMatchObject({ apiVersion: `${group}/v1`, note: 'note of p1', regarding: { name: 'web' }, reportingController: 'example.com/ctl' });
    const list = codec.decode((await t.admin.get(`${V1}?fieldSelector=metadata.name%3Dp1`, accept)).body) as Obj;
    expect(list.items.map((i: Obj) => i.note)).toEqual(['note of p1']);

    const table = { accept: `application/json;as=Table;g=${naming.metaGroup};v=v1` };
    for (const path of [`${CORE}?fieldSelector=metadata.name%3Dp1`, `${V1}?fieldSelector=metadata.name%3Dp1`]) {
      const rows = (await t.admin.get(path, table)).json<Obj>().rows as Obj[];
      // Type, Reason, Object, Source, Message: the same whichever API reads it.
      expect([1, 2, 3, 5, 6].map((i) => rows[0]!.cells[i])).toEqual(['Warning', 'Tested', 'pod/web', 'example.com/ctl, ctl-0', 'note of p1']);
    }
  });

  it('deletes collections through either API, selected by either shape', async () => {
    await t.admin.post(CORE, legacy('d1', { involvedObject: { kind: 'ConfigMap', name: 'cm', namespace: 'ev' } }));
    await t.admin.post(V1, newStyle('d2', { regarding: { kind: 'ConfigMap', name: 'cm', namespace: 'ev' } }));
    await t.admin.post(V1, newStyle('d3'));
    const res = await t.admin.delete(`${V1}?fieldSelector=regarding.kind%3DConfigMap`);
    expect(res.status, res.text()).toBe(200);
    expect(names(res.json<Obj>()).filter((n) => n.startsWith('d'))).toEqual(['d1', 'd2']);
    expect(res.json<Obj>().items.every((i: Obj) => i.apiVersion === `${group}/v1` && 'regarding' in i)).toBe(true);
    expect(names((await t.admin.get(CORE)).json<Obj>()).filter((n) => n.startsWith('d'))).toEqual(['d3']);
    expect((await t.admin.delete(`${CORE}?fieldSelector=metadata.name%3Dd3`)).status).toBe(200);
    expect((await t.admin.get(`${V1}/d3`)).status).toBe(404);
  });
});
