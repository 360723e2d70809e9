// internal/registry/managed-fields owns recording field ownership on every write and running
// server-side apply, per served kind: one FieldManager per (apiVersion, kind), configured from
// the kind's schema, its defaults, and which fields each endpoint may not own (status through
// the main resource, spec through status); and server-side apply of a Scale through a
// workload's scale sub-resource, run on the Scale view with ownership of replicas translated
// both ways (fieldmanager/scale-handler). Imports: fieldmanager, patch (schema nodes),
// schema, object-rules.

import { FieldManager, fieldPaths, fieldElement, replicasPathFromJsonPath, ScaleHandler, type FieldSet, type Path } from '../fieldmanager/index.js';
import { builtinTypeNode, customResourceTypeNode, type JsonObject as PatchJsonObject } from '../patch/index.js';
import type { Naming } from '../naming/naming.js';
import type { ResourceInfo } from '../schema/catalog.js';
import type { JsonObject, ObjectRules } from './object-rules.js';

export class ManagedFieldsTracker {
  private readonly managers = new Map<string, FieldManager>();

  private readonly customManagers = new WeakMap<object, FieldManager>();

  /** The field manager of the autoscaling/v1 Scale, shared by every scale sub-resource. */
  private scaleManager: FieldManager | undefined;

  constructor(
    private readonly rules: () => ObjectRules,
    private readonly naming: Naming,
  ) {}

  private managerFor(r: ResourceInfo): FieldManager {
    if (r.custom) {
      // Custom resources are unstructured unless their schema carries the markers (§2.9).
      let fm = this.customManagers.get(r.custom);
      if (!fm) {
        fm = new FieldManager({
          schema: customResourceTypeNode(r.custom.schema, { extensionPrefix: this.naming.extensionPrefix }),
          kind: r.kind,
          objectModel: 'unstructured',
          ignoredFields: (sub) => (sub === 'status' ? fieldPaths(['spec']) : sub ? undefined : r.subresources.has('status') ? fieldPaths(['status']) : undefined),
          defaulter: (obj) => {
            this.rules().applyDefaults(r, obj);
          },
        });
        this.customManagers.set(r.custom, fm);
      }
      return fm;
    }
    const key = `${r.apiVersion}/${r.kind}`;
    let fm = this.managers.get(key);
    if (!fm) {
      const hasStatus = r.subresources.has('status');
      const main: FieldSet | undefined = hasStatus ? fieldPaths(['status']) : undefined;
      const status: FieldSet = fieldPaths(['spec']);
      fm = new FieldManager({
        schema: r.schemaName ? builtinTypeNode(r.schemaName) : undefined,
        kind: r.kind,
        objectModel: r.schemaName ? 'typed' : 'unstructured',
        ignoredFields: (sub) => (sub === 'status' ? status : sub ? undefined : main),
        defaulter: (obj) => {
          this.rules().applyDefaults(r, obj);
        },
      });
      this.managers.set(key, fm);
    }
    return fm;
  }

  /** Ownership after a create (`live` undefined), update or patch by `manager`. */
  update(r: ResourceInfo, live: JsonObject | undefined, next: JsonObject, manager: string, subresource: string, time: Date): JsonObject {
    // Objects here came from JSON decoding, so they are JSON values; the engine's type says so more strictly.
    return this.managerFor(r).update(live as PatchJsonObject | undefined, next as PatchJsonObject, { manager, apiVersion: r.apiVersion, time, ...(subresource ? { subresource } : {}) });
  }

  /**
   * Server-side apply of `config` onto `live` (undefined: create). Throws 409 on conflicts
   * unless forced. `defaults: false` when the caller defaults the result itself.
   */
  apply(r: ResourceInfo, live: JsonObject | undefined, config: JsonObject, manager: string, force: boolean, subresource: string, time: Date, defaults = true): JsonObject {
    return this.managerFor(r).apply(live as PatchJsonObject | undefined, config, { manager, apiVersion: r.apiVersion, time, force, defaults, ...(subresource ? { subresource } : {}) });
  }

  /**
   * Server-side apply of a Scale `config` through the scale sub-resource of `live`: the apply
   * runs on the Scale view (`view.toScale`) with the workload's owners of replicas translated
   * to Scale owners, the result is written back (`view.fromScale`) and ownership translated
   * back, so conflicts and ownership are shared with applies on the workload (upstream's scale
   * handler). Throws 409 on conflicts unless forced.
   */
  applyScale(r: ResourceInfo, live: JsonObject, config: JsonObject, manager: string, force: boolean, time: Date, view: ScaleView): JsonObject {
    const sub = r.subresources.get('scale');
    const scaleApiVersion = sub ? `${sub.group}/${sub.version}` : 'autoscaling/v1';
    const meta = (live.metadata ?? {}) as JsonObject;
    const handler = new ScaleHandler(meta.managedFields, r.apiVersion, scaleApiVersion, replicasPaths(r));
    // A JSON round trip drops the view's undefined members, which are not JSON values.
    const scale = JSON.parse(JSON.stringify(view.toScale(live))) as JsonObject;
    const scaleEntries = handler.toSubresource();
    const scaleMeta = { ...((scale.metadata ?? {}) as JsonObject) };
    if (scaleEntries) scaleMeta.managedFields = scaleEntries;
    else delete scaleMeta.managedFields;
    this.scaleManager ??= new FieldManager({ schema: builtinTypeNode(SCALE_SCHEMA), kind: 'Scale', objectModel: 'typed' });
    const applied = this.scaleManager.apply({ ...scale, metadata: scaleMeta } as PatchJsonObject, config, {
      manager,
      apiVersion: scaleApiVersion,
      time,
      force,
      subresource: 'scale',
    }) as JsonObject;
    const next = view.fromScale(live, applied);
    const parentEntries = handler.toParent(((applied.metadata ?? {}) as JsonObject).managedFields);
    const nextMeta = { ...((next.metadata ?? {}) as JsonObject) };
    if (parentEntries) nextMeta.managedFields = parentEntries;
    else delete nextMeta.managedFields;
    return { ...next, metadata: nextMeta };
  }
}

/** The schema every scale sub-resource speaks. */
const SCALE_SCHEMA = 'io.k8s.api.autoscaling.v1.Scale';

/** How a workload and its Scale view turn into each other (the HTTP layer owns the view). */
export interface ScaleView {
  toScale(workload: JsonObject): JsonObject;
  fromScale(workload: JsonObject, scale: JsonObject): JsonObject;
}

const SPEC_REPLICAS: Path = [fieldElement('spec'), fieldElement('replicas')];

/**
 * Where replicas live at each apiVersion of `r`. Built-in workloads keep them at spec.replicas
 * in every version of their group. A custom resource's other versions may put them elsewhere or
 * have no scale at all; we do not look them up here, so they count as unknown (their entries
 * are left alone).
 */
function replicasPaths(r: ResourceInfo): (apiVersion: string) => Path | null | undefined {
  return (apiVersion) => {
    if (r.custom) {
      if (apiVersion !== r.apiVersion) return undefined;
      return r.custom.scale ? replicasPathFromJsonPath(r.custom.scale.specReplicasPath) : null;
    }
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    return group === r.group ? SPEC_REPLICAS : undefined;
  };
}
