// internal/registry/managed-fields owns recording field ownership on every write and running
// server-side apply, per served kind: one FieldManager per (apiVersion, kind), configured from
// the kind's schema, its defaults, and which fields each endpoint may not own (status through
// the main resource, spec through status). Imports: fieldmanager, patch (schema nodes),
// schema, object-rules.

import { FieldManager, fieldPaths, type FieldSet } from '../fieldmanager/index.js';
import { builtinTypeNode, customResourceTypeNode, type JsonObject as PatchJsonObject } from '../patch/index.js';
import type { Naming } from '../naming/naming.js';
import type { ResourceInfo } from '../schema/catalog.js';
import type { JsonObject, ObjectRules } from './object-rules.js';

export class ManagedFieldsTracker {
  private readonly managers = new Map<string, FieldManager>();

  private readonly customManagers = new WeakMap<object, FieldManager>();

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

  /** Server-side apply of `config` onto `live` (undefined: create). Throws 409 on conflicts unless forced. */
  apply(r: ResourceInfo, live: JsonObject | undefined, config: JsonObject, manager: string, force: boolean, subresource: string, time: Date): JsonObject {
    return this.managerFor(r).apply(live as PatchJsonObject | undefined, config, { manager, apiVersion: r.apiVersion, time, force, ...(subresource ? { subresource } : {}) });
  }
}
