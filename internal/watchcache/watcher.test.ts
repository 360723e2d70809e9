import { describe, expect, it } from 'vitest';
import type { CacheEntry, CacheEvent } from './types.js';
import { CacheWatcher } from './watcher.js';

const entry = (name: string, revision: number): CacheEntry => ({
  key: `/registry/core/configmaps/ns/${name}`,
  namespace: 'ns',
  name,
  revision,
  bytes: Buffer.from(`{"metadata":{"resourceVersion":"${revision}","name":"${name}"}}`),
  labels: {},
  fields: {},
});
const added = (name: string, revision: number): CacheEvent => ({ type: 'ADDED', revision, entry: entry(name, revision) });

describe('watcher wakeups', () => {
  it('hands a waiting consumer every event pushed before the loop finished its I/O, in one drain', async () => {
    const w = new CacheWatcher(() => true, 100, 0, () => {});
    const drains: string[][] = [];
    const consumer = (async () => {
      await w.ready();
      drains.push(w.drain().map((o) => ('entry' in o ? o.entry.name : o.type)));
    })();
    // Two batches applied in separate callbacks of one loop turn; a wakeup per event would let
    // the consumer drain between them (Node runs microtasks after each immediate).
    await new Promise<void>((resolve) => {
      setImmediate(() => w.deliver(added('a', 1)));
      setImmediate(() => {
        w.deliver(added('b', 2));
        resolve();
      });
    });
    await consumer;
    expect(drains).toEqual([['a', 'b']]);
    expect(drains).toHaveLength(1);
  });

  it('wakes a consumer promptly when a single event arrives on an idle loop', async () => {
    const w = new CacheWatcher(() => true, 100, 0, () => {});
    const woke = w.ready().then(() => w.drain());
    setTimeout(() => w.deliver(added('x', 5)), 1);
    const outs = await woke;
    expect(outs.map((o) => ('entry' in o ? o.entry.name : o.type))).toEqual(['x']);
  });

  it('still wakes at once on close, so a closed stream ends', async () => {
    const w = new CacheWatcher(() => true, 100, 0, () => {});
    const woke = w.ready();
    w.close();
    await woke;
    expect(w.closed).toBe('consumer');
    expect(w.drain()).toEqual([]);
  });
});

describe('watcher callback mode', () => {
  const names = (outs: ReturnType<CacheWatcher['drain']>) => outs.map((o) => ('entry' in o ? `${o.type}:${o.entry.name}` : o.type));
  const round = () => new Promise<void>((resolve) => setTimeout(resolve, 30));

  it('calls the consumer once per round with everything queued, stops while paused, resumes with what queued meanwhile', async () => {
    const w = new CacheWatcher(() => true, 100, 0, () => {});
    const drains: string[][] = [];
    w.consume(() => drains.push(names(w.drain())));
    w.deliver(added('a', 1));
    w.deliver(added('b', 2));
    await round();
    expect(drains).toEqual([['ADDED:a', 'ADDED:b']]);
    w.pause();
    w.deliver(added('c', 3));
    await round();
    expect(drains).toHaveLength(1);
    expect(w.pending).toBe(1);
    w.resume();
    await round();
    expect(drains).toEqual([['ADDED:a', 'ADDED:b'], ['ADDED:c']]);
  });

  it('gives a paused consumer its last round when the watcher closes, so the stream can end', async () => {
    const w = new CacheWatcher(() => true, 100, 0, () => {});
    const calls: { outs: string[]; closed: string | undefined }[] = [];
    w.consume(() => calls.push({ outs: names(w.drain()), closed: w.closed }));
    w.pause();
    w.deliver(added('a', 1));
    w.fail(410, 'Expired', 'too old');
    await round();
    expect(calls).toEqual([{ outs: ['ADDED:a', 'ERROR'], closed: 'error' }]);
  });

  it('queues unchanged events as the cache event itself and selection transitions as their own outputs', () => {
    const picky = new CacheWatcher((e) => e.labels.app === 'x', 100, 0, () => {});
    const all = new CacheWatcher(() => true, 100, 0, () => {});
    const inX = { ...entry('p', 1), labels: { app: 'x' } };
    const outOfX = { ...entry('p', 2), labels: { app: 'y' } };
    const create: CacheEvent = { type: 'ADDED', revision: 1, entry: inX };
    const relabel: CacheEvent = { type: 'MODIFIED', revision: 2, entry: outOfX, prev: inX };
    for (const w of [picky, all]) {
      w.deliver(create);
      w.deliver(relabel);
    }
    const [pickyCreate, pickyLeave] = picky.drain();
    const [allCreate, allModify] = all.drain();
    expect(pickyCreate).toBe(create);
    expect(allCreate).toBe(create);
    expect(allModify).toBe(relabel);
    expect(pickyLeave).not.toBe(relabel);
    // Upstream's cacher: the previous content (the state that matched) at the change's revision.
    expect(pickyLeave).toMatchObject({ type: 'DELETED', entry: { name: 'p', revision: 2, labels: { app: 'x' } } });
  });

  // [selection, before, after, expected output (type, app label, resourceVersion in the bytes)]
  const withRv = (app: string, revision: number): CacheEntry => ({
    ...entry('p', revision),
    labels: { app },
    bytes: Buffer.from(`{"kind":"ConfigMap","metadata":{"resourceVersion":"${revision}","name":"p","labels":{"app":"${app}"}}}`),
  });
  const transitions: Array<[string, string, string, [string, string, string] | undefined]> = [
    ['enters the selection', 'y', 'x', ['ADDED', 'x', '7']],
    ['stays in the selection', 'x', 'x', ['MODIFIED', 'x', '7']],
    ['leaves the selection', 'x', 'y', ['DELETED', 'x', '7']],
    ['stays out of the selection', 'y', 'z', undefined],
  ];
  it.each(transitions)('an object that %s', (_name, before, after, want) => {
    const w = new CacheWatcher((e) => e.labels.app === 'x', 100, 0, () => {});
    w.deliver({ type: 'MODIFIED', revision: 7, entry: withRv(after, 7), prev: withRv(before, 3) });
    const outs = w.drain();
    if (!want) {
      expect(outs).toEqual([]);
      return;
    }
    expect(outs).toHaveLength(1);
    const out = outs[0]!;
    const obj = 'entry' in out ? (JSON.parse(out.entry.bytes.toString('utf8')) as { metadata: { resourceVersion: string; labels: { app: string } } }) : undefined;
    expect([out.type, obj?.metadata.labels.app, obj?.metadata.resourceVersion]).toEqual(want);
    expect('entry' in out && out.entry.revision).toBe(7);
  });
});
