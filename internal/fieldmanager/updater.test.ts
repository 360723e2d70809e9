import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../patch/json-value.js';
import { builtinTypeNode } from '../patch/type-node.js';
import { rng } from '../testserver/seeded-random.js';
import { FieldManager } from './field-manager.js';
import { decodeManagedFields, managerIdentifier } from './managed-fields.js';
import { smdTypeOf } from './smd-type.js';
import { mergeValues, toFieldSet } from './typed-value.js';
import { pruneRelinquished, type ManagedSets } from './updater.js';

const DEPLOYMENT = builtinTypeNode('io.k8s.api.apps.v1.Deployment')!;
const type = smdTypeOf(DEPLOYMENT);
const fm = new FieldManager({ schema: DEPLOYMENT, kind: 'Deployment', objectModel: 'typed' });
const time = '2025-01-01T00:00:00Z';
const APPLIER = managerIdentifier({ manager: 'a', operation: 'Apply' });

/** A Deployment apply body with a random choice of fields; `more` adds fields, never removes. */
function body(rand: () => number, more: boolean): JsonObject {
  const chance = (p: number) => rand() < p || more;
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const container: JsonObject = { name: 'app' };
  if (chance(0.6)) container.image = pick(['nginx:1', 'nginx:2']);
  if (chance(0.4)) container.ports = [{ containerPort: 80, ...(chance(0.5) ? { name: 'http' } : {}) }];
  if (chance(0.4)) container.env = [{ name: 'A', value: pick(['1', '2']) }];
  if (chance(0.3)) container.resources = { requests: { cpu: pick(['1', '2']) } };
  const spec: JsonObject = { selector: { matchLabels: { app: 'w' } } };
  if (chance(0.5)) spec.replicas = pick([1, 2, 3]);
  if (chance(0.5)) spec.template = { metadata: { labels: { app: 'w' } }, spec: { containers: [container] } };
  const metadata: JsonObject = { name: 'd' };
  if (chance(0.5)) metadata.labels = { x: pick(['1', '2']) };
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec };
}

/** What Updater.apply hands prune: the merged object and every manager's set, the applier's new one included. */
function pruneInputs(live: JsonObject, config: JsonObject) {
  const { managedFields, ...meta } = live.metadata as JsonObject;
  const managed = decodeManagedFields(managedFields);
  const liveView: JsonObject = { ...live, metadata: meta };
  const last = managed.sets.get(APPLIER)!.set;
  const applied = toFieldSet(config, type);
  const managers: ManagedSets = new Map(managed.sets);
  managers.set(APPLIER, { set: applied, apiVersion: 'apps/v1', applied: true });
  return { merged: mergeValues(liveView, config, type)!, managers, last, applied };
}

describe('prune shortcut: an applier that keeps every field it applied relinquishes nothing', () => {
  it('the full prune leaves the merged object as it is whenever the previous set is a subset of the new one', () => {
    let checked = 0;
    let prunedSomething = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const rand = rng(seed);
      let live = fm.apply(undefined, body(rand, false), { manager: 'a', apiVersion: 'apps/v1', time });
      // Another manager takes part of the object, as in the bench's three-manager Deployment.
      live = fm.apply(live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', annotations: { b: '1' } } }, { manager: 'b', apiVersion: 'apps/v1', time });
      const superset = body(rand, true);
      const { merged, managers, last, applied } = pruneInputs(live, superset);
      expect(last.isSubsetOf(applied)).toBe(true);
      expect(pruneRelinquished(merged, managers, last, type)).toEqual(merged);
      checked++;
      // The control: a body that leaves fields out does get them pruned, so the check above can fail.
      const fewer = body(rng(seed + 1000), false);
      const control = pruneInputs(live, fewer);
      if (!control.last.isSubsetOf(control.applied) && JSON.stringify(pruneRelinquished(control.merged, control.managers, control.last, type)) !== JSON.stringify(control.merged)) {
        prunedSomething++;
      }
    }
    expect(checked).toBe(300);
    expect(prunedSomething).toBeGreaterThan(50);
  });
});
