// internal/watchcache/watcher-index owns which watchers of one resource a change is handed to.
// With a thousand watchers, asking each one's filter about each change is most of the cost of
// a change nobody (or one kubelet) watches: watchers are grouped by their key scope (the whole
// resource or one namespace) and, within it, by what their filter promises (FilterIndex: a
// label or field value, a name, or everything), so a change visits only the watchers whose
// scope holds its key and whose promise its old or new state keeps. A watcher whose scope is
// not of that shape is asked about every change, as before. The filter still decides for every
// watcher visited; the index only passes by watchers the filter would refuse.
// Imports: types, watcher.

import type { CacheEntry, CacheEvent, EntryFilter, FilterIndex } from './types.js';
import type { CacheWatcher } from './watcher.js';

type AttrIndex = Exclude<FilterIndex, { kind: 'all' }>;

/** Watchers promising one attribute (a label key, a field, the name), by the value they need. */
interface AttrGroup {
  readonly index: AttrIndex;
  readonly byValue: Map<string, Map<CacheWatcher, EntryFilter>>;
}

/** The watchers of one key scope. */
interface Scope {
  /** Watchers that accept everything in the scope: no filter call. */
  readonly all: Set<CacheWatcher>;
  /** By `<kind>\0<key>`. */
  readonly attrs: Map<string, AttrGroup>;
  /** Filters promising nothing: asked about every change in the scope. */
  readonly rest: Map<CacheWatcher, EntryFilter>;
}

interface Placement {
  readonly scope: Scope;
  readonly scopeKey: string;
  readonly group?: AttrGroup;
  readonly value?: string;
}

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** The value of `index`'s attribute in `e` as its filter reads it; undefined when no value can match. */
function attrValue(index: AttrIndex, e: CacheEntry): string | undefined {
  switch (index.kind) {
    case 'name':
      return e.name;
    case 'label':
      return hasOwn(e.labels, index.key) ? e.labels[index.key] : undefined;
    case 'field':
      return hasOwn(e.fields, index.key) ? e.fields[index.key] : '';
  }
}

export class WatcherIndex {
  private readonly scopes = new Map<string, Scope>();
  /** Watchers whose key prefix is not a scope: their whole filter decides on every change. */
  private readonly unscoped = new Set<CacheWatcher>();
  private readonly placements = new Map<CacheWatcher, Placement>();

  /** `prefix` is the resource's key prefix (`/registry/core/pods/`). */
  constructor(private readonly prefix: string) {}

  /**
   * Registers `w`, which watches keys under `keyPrefix` that `selected` accepts (`w.filter` being
   * both). Scopes are the resource prefix and `<prefix><segment>/` (a namespace).
   */
  add(w: CacheWatcher, keyPrefix: string, selected: EntryFilter): void {
    if (this.placements.has(w) || this.unscoped.has(w)) return;
    const scopeKey = this.scopeOf(keyPrefix);
    if (scopeKey === undefined) {
      this.unscoped.add(w);
      return;
    }
    let scope = this.scopes.get(scopeKey);
    if (!scope) {
      scope = { all: new Set(), attrs: new Map(), rest: new Map() };
      this.scopes.set(scopeKey, scope);
    }
    const index = selected.index;
    if (index?.kind === 'all') {
      scope.all.add(w);
      this.placements.set(w, { scope, scopeKey });
      return;
    }
    if (!index) {
      scope.rest.set(w, selected);
      this.placements.set(w, { scope, scopeKey });
      return;
    }
    const attrKey = index.kind === 'name' ? 'name' : `${index.kind}\0${index.key}`;
    let group = scope.attrs.get(attrKey);
    if (!group) {
      group = { index, byValue: new Map() };
      scope.attrs.set(attrKey, group);
    }
    let set = group.byValue.get(index.value);
    if (!set) {
      set = new Map();
      group.byValue.set(index.value, set);
    }
    set.set(w, selected);
    this.placements.set(w, { scope, scopeKey, group, value: index.value });
  }

  remove(w: CacheWatcher): void {
    if (this.unscoped.delete(w)) return;
    const p = this.placements.get(w);
    if (!p) return;
    this.placements.delete(w);
    const { scope, group, value } = p;
    if (group && value !== undefined) {
      const set = group.byValue.get(value);
      set?.delete(w);
      if (set?.size === 0) group.byValue.delete(value);
      if (group.byValue.size === 0) scope.attrs.delete(group.index.kind === 'name' ? 'name' : `${group.index.kind}\0${group.index.key}`);
    } else {
      scope.all.delete(w);
      scope.rest.delete(w);
    }
    if (scope.all.size === 0 && scope.attrs.size === 0 && scope.rest.size === 0) this.scopes.delete(p.scopeKey);
  }

  /** Hands `ev` to every watcher that may receive it (in no particular order across watchers). */
  deliver(ev: CacheEvent): void {
    for (const w of this.unscoped) w.deliver(ev);
    if (this.scopes.size === 0) return;
    const key = ev.entry.key;
    const whole = this.scopes.get(this.prefix);
    if (whole) deliverInScope(whole, ev);
    const slash = key.indexOf('/', this.prefix.length);
    if (slash >= 0) {
      const ns = this.scopes.get(key.slice(0, slash + 1));
      if (ns) deliverInScope(ns, ev);
    }
  }

  /** The scope key of a watch's key prefix, or undefined when it is not the resource or one segment of it. */
  private scopeOf(keyPrefix: string): string | undefined {
    if (keyPrefix === this.prefix) return keyPrefix;
    if (!keyPrefix.startsWith(this.prefix) || !keyPrefix.endsWith('/')) return undefined;
    const segment = keyPrefix.slice(this.prefix.length, -1);
    return segment.length > 0 && !segment.includes('/') ? keyPrefix : undefined;
  }
}

function deliverInScope(scope: Scope, ev: CacheEvent): void {
  for (const w of scope.all) w.deliverInScope(ev, undefined);
  for (const [w, filter] of scope.rest) w.deliverInScope(ev, filter);
  if (scope.attrs.size === 0) return;
  const { entry, prev } = ev;
  for (const group of scope.attrs.values()) {
    // The watchers the new state may match, then those the old state may (an object leaving a
    // selection is a DELETED for them). A watcher sits under one value, so none is visited twice.
    const now = attrValue(group.index, entry);
    const before = prev ? attrValue(group.index, prev) : undefined;
    if (now !== undefined) visit(group.byValue.get(now), ev);
    if (before !== undefined && before !== now) visit(group.byValue.get(before), ev);
  }
}

function visit(watchers: Map<CacheWatcher, EntryFilter> | undefined, ev: CacheEvent): void {
  if (!watchers) return;
  for (const [w, filter] of watchers) w.deliverInScope(ev, filter);
}
