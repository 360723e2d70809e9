// List and watch semantics (spec §2.4, §2.6, §4.3, §4.5, §4.6, §6) against a real server.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { FeatureGates } from '../config/feature-gates.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

const NS = '/api/v1/namespaces/lw/configmaps';
const cm = (name: string, data: Record<string, string> = { v: '1' }, labels: Record<string, string> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels },
  data,
});

async function setupNamespace(t: TestServer, ns: string): Promise<void> {
  await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
}

describe('resourceVersion semantics (§4.5), every cell', () => {
  let t: TestServer;
  let r1 = 0; // revision after the first object
  let current = 0;
  let token = '';
  beforeAll(async () => {
    t = await startTestServer({}, { tooLargeWaitMs: 300 });
    await setupNamespace(t, 'lw');
    r1 = Number((await t.admin.post(NS, cm('a'))).json<Obj>().metadata.resourceVersion);
    await t.admin.post(NS, cm('b'));
    await t.admin.post(NS, cm('c'));
    current = Number((await t.admin.put(`${NS}/a`, cm('a', { v: '2' }))).json<Obj>().metadata.resourceVersion);
    token = (await t.admin.get(`${NS}?limit=1`)).json<Obj>().metadata.continue;
  });
  afterAll(() => t.stop());

  type Expect = { status: number; rv?: 'current' | 'r1' | 'token'; items?: string[]; aVersion?: string };
  // [resourceVersionMatch, paging, resourceVersion, expected]
  const listCells: Array<[string, string, string, Expect]> = [
    ['', '', '', { status: 200, rv: 'current', items: ['a', 'b', 'c'], aVersion: '2' }],
    ['', '', '0', { status: 200, rv: 'current', items: ['a', 'b', 'c'] }],
    ['', '', 'r1', { status: 200, rv: 'current', aVersion: '2' }], // not older than: at least r1
    ['', 'limit=2', '', { status: 200, rv: 'current', items: ['a', 'b'] }],
    ['', 'limit=2', '0', { status: 200, rv: 'current', items: ['a', 'b'] }],
    ['', 'limit=2', 'r1', { status: 200, rv: 'r1', items: ['a'], aVersion: '1' }], // exact
    ['', 'continue', '', { status: 200, rv: 'token', items: ['b', 'c'] }],
    ['', 'continue', '0', { status: 200, rv: 'token', items: ['b', 'c'] }], // invalid, read as continue
    ['', 'continue', 'r1', { status: 400 }],
    ['Exact', '', '', { status: 400 }],
    ['Exact', '', '0', { status: 400 }],
    ['Exact', '', 'r1', { status: 200, rv: 'r1', items: ['a'], aVersion: '1' }],
    ['Exact', 'limit=2', 'r1', { status: 200, rv: 'r1', items: ['a'] }],
    ['Exact', 'continue', 'r1', { status: 400 }],
    ['NotOlderThan', '', '', { status: 400 }],
    ['NotOlderThan', '', '0', { status: 200, rv: 'current' }],
    ['NotOlderThan', '', 'r1', { status: 200, rv: 'current', aVersion: '2' }],
    ['NotOlderThan', 'limit=2', 'r1', { status: 200, rv: 'current', items: ['a', 'b'] }],
    ['NotOlderThan', 'continue', '0', { status: 400 }],
    ['Sometimes', '', 'r1', { status: 400 }],
  ];

  it.each(listCells)('list match=%j paging=%j rv=%j', async (match, paging, rv, expected) => {
    const q = new URLSearchParams();
    if (match) q.set('resourceVersionMatch', match);
    if (rv) q.set('resourceVersion', rv === 'r1' ? String(r1) : rv);
    if (paging === 'limit=2') q.set('limit', '2');
    if (paging === 'continue') {
      q.set('limit', '5');
      q.set('continue', token);
    }
    const res = await t.admin.get(`${NS}?${q}`);
    expect(res.status, res.text()).toBe(expected.status);
    const body = res.json<Obj>();
    if (expected.status !== 200) {
      expect(body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
      return;
    }
    const wantRv = { current, r1, token: current }[expected.rv ?? 'current'];
    expect(Number(body.metadata.resourceVersion)).toBe(wantRv);
    if (expected.items) expect(body.items.map((i: Obj) => i.metadata.name)).toEqual(expected.items);
    if (expected.aVersion) expect(body.items.find((i: Obj) => i.metadata.name === 'a').data.v).toBe(expected.aVersion);
  });

  it('list with a version newer than the store answers 504 Too large resource version', async () => {
    const res = await t.admin.get(`${NS}?resourceVersion=${current + 1000}&resourceVersionMatch=NotOlderThan`);
    expect(res.status).toBe(504);
    expect(res.json<Obj>().message).toContain('Too large resource version');
    expect(res.headers['retry-after']).toBeDefined();
    // The cause client-go's reflector tests (IsTooLargeResourceVersion) to relist from scratch.
    expect(res.json<Obj>().details).toEqual({ causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 });
  });

  it('a sendInitialEvents watch from a version newer than the store is a 200 stream with one ERROR event (504 Status)', async () => {
    const lines: string[] = [];
    const w = t.admin.watch(`${NS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${current + 1000}`, (l) => lines.push(l));
    const { status } = await w.done;
    expect(status).toBe(200);
    expect(lines.map((l) => JSON.parse(l) as Obj)).toEqual([
      {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `Timeout: Too large resource version: ${current + 1000}, current: ${current}`,
          reason: 'Timeout',
          details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
          code: 504,
        },
      },
    ]);
  });

  it.each([
    ['get', () => `${NS}/a?resourceVersion=${current + 1000}`],
    ['list NotOlderThan', () => `${NS}?resourceVersion=${current + 1000}&resourceVersionMatch=NotOlderThan`],
    ['list Exact', () => `${NS}?resourceVersion=${current + 1000}&resourceVersionMatch=Exact`],
    ['list legacy exact', () => `${NS}?resourceVersion=${current + 1000}&limit=1`],
  ])('%s too large: the 504 carries the ResourceVersionTooLarge cause, as upstream', async (_what, path) => {
    const res = await t.admin.get(path());
    expect(res.status).toBe(504);
    expect(res.json<Obj>()).toMatchObject({
      reason: 'Timeout',
      message: `Timeout: Too large resource version: ${current + 1000}, current: ${current}`,
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] },
    });
  });

  it.each([
    ['', 200, '2'],
    ['0', 200, undefined],
    ['r1', 200, '2'],
    ['future', 504, undefined],
  ])('get rv=%j → %i', async (rv, status, v) => {
    const q = rv === '' ? '' : `?resourceVersion=${rv === 'r1' ? r1 : rv === 'future' ? current + 1000 : rv}`;
    const res = await t.admin.get(`${NS}/a${q}`);
    expect(res.status).toBe(status);
    if (v) expect(res.json<Obj>().data.v).toBe(v);
  });

  it('rejects malformed continue tokens with 400', async () => {
    for (const bad of ['garbage', Buffer.from('{"v":"meta/v1","rv":"x","start":"a"}').toString('base64url'), Buffer.from('{"v":"other","rv":3,"start":"a"}').toString('base64url')]) {
      const res = await t.admin.get(`${NS}?limit=1&continue=${bad}`);
      expect(res.status).toBe(400);
    }
  });
});

describe('chunked lists (§2.4, §4.6)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ compactionIntervalMs: 0 });
    await setupNamespace(t, 'lw');
    for (let i = 0; i < 60; i++) await t.admin.post(NS, cm(`o${String(i).padStart(2, '0')}`, { v: '0' }, { even: String(i % 2 === 0) }));
  });
  afterAll(() => t.stop());

  async function pageAll(query: string): Promise<{ rvs: Set<string>; names: string[]; chunks: Obj[] }> {
    const chunks: Obj[] = [];
    let cont = '';
    do {
      const res = await t.admin.get(`${NS}?limit=7${query}${cont ? `&continue=${cont}` : ''}`);
      expect(res.status).toBe(200);
      const body = res.json<Obj>();
      chunks.push(body);
      cont = body.metadata.continue ?? '';
    } while (cont);
    return { rvs: new Set(chunks.map((c) => c.metadata.resourceVersion)), names: chunks.flatMap((c) => c.items.map((i: Obj) => i.metadata.name)), chunks };
  }

  it('returns one snapshot across chunks while writes go on, with remainingItemCount', async () => {
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        await t.admin.post(NS, cm(`new${i}`));
        await t.admin.put(`${NS}/o0${i % 10}`, cm(`o0${i % 10}`, { v: String(i + 1) }, { even: String((i % 10) % 2 === 0) }));
        if (i < 10) await t.admin.delete(`${NS}/o5${i}`);
      }
    })();
    await new Promise((r) => setTimeout(r, 30));
    const { rvs, names, chunks } = await pageAll('');
    writing = false;
    await writer;
    expect(rvs.size).toBe(1);
    const [rv] = [...rvs];
    const exact = (await t.admin.get(`${NS}?resourceVersion=${rv}&resourceVersionMatch=Exact`)).json<Obj>();
    expect(names).toEqual(exact.items.map((i: Obj) => i.metadata.name));
    expect(new Set(names).size).toBe(names.length);
    expect(chunks[0]!.metadata.remainingItemCount).toBe(names.length - 7);
    expect(chunks.at(-1)!.metadata.continue ?? '').toBe('');
    expect(chunks.at(-1)!.metadata.remainingItemCount).toBeUndefined();
  });

  it('omits remainingItemCount with a selector and filters every chunk', async () => {
    const { names, chunks } = await pageAll('&labelSelector=even%3Dtrue');
    expect(chunks.every((c) => c.metadata.remainingItemCount === undefined)).toBe(true);
    const all = (await t.admin.get(`${NS}?labelSelector=even%3Dtrue`)).json<Obj>();
    expect(names).toEqual(all.items.map((i: Obj) => i.metadata.name));
  });

  it('pages from the store when the cache snapshot gate is off', async () => {
    const off = await startTestServer({ featureGates: FeatureGates.parse('ListFromCacheSnapshot=false') });
    try {
      await setupNamespace(off, 'lw');
      for (let i = 0; i < 10; i++) await off.admin.post(NS, cm(`x${i}`));
      const first = (await off.admin.get(`${NS}?limit=4`)).json<Obj>();
      await off.admin.post(NS, cm('x0a'));
      const second = (await off.admin.get(`${NS}?limit=4&continue=${first.metadata.continue}`)).json<Obj>();
      expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
      expect(second.items.map((i: Obj) => i.metadata.name)).toEqual(['x4', 'x5', 'x6', 'x7']);
    } finally {
      await off.stop();
    }
  });
});

describe('continue tokens expire with the retention window', () => {
  it('answers 410 Expired with a fresh token for the inconsistent remainder', async () => {
    const t = await startTestServer({ compactionIntervalMs: 150 });
    try {
      await setupNamespace(t, 'lw');
      for (let i = 0; i < 6; i++) await t.admin.post(NS, cm(`e${i}`));
      const first = (await t.admin.get(`${NS}?limit=2`)).json<Obj>();
      await t.admin.post(NS, cm('e2a'));
      const firstRv = Number(first.metadata.resourceVersion);
      const deadline = Date.now() + 5000;
      while (t.server.store.compactedRevision() <= firstRv && Date.now() < deadline) {
        await t.admin.post(NS, cm(`pad${Date.now()}`));
        await new Promise((r) => setTimeout(r, 100));
      }
      const expired = await t.admin.get(`${NS}?limit=2&continue=${first.metadata.continue}`);
      expect(expired.status).toBe(410);
      const status = expired.json<Obj>();
      expect(status).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
      expect(status.message).toContain('too old to display a consistent list result');
      const fresh = status.metadata.continue;
      expect(fresh).toBeTruthy();
      const rest = (await t.admin.get(`${NS}?limit=3&continue=${fresh}`)).json<Obj>();
      expect(rest.items.map((i: Obj) => i.metadata.name)).toEqual(['e2', 'e2a', 'e3']);
      expect(Number(rest.metadata.resourceVersion)).toBeGreaterThan(firstRv);
      // An exact list at the compacted version: 410 with etcd's message, as upstream serves exact lists from etcd.
      for (const q of [`resourceVersion=${firstRv}&resourceVersionMatch=Exact`, `resourceVersion=${firstRv}&limit=2`]) {
        const gone = await t.admin.get(`${NS}?${q}`);
        expect(gone.status).toBe(410);
        expect(gone.json<Obj>()).toMatchObject({ reason: 'Expired', message: 'The resourceVersion for the provided list is too old.', metadata: {} });
      }
    } finally {
      await t.stop();
    }
  });
});

interface WatchEvent {
  type: string;
  object: Obj;
}

describe('watch (§2.6, §4.3, §6)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({}, { bookmarkIntervalMs: 100 });
    await setupNamespace(t, 'lw');
  });
  afterAll(() => t.stop());

  function collect(path: string) {
    const events: WatchEvent[] = [];
    const w = t.admin.watch(path, (line) => events.push(JSON.parse(line) as WatchEvent));
    return {
      events,
      stop: w.stop,
      done: w.done,
      async until(pred: (evs: WatchEvent[]) => boolean, timeoutMs = 5000) {
        const deadline = Date.now() + timeoutMs;
        while (!pred(events)) {
          if (Date.now() > deadline) throw new Error(`watch condition not met; got ${JSON.stringify(events.map((e) => [e.type, e.object?.metadata?.name]))}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      },
    };
  }
  const names = (evs: WatchEvent[]) => evs.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object.metadata.name}`);

  it('starts with synthetic ADDED events for unset and 0, then changes; non-zero starts after that version', async () => {
    const base = (await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'w1' } })).json<Obj>();
    void base;
    const path = '/api/v1/namespaces/w1/configmaps';
    const rv = (await t.admin.post(path, cm('one'))).json<Obj>().metadata.resourceVersion;
    for (const q of ['', '&resourceVersion=0']) {
      const w = collect(`${path}?watch=1${q}`);
      await w.until((e) => names(e).includes('ADDED one'));
      w.stop();
    }
    const after = collect(`${path}?watch=1&resourceVersion=${rv}`);
    await t.admin.post(path, cm('two'));
    await t.admin.put(`${path}/one`, cm('one', { v: '2' }));
    await t.admin.delete(`${path}/two`);
    await after.until((e) => names(e).length === 3);
    after.stop();
    expect(names(after.events)).toEqual(['ADDED two', 'MODIFIED one', 'DELETED two']);
    const versions = after.events.map((e) => Number(e.object.metadata.resourceVersion));
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
  });

  it('resumes from the last seen version delivering every later event exactly once, in order', async () => {
    const path = '/api/v1/namespaces/lw/configmaps';
    const start = (await t.admin.post(path, cm('r0'))).json<Obj>().metadata.resourceVersion;
    const first = collect(`${path}?watch=1&resourceVersion=${start}`);
    for (let i = 1; i <= 5; i++) await t.admin.post(path, cm(`r${i}`));
    await first.until((e) => names(e).length >= 3);
    first.stop();
    const seen = first.events.slice(0, 3);
    const last = seen.at(-1)!.object.metadata.resourceVersion;
    for (let i = 6; i <= 8; i++) await t.admin.post(path, cm(`r${i}`));
    const resumed = collect(`${path}?watch=1&resourceVersion=${last}`);
    await resumed.until((e) => names(e).length >= 5);
    await new Promise((r) => setTimeout(r, 100));
    resumed.stop();
    expect([...names(seen), ...names(resumed.events)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((i) => `ADDED r${i}`));
  });

  it('answers ERROR 410 for a compacted version', async () => {
    const path = '/api/v1/namespaces/lw/configmaps';
    const old = (await t.admin.post(path, cm('c-old'))).json<Obj>().metadata.resourceVersion;
    await t.admin.post(path, cm('c-new'));
    await t.server.store.compact(t.server.store.currentRevision());
    const w = collect(`${path}?watch=1&resourceVersion=${old}`);
    const { status } = await w.done;
    expect(status).toBe(200);
    expect(w.events).toEqual([{ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) }]);
  });

  it('sends bookmarks with only kind, apiVersion and resourceVersion, and one before the timeout closes the stream', async () => {
    const path = '/api/v1/namespaces/lw/configmaps';
    const w = collect(`${path}?watch=1&resourceVersion=${t.server.store.currentRevision()}&allowWatchBookmarks=true&timeoutSeconds=1`);
    await w.until((e) => e.some((x) => x.type === 'BOOKMARK'));
    await t.admin.post(path, cm('bm'));
    const { lines } = await w.done;
    expect(lines.length).toBeGreaterThan(1);
    const bookmarks = w.events.filter((e) => e.type === 'BOOKMARK');
    expect(bookmarks.length).toBeGreaterThanOrEqual(2);
    for (const b of bookmarks) {
      expect(Object.keys(b.object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
      expect(Object.keys(b.object.metadata)).toEqual(['resourceVersion']);
      expect(b.object.kind).toBe('ConfigMap');
    }
    const last = w.events.at(-1)!;
    expect(last.type).toBe('BOOKMARK');
    const added = w.events.find((e) => e.type === 'ADDED')!;
    expect(Number(last.object.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(added.object.metadata.resourceVersion));
  });

  it('reads boolean parameters as upstream does: only 0 and false (any case) are false', async () => {
    const path = '/api/v1/namespaces/lw/configmaps';
    const from = t.server.store.currentRevision();
    // The Python client spells booleans True and False.
    const on = collect(`${path}?watch=True&resourceVersion=${from}&allowWatchBookmarks=True&timeoutSeconds=1`);
    const off = collect(`${path}?watch=yes&resourceVersion=${from}&allowWatchBookmarks=FALSE&timeoutSeconds=1`);
    await t.admin.post(path, cm('bool-params'));
    await Promise.all([on.done, off.done]);
    expect(on.events.at(-1)?.type).toBe('BOOKMARK');
    expect(names(on.events)).toEqual(['ADDED bool-params']);
    expect(off.events.map((e) => e.type)).toEqual(['ADDED']);
    const list = await t.admin.get(`${path}?watch=False`);
    expect(list.status).toBe(200);
    expect(list.json<Obj>().kind).toBe('ConfigMapList');
  });

  it.each(['', '&timeoutSeconds=0', '&timeoutSeconds=2592000'])('without timeoutSeconds (or with 0, as upstream, or 30 days) the stream stays open: %j', async (timeout) => {
    const w = collect(`/api/v1/namespaces/lw/configmaps?watch=1&resourceVersion=${t.server.store.currentRevision()}${timeout}`);
    await new Promise((r) => setTimeout(r, 300));
    let ended = false;
    void w.done.then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(ended).toBe(false);
    w.stop();
  });

  it('a negative timeoutSeconds ends the stream at once with 200, as upstream', async () => {
    const w = collect(`/api/v1/namespaces/lw/configmaps?watch=1&resourceVersion=${t.server.store.currentRevision()}&timeoutSeconds=-1`);
    expect((await w.done).status).toBe(200);
    expect(w.events).toEqual([]);
  });

  it('sends initial events then an initial-events-end bookmark (sendInitialEvents, NotOlderThan)', async () => {
    await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'w2' } });
    const path = '/api/v1/namespaces/w2/configmaps';
    await t.admin.post(path, cm('i1'));
    await t.admin.post(path, cm('i2'));
    const w = collect(`${path}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    await w.until((e) => e.some((x) => x.type === 'BOOKMARK' && x.object.metadata.annotations));
    await t.admin.post(path, cm('i3'));
    await w.until((e) => names(e).includes('ADDED i3'));
    w.stop();
    const idx = w.events.findIndex((e) => e.type === 'BOOKMARK' && e.object.metadata.annotations);
    expect(names(w.events.slice(0, idx))).toEqual(['ADDED i1', 'ADDED i2']);
    expect(w.events[idx]!.object.metadata.annotations).toEqual({ 'cluster.io/initial-events-end': 'true' });
    expect(Number(w.events[idx]!.object.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(w.events[1]!.object.metadata.resourceVersion));
    expect(names(w.events.slice(idx + 1))).toEqual(['ADDED i3']);
    const bad = await t.admin.get(`${path}?watch=1&sendInitialEvents=true`);
    expect(bad.status).toBe(400);
  });

  it('sends initial events without the closing bookmark when bookmarks are not allowed', async () => {
    await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'w3' } });
    const path = '/api/v1/namespaces/w3/configmaps';
    await t.admin.post(path, cm('i1'));
    await t.admin.post(path, cm('i2'));
    const w = collect(`${path}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1`);
    const { status } = await w.done;
    expect(status).toBe(200);
    expect(w.events.map((e) => e.type)).not.toContain('BOOKMARK');
    expect(names(w.events)).toEqual(['ADDED i1', 'ADDED i2']);
  });

  it.each(['', '&resourceVersion=0'])('sendInitialEvents=false starts at the current version without initial events: %j', async (rv) => {
    const path = '/api/v1/namespaces/lw/configmaps';
    await t.admin.post(path, cm(`before${rv.length}`));
    const w = collect(`${path}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true${rv}`);
    await new Promise((r) => setTimeout(r, 150));
    await t.admin.post(path, cm(`later${rv.length}`));
    await w.until((e) => names(e).length >= 1);
    w.stop();
    expect(names(w.events)).toEqual([`ADDED later${rv.length}`]);
  });

  it('turns selection changes into ADDED and DELETED for label and field selectors', async () => {
    const path = '/api/v1/namespaces/lw/configmaps';
    const rv = t.server.store.currentRevision();
    const byLabel = collect(`${path}?watch=1&resourceVersion=${rv}&labelSelector=tier%3Dweb`);
    const byField = collect(`${path}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dsel`);
    await t.admin.post(path, cm('sel', { v: '1' }, { tier: 'db' }));
    await t.admin.put(`${path}/sel`, cm('sel', { v: '2' }, { tier: 'web' }));
    await t.admin.put(`${path}/sel`, cm('sel', { v: '3' }, { tier: 'web' }));
    const leave = await t.admin.put(`${path}/sel`, cm('sel', { v: '4' }, { tier: 'db' }));
    await t.admin.delete(`${path}/sel`);
    await byLabel.until((e) => names(e).length === 3);
    await byField.until((e) => names(e).length === 5);
    byLabel.stop();
    byField.stop();
    expect(names(byLabel.events)).toEqual(['ADDED sel', 'MODIFIED sel', 'DELETED sel']);
    // Leaving the selection is DELETED with the content that matched (v 3), versioned at the change, as upstream's cacher.
    expect(byLabel.events.map((e) => e.object.data.v)).toEqual(['2', '3', '3']);
    expect(byLabel.events[2]!.object.metadata.labels).toEqual({ tier: 'web' });
    expect(byLabel.events[2]!.object.metadata.resourceVersion).toBe(leave.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
    expect(names(byField.events)).toEqual(['ADDED sel', 'MODIFIED sel', 'MODIFIED sel', 'MODIFIED sel', 'DELETED sel']);
    expect((await t.admin.get(`${path}?watch=1&labelSelector=a%20in%20(`)).status).toBe(400);
    expect((await t.admin.get(`${path}?watch=1&fieldSelector=spec.nope%3D1`)).status).toBe(400);
  });

  it('keeps a namespaced watch to its namespace, whatever its start point', async () => {
    for (const ns of ['nsa', 'nsab', 'nsb']) await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const rv = t.server.store.currentRevision();
    const fromNow = collect(`/api/v1/namespaces/nsa/configmaps?watch=1&resourceVersion=${rv}`);
    const withState = collect('/api/v1/namespaces/nsa/configmaps?watch=1');
    const all = collect(`/api/v1/configmaps?watch=1&resourceVersion=${rv}`);
    for (const ns of ['nsb', 'nsab', 'nsa']) await t.admin.post(`/api/v1/namespaces/${ns}/configmaps`, cm(`in-${ns}`));
    await t.admin.delete('/api/v1/namespaces/nsb/configmaps/in-nsb');
    await all.until((e) => names(e).length === 4);
    await fromNow.until((e) => names(e).length >= 1);
    await withState.until((e) => names(e).length >= 1);
    const replayed = collect(`/api/v1/namespaces/nsa/configmaps?watch=1&resourceVersion=${rv}`);
    await replayed.until((e) => names(e).length >= 1);
    await new Promise((r) => setTimeout(r, 100));
    for (const w of [fromNow, withState, all, replayed]) w.stop();
    expect(names(fromNow.events)).toEqual(['ADDED in-nsa']);
    expect(names(withState.events)).toEqual(['ADDED in-nsa']);
    expect(names(replayed.events)).toEqual(['ADDED in-nsa']);
    expect(names(all.events)).toEqual(['ADDED in-nsb', 'ADDED in-nsab', 'ADDED in-nsa', 'DELETED in-nsb']);
  });

  it('watches a single object by name', async () => {
    const path = '/api/v1/namespaces/lw/configmaps';
    await t.admin.post(path, cm('solo'));
    const w = collect(`${path}/solo?watch=1`);
    await t.admin.post(path, cm('other-solo'));
    await t.admin.put(`${path}/solo`, cm('solo', { v: '9' }));
    await w.until((e) => names(e).length === 2);
    w.stop();
    expect(names(w.events)).toEqual(['ADDED solo', 'MODIFIED solo']);
    const same = collect(`${path}/solo?watch=1&fieldSelector=metadata.name%3Dsolo&timeoutSeconds=1`);
    expect(names((await same.done, same.events))).toEqual(['ADDED solo']);
    for (const fs of ['metadata.name%3Dother-solo', 'metadata.namespace%3Dlw', 'metadata.name!%3Dsolo']) {
      const r = await t.admin.get(`${path}/solo?watch=1&fieldSelector=${fs}`);
      expect([r.status, r.json<Obj>().message]).toEqual([400, "fieldSelector metadata.name doesn't match requested name"]);
    }
  });
});

describe('slow watchers', () => {
  it('are cut off without stalling writers or other watchers', async () => {
    const t = await startTestServer({}, { watcherCapacity: 20 });
    try {
      await setupNamespace(t, 'lw');
      const big = 'x'.repeat(64 * 1024);
      const rv = t.server.store.currentRevision();
      let fastCount = 0;
      const fast = t.admin.watch(`${NS}?watch=1&resourceVersion=${rv}`, () => fastCount++);
      // A raw request whose response we never read: its watcher's queue fills up.
      const { request } = await import('node:https');
      const slowReq = request(`${t.server.url}${NS}?watch=1&resourceVersion=${rv}`, {
        ca: (t.admin as unknown as { creds: { caPem: string } }).creds.caPem,
        cert: (t.admin as unknown as { creds: { certPem: string } }).creds.certPem,
        key: (t.admin as unknown as { creds: { keyPem: string } }).creds.keyPem,
      });
      let slowEnded = false;
      slowReq.on('response', (res) => {
        res.pause();
        res.on('end', () => (slowEnded = true));
        res.on('close', () => (slowEnded = true));
      });
      slowReq.end();
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      for (let i = 0; i < 300; i++) await t.admin.post(NS, cm(`big${i}`, { big }));
      const writeMs = Date.now() - started;
      const deadline = Date.now() + 10_000;
      while (fastCount < 300 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(fastCount).toBe(300);
      fast.stop();
      // The slow watcher was closed by the server (its queue overflowed); draining it now ends it.
      const waitEnd = Date.now() + 10_000;
      slowReq.once('response', () => {});
      while (!slowEnded && Date.now() < waitEnd) {
        (slowReq as unknown as { res?: { resume(): void } }).res?.resume();
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(slowEnded).toBe(true);
      expect(writeMs).toBeLessThan(30_000);
    } finally {
      await t.stop();
    }
  }, 60_000);
});

describe('watch over HTTP/2', () => {
  // The watch pump writes the rounds' bytes to the Http2Stream under the compatibility
  // response (headers and the end still go through the response): events from the start
  // version and live ones arrive in order, and the stream ends cleanly at the timeout.
  it('streams replayed and live events and ends at timeoutSeconds', async () => {
    const t = await startTestServer();
    try {
      await setupNamespace(t, 'h2w');
      const path = '/api/v1/namespaces/h2w/configmaps';
      await t.admin.post(path, cm('before'));
      const rv = (await t.admin.get(path)).json<Obj>().metadata.resourceVersion as string;
      const watching = t.admin.http2Get(`${path}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
      // Created after the start version: replayed if the watch registers after the write.
      for (let i = 0; i < 3; i++) await t.admin.post(path, cm(`live${i}`));
      const res = await watching;
      expect(res.status).toBe(200);
      expect(res.alpn).toBe('h2');
      const events = res.body.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Obj);
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED live0', 'ADDED live1', 'ADDED live2']);
    } finally {
      await t.stop();
    }
  });
});
