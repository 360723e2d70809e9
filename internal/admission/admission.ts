// internal/admission/admission owns the admission contract: what a plugin is told about a
// write, the two phases (mutating plugins may change the object; validating plugins may only
// reject it, and run after schema validation), and the chain that runs them in order.
// Plugins declare the operations they handle. Errors are StatusErrors. Only writes reach the
// chain (create, update, patch, delete and the sub-resource writes); reads never do. Which
// plugins run, and in which order, is plugins.ts's.
// Imports: auth/user, schema/catalog (types only).

import type { UserInfo } from '../auth/user.js';
import type { ResourceInfo } from '../schema/catalog.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export type JsonObject = Record<string, unknown>;

export interface AdmissionRequest {
  readonly operation: Operation;
  readonly resource: ResourceInfo;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  /** The object being written; mutating plugins may change it in place. Absent for DELETE. */
  readonly object: JsonObject | undefined;
  readonly oldObject: JsonObject | undefined;
  readonly user: UserInfo;
  readonly dryRun: boolean;
  /** `Warning:` header values of the request (`299 - "text"`); plugins may add to it. */
  readonly warnings?: string[];
  /** Adds an annotation to the request's audit event (absent when the request is not audited). */
  readonly annotate?: (key: string, value: string) => void;
  /** The writer's field manager (CreateOptions / UpdateOptions.fieldManager). */
  readonly fieldManager?: string;
  /** The DeleteOptions of a DELETE, as the client sent them. */
  readonly deleteOptions?: JsonObject;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** A mutating plugin that may add fields with defaults of their own (writers default again after it). */
  readonly addsDefaultedFields?: boolean;
  handles(operation: Operation): boolean;
  /** Mutating phase. */
  admit?(req: AdmissionRequest): Promise<void> | void;
  /**
   * Mutating phase, once more: the object changed after this plugin's `admit` (a later mutating
   * plugin changed it), so what it decided may be stale (upstream's reinvocation, one round).
   */
  reinvoke?(req: AdmissionRequest): Promise<void> | void;
  /**
   * Whether `reinvoke` could do anything for this request after its `admit` (something ran that
   * asks to be reinvoked). Absent: assumed so. False spares the chain serializing the object to
   * see whether it changed later (the common case: no webhook or policy matched).
   */
  reinvocable?(req: AdmissionRequest): boolean;
  /** Validating phase: must not change the object. */
  validate?(req: AdmissionRequest): Promise<void> | void;
  /**
   * The write `req.object` was admitted for is not stored (dry run, a later validation or
   * admission failure, a lost race): give back what `admit` reserved for that object.
   */
  release?(req: AdmissionRequest): void;
}

export class AdmissionChain {
  /** Whether a plugin may add fields that need defaulting (writers then default again after admission). */
  readonly mutates: boolean;

  constructor(readonly plugins: readonly AdmissionPlugin[]) {
    this.mutates = plugins.some((p) => p.admit !== undefined && p.addsDefaultedFields === true);
  }

  async mutate(req: AdmissionRequest): Promise<void> {
    // What the object was after each plugin that may be reinvoked (serialized only for those).
    let seen: Array<[AdmissionPlugin, string]> | undefined;
    for (const p of this.plugins) {
      if (!p.admit || !p.handles(req.operation)) continue;
      // Most plugins answer synchronously: awaiting only promises spares a microtask per plugin.
      const admitted = p.admit(req);
      if (admitted) await admitted;
      if (p.reinvoke && req.object && p.reinvocable?.(req) !== false) (seen ??= []).push([p, JSON.stringify(req.object)]);
    }
    if (!seen) return;
    // One reinvocation round in plugin order (upstream's): each plugin is compared with the object
    // as it is at its turn, so a change made by an earlier plugin's reinvocation (a mutating
    // policy's) reinvokes a later one (the webhooks).
    for (const [p, after] of seen) if (after !== JSON.stringify(req.object)) await p.reinvoke!(req);
  }

  async validate(req: AdmissionRequest): Promise<void> {
    for (const p of this.plugins) {
      if (!p.validate || !p.handles(req.operation)) continue;
      const validated = p.validate(req);
      if (validated) await validated;
    }
  }

  release(req: AdmissionRequest): void {
    for (const p of this.plugins) if (p.release && p.handles(req.operation)) p.release(req);
  }
}
