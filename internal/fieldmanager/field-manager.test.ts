import { describe, expect, it } from 'vitest';
import { StatusError } from '../apierrors/status.js';
import type { JsonObject } from '../patch/json-value.js';
import { builtinTypeNode, customResourceTypeNode } from '../patch/type-node.js';
import { SchemaIndex } from '../schema/openapi-index.js';
import { FieldManager, fieldPaths, formatTime, type ApplyOptions } from './field-manager.js';
import { decodeFieldsV1 } from './fields-v1.js';
import type { ManagedFieldsEntry } from './managed-fields.js';
import { pathString } from './path-element.js';

// ---- helpers --------------------------------------------------------------------------------

const DEPLOYMENT = builtinTypeNode('io.k8s.api.apps.v1.Deployment')!;
const manager = (extra: Partial<ConstructorParameters<typeof FieldManager>[0]> = {}) =>
  new FieldManager({ schema: DEPLOYMENT, kind: 'Deployment', objectModel: 'typed', ...extra });

let clock = 0;
/** A fresh minute for every write, so times order entries the way real writes would. */
const now = () => new Date(Date.UTC(2024, 4, 1, 10, 0, clock++ * 60));

type Body = { labels?: Record<string, string>; spec?: JsonObject; metadata?: JsonObject };
const deployment = ({ labels, spec, metadata }: Body = {}): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', ...(labels ? { labels } : {}), ...metadata },
  ...(spec ? { spec } : {}),
});
const template = (containers: JsonObject[]) => ({ metadata: { labels: { app: 'web' } }, spec: { containers } });
const fullSpec = (replicas = 3, image = 'nginx:1'): JsonObject => ({
  replicas,
  selector: { matchLabels: { app: 'web' } },
  template: template([{ name: 'nginx', image }]),
});

/** What the registry does after a write: the object gets its identity. */
const stored = (obj: JsonObject): JsonObject => ({ ...obj, metadata: { ...(obj.metadata as JsonObject), uid: 'uid-1' } });

function apply(fm: FieldManager, live: JsonObject | undefined, body: unknown, name: string, extra: Partial<ApplyOptions> = {}): JsonObject {
  return stored(fm.apply(live, body, { manager: name, apiVersion: 'apps/v1', time: now(), ...extra }));
}
function update(fm: FieldManager, live: JsonObject | undefined, next: JsonObject, name: string, subresource?: string): JsonObject {
  return stored(fm.update(live, next, { manager: name, apiVersion: 'apps/v1', time: now(), subresource }));
}

const entries = (obj: JsonObject): ManagedFieldsEntry[] =>
  ((obj.metadata as JsonObject).managedFields as unknown as ManagedFieldsEntry[] | undefined) ?? [];
const entry = (obj: JsonObject, name: string, operation = 'Apply') => entries(obj).find((e) => e.manager === name && e.operation === operation);
const owned = (obj: JsonObject, name: string, operation = 'Apply'): string[] => {
  const e = entry(obj, name, operation);
  return e ? decodeFieldsV1(e.fieldsV1).paths().map(pathString) : [];
};
const spec = (obj: JsonObject) => obj.spec as JsonObject;
const managers = (obj: JsonObject) => entries(obj).map((e) => `${e.manager}/${e.operation}`);

function statusError(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected a StatusError');
}

const modify = (obj: JsonObject, change: (copy: JsonObject) => void): JsonObject => {
  const copy = structuredClone(obj);
  change(copy);
  return copy;
};

describe('the object a write gets back', () => {
  it('keeps the metadata members in order, managedFields last on a first write, and leaves the input as it was', () => {
    const fm = manager();
    const body = deployment({ labels: { app: 'web' }, spec: fullSpec(), metadata: { annotations: { a: 'b' } } });
    const before = structuredClone(body);
    const created = fm.update(undefined, body, { manager: 'kubectl', apiVersion: 'apps/v1', time: now() });
    expect(Object.keys(created.metadata as JsonObject)).toEqual(['name', 'namespace', 'labels', 'annotations', 'managedFields']);
    expect(body).toEqual(before);
    // An update of it: the entries are written again, last.
    const next = modify(stored(created), (o) => ((o.metadata as JsonObject).labels = { app: 'web', tier: 'x' }));
    const updated = fm.update(stored(created), next, { manager: 'editor', apiVersion: 'apps/v1', time: now() });
    expect(Object.keys(updated.metadata as JsonObject)).toEqual(['name', 'namespace', 'labels', 'annotations', 'uid', 'managedFields']);
    expect(managers(updated)).toEqual(['kubectl/Update', 'editor/Update']);
  });
});

// ---- §2.7 rules ------------------------------------------------------------------------------

describe('§2.7 rule 1: a field is owned by whoever last changed its value', () => {
  it('an update that changes an applied field takes it over; unchanged fields stay with the applier', () => {
    const fm = manager();
    const applied = apply(fm, undefined, deployment({ spec: fullSpec(3) }), 'alice');
    const scaled = update(fm, applied, modify(applied, (o) => (spec(o).replicas = 5)), 'hpa');
    expect(owned(scaled, 'hpa', 'Update')).toEqual(['.spec.replicas']);
    expect(owned(scaled, 'alice')).not.toContain('.spec.replicas');
    expect(owned(scaled, 'alice')).toContain('.spec.template.spec.containers[name="nginx"].image');
  });

  it('an update that changes nothing records nothing and moves no time', () => {
    const fm = manager();
    const applied = apply(fm, undefined, deployment({ spec: fullSpec() }), 'alice');
    const same = update(fm, applied, structuredClone(applied), 'bystander');
    expect(managers(same)).toEqual(['alice/Apply']);
    expect(entry(same, 'alice')!.time).toBe(entry(applied, 'alice')!.time);
  });

  it('updates never fail on ownership', () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ spec: fullSpec() }), 'alice');
    const b = apply(fm, a, deployment({ spec: { replicas: 3 } }), 'bob');
    expect(() => update(fm, b, modify(b, (o) => (spec(o).replicas = 9)), 'kubectl-edit')).not.toThrow();
  });
});

describe('§2.7 rule 2: appliers setting the same value share; a later change conflicts', () => {
  const shared = () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ spec: fullSpec(3) }), 'alice');
    const b = apply(fm, a, deployment({ spec: { replicas: 3 } }), 'bob');
    return { fm, b };
  };

  it('two appliers setting the same value both own it', () => {
    const { b } = shared();
    expect(owned(b, 'alice')).toContain('.spec.replicas');
    expect(owned(b, 'bob')).toEqual(['.spec.replicas']);
    expect(spec(b).replicas).toBe(3);
  });

  it('a change of the shared value by either of them conflicts, naming the other', () => {
    const { fm, b } = shared();
    const err = statusError(() => apply(fm, b, deployment({ spec: { ...fullSpec(), replicas: 4 } }), 'alice'));
    expect(err.code).toBe(409);
    expect(err.status.reason).toBe('Conflict');
    expect(err.status.message).toBe('Apply failed with 1 conflict: conflict with "bob": .spec.replicas');
    expect(err.status.details?.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "bob"', field: '.spec.replicas' },
    ]);
    const err2 = statusError(() => apply(fm, b, deployment({ spec: { replicas: 5 } }), 'bob'));
    expect(err2.status.message).toBe('Apply failed with 1 conflict: conflict with "alice": .spec.replicas');
  });

  it('force takes the field from the other owner', () => {
    const { fm, b } = shared();
    const forced = apply(fm, b, deployment({ spec: { ...fullSpec(), replicas: 4 } }), 'alice', { force: true });
    expect(spec(forced).replicas).toBe(4);
    expect(owned(forced, 'alice')).toContain('.spec.replicas');
    expect(entry(forced, 'bob')).toBeUndefined();
  });

  it('a sharer gives up ownership by applying without the field, which then stays with the other', () => {
    const { fm, b } = shared();
    const relinquished = apply(fm, b, deployment(), 'bob');
    expect(entry(relinquished, 'bob')).toBeUndefined();
    expect(spec(relinquished).replicas).toBe(3);
    const changed = apply(fm, relinquished, deployment({ spec: { ...fullSpec(), replicas: 7 } }), 'alice');
    expect(spec(changed).replicas).toBe(7);
  });

  it('lists every conflict, grouped by manager, the way kubectl prints them', () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ labels: { app: 'web' }, spec: fullSpec(3) }), 'alice');
    const b = update(fm, a, modify(a, (o) => (spec(o).paused = true)), 'kubectl-edit');
    const err = statusError(() =>
      apply(fm, b, deployment({ labels: { app: 'other' }, spec: { replicas: 4, paused: false } }), 'carol'),
    );
    expect(err.status.message).toBe(
      'Apply failed with 3 conflicts: conflicts with "alice":\n- .metadata.labels.app\n- .spec.replicas\n' +
        'conflicts with "kubectl-edit" using apps/v1:\n- .spec.paused',
    );
    expect(err.status.details?.causes?.map((c) => c.field)).toEqual(['.metadata.labels.app', '.spec.replicas', '.spec.paused']);
  });
});

describe('§2.7 rule 3: a field nobody owns any more is removed or reset to its default', () => {
  it('removes what the applier applied before and left out now', () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ labels: { a: '1', b: '2' }, spec: { ...fullSpec(), paused: true } }), 'alice');
    const b = apply(fm, a, deployment({ labels: { a: '1' }, spec: fullSpec() }), 'alice');
    expect((b.metadata as JsonObject).labels).toEqual({ a: '1' });
    expect(spec(b)).not.toHaveProperty('paused');
    expect(owned(b, 'alice')).not.toContain('.metadata.labels.b');
  });

  it('keeps what another manager still owns', () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ labels: { a: '1', b: '2' } }), 'alice');
    const b = apply(fm, a, deployment({ labels: { b: '2' } }), 'bob');
    const c = apply(fm, b, deployment({ labels: { a: '1' } }), 'alice');
    expect((c.metadata as JsonObject).labels).toEqual({ a: '1', b: '2' });
  });

  it('keeps fields an updater took over, and fields nobody ever applied', () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ labels: { a: '1' }, spec: fullSpec() }), 'alice');
    const edited = update(fm, a, modify(a, (o) => ((o.metadata as JsonObject).labels = { a: '2', c: '3' })), 'kubectl-edit');
    const b = apply(fm, edited, deployment({ spec: fullSpec() }), 'alice');
    expect((b.metadata as JsonObject).labels).toEqual({ a: '2', c: '3' });
  });

  it('resets a relinquished field to its default through the defaulter', () => {
    const fm = manager({
      defaulter: (obj) => {
        const s = obj.spec as JsonObject | undefined;
        if (s && s.replicas === undefined) s.replicas = 1;
      },
    });
    const a = apply(fm, undefined, deployment({ spec: fullSpec(5) }), 'alice');
    const b = apply(fm, a, deployment({ spec: { selector: fullSpec().selector!, template: fullSpec().template! } }), 'alice');
    expect(spec(b).replicas).toBe(1);
    expect(owned(b, 'alice')).not.toContain('.spec.replicas');
  });

  it('leaves defaulting to the caller with defaults: false, recording the same ownership', () => {
    const defaulter = (obj: JsonObject) => {
      const s = obj.spec as JsonObject | undefined;
      if (s && s.replicas === undefined) s.replicas = 1;
    };
    const fm = manager({ defaulter });
    const a = apply(fm, undefined, deployment({ spec: fullSpec(5) }), 'alice');
    const body = deployment({ spec: { selector: fullSpec().selector!, template: fullSpec().template! } });
    const at = new Date(Date.UTC(2024, 5, 1));
    const defaulted = fm.apply(a, body, { manager: 'alice', apiVersion: 'apps/v1', time: at });
    const left = fm.apply(a, body, { manager: 'alice', apiVersion: 'apps/v1', time: at, defaults: false });
    expect(spec(defaulted).replicas).toBe(1);
    expect(spec(left)).not.toHaveProperty('replicas');
    expect((left.metadata as JsonObject).managedFields).toEqual((defaulted.metadata as JsonObject).managedFields);
    // What the caller's defaulting then gives is what the field manager would have returned.
    defaulter(left);
    expect(left).toEqual(defaulted);
  });

  it('never changes the live object it applies to (callers pass the stored object uncopied)', () => {
    const deepFreeze = <T>(v: T): T => {
      if (typeof v === 'object' && v !== null) {
        for (const x of Object.values(v)) deepFreeze(x);
        Object.freeze(v);
      }
      return v;
    };
    const fm = manager({ defaulter: (obj) => void (obj.spec && ((obj.spec as JsonObject).revisionHistoryLimit ??= 10)) });
    const two = template([
      { name: 'a', image: 'a', env: [{ name: 'X', value: '1' }] },
      { name: 'b', image: 'b' },
    ]);
    const a = apply(fm, undefined, deployment({ labels: { a: '1' }, spec: { ...fullSpec(), template: two } }), 'alice');
    const b = apply(fm, a, deployment({ labels: { b: '1' } }), 'bob');
    const live = deepFreeze(update(fm, b, modify(b, (o) => ((o.metadata as JsonObject).annotations = { n: '1' })), 'editor'));
    const snapshot = JSON.stringify(live);
    const bodies = [
      deployment({ labels: { a: '2' }, spec: fullSpec(4) }),
      deployment({ spec: { ...fullSpec(), template: two, paused: null } }),
      deployment({ labels: { b: '2' }, metadata: { annotations: { n: '2' } } }),
    ];
    // Unchanged fieldsV1 entries are reused from the stored ones, as on every update; nothing
    // mutates managed fields in place.
    const objects = (v: unknown, into = new Set<unknown>()): Set<unknown> => {
      if (typeof v === 'object' && v !== null) {
        into.add(v);
        for (const [k, x] of Object.entries(v)) if (k !== 'managedFields') objects(x, into);
      }
      return into;
    };
    const inLive = objects(live);
    for (const body of bodies) {
      const out = fm.apply(live, body, { manager: 'alice', apiVersion: 'apps/v1', time: now(), force: true });
      // The result shares no object or array with the input (managed fields aside): the caller
      // mutates it next.
      expect([...objects(out)].filter((o) => inLive.has(o))).toEqual([]);
    }
    expect(JSON.stringify(live)).toBe(snapshot);
  });

  it('treats an applied null as unset in built-in kinds, while owning the field', () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ spec: { ...fullSpec(), paused: null } }), 'alice');
    expect(spec(a)).not.toHaveProperty('paused');
    expect(owned(a, 'alice')).toContain('.spec.paused');
  });

  it('removes a whole list item the applier dropped, keeping the others', () => {
    const fm = manager();
    const two = template([
      { name: 'a', image: 'a' },
      { name: 'b', image: 'b' },
    ]);
    const a = apply(fm, undefined, deployment({ spec: { ...fullSpec(), template: two } }), 'alice');
    const b = apply(fm, a, deployment({ spec: fullSpec() }), 'alice');
    expect(((spec(b).template as JsonObject).spec as JsonObject).containers).toEqual([{ name: 'nginx', image: 'nginx:1' }]);
  });
});

describe('§2.7 rule 4: managedFields may not be set in an apply body', () => {
  it.each([[[{ manager: 'x' }]], [[]]])('rejects %j with 400', (mf) => {
    const err = statusError(() => apply(manager(), undefined, deployment({ metadata: { managedFields: mf } }), 'alice'));
    expect(err.code).toBe(400);
    expect(err.status.message).toBe('metadata.managedFields must be nil');
  });
});

describe('§2.7 rule 5: [{}] resets managed fields on a non-apply write', () => {
  const twoManagers = () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ labels: { app: 'web' }, spec: fullSpec() }), 'alice');
    return { fm, b: update(fm, a, modify(a, (o) => (spec(o).replicas = 4)), 'hpa') };
  };

  it('resets, then the requester owns every field of the request', () => {
    const { fm, b } = twoManagers();
    const reset = update(fm, b, modify(b, (o) => ((o.metadata as JsonObject).managedFields = [{}])), 'cleaner');
    expect(managers(reset)).toEqual(['cleaner/Update']);
    expect(owned(reset, 'cleaner', 'Update')).toEqual(expect.arrayContaining(['.metadata.labels.app', '.spec.replicas', '.spec.selector']));
  });

  it('applies the reset first when combined with other changes', () => {
    const { fm, b } = twoManagers();
    const next = modify(b, (o) => {
      (o.metadata as JsonObject).managedFields = [{}];
      spec(o).paused = true;
    });
    const reset = update(fm, b, next, 'cleaner');
    expect(managers(reset)).toEqual(['cleaner/Update']);
    expect(owned(reset, 'cleaner', 'Update')).toContain('.spec.paused');
    expect(spec(reset).paused).toBe(true);
  });

  it('an empty list does not reset', () => {
    const { fm, b } = twoManagers();
    const kept = update(fm, b, modify(b, (o) => ((o.metadata as JsonObject).managedFields = [])), 'someone');
    expect(managers(kept)).toEqual(['alice/Apply', 'hpa/Update']);
  });

  it('managedFields sent with an update replace the stored ones', () => {
    const { fm, b } = twoManagers();
    const onlyHpa = entries(b).filter((e) => e.manager === 'hpa');
    const replaced = update(fm, b, modify(b, (o) => ((o.metadata as JsonObject).managedFields = onlyHpa as never)), 'x');
    expect(managers(replaced)).toEqual(['hpa/Update']);
  });

  it('invalid managedFields sent with an update are ignored', () => {
    const { fm, b } = twoManagers();
    const kept = update(fm, b, modify(b, (o) => ((o.metadata as JsonObject).managedFields = [{ manager: 'x', operation: 'Bogus' }] as never)), 'x');
    expect(managers(kept)).toEqual(['alice/Apply', 'hpa/Update']);
  });

  it('a subresource write neither resets nor replaces them', () => {
    const { fm, b } = twoManagers();
    const next = modify(b, (o) => {
      (o.metadata as JsonObject).managedFields = [{}];
      o.status = { replicas: 4 };
    });
    const status = update(fm, b, next, 'kube-controller-manager', 'status');
    expect(managers(status)).toEqual(['alice/Apply', 'hpa/Update', 'kube-controller-manager/Update']);
    const e = entry(status, 'kube-controller-manager', 'Update')!;
    expect(e.subresource).toBe('status');
    expect(owned(status, 'kube-controller-manager', 'Update')).toEqual(['.status.replicas']);
  });
});

describe('update-then-apply', () => {
  it('an applier changing a field an updater set conflicts with that updater', () => {
    const fm = manager();
    const created = update(fm, undefined, deployment({ spec: fullSpec(2) }), 'kubectl-create');
    const err = statusError(() => apply(fm, created, deployment({ spec: fullSpec(3) }), 'alice'));
    expect(err.status.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-create" using apps/v1: .spec.replicas');
  });

  it('applying the same values shares them with the updater', () => {
    const fm = manager();
    const created = update(fm, undefined, deployment({ spec: fullSpec(2) }), 'kubectl-create');
    const applied = apply(fm, created, deployment({ spec: fullSpec(2) }), 'alice');
    expect(owned(applied, 'alice')).toContain('.spec.replicas');
    expect(owned(applied, 'kubectl-create', 'Update')).toContain('.spec.replicas');
    // Taking shared ownership does not change the object, so the applier's entry gets no time.
    expect(entry(applied, 'alice')!.time).toBeUndefined();
  });
});

describe('manager identity and entries', () => {
  it('keys updates by apiVersion and applies not, and sorts Apply before Update, then by time', () => {
    const fm = manager();
    const a = update(fm, undefined, deployment({ spec: fullSpec(1) }), 'zed');
    const b = stored(fm.update(a, modify(a, (o) => (spec(o).replicas = 2)), { manager: 'zed', apiVersion: 'apps/v1beta2', time: now() }));
    const c = apply(fm, b, deployment({ labels: { x: '1' } }), 'alice');
    expect(entries(c).map((e) => [e.manager, e.operation, e.apiVersion])).toEqual([
      ['alice', 'Apply', 'apps/v1'],
      ['zed', 'Update', 'apps/v1'],
      ['zed', 'Update', 'apps/v1beta2'],
    ]);
    expect(Object.keys(entries(c)[0]!)).toEqual(['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
  });

  it('names an unnamed manager "unknown"', () => {
    const out = update(manager(), undefined, deployment({ spec: fullSpec() }), '');
    expect(managers(out)).toEqual(['unknown/Update']);
  });

  it('never records identity fields', () => {
    const out = update(manager(), undefined, deployment({ metadata: { generation: 1, resourceVersion: '5' } }), 'x');
    expect(entries(out)).toEqual([]);
    expect((out.metadata as JsonObject).managedFields).toBeUndefined();
  });

  it('merges the oldest of more than ten Update entries into ancient-changes', () => {
    const fm = manager();
    let obj = apply(fm, undefined, deployment({ spec: fullSpec() }), 'alice');
    for (let n = 0; n < 12; n++) {
      obj = update(fm, obj, modify(obj, (o) => ((o.metadata as JsonObject).labels = { ...((o.metadata as JsonObject).labels as JsonObject), [`l${n}`]: 'x' })), `writer-${n}`);
    }
    const updaters = entries(obj).filter((e) => e.operation === 'Update');
    expect(updaters).toHaveLength(10);
    expect(updaters.map((e) => e.manager)).toEqual(['ancient-changes', ...Array.from({ length: 9 }, (_, n) => `writer-${n + 3}`)]);
    // The bucket owns what the three oldest writers owned (the first one created the labels map).
    expect(owned(obj, 'ancient-changes', 'Update')).toEqual([
      '.metadata.labels',
      '.metadata.labels.l0',
      '.metadata.labels.l1',
      '.metadata.labels.l2',
    ]);
  });

  it('keeps an object nobody tracks untracked on update, and records its fields before the first apply', () => {
    const fm = manager();
    const untracked = stored(deployment({ spec: fullSpec(2) }));
    const updated = update(fm, untracked, modify(untracked, (o) => (spec(o).replicas = 3)), 'kubectl-edit');
    expect(entries(updated)).toEqual([]);
    const err = statusError(() => apply(fm, updated, deployment({ spec: fullSpec(4) }), 'alice'));
    expect(err.status.message).toBe('Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas');
    const applied = apply(fm, updated, deployment({ spec: fullSpec(3) }), 'alice');
    expect(managers(applied)).toEqual(['alice/Apply', 'before-first-apply/Update']);
  });

  it('does not move the time of a no-op apply', () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ spec: fullSpec() }), 'alice');
    const b = apply(fm, a, deployment({ spec: fullSpec() }), 'alice');
    expect(entry(b, 'alice')!.time).toBe(entry(a, 'alice')!.time);
    expect(entry(b, 'alice')!.fieldsV1).toBe(entry(a, 'alice')!.fieldsV1);
  });

  it('does not own ignored fields (reset by the strategy)', () => {
    const fm = manager({ ignoredFields: (sub) => (sub === 'status' ? fieldPaths(['spec']) : fieldPaths(['status'])) });
    const a = apply(fm, undefined, { ...deployment({ spec: fullSpec() }), status: { replicas: 1 } }, 'alice');
    expect(owned(a, 'alice').some((p) => p.startsWith('.status'))).toBe(false);
  });
});

describe('apply body checks', () => {
  it.each([
    ['another kind', { ...deployment(), kind: 'ReplicaSet' }, 'invalid object type: apps/v1, Kind=ReplicaSet'],
    ['another version', { ...deployment(), apiVersion: 'apps/v1beta1' }, 'invalid object type: apps/v1beta1, Kind=Deployment'],
    ['no type at all', { metadata: { name: 'web' } }, 'invalid object type: /, Kind='],
  ])('rejects %s with 400', (_name, body, message) => {
    const err = statusError(() => apply(manager(), undefined, body, 'alice'));
    expect(err.code).toBe(400);
    expect(err.status.message).toBe(message);
  });

  it('checks only the version when the kind is not configured', () => {
    const fm = new FieldManager({ schema: DEPLOYMENT });
    const err = statusError(() => apply(fm, undefined, { ...deployment(), apiVersion: 'apps/v1beta1' }, 'alice'));
    expect(err.status.message).toBe('Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1');
  });

  it('rejects a body that is not an object', () => {
    expect(statusError(() => apply(manager(), undefined, ['x'], 'alice')).code).toBe(400);
  });

  it('rejects fields the schema does not declare, as upstream does', () => {
    const err = statusError(() => apply(manager(), undefined, deployment({ spec: { replicaz: 1 } }), 'alice'));
    expect(err.code).toBe(500);
    expect(err.status.message).toBe(
      'failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.replicaz: field not declared in schema',
    );
  });

  it('rejects duplicate list items in the body', () => {
    const body = deployment({ spec: { ...fullSpec(), template: template([{ name: 'a' }, { name: 'a' }]) } });
    const err = statusError(() => apply(manager(), undefined, body, 'alice'));
    expect(err.status.message).toMatch(/\.spec\.template\.spec\.containers: duplicate entries for key \[name="a"\]$/);
  });
});

// ---- §2.9 merge strategies ------------------------------------------------------------------

describe('§2.9 merge strategies in apply', () => {
  it('list-type map: managers own distinct items', () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ spec: fullSpec() }), 'alice');
    const b = apply(fm, a, deployment({ spec: { template: { spec: { containers: [{ name: 'sidecar', image: 's' }] } } } }), 'bob');
    const containers = () => ((spec(b).template as JsonObject).spec as JsonObject).containers;
    expect(containers()).toEqual([
      { name: 'nginx', image: 'nginx:1' },
      { name: 'sidecar', image: 's' },
    ]);
    expect(owned(b, 'bob')).toEqual([
      '.spec.template.spec.containers[name="sidecar"]',
      '.spec.template.spec.containers[name="sidecar"].image',
      '.spec.template.spec.containers[name="sidecar"].name',
    ]);
    const c = apply(fm, b, deployment(), 'bob');
    expect(((spec(c).template as JsonObject).spec as JsonObject).containers).toEqual([{ name: 'nginx', image: 'nginx:1' }]);
  });

  it('atomic list: replaced whole and owned by one manager', () => {
    const fm = manager();
    const withArgs = (args: string[]) => deployment({ spec: { template: { spec: { containers: [{ name: 'nginx', args }] } } } });
    const a = apply(fm, undefined, withArgs(['-a']), 'alice');
    expect(owned(a, 'alice')).toContain('.spec.template.spec.containers[name="nginx"].args');
    const err = statusError(() => apply(fm, a, withArgs(['-a', '-b']), 'bob'));
    expect(err.status.message).toBe('Apply failed with 1 conflict: conflict with "alice": .spec.template.spec.containers[name="nginx"].args');
  });

  it('list-type set: values owned one by one', () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ metadata: { finalizers: ['a'] } }), 'alice');
    const b = apply(fm, a, deployment({ metadata: { finalizers: ['b'] } }), 'bob');
    expect((b.metadata as JsonObject).finalizers).toEqual(['a', 'b']);
    expect(owned(b, 'bob')).toEqual(['.metadata.finalizers[="b"]']);
  });

  it('atomic map/struct: owned whole (the selector)', () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ spec: fullSpec() }), 'alice');
    expect(owned(a, 'alice')).toContain('.spec.selector');
    const err = statusError(() => apply(fm, a, deployment({ spec: { selector: { matchLabels: { app: 'web', x: 'y' } } } }), 'bob'));
    expect(err.status.message).toBe('Apply failed with 1 conflict: conflict with "alice": .spec.selector');
  });

  it('granular map: keys owned one by one (labels)', () => {
    const fm = manager();
    const a = apply(fm, undefined, deployment({ labels: { a: '1' } }), 'alice');
    const b = apply(fm, a, deployment({ labels: { b: '2' } }), 'bob');
    expect((b.metadata as JsonObject).labels).toEqual({ a: '1', b: '2' });
    expect(owned(b, 'bob')).toEqual(['.metadata.labels.b']);
  });

  it('patchStrategy=merge without listType is a list-map keyed by the merge key', () => {
    const index = new SchemaIndex(() => ({
      'test.Thing': {
        type: 'object',
        'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Thing' }],
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
          rules: {
            type: 'array',
            'x-kubernetes-patch-strategy': 'merge',
            'x-kubernetes-patch-merge-key': 'host',
            items: { type: 'object', properties: { host: { type: 'string' }, path: { type: 'string' } } },
          },
        },
      },
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': { type: 'object', properties: { name: { type: 'string' } } },
    }));
    const fm = new FieldManager({ schema: builtinTypeNode('test.Thing', index), kind: 'Thing' });
    const body = (rules: JsonObject[]) => ({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 't' }, rules });
    const opts = (name: string) => ({ manager: name, apiVersion: 'example.com/v1', time: now() });
    const a = stored(fm.apply(undefined, body([{ host: 'a', path: '/' }]), opts('alice')));
    const b = stored(fm.apply(a, body([{ host: 'b', path: '/b' }]), opts('bob')));
    expect(b.rules).toEqual([
      { host: 'a', path: '/' },
      { host: 'b', path: '/b' },
    ]);
    expect(owned(b, 'bob')).toEqual(['.rules[host="b"]', '.rules[host="b"].host', '.rules[host="b"].path']);
  });

  it('custom resources are unstructured by default: lists atomic, keys fields', () => {
    const fm = new FieldManager({
      schema: customResourceTypeNode({
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: { ports: { type: 'array', items: { type: 'integer' } }, size: { type: 'string' } },
          },
        },
      }),
      kind: 'Widget',
    });
    const body = (s: JsonObject) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: s });
    const opts = (name: string) => ({ manager: name, apiVersion: 'example.com/v1', time: now() });
    const a = stored(fm.apply(undefined, body({ ports: [1, 2], size: 'L' }), opts('alice')));
    expect(owned(a, 'alice')).toEqual(['.spec.ports', '.spec.size']);
    const err = statusError(() => fm.apply(a, body({ ports: [3] }), opts('bob')));
    expect(err.status.message).toBe('Apply failed with 1 conflict: conflict with "alice": .spec.ports');
  });

  it('a type that turned atomic gives the whole structure to its previous owner', () => {
    const fm = manager();
    // Recorded by an older server where the selector was granular: only one label was owned.
    const live = stored({
      ...deployment({ spec: fullSpec() }),
      metadata: {
        name: 'web',
        namespace: 'default',
        managedFields: [
          {
            manager: 'old-controller',
            operation: 'Update',
            apiVersion: 'apps/v1',
            time: '2023-01-01T00:00:00Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:selector': { 'f:matchLabels': { 'f:app': {} } } } },
          },
        ],
      },
    });
    const err = statusError(() => apply(fm, live, deployment({ spec: { selector: { matchLabels: { app: 'web', tier: 'x' } } } }), 'alice'));
    expect(err.status.message).toBe('Apply failed with 1 conflict: conflict with "old-controller" using apps/v1: .spec.selector');
  });
});

// ---- wire format ----------------------------------------------------------------------------

describe('fieldsV1 as upstream writes it', () => {
  // The body of the upstream "server-side apply" documentation example, applied with
  // `kubectl apply --server-side`. What structured-merge-diff records for it: every leaf the
  // body sets; list-map items under their key fields (the port's `protocol` key filled from the
  // schema default TCP, though the body omits it), the item itself as "." because its fields are
  // children; the selector whole (map-type atomic); label keys one by one; struct fields that
  // only have children (spec, template, metadata) are not members. Identity fields are stripped.
  const body = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'nginx-deployment', labels: { app: 'nginx' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'nginx' } },
      template: {
        metadata: { labels: { app: 'nginx' } },
        spec: { containers: [{ name: 'nginx', image: 'nginx:1.14.2', ports: [{ containerPort: 80 }] }] },
      },
    },
  };

  it('records the golden fieldsV1 for a Deployment apply', () => {
    const out = manager().apply(undefined, body, { manager: 'kubectl', apiVersion: 'apps/v1', time: '2024-05-01T10:00:00.123Z' });
    const [e] = entries(out);
    expect(e).toEqual({
      manager: 'kubectl',
      operation: 'Apply',
      apiVersion: 'apps/v1',
      time: '2024-05-01T10:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: expect.any(Object),
    });
    expect(JSON.stringify(e!.fieldsV1)).toBe(
      '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},' +
        '"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{"f:image":{},"f:name":{},"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":' +
        '{"f:containerPort":{},".":{}}},".":{}}}}}}}',
    );
  });

  it('records the golden fieldsV1 for a create (Update), where added maps and items carry "."', () => {
    // As upstream records `kubectl create -f` of the same body (before the registry's defaults):
    // compared with the empty typed object, which already has spec/template/template.metadata/
    // template.spec (value structs) and a null containers list, so those get no "."; labels, list
    // items and ports do. The new container, a typed value too, has `resources: {}` — owned.
    const out = manager().update(undefined, body, { manager: 'kubectl-create', apiVersion: 'apps/v1', time: '2024-05-01T10:00:00Z' });
    expect(JSON.stringify(entries(out)[0]!.fieldsV1)).toBe(
      '{"f:metadata":{"f:labels":{"f:app":{},".":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{},".":{}}},' +
        '"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{"f:image":{},"f:name":{},"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":' +
        '{"f:containerPort":{},".":{}},".":{}},"f:resources":{},".":{}}}}}}}',
    );
  });

  it('leaves the caller\'s objects untouched', () => {
    const fm = manager();
    const frozen = structuredClone(body);
    const created = fm.apply(undefined, body, { manager: 'a', apiVersion: 'apps/v1', time: now() });
    expect(body).toEqual(frozen);
    const before = structuredClone(created);
    fm.update(created, modify(created, (o) => (spec(o).replicas = 1)), { manager: 'b', apiVersion: 'apps/v1', time: now() });
    expect(created).toEqual(before);
  });
});

// Speed is measured by `make bench` (the apply scenario), never by a wall-clock bound here: a
// loaded CI machine failed the old "well under a millisecond" assertion.
describe('repeated applies', () => {
  it('re-applying a Deployment with three managers is stable', () => {
    const fm = manager();
    const body = (image: string) =>
      deployment({
        labels: { app: 'web' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: template([
            { name: 'nginx', image, ports: [{ containerPort: 80 }], env: [{ name: 'A', value: '1' }], resources: { limits: { cpu: '1' } } },
            { name: 'sidecar', image: 'side:1', args: ['-v'] },
          ]),
        },
      });
    let obj = apply(fm, undefined, body('nginx:1'), 'alice');
    obj = update(fm, obj, modify(obj, (o) => (spec(o).replicas = 4)), 'hpa');
    obj = apply(fm, obj, deployment({ metadata: { annotations: { note: 'x' } } }), 'bob');
    expect(managers(obj)).toHaveLength(3);
    const first = fm.apply(obj, body('nginx:2'), { manager: 'alice', apiVersion: 'apps/v1', time: now() });
    for (let i = 0; i < 50; i++) {
      const again = fm.apply(obj, body(`nginx:${i % 3}`), { manager: 'alice', apiVersion: 'apps/v1', time: now() });
      expect(managers(again)).toHaveLength(3);
      if (i % 3 === 2) expect(again.spec).toEqual(first.spec);
      else expect(again.spec).not.toEqual(first.spec);
    }
  });
});

describe('formatTime', () => {
  it.each([
    [new Date('2026-11-28T17:00:00.999Z'), '2026-11-28T17:00:00Z'],
    [new Date('2026-11-28T17:00:00.001Z'), '2026-11-28T17:00:00Z'],
    [new Date('2026-11-28T17:00:01.000Z'), '2026-11-28T17:00:01Z'],
    // Back to an earlier second (the remembered one is replaced, not reused).
    [new Date('2026-11-28T17:00:00.500Z'), '2026-11-28T17:00:00Z'],
    ['2024-05-01T10:00:00.123+02:00', '2024-05-01T08:00:00Z'],
    [new Date('1969-12-31T23:59:59.500Z'), '1969-12-31T23:59:59Z'],
  ])('formats %s as %s', (time, want) => {
    expect(formatTime(time)).toBe(want);
  });

  it('refuses an invalid time', () => {
    expect(() => formatTime('not a time')).toThrow('invalid time not a time');
  });
});
