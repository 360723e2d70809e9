import { describe, expect, it } from 'vitest';
import { selectionFor } from '../http/handlers/selection.js';
import type { ResourceInfo } from '../schema/catalog.js';
import { fieldsetFor } from '../selectors/index.js';
import { ResourceCache } from './resource-cache.js';
import { selectAll, type CacheEntry, type CacheEvent, type EntryFilter, type WatchOutput } from './types.js';
import { CacheWatcher } from './watcher.js';
import { rng } from '../testserver/seeded-random.js';

const PREFIX = '/registry/core/pods/';
// Only what selection and fieldsetFor read of a resource.
const pods = { group: '', upstreamGroup: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true } as unknown as ResourceInfo;


const NAMESPACES = ['a', 'b', 'c'];
const NAMES = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];
const VALUES = ['x', 'y', ''];
const NODES = ['n0', 'n1'];

function podEntry(random: () => number, namespace: string, name: string, revision: number): CacheEntry {
  const pick = <T,>(a: readonly T[]): T => a[Math.floor(random() * a.length)]!;
  const labels: Record<string, string> = {};
  for (const k of ['app', 'tier']) if (random() < 0.7) labels[k] = pick(VALUES);
  const spec: Record<string, unknown> = {};
  if (random() < 0.7) spec.nodeName = pick(NODES);
  const obj = { metadata: { name, namespace, labels }, spec, status: { phase: pick(['Pending', 'Running']) } };
  return { key: `${PREFIX}${namespace}/${name}`, namespace, name, revision, bytes: Buffer.from(JSON.stringify(obj)), labels, fields: fieldsetFor(pods, obj) };
}

/** Selections as clients send them: none, pinned labels, set-based labels, fields, names, mixtures. */
const SELECTIONS: { query: string; item?: string }[] = [
  { query: '' },
  { query: 'labelSelector=app%3Dx' },
  { query: 'labelSelector=app%3D' },
  { query: 'labelSelector=app%3D%3Dy,tier%3Dx' },
  { query: 'labelSelector=app+in+(x)' },
  { query: 'labelSelector=app+in+(x,y)' },
  { query: 'labelSelector=app!%3Dx' },
  { query: 'labelSelector=tier' },
  { query: 'labelSelector=!tier' },
  { query: 'fieldSelector=spec.nodeName%3Dn0' },
  { query: 'fieldSelector=spec.nodeName%3D' },
  { query: 'fieldSelector=spec.nodeName!%3Dn1' },
  { query: 'fieldSelector=spec.nodeName%3Dn1,status.phase%3DRunning&labelSelector=app%3Dx' },
  { query: 'fieldSelector=metadata.name%3Dp1' },
  { query: 'fieldSelector=metadata.namespace%3Db' },
  { query: '', item: 'p2' },
  { query: 'labelSelector=app%3Dy', item: 'p3' },
];

const outputs = (outs: WatchOutput[]) => outs.map((o) => ('entry' in o ? `${o.type} ${o.entry.key}@${o.entry.revision}` : o.type));

describe('watcher index', () => {
  // Each watcher is paired with a twin that has the same filter but is handed every change
  // (the brute-force filter, as before the index); both must end with the same outputs.
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('hands every watcher exactly what the brute-force filter does (seed %i)', (seed) => {
    const random = rng(seed);
    const pick = <T,>(a: readonly T[]): T => a[Math.floor(random() * a.length)]!;
    const rc = new ResourceCache(PREFIX, 1000, 0);
    const pairs: { indexed: CacheWatcher; brute: CacheWatcher; label: string }[] = [];
    const open = (revision: number) => {
      const sel = pick(SELECTIONS);
      const scope = random() < 0.4 ? PREFIX : random() < 0.9 ? `${PREFIX}${pick(NAMESPACES)}/` : `${PREFIX}${pick(NAMESPACES)}/p`;
      const selected: EntryFilter = selectionFor(pods, new URLSearchParams(sel.query), sel.item).filter ?? selectAll;
      const filter: EntryFilter = scope !== PREFIX ? (e) => e.key.startsWith(scope) && selected(e) : selected;
      const indexed = new CacheWatcher(filter, 10_000, revision, (w) => rc.removeWatcher(w));
      rc.addWatcher(indexed, scope, selected);
      pairs.push({ indexed, brute: new CacheWatcher(filter, 10_000, revision, () => {}), label: `${scope} ${sel.query} ${sel.item ?? ''}` });
    };
    for (let i = 0; i < 40; i++) open(0);
    let revision = 0;
    for (let step = 0; step < 600; step++) {
      revision++;
      const namespace = pick(NAMESPACES);
      const name = pick(NAMES);
      const key = `${PREFIX}${namespace}/${name}`;
      const prev = rc.get(key);
      let ev: CacheEvent;
      if (prev && random() < 0.25) ev = { type: 'DELETED', revision, entry: { ...prev, revision }, prev };
      else {
        const entry = podEntry(random, namespace, name, revision);
        ev = prev ? { type: 'MODIFIED', revision, entry, prev } : { type: 'ADDED', revision, entry };
      }
      rc.apply(ev);
      for (const p of pairs) p.brute.deliver(ev);
      // Watchers come and go meanwhile: a closed one leaves the index, a new one starts now.
      if (random() < 0.03) {
        const p = pairs.splice(Math.floor(random() * pairs.length), 1)[0]!;
        p.indexed.close();
      }
      if (random() < 0.05) open(revision);
    }
    let delivered = 0;
    for (const p of pairs) {
      const want = outputs(p.brute.drain());
      delivered += want.length;
      expect(outputs(p.indexed.drain()), p.label).toEqual(want);
    }
    expect(rc.watchers.size).toBe(pairs.length);
    // The run exercises something: most watchers receive changes, including transitions.
    expect(delivered).toBeGreaterThan(pairs.length * 10);
  });

  it('passes a change by the watchers of other namespaces and of other label values', () => {
    const rc = new ResourceCache(PREFIX, 10, 0);
    const asked: string[] = [];
    const watch = (name: string, scope: string, query: string) => {
      const selected = selectionFor(pods, new URLSearchParams(query)).filter ?? selectAll;
      const counted = Object.assign((e: CacheEntry) => (asked.push(name), selected(e)), { index: selected.index });
      const w = new CacheWatcher(counted, 10, 0, (x) => rc.removeWatcher(x));
      rc.addWatcher(w, scope, counted);
      return w;
    };
    const all = watch('all', `${PREFIX}a/`, '');
    const other = watch('other-namespace', `${PREFIX}b/`, '');
    const mine = watch('mine', PREFIX, 'labelSelector=app%3Dx');
    watch('not-mine', PREFIX, 'labelSelector=app%3Dy');
    const entry = podEntry(rng(1), 'a', 'p0', 1);
    rc.apply({ type: 'ADDED', revision: 1, entry: { ...entry, labels: { app: 'x' } } });
    // Only the watcher whose pinned label the change carries is asked; `all` needs no question.
    expect(asked).toEqual(['mine']);
    expect(all.pending).toBe(1);
    expect(mine.pending).toBe(1);
    expect(other.pending).toBe(0);
    mine.close();
    expect(rc.watchers.size).toBe(3);
  });
});
